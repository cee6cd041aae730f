"""The frozen input of one scheduling cycle (STYLE §2) and the decisions it returns (STYLE §1).

``run_cycle(snapshot, profile) -> CycleResult`` reads only a :class:`Snapshot` and returns
:class:`CycleResult`; the engine (edge) applies it through executors and the store. The core
never reads the clock (``snapshot.now``) and never generates ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..backfill.progress import ProgressReport
from ..model import Allocation, Inventory, Job, PendingReason, QuotaSet
from ..model.frozen import fast_init

__all__ = [
    "Admit",
    "AuditRecord",
    "CycleResult",
    "IdleAction",
    "JobHold",
    "Pend",
    "PlannedPreemption",
    "Preempt",
    "ProjectedEnd",
    "ReclaimTaken",
    "Reject",
    "Reinstall",
    "Snapshot",
    "UsageHistory",
    "kernel_activity_of",
    "owned_kernel_key",
]


def owned_kernel_key(user: str, kernel_id: str) -> str:
    """The key of ``user``'s kernel ``kernel_id`` in ``Snapshot.kernels`` where kernels are
    reported by their users' servers (hub mode): a kernel id is no secret (``ps``, connection-file
    names), so another user's report of the same id must never be read as this user's (red team
    18, R3: a report of A's kernel id as idle got A's busy kernel's lease reclaimed). A user name
    has no NUL, so the key is never ambiguous. Embedded mode keys by the bare kernel id: its one
    server's own kernel manager is the only source."""
    return f"{user}\x00{kernel_id}"


def kernel_activity_of(kernels: Mapping[str, Mapping[str, Any]], user: str,
                       kernel_id: str | None) -> Mapping[str, Any] | None:
    """The reported activity of ``user``'s kernel ``kernel_id`` (None: not reported): from that
    user's own reports (:func:`owned_kernel_key`), else from a source that keys by bare id
    (embedded mode)."""
    if not kernel_id:
        return None
    found = kernels.get(owned_kernel_key(user, kernel_id))
    return found if found is not None else kernels.get(kernel_id)


@dataclass(frozen=True, slots=True)
class UsageHistory:
    """Past usage the fair-share and budget rules need, computed at the edge from accounting.

    Attributes:
        decayed_gpu_seconds_by_user: GPU-seconds per user, decayed with the configured half-life
            (Slurm's fair-share usage).
        gpu_hours_this_period: GPU-hours used in the current budget period, keyed by
            ``(team, user_or_None)``.
    """

    decayed_gpu_seconds_by_user: Mapping[str, float] = field(default_factory=dict)
    gpu_hours_this_period: Mapping[tuple[str, str | None], float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JobHold:
    """Why one pending job of a user the hub still lists is held (red team 18, R4): its owner is no
    longer a member of the team it charges, or no longer granted its class there. Admission checks
    both at submit; without the hold a job queued before an admin removed its owner from the team
    started afterwards charged to that team's quota, budget and fair share.

    Attributes:
        team: the team the job charges (``job.spec.team``).
        since: when the edge found the change (the hub does not say when a group changed).
        teams: the teams the owner may charge now (their default first): the reason's way out.
        priority: set when the owner is still in ``team`` but no longer granted this class there;
            None when they are no longer a member.
        vanished: ``team`` is no hub group any more (no hub user is in one): a renamed group,
            which JupyterHub does by creating the new group and deleting the old (hubadmin23 A9);
            the reason then says the owner cannot rejoin it and names their team(s) now.
    """

    team: str
    since: datetime
    teams: tuple[str, ...] = ()
    priority: str | None = None
    vanished: bool = False


@dataclass(frozen=True, slots=True)
class Reinstall:
    """jupyter_sched changed on disk under the running server that launches the jobs (newuser31 N10):
    ``pip install`` run again under a running ``jupyter lab``, or a ``git pull`` of its editable checkout.
    Found at the edge (:class:`~jupyter_sched.executors.install_check.InstallWatch`); while it holds,
    batch jobs pend (code ``Reinstalled``) instead of failing "exit code 2" on a wrapper that moved.

    Attributes:
        running: the version the server runs (``0.1.0+g8d235e7``).
        installed: the version a restart would run (``not installed`` when none is importable).
        wrapper_gone: the wrapper file the server launches is no longer there.
        wrapper_changed: it is there with other content than the server started with.
        service: the server is a hub's scheduler service (its admin restarts it), not a ``jupyter lab``.
    """

    running: str
    installed: str
    wrapper_gone: bool = False
    wrapper_changed: bool = False
    service: bool = False


@dataclass(frozen=True, slots=True)
class ReclaimTaken:
    """A preemptor (job or lease) that took GPUs back from other teams' running work by reclaim, and how
    its own hold of them ended (red31 R5, red32 R5: the reclaim cool-down, :mod:`.preempt.cooldown`).
    Built at the edge from the store alone — the audit's ``reclaim`` records naming it ``for_job`` and
    its own row — so a restart reads the same; the engine's end paths record nothing of their own.

    Attributes:
        job_id: the preemptor.
        team: its team (queue): the one whose reclaims the cool-down holds.
        user: its owner.
        name: its public name (what its owner named it, else its id).
        lease: it is a kernel's lease.
        took_at: when the first eviction for it was decided (UTC).
        victims: ``(job id, owner)`` of the other teams' running work evicted for it.
        started_at: when it started (None: it never did).
        ended_at: when it ended (None: it still runs or waits).
        cause: how it ended (:data:`jupyter_sched.wording.preemption.RECLAIM_END_CAUSES`: ``exit``,
            ``failure``, ``time_limit``, ``release``, ``cancel``, ``idle_reclaim``, ``budget``,
            ``preempted``, ``lost``); "" while it has not.
        actor: who ended it where someone did (a cancel's or release's user), else "".
        exit_code: its exit code where it exited.
        recorded: a ``reclaim_dropped`` audit record names it already (the cycle writes one, once).
    """

    job_id: str
    team: str
    user: str
    took_at: datetime
    name: str = ""
    lease: bool = False
    victims: tuple[tuple[str, str], ...] = ()
    started_at: datetime | None = None
    ended_at: datetime | None = None
    cause: str = ""
    actor: str = ""
    exit_code: int | None = None
    recorded: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one cycle may look at, frozen.

    Attributes:
        now: the cycle's time (UTC, injected).
        inventory: nodes and GPUs (with health and foreign usage).
        jobs: every non-terminal job: pending ones to place, admitted/running ones holding GPUs.
        quotas: quota lines, budgets and team policies.
        usage: past usage for fair share and budgets.
        runtime_estimates: expected runtime in seconds per job id, learned at the edge from past
            runs of the same user, script or notebook and request (used for ETAs when the
            profile's ``eta_source`` is ``"history"``; never for backfill decisions). A running
            job's is its expected runtime *given* how long it has run (longer than that).
        runtime_typical: for running jobs that have already run longer than similar past runs
            typically take, that typical runtime in seconds (the unconditional estimate): their
            ETA notes say so, with their time limit as the bound (new-user 4 finding 8).
        runtime_sources: per job id of ``runtime_estimates`` whose guess did *not* come from runs
            of the same program and request, where it came from: ``"other"`` — its user's runs
            of other programs, as fractions of their limits
            (:meth:`~jupyter_sched.backfill.history.RuntimeHistory.origin`). Absent: similar past
            runs. The ETA's words say which (new user 11, N15).
        telemetry: per allocation key (job id) the recent samples idle detection needs;
            shape owned by ``reclaim`` (``Mapping[str, Any]``), empty when telemetry is off.
        kernels: per lease kernel id, kernel activity (``{"execution_state", "last_activity"}``);
            keyed by :func:`owned_kernel_key` where users' servers report them (hub mode): read
            with :func:`kernel_activity_of`.
        stop_grace_s: per job being stopped (``stopping_since``), the SIGTERM→SIGKILL grace its stop
            was sent with, seconds — a cancel's or a time limit's is the engine's stop grace, not the
            profile's ``grace_s`` for victims (new user 11, N1: a pending job's ETA waited 60 s for a
            job whose screen line said "killed at" 10 s after its cancel). Absent: ``grace_s``.
        held_users: owners whose pending work is held (never admitted), with the sentence that says
            why — in hub mode, users the hub no longer lists (red team 15, R9: a deleted user's queued
            job started afterwards as their account). Their jobs pend with code ``OwnerRemoved``.
        removed_groups: of those, the hub groups each was in when last listed: JupyterHub drops a deleted
            user's memberships with the user, so their ``OwnerRemoved`` line says to re-add both (newuser38 n18).
        held_jobs: pending jobs held although their owner is a user: per job id, the
            :class:`JobHold` that says why (hub mode: the owner left the job's team, red team 18,
            R4). They pend with code ``TeamMembership``; running work is never stopped by it. A
            *running* job listed here is charged to a team its owner left: it runs on, and quota
            reclaim for one of the owner's teams now (``JobHold.teams``) never takes it — it is the
            same people's work (hubadmin23 A11: after a group rename the new team reclaimed its own
            member's job "to return borrowed quota").
        ports_bound_outside: declared ports of pending inference jobs that a process outside the
            scheduler listens on, on the host the local executor runs jobs on (a real bind, made at
            the edge: red team 17, R3). Their jobs pend ``PortInUse`` instead of a burnt start.
        reclaims: the preemptors (jobs and leases) that took GPUs back from other teams' running work by
            reclaim in the last hour (:class:`ReclaimTaken`: what they took, when, and how their own hold ended,
            read by the edge from the store): one that held them less than ``profile.reclaim_cooldown_s`` keeps
            its team's next reclaims waiting (:mod:`.preempt.cooldown`; red31 R5, red32 R5).
        port_holders: of those, the ports bound for a while (the edge's
            :data:`~jupyter_sched.executors.bound_ports.HOLDER_NAMED_AFTER_S`), each with its holder's
            account: the waiting job's reason names it to its owner (red31 R6).
        progress: per running job id, its latest progress report (the job's own claim: steps done
            of steps to do, :class:`~jupyter_sched.backfill.progress.ProgressReport`). Read for the
            ETAs shown only, never for admission or backfill decisions (a report can lie; issue 16
            item 4): :func:`~jupyter_sched.scheduling.runtimes.time_left`.
        idle_since: per running lease id the idle detector counts idle (any policy), when its idle period
            began — the clock its own line and ``GET idle`` say, which a waiting job's line about that lease
            says too (newuser40 n6: the kernel's last activity there, a minute apart);
            :mod:`jupyter_sched.engine.idle_ends`.
        idle_ends: per running lease id that sits idle under a policy that releases it, when it is
            reclaimed if it stays idle (its idle deadline: warning, then grace;
            :mod:`jupyter_sched.engine.idle_ends`). A lease has no time limit: this is its projected
            end for the ETAs shown only, never for admission or backfill decisions (reservations keep
            the enforced limits): :func:`~jupyter_sched.scheduling.runtimes.time_left`. As a victim
            candidate such a lease loses no work and the minimum runtime does not protect it
            (:func:`~jupyter_sched.preemption.candidates.candidate_of`, hubadmin22 H9).
        reinstalled: jupyter_sched was reinstalled under the server that launches the jobs
            (:class:`Reinstall`; newuser31 N10): every batch job pends ``Reinstalled`` until it is
            restarted; leases (nothing to launch) are not held. None: the install is its own.
    """

    now: datetime
    inventory: Inventory
    jobs: tuple[Job, ...] = ()
    quotas: QuotaSet = field(default_factory=QuotaSet)
    usage: UsageHistory = field(default_factory=UsageHistory)
    runtime_estimates: Mapping[str, float] = field(default_factory=dict)
    runtime_typical: Mapping[str, float] = field(default_factory=dict)
    telemetry: Mapping[str, Any] = field(default_factory=dict)
    kernels: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    stop_grace_s: Mapping[str, float] = field(default_factory=dict)
    runtime_sources: Mapping[str, str] = field(default_factory=dict)
    held_users: Mapping[str, str] = field(default_factory=dict)
    removed_groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    held_jobs: Mapping[str, JobHold] = field(default_factory=dict)
    ports_bound_outside: frozenset[int] = frozenset()
    port_holders: Mapping[int, str] = field(default_factory=dict)
    reclaims: tuple[ReclaimTaken, ...] = ()
    progress: Mapping[str, ProgressReport] = field(default_factory=dict)
    idle_ends: Mapping[str, datetime] = field(default_factory=dict)
    idle_since: Mapping[str, datetime] = field(default_factory=dict)
    reinstalled: Reinstall | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Admit:
    """Start ``job_id`` on ``allocation``.

    Attributes:
        job_id: the job.
        allocation: node(s) and GPUs chosen.
        borrowed: GPUs of this admission above the team's guarantee (preemptible).
        scores: the placement scores that chose the node, by plugin name (audit evidence).
        backfill: True when admitted ahead of a reservation without delaying it.
        predicted_start: the start predicted when the job was first queued (its first cycle's
            ETA; ``now`` when it is admitted in its first cycle; None: unknown then) — the engine
            records it beside the actual start to measure ETA accuracy (case 034).
        time_limit_s: the limit it was planned with (its own, or its queue's default/maximum when
            it gave none; None: unlimited) — the executor should stop it there.
        time_limit_source: where ``time_limit_s`` comes from (see :func:`~jupyter_sched.queues.limits.effective_limit`).
        queued: the job was pended with a full cycle's ETA before this admission (it waited in the
            queue, and ``predicted_start`` is that ETA); False when it is admitted in its first cycle
            (or the first after a provisional or preemption reason): nothing was predicted, and ETA
            accuracy leaves it out (:func:`~jupyter_sched.backfill.accuracy.accuracy_from_admits`).
    """

    job_id: str
    allocation: Allocation
    borrowed: float = 0.0
    scores: Mapping[str, float] = field(default_factory=dict)
    backfill: bool = False
    predicted_start: datetime | None = None
    time_limit_s: float | None = None
    time_limit_source: str = "given"
    queued: bool = False


@dataclass(frozen=True, slots=True)
class Preempt:
    """Stop ``job_id`` so that ``for_job`` can run; the victim is requeued.

    Attributes:
        job_id: the victim.
        for_job: the job the GPUs are freed (and nominated) for.
        reason: one sentence, e.g. "preempted to return borrowed quota to team-b".
        kind: ``"reclaim"`` (quota reclaim across teams), ``"priority"`` (within a team), ``"class"``
            (another team's low work, no quota configured: red team 18, R8) or ``"drain"`` (its node's
            drain deadline passed; ``for_job`` empty: :mod:`.drain`) or ``"budget"`` (a running lease
            whose safe budget is spent, released; ``for_job`` empty: :mod:`.budget_spent`).
        grace_s: seconds between SIGTERM and SIGKILL.
        checkpoint_signal: send SIGUSR1 first (checkpointable jobs).
    """

    job_id: str
    for_job: str
    reason: str
    kind: str = "priority"
    grace_s: float = 60.0
    checkpoint_signal: bool = True


@dataclass(frozen=True, slots=True)
class PlannedPreemption:
    """A running job the scheduler will preempt (or reclaim) at a known time: a pending job's ETA is
    the moment this one passes the minimum runtime (:func:`.planned.planned_preemptions`, new user 21,
    N5) — said on the victim's own line, which otherwise says only when its time limit ends it.

    Attributes:
        at: when (UTC) — the waiter's ETA, the moment the victim has run the minimum runtime.
        for_job: the waiting job (or lease) it is stopped for.
        for_name: that job's public name (as every queue line shows it); "" when it says no more than its id.
        for_owner: its owner where that is not the victim's owner ("" for the victim owner's own work).
        for_priority: its class, e.g. ``normal``.
        for_team: its team.
        same_team: the waiter is of the victim's team (a class preemption, else a reclaim across teams).
        verb: ``"preempted"`` or ``"reclaimed"`` (the waiter's ETA says it so: ``preemption_rule.evicted_as``).
    """

    at: datetime
    for_job: str
    for_name: str = ""
    for_owner: str = ""
    for_priority: str = ""
    for_team: str = ""
    same_team: bool = True
    verb: str = "preempted"


@dataclass(frozen=True, slots=True)
class ProjectedEnd:
    """When a running job is projected to end, as the ETA pass projects it for the jobs waiting on it
    (:func:`.ends.projected_ends`, new user 22, N10) — kept only where that is before its time limit
    ends it: from its own progress report, or from the runtime learnt from past runs. Its owner's line
    said only "ends by <its limit>" while a waiter was told an earlier time.

    Attributes:
        at: the projected end (UTC).
        source: ``"progress"`` (its progress report's rate) or ``"history"`` (a learnt runtime).
        report_at: the time of the progress report read (``"progress"`` only).
        fraction: that report's share done, 0..1 (``"progress"`` only).
        runs: what a learnt runtime came from (``"history"`` only): ``"same"`` (similar past runs),
            ``"other"`` (its user's runs of other programs) or ``"population"`` (everybody's runs of its size).
        share: a learnt end from other runs as a share of its time limit, 0..1 (``"other"``/``"population"``).
    """

    at: datetime
    source: str
    report_at: datetime | None = None
    fraction: float | None = None
    runs: str = ""
    share: float | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Pend:
    """``job_id`` stays pending for ``reason`` (exactly one primary reason)."""

    job_id: str
    reason: PendingReason


@fast_init
@dataclass(frozen=True, slots=True)
class Reject:
    """``job_id`` can never run (e.g. more GPUs than exist); it is failed up front."""

    job_id: str
    reason: PendingReason


@dataclass(frozen=True, slots=True)
class IdleAction:
    """An idle-reclamation step for a job or lease.

    Attributes:
        job_id: the idle job or lease.
        stage: ``"warn"``, ``"reclaim"`` or ``"clear"`` (activity resumed after a warning:
            forget the warning). Produced by ``jupyter_sched.reclaim.evaluate_idle``.
        reason: one sentence, e.g. "kernel idle and GPU < 5 % for 120 min".
        evidence: the window of samples that proves it (stored in the audit record).
        action: what ``reclaim`` means for this work: ``"release"`` (free the lease's GPUs, the
            kernel keeps running), ``"requeue"`` / ``"stop"`` (batch jobs), or ``"notify"``
            (tell the user and admins, free nothing).
        deadline: when the reclaim happens / happened (for the warning text and the panel).
        idle_since: start of the idle period this step belongs to (engine dedupes by it).
        gpu_uuids: the GPUs concerned.
    """

    job_id: str
    stage: str
    reason: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    action: str = "release"
    deadline: datetime | None = None
    idle_since: datetime | None = None
    gpu_uuids: tuple[str, ...] = ()


@fast_init
@dataclass(frozen=True, slots=True)
class AuditRecord:
    """A decision worth explaining later: who, what, where, why (scores and reasons)."""

    action: str
    job_id: str
    user: str
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CycleResult:
    """What one cycle decided. The engine applies it; nothing here has happened yet."""

    admits: tuple[Admit, ...] = ()
    preemptions: tuple[Preempt, ...] = ()
    pending: tuple[Pend, ...] = ()
    rejects: tuple[Reject, ...] = ()
    idle: tuple[IdleAction, ...] = ()
    nominations: Mapping[str, Allocation] = field(default_factory=dict)
    audit: tuple[AuditRecord, ...] = ()
    eta_failure: str = ""
    """Why this cycle's ETA pass failed (the error, where, and the running jobs whose progress reports
    fed it), its decisions made without it and every ETA "unknown" (:mod:`.eta_guard`); "" when it
    did not. The engine logs it once per cause (red team 21, R5)."""
    planned: Mapping[str, PlannedPreemption] = field(default_factory=dict)
    """Running jobs to be preempted at a known time, by id (:func:`.planned.planned_preemptions`): the
    engine keeps them beside the pending reasons, and their lines say so (new user 21, N5)."""
    projected: Mapping[str, ProjectedEnd] = field(default_factory=dict)
    """Running jobs projected to end before their time limits, by id (:func:`.ends.projected_ends`): the
    ends the ETA pass gives the jobs waiting on them, which their owners' lines say (new user 22, N10)."""
