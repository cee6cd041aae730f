"""The state of one cycle (:class:`CycleContext`) and of one job's visit in it (:class:`Visit`).

The phases of the cycle are plain functions in their own modules — :mod:`.gates`,
:mod:`.admit`, :mod:`.preempt`, :mod:`.defrag`, :mod:`.eta` — that read and extend a
:class:`CycleContext` (ledger, plugins, decisions so far) and a small :class:`Visit` for the job
being decided (its flavors, per-flavor outcomes and why no preemption was issued). Nothing here
outlives one ``run_cycle`` call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ..backfill.easy import Headroom, Reservation
from ..model import GPU_MILLI, Job, JobState, PendingReason, ResourceRequest
from ..model.job import LEASE_NAMES, public_name
from ..placement.fragmentation import cycle_placement
from ..placement.placer import Flavor, Placement, Placer
from ..placement.reasons import FitReason
from ..placement.state import Holding
from ..preemption.policy import PreemptionPolicy, ReclaimPolicy, preemption_policy, reclaim_policy
from ..queues.limits import effective_limit
from ..queues.order import Holdings
from ..quota import Line
from ..quota.held_whole import HeldAway
from ..wording.quota_change import split_blame
from ..wording.reasons import JUST_STARTED, NOT_AN_ATTEMPT, preempted_how, work_named
from .ledger import CycleLedger, Holder
from .nominations import NominationBook
from .ports import declares_port, held_ports
from .profile import SchedulingProfile
from .reasons import FlavorOutcome
from .snapshot import Admit, AuditRecord, Pend, Preempt, Reject, Snapshot, kernel_activity_of

if TYPE_CHECKING:
    from ..quota.ceiling import CeilingExceeded
    from .eta import Plan
    from .owed import Owed

__all__ = ["CAPACITY_CODES", "RESERVE_PREFIX", "CycleContext", "OwnerLeases", "Visit", "no_pause", "own_entry"]

RESERVE_PREFIX = "\0reserve:"
"""Ledger holder key prefix for an EASY reservation mask."""

CAPACITY_CODES = frozenset({"WaitingForCapacity", "Fragmented", "UnhealthyGpu", "NodeCordoned"})
"""Primary codes for which a preemption refusal is worth explaining."""


@dataclass(slots=True)
class Visit:
    """One pending job being decided in this cycle.

    Attributes:
        job / req: the job and its request.
        flavors: the GPU models it may use, in preference order.
        outcomes: what happened on each flavor tried (for the pending reason).
        refusal: why no preemption or reclaim was issued for it (one sentence; empty: none tried).
        refusal_details: the numbers and job ids behind ``refusal``.
        taken_over_by: jobs of a higher class of its team that took over GPUs nominated to it.
    """

    job: Job
    req: ResourceRequest
    flavors: tuple[Flavor, ...]
    outcomes: list[FlavorOutcome] = field(default_factory=list)
    refusal: str = ""
    refusal_details: dict[str, Any] | None = None
    taken_over_by: tuple[str, ...] = ()


class _Owners(Mapping[str, str]):
    """Job id -> who it shares a GPU with — its team, or itself alone — read live from a context's
    ``by_id`` (the Placer's ``owners``)."""

    def __init__(self, jobs: Mapping[str, Job], *, by_team: bool) -> None:
        self._jobs = jobs
        self._by_team = by_team

    def __getitem__(self, job_id: str) -> str:
        return self._jobs[job_id].spec.team if self._by_team else job_id

    def __iter__(self) -> Iterator[str]:
        return iter(self._jobs)

    def __len__(self) -> int:
        return len(self._jobs)


class _ShareMemory(Mapping[str, int]):
    """Job id -> GPU memory (MiB) it reserves on a shared GPU: a fractional job's ``mem_per_gpu``
    (red team 15 R7), else 0 — read live from a context's ``by_id`` (the Placer's ``gpu_memory_of``)."""

    def __init__(self, jobs: Mapping[str, Job]) -> None:
        self._jobs = jobs

    def __getitem__(self, job_id: str) -> int:
        req = self._jobs[job_id].spec.resources
        return req.min_memory_mib if req.fractional else 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._jobs)

    def __len__(self) -> int:
        return len(self._jobs)


def no_pause() -> None:
    """The default :attr:`CycleContext.pause`: none."""


class OwnerLeases(NamedTuple):
    """What a user's own leases hold of the GPUs a waiting job of theirs may use
    (:meth:`CycleContext.owner_leases`; newuser33 n6), as its reason's details carry it.

    Attributes:
        public: ``details["held_by_owner"]``, ``{"user", "gpus", "total", "leases"}`` (+ ``"models"``
            when counted over some of the inventory's models): what anyone reading the queue may see,
            as :meth:`CycleContext.top_holder` says another user's holding.
        leases: ``details["held_by_owner_leases"]``, one :func:`own_entry` per lease, with
            ``"idle_since"`` (ISO UTC) while its kernel is reported idle: the owner's alone (the API
            leaves it out of every other reader's view — a notebook path is private).
    """

    public: Mapping[str, Any]
    leases: tuple[dict[str, Any], ...]


def own_entry(job: Job, milli: int | None = None) -> dict[str, Any]:
    """A waiting job's owner's own work as its reason describes it to that owner:
    ``{"id", "name", "kind", "gpus"}`` (``gpus``: ``milli`` milli-GPUs, else all it holds; whole or
    fractional), with ``"notebook"`` for a lease whose notebook is known and ``"kernel": False`` for a
    lease bound to no kernel (``"parent_job_id"`` when a job holds it; ``"released_at_exit": True``
    instead when a kernel the server did not start holds it). Private: the owner's only."""
    spec = job.spec
    milli = spec.resources.total_milli if milli is None else milli
    entry: dict[str, Any] = {"id": job.id, "name": public_name(spec), "kind": spec.kind.value,
                             "gpus": milli // 1000 if milli % 1000 == 0 else milli / 1000}
    if spec.kernel_notebook:  # private: the API leaves these entries out of others' views
        entry["notebook"] = spec.kernel_notebook
    if job.is_lease and spec.released_at_exit:  # a kernel the server did not start: its
        entry["released_at_exit"] = True  # %gpu release or its exit frees it (new user 16, N1)
    elif job.is_lease and not spec.kernel_id:  # no notebook's %gpu release frees it
        entry["kernel"] = False  # (new user 13, N9)
    if job.is_lease and spec.parent_job_id:  # released with that job (red team 15, R15)
        entry["parent_job_id"] = spec.parent_job_id
    return entry


def _kernel_idle_since(kernels: Mapping[str, Mapping[str, Any]], lease: Job) -> str | None:
    """When ``lease``'s kernel went idle (its last activity, ISO UTC) while the snapshot reports it
    idle; None when it is busy, not reported, or its time is not an aware one."""
    seen = kernel_activity_of(kernels, lease.spec.user, lease.spec.kernel_id)
    if not seen or seen.get("execution_state") != "idle":
        return None
    last = seen.get("last_activity")
    if isinstance(last, datetime):
        return last.isoformat() if last.utcoffset() is not None else None
    if isinstance(last, str):
        try:
            parsed = datetime.fromisoformat(last.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed.isoformat() if parsed.utcoffset() is not None else None
    return None


class CycleContext:
    """What the phases of one cycle share (never shared between cycles).

    Attributes:
        snap / now / profile: the cycle's input and policy.
        ledger / state / quota: capacity and quota usage (:class:`CycleLedger`) with ``what_if``.
        placer: placement plugins over ``state``.
        book: GPUs nominated to pending jobs (:class:`NominationBook`).
        preemption: the within-team preemption policy; :meth:`reclaim_for` gives a team's reclaim policy.
        admits / preempts / pends / rejects / audit: decisions so far, in order.
        reservations: EASY reservation per GPU model (first capacity-blocked job, or the first a quota line
            holds back where it comes first: :func:`.pending._hold_headroom`).
        headroom: a quota line's room held for the first job it keeps waiting (newuser36 N1), per line key.
        shapes / cap_cache / outcome_cache / reason_cache: per-cycle memo tables keyed by request
            shape and ledger version (jobs of one shape share flavors, reasons and outcomes).
        victims: jobs preempted this cycle; reclaimed_lines: by team quota line, each running job
            reclaimed this cycle with its milli-GPUs (a later withdrawal must leave them justified); reclaimed: pending jobs whose nominated GPUs a
            within-guarantee job of another team took back this cycle (-> that job); in_flight: jobs already stopping (an earlier
            preemption, a cancel or a time limit) that still hold GPUs; overdue: those of them
            stopping for longer than the grace period (job id -> seconds since the stop).
        by_id: the snapshot's jobs by id.
        elected: pending jobs visited first in their class because they waited past ``elect_overdue``
            x their promised wait (:func:`~jupyter_sched.queues.order.elect_overdue`; issue 16).
        elected_behind: of the elected, each one that goes after an elected job its user already
            passed, with that job's id (:func:`~jupyter_sched.queues.order.elected_behind`; new user 29, N2).
        barred: overdue jobs no election moves first because their user holds more than an equal share
            while another user's job waits (:func:`~jupyter_sched.queues.order.election_barred`), by id:
            ``{"user", "held", "share", "total", "factor"}`` (GPUs; their reason's ``details["election_barred"]``).
        promised: the promised starts made this cycle (:func:`.eta.promises`; None: each is the shown ETA).
        cpu_jobs: per user, CPU-only jobs holding a place (admitted or running), this cycle's
            admissions included — counted only when the profile caps them.
        admitted: jobs admitted this cycle (their end times feed ETAs).
        fresh: this cycle's admissions with their placements: an admission that borrows can still
            be withdrawn, at no cost, for a within-guarantee job visited later (:mod:`.preempt`).
        preemption_attempts: victim searches so far (bounded by the profile).
        held: with no quota configured, what each user and team holds at cycle start and the equal
            shares (:func:`~jupyter_sched.queues.order.holdings`; set by the cycle): a team below its
            share may preempt other teams' ``low`` work (:func:`.preempt.candidates.class_candidates`).
        passed: by team, the visits of jobs pended for room so far in this cycle, in visit order
            (with a sequence number across teams) — GPUs a plan frees by withdrawing this cycle's
            admissions go first to the higher classes among them, GPUs a dropped nomination frees
            to all of them (:mod:`.takeover`); None once the cycle is over (a live one-job decision
            offers nothing to jobs the full cycle decided).
        pause: called between two jobs' visits and ETAs (the caller's: the engine's gives the
            server's web loop the interpreter while it answers requests; default: nothing).
    """

    def __init__(self, snapshot: Snapshot, profile: SchedulingProfile,
                 pause: Callable[[], object] | None = None) -> None:
        self.snap = snapshot
        self.pause: Callable[[], object] = pause or no_pause
        self.now: datetime = snapshot.now
        self.now_iso = snapshot.now.isoformat()
        self.profile = profile
        self.ledger = CycleLedger(snapshot)
        self.state = self.ledger.state
        self.quota = self.ledger.quota
        self.by_id: dict[str, Job] = {j.id: j for j in snapshot.jobs}
        # whose work holds each GPU, for a profile that shares a GPU only within a team (or not at all):
        # read through by_id, which also holds the jobs a live ledger decides after its cycle (.live)
        owners = None if profile.gpu_sharing == "any" else _Owners(self.by_id, by_team=profile.gpu_sharing == "team")
        memory = _ShareMemory(self.by_id)  # read only when a fraction asks for GPU memory
        self.placer = Placer(self.state, cycle_placement(profile.placement, snapshot.inventory, snapshot.jobs),
                             owners=owners, gpu_memory_of=memory)
        self.book = NominationBook(self.ledger, snapshot.jobs)
        self.preemption: PreemptionPolicy | None = (
            preemption_policy(profile.preemption_policy, profile.preemptible_classes) if profile.preemption else None)
        self._reclaim: dict[str, ReclaimPolicy] = {}
        self.admits: list[Admit] = []
        self.preempts: list[Preempt] = []
        self.pends: list[Pend] = []
        self.rejects: list[Reject] = []
        self.audit: list[AuditRecord] = []
        self.reservations: dict[str, Reservation] = {}
        self.headroom: dict[tuple[str, str | None, str], Headroom] = {}  # per quota line (pending._hold_headroom)
        # per GPU model: GPUs owed to guarantees whose --no-preempt jobs wait for free ones (.owed, s38)
        self.owed: dict[str, list[Owed]] = {}
        # (model, the owed jobs) -> (their pools' stamps, the milli-GPUs those jobs could use there) (.owed)
        self.owed_usable: dict[tuple[str, tuple[str, ...]], tuple[object, int]] = {}
        self.shapes: dict[tuple[object, ...], tuple[tuple[Flavor, ...], FitReason | None, str]] = {}
        self.ceilings: dict[tuple[str, str, int, int], Line | None] = {}  # per (team, user, milli, id(flavors))
        # the words of a request above its ceiling, per ceilings' key and the request's gpus, gpu_milli,
        # workers and groups (scheduling.cycle._above_ceiling)
        self.ceiling_words: dict[tuple[object, ...], CeilingExceeded] = {}
        self.cap_cache: dict[tuple[object, ...], FitReason] = {}
        # Outcomes and reasons shared by jobs of one shape while capacity is unchanged (kept alive
        # for the whole cycle, so their ids are stable cache keys).
        self.outcome_cache: dict[tuple[object, ...], FlavorOutcome] = {}
        self.reason_cache: dict[tuple[object, ...], tuple[PendingReason, str, Mapping[str, Any]]] = {}
        self.victims: set[str] = set()
        self.reclaimed: dict[str, str] = {}
        # each running job reclaimed this cycle with its milli-GPUs, by the team quota line it was charged to
        self.reclaimed_lines: dict[tuple[str, str | None, str], list[tuple[str, int]]] = {}
        self.preemption_attempts = 0
        self.held: Holdings | None = None
        self.held_teams: tuple[frozenset[str], float] = (frozenset(), 0.0)  # with ``held``: teams with work, GPUs
        # users with a job running past its typical runtime, per snapshot (.runtimes.overrunning_users)
        self.overrunning: tuple[Snapshot, frozenset[str]] | None = None
        self.passed: dict[str, list[tuple[int, Visit]]] | None = {}
        self.passed_seq = 0
        self.policies = {p.team: p for p in snapshot.quotas.teams}
        # CPU-only (0-GPU) jobs admitted or running per user, under profile.max_running_cpu_jobs_per_user
        # (.gates; this cycle's admissions are added by .admit)
        self.cpu_jobs: dict[str, int] = {}
        if profile.max_running_cpu_jobs_per_user:
            for j in snapshot.jobs:
                if j.state.holds_gpus and not j.spec.resources.total_milli:
                    self.cpu_jobs[j.spec.user] = self.cpu_jobs.get(j.spec.user, 0) + 1
        # declared ports held per node by inference jobs (.ports: red team 15 R11); admissions add theirs
        host_ports = profile.host_ports
        self.ports: dict[int, dict[str, str]] = held_ports(snapshot.jobs) if host_ports else {}
        self.gated = bool(self.policies or profile.windows or snapshot.quotas.budgets or snapshot.quotas.unreadable
                          or profile.max_running_cpu_jobs_per_user or self.ports or snapshot.held_users
                          or snapshot.held_jobs or snapshot.ports_bound_outside or snapshot.reinstalled) or any(
            j.not_before is not None or j.held is not None or (host_ports and declares_port(j)) for j in snapshot.jobs)
        self.admitted: dict[str, Job] = {}
        # per (team, user or None) budget line, GPU-hours its running jobs may still spend (.gates.budget_hold:
        # red28 R3), worked out on the first "safe" budget check of the cycle
        self.budget_holds: dict[tuple[str, str | None], float] | None = None
        self.fresh: dict[str, Placement] = {}
        # per fresh admission, its expected runtime as .runtimes.expected_runtime gives it (set by
        # .admit, which has the effective limit at hand; read by the ETA projection)
        self.fresh_end: dict[str, float] = {}
        self.history = profile.eta_source == "history"  # learned runtimes may shorten expected ones
        self.capacity_memo: dict[int, tuple[ResourceRequest, int]] = {}  # ETA basis per request object
        self.flavors_capacity: dict[int, tuple[tuple[Flavor, ...], int]] = {}  # and per placer flavors tuple
        self.in_flight = {j.id for j in snapshot.jobs if j.stopping_since is not None and j.state.holds_gpus}
        self.in_flight |= self.book.victims_in_flight()
        # Victims still holding GPUs past their grace period (a kill that did not take, a pod stuck
        # Terminating — case 032, Kueue #6489): seconds since the stop was asked for. Reasons name them.
        self.overdue: dict[str, float] = {
            j.id: since for j in snapshot.jobs
            if j.stopping_since is not None and j.state.holds_gpus
            and (since := (snapshot.now - j.stopping_since).total_seconds())
            > snapshot.stop_grace_s.get(j.id, profile.grace_s)}
        self._holder_index: tuple[dict[str, list[Holder]], dict[str, list[Holder]]] | None = None
        # a fraction holds the rest of its GPU away from whole-GPU work: reclaim counts it whole
        # (.preempt.candidates.held_away; red team 15 R5), looked at only when shares exist
        # (count_shares: from the first share on, a live one-job decision's too; red39 R1)
        self.shares_held = False
        self.share_holders: list[str] = []
        # this cycle's admissions of a share of a GPU (allocation gpu_milli < 1000), in admission order:
        # a subset of ``fresh`` kept in step with it (.admit adds, .preempt.issue withdraws), so
        # shares_now reads the few shares, not every admission (issue 17)
        self.fresh_shares: dict[str, None] = {}
        self.share_holder_set = frozenset(self.share_holders)
        # per flavor (model, pools): .admit.shares_note's numbers and clause, by share_version
        self.shares_notes: dict[tuple[str, tuple[int, ...]], tuple[int, int, str, dict[str, int], frozenset[int]]] = {}
        # .preempt.refusals: what a team's guarantee lends and who holds the rest (_lending), per (team,
        # model, quota version, quota lines, share version); who holds the rest said per their numbers
        self.lending: dict[tuple[object, ...], tuple[Line, int, int, str, tuple[str, str] | None, int] | None] = {}
        # every quota check counts what a team's shares hold away, as reclaim does (red team 38 R3): kept by
        # the quota ledger as shares come and go (count_shares), with no reference back to this context (session 39)
        self.quota.held = None
        if any(j.spec.resources.fractional for j in snapshot.jobs):
            self.count_shares()
        self.holders_said: dict[tuple[object, ...], tuple[str, str]] = {}
        # .preempt.refusals._held_by: per team, the kinds holding its GPUs (is a lease?), read once a cycle
        self.held_kinds: dict[str, set[bool]] | None = None
        # .eta._waited_on: per job an ETA waits on, (the job, its public name, queued), per ETA pass
        self.waited: dict[str, tuple[Job | None, str, bool]] = {}
        self.needs: dict[tuple[tuple[str, ...], int, bool], int | None] = {}  # the ETA pass's _needs_of answers
        # .eta_budget.Spend: per job the ETA pass moved past a budget reset (newuser35 N6), and the jobs it checked
        self.budget_moved: dict[str, tuple[datetime, datetime | None, str]] = {}
        self.budget_checked: set[str] = set()
        # .eta._replayed: the jobs the ETA replay backfilled, each with the job whose reservation they went around
        # and its start on limits (s after now; lookahead's ``around``): a line's backfill words (newuser35 N7)
        self.replay_around: dict[str, tuple[str, float | None]] | None = None  # None: no EASY replay
        self.said_times: dict[datetime, tuple[str, str]] = {}  # an instant's isoformat() and said_time()
        self.iso_times: dict[datetime, str] = {}  # an instant's isoformat() (the ETA pass's first ETAs)
        # .admit._admit's "why" of an admission's audit line per (backfill, held, milli-GPUs borrowed, team)
        self.admit_why: dict[tuple[bool, bool, int, str], str] = {}
        # .pending._cannot_backfill's clause and numbers per (reserved job, its time, limit, limit's
        # source, another user's reservation); None: such a job could finish before it
        self.backfill_clauses: dict[tuple[str, datetime, float | None, str, bool],
                                    tuple[str, dict[str, Any]] | None] = {}
        self.elected: frozenset[str] = frozenset()  # pending jobs past their promised wait (issue 16, run_on)
        self.elected_behind: dict[str, str] = {}  # of them, those after one their user passed (N2): -> that one
        # overdue jobs not elected: their user holds above an equal share while another user's job waits (s30-fair2)
        self.barred: dict[str, dict[str, Any]] = {}
        self.promised: dict[str, datetime | None] | None = {}  # promises made this cycle (eta.promises)
        self.plan: Plan | None = None  # conservative backfill: the projection jobs are reserved on as visited
        # top_holder(), per set of GPU models asked about (None: every model), once worked out
        self._top_holders: dict[frozenset[str] | None, Mapping[str, Any] | None] = {}
        # owner_leases(): the leases holding GPUs per user (built on the first ask), and the answers per (user, models)
        self._leases_by_user: dict[str, list[Job]] | None = None
        self._owner_leases: dict[tuple[str, frozenset[str] | None], OwnerLeases | None] = {}

    def top_holder(self, models: frozenset[str] | None = None) -> Mapping[str, Any] | None:
        """With no quota configured, the one user holding most (more than half) of the GPUs of
        ``models`` (None, or every model of the inventory: all GPUs) at the cycle's start:
        ``{"user", "gpus", "total", "jobs", "leases", "without_limit"}`` (GPUs held and the GPUs of
        those models, whole or fractional; jobs and leases holding them; how many of those have no
        time limit), plus ``"starting"`` (how many of those jobs are given their GPUs but not running
        yet: new user 30, n14 — a job being launched read as one more job "held") where some are, and
        ``"models"`` (sorted names) when ``models`` are some of the inventory's
        only — red team 15, R4: a waiting user's reason named nobody while one user held 4 of 4 GPUs
        for ever; verify 22, V1: an A100 job on a node mixing models named the user holding its H100s.
        None otherwise (with quotas, the quota's own reasons say who borrows). Worked out once per
        cycle per ``models``."""
        present = self.snap.inventory.models()
        if models is not None and (not models & present.keys() or models >= present.keys()):
            models = None  # every model it may use (or none the inventory has): the whole inventory
        if models in self._top_holders:
            return self._top_holders[models]
        found: dict[str, Any] | None = None
        total = self.snap.inventory.gpu_count() if models is None else sum(present.get(m, 0) for m in models)
        if not self.quota.enabled and total:
            model_of = None if models is None else {uuid: gpu.model
                                                     for uuid, gpu in self.snap.inventory.gpu_by_uuid().items()}
            held: dict[str, list[tuple[Job, float]]] = {}
            for job in self.snap.jobs:
                if job.spec.resources.total_milli and job.state.holds_gpus:
                    gpus = job.spec.resources.total_milli / 1000
                    if model_of is not None and models is not None:  # its GPUs of those models only
                        alloc = job.allocation
                        uuids = alloc.all_gpu_uuids() if alloc is not None else ()
                        gpus = sum(1 for u in uuids if model_of.get(u) in models) * (
                            alloc.gpu_milli if alloc is not None else 0) / 1000
                    if gpus:
                        held.setdefault(job.spec.user, []).append((job, gpus))
            for user, holding in held.items():
                gpus = float(sum(n for _, n in holding))
                if gpus * 2 > total:
                    jobs = [j for j, _ in holding]
                    leases = sum(1 for j in jobs if j.is_lease)
                    found = {"user": user, "gpus": int(gpus) if gpus.is_integer() else gpus, "total": total,
                             "jobs": len(jobs) - leases, "leases": leases,
                             "without_limit": sum(1 for j in jobs if j.is_lease or effective_limit(
                                 j.spec, self.profile.time_limits)[0] is None)}
                    starting = sum(1 for j in jobs if not j.is_lease and j.state is JobState.ADMITTED)
                    if starting:
                        found["starting"] = starting
                    if models is not None:
                        found["models"] = sorted(models)
        self._top_holders[models] = found
        return found

    def owner_leases(self, user: str, models: frozenset[str] | None = None) -> OwnerLeases | None:
        """What ``user``'s own leases hold of the GPUs of ``models`` (None, or every model of the
        inventory: all GPUs) at the cycle's start, for a waiting job of ``user``'s: None when they hold
        none. The waiting job's line named the other user holding most GPUs, never its owner's own idle
        kernel lease holding the GPU it still needs (newuser33 n6). Worked out once per cycle per
        ``(user, models)``; the leases holding GPUs are indexed by user on the first ask (one pass)."""
        asked = (user, models)
        if asked in self._owner_leases:  # (one lookup per waiting job: most wait on a few model sets)
            return self._owner_leases[asked]
        present = self.snap.inventory.models()
        if models is not None and (not models & present.keys() or models >= present.keys()):
            models = None  # as top_holder counts them: the whole inventory
        key = (user, models)
        if key in self._owner_leases:
            self._owner_leases[asked] = self._owner_leases[key]
            return self._owner_leases[key]
        if self._leases_by_user is None:
            self._leases_by_user = {}
            for job in self.snap.jobs:
                if job.is_lease and job.state.holds_gpus and job.spec.resources.total_milli:
                    self._leases_by_user.setdefault(job.spec.user, []).append(job)
        found: OwnerLeases | None = None
        leases = self._leases_by_user.get(user)
        total = self.snap.inventory.gpu_count() if models is None else sum(present.get(m, 0) for m in models)
        if leases and total:
            model_of = None if models is None else {uuid: gpu.model
                                                     for uuid, gpu in self.snap.inventory.gpu_by_uuid().items()}
            entries: list[dict[str, Any]] = []
            for lease in leases:
                milli = lease.spec.resources.total_milli
                if model_of is not None and models is not None:  # its GPUs of those models only
                    alloc = lease.allocation
                    uuids = alloc.all_gpu_uuids() if alloc is not None else ()
                    milli = sum(1 for u in uuids if model_of.get(u) in models) * (
                        alloc.gpu_milli if alloc is not None else 0)
                if not milli:
                    continue
                entry = own_entry(lease, milli)
                # the idle detector's clock, as the lease's own line says it (newuser40 n6); else its kernel's
                idle = self.snap.idle_since.get(lease.id)
                since = idle.isoformat() if idle is not None else _kernel_idle_since(self.snap.kernels, lease)
                if since is not None:
                    entry["idle_since"] = since
                entries.append(entry)
            if entries:
                gpus = sum((float(e["gpus"]) for e in entries), 0.0)
                public: dict[str, Any] = {"user": user, "gpus": int(gpus) if gpus.is_integer() else gpus,
                                          "total": total, "leases": len(entries)}
                if models is not None:
                    public["models"] = sorted(models)
                found = OwnerLeases(public, tuple(entries))
        self._owner_leases[key] = self._owner_leases[asked] = found
        return found

    def count_shares(self) -> None:
        """Count GPU shares from now on: what a team's shares hold away in every quota check, reclaim and
        reason (:func:`.preempt.candidates.held_away`). On from the start when a job of the snapshot asks
        for a share; else turned on by the first share a live one-job decision visits
        (:meth:`.live.LiveCycle.decide`) — red team 39 R1: a ledger built while the team ran no share
        charged a burst of 0.1-GPU shares submitted after it their fractions, each opening a GPU of its
        own, every free GPU held on a limit of two."""
        if self.shares_held:
            return
        self.shares_held = True
        self.share_holders = [j.id for j in self.snap.jobs if j.state.holds_gpus and j.allocation is not None
                              and j.allocation.gpu_milli < GPU_MILLI]
        self.share_holder_set = frozenset(self.share_holders)
        self.quota.held = HeldAway(self.state, self.share_holder_set, self.fresh_shares, self.quota.charges,
                                   self.quota.team_version)

    def shares_now(self) -> Iterator[tuple[str, Holding]]:
        """The holders of GPU shares on the ledger now (running ones and this cycle's admissions),
        with what they hold — the few holders :func:`.preempt.candidates.held_away` and the
        capacity reason's note on shares read, instead of every holder."""
        holdings = self.state.holdings
        for job_id in self.share_holders:
            held = holdings.get(job_id)
            if held is not None:
                yield job_id, held
        for job_id in self.fresh_shares:
            if (held := holdings.get(job_id)) is not None:
                yield job_id, held

    def named(self, job_id: str, reader: str | None = None) -> str:
        """``mal3 (j-…)`` when the job's name says more than its id (names are public: every queue
        line shows them), else the id — how a reason names another job (new user 8, N9); with
        ``reader`` (the owner of the job whose reason this is), another user's job by its owner,
        its name quoted: ``bob's job "mal3" (j-…)`` (red team 15, R8; :func:`~jupyter_sched.wording.reasons.work_named`)."""
        other = self.admitted.get(job_id) or self.by_id.get(job_id)
        name = public_name(other.spec).strip()[:80] if other is not None else ""  # new user 10, N11
        owner = other.spec.user if other is not None and reader is not None and other.spec.user != reader else None
        return work_named(job_id, name, owner)

    def preempted_clause(self, job: Job) -> tuple[str, dict[str, Any]]:
        """``requeued after preemption by eve-two (j-9), to return borrowed quota to eveteam`` and the
        details behind it, for a job requeued by a preemption (``job.preempted_by``); ``("", {})``
        otherwise. The preemptor by name (new user 8, N9), kept from the job's last reason once it has
        ended (new user 11, N16: a bare id then); and why (N11: only "by eve-two" — not that its team
        had to give back what it borrowed), from the requeue's reason (code ``Preempted``, the core's
        own sentence) and kept the same way."""
        by = job.preempted_by
        if not by:
            return "", {}
        prior = job.reason.details if job.reason is not None else {}
        other = self.admitted.get(by) or self.by_id.get(by)
        name = public_name(other.spec).strip()[:80] if other is not None else ""
        earlier = prior.get("preempted_by_name")
        if (not name or name == by) and isinstance(earlier, str) and earlier:
            name = earlier
        owner = other.spec.user if other is not None else prior.get("preempted_by_owner")
        owner = owner if isinstance(owner, str) and owner != job.spec.user else None
        # another user's preemptor by its owner (red team 15, R8); one's own lease by its id: the clause says
        # "lease" (new user 16, N12: "by lease (l-…), a higher-priority normal job")
        named = work_named(by, "" if owner is None and name in LEASE_NAMES else name, owner)
        why = prior.get("preempted_why")
        first = prior.get("just_started") is True  # kept through the reasons that follow, as the rest
        if job.reason is not None and job.reason.code == "Preempted":
            why = job.reason.message.removeprefix(f"{JUST_STARTED}: ").removesuffix(f"; {NOT_AN_ATTEMPT}")
            why = why.removeprefix("preempted: ")
            first = job.reason.details.get("counted") is False
        said = why if isinstance(why, str) else ""
        own, blame = split_blame(said)
        if blame:  # an admin's quota change made it reclaimable: the act first, then for whom (hubadmin25 B17)
            clause = f"requeued after {blame}{preempted_how(own)}, for {named}"
        else:
            clause = f"requeued after preemption by {named}{preempted_how(said)}"  # why: new user 16, N6/N12
        if first:  # stopped just after it started: no attempt (new user 24, N1)
            clause += f", {JUST_STARTED}: {NOT_AN_ATTEMPT.removeprefix('it is back in the queue, ')}"
        name = name if name != by else ""
        at = prior.get("preempted_at")  # when (new user 18, N7), kept through the reasons that follow
        details: dict[str, Any] = {"preempted_by": by, **({"preempted_by_name": name} if name else {}),
                                   **({"preempted_at": at} if isinstance(at, str) and at else {}),
                                   **({"preempted_by_owner": owner} if owner else {}),
                                   **({"preempted_why": said} if said else {}),
                                   **({"just_started": True} if first else {})}
        return clause, details

    def holder_index(self) -> tuple[dict[str, list[Holder]], dict[str, list[Holder]]]:
        """Jobs holding GPUs at cycle start, by GPU model and by team (built on first use)."""
        if self._holder_index is None:
            by_model: dict[str, list[Holder]] = {}
            by_team: dict[str, list[Holder]] = {}
            for h in self.ledger.holders.values():
                by_model.setdefault(h.model, []).append(h)
                by_team.setdefault(h.job.spec.team, []).append(h)
            self._holder_index = (by_model, by_team)
        return self._holder_index

    def fresh_holder(self, job_id: str) -> Holder:
        """A job admitted earlier in this cycle as a :class:`Holder` (built on demand: most never are)."""
        job, placement = self.admitted[job_id], self.fresh[job_id]
        return Holder(job=job, model=placement.model, milli=job.spec.resources.total_milli)

    def overdue_clause(self, overdue: Mapping[str, float]) -> str:
        """``"1 GPU held by terminating victim b4 for 330 s (stop grace 300 s over: their processes are being
        ended)"`` for victims past their grace — what happens next, not the grace again (red team 25, R2: a
        kernel lease's leftover process read "for 170 s (grace 60 s)" for as long as it lived)."""
        parts = []
        for h, since in overdue.items():
            n = len(self.state.holdings[h].gpus) if h in self.state.holdings else 0
            parts.append(f"{n} GPU{'s' if n != 1 else ''} held by terminating victim {h} for {since:.0f} s")
        return ", ".join(parts) + f" (stop grace {self.profile.grace_s:g} s over: their processes are being ended)"

    def overdue_details(self, overdue: Mapping[str, float]) -> list[dict[str, object]]:
        """``[{job, gpus, for_s, grace_s}]`` for victims past their grace (reason details)."""
        return [{"job": h, "gpus": len(self.state.holdings[h].gpus) if h in self.state.holdings else 0,
                 "for_s": round(since), "grace_s": self.profile.grace_s} for h, since in overdue.items()]

    def reclaim_for(self, team: str) -> ReclaimPolicy:
        """The reclaim policy of ``team`` (its own rule, else the profile's)."""
        policy = self._reclaim.get(team)
        if policy is None:
            if not self.profile.reclaim:
                name = "never"
            else:
                own = self.policies.get(team)
                name = own.reclaim if own is not None and own.reclaim else self.profile.reclaim_policy
            policy = self._reclaim[team] = reclaim_policy(name)
        return policy
