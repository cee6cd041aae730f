"""Demand: what users ask for (JobSpec, ResourceRequest) and the Job state machine.

A *lease* (interactive GPUs bound to a kernel) is a job of kind :attr:`JobKind.LEASE`:
it is queued, placed, preempted and reclaimed exactly like batch work, which keeps one
scheduling path (Kueue treats every Workload alike for the same reason). The REST API and the
panel show leases separately.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum
from typing import Any

from ..errors import ConflictError, ValidationError, shown
from .frozen import fast_init
from .names import LEASE_NAMES, default_lease_name, kernel_named
from .resources import GPU_MILLI

__all__ = [
    "Allocation",
    "Hold",
    "Job",
    "JobKind",
    "JobSpec",
    "JobState",
    "LEASE_NAMES",
    "PendingReason",
    "PriorityClass",
    "ResourceRequest",
    "TERMINAL_STATES",
    "WorkerGroup",
    "default_lease_name",
    "public_name",
    "work_noun",
]


class PriorityClass(str, Enum):
    """The three priority classes (DESIGN.md): more levels invite priority inversion."""

    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"

    @property
    def rank(self) -> int:
        """Larger is more important: high 2, normal 1, low 0."""
        # ``_value_``, not ``.value``: Enum's ``value`` is a Python-level descriptor, and a dict built
        # per read on top made a rank cost ~2 µs; the cycle reads ranks per pending job
        return _RANKS[self._value_]


_RANKS = {"high": 2, "normal": 1, "low": 0}


class JobKind(str, Enum):
    """What a piece of work is."""

    TRAINING = "training"     # batch: runs to completion
    INFERENCE = "inference"   # a service: runs until stopped, restarted on failure
    LEASE = "lease"           # interactive GPUs bound to a kernel


class JobState(str, Enum):
    """Job lifecycle: pending → admitted → running → a terminal state.

    ``preempted`` is a transient state: a preempted job is requeued (back to ``pending``,
    keeping its original submit time) unless the policy stops it.
    """

    PENDING = "pending"
    ADMITTED = "admitted"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    PREEMPTED = "preempted"
    LOST = "lost"
    REJECTED = "rejected"

    @property
    def terminal(self) -> bool:
        """True when the job will never run again."""
        return self in TERMINAL_STATES

    @property
    def holds_gpus(self) -> bool:
        """True while the job's allocation counts against inventory and quota."""
        # by value, not ``self in (JobState.ADMITTED, ...)``: a member looked up on an Enum class is
        # slow, and every cycle asks this of every job
        return self._value_ in _HOLDING


_HOLDING = frozenset({"admitted", "running"})

TERMINAL_STATES = frozenset(
    {JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.LOST, JobState.REJECTED}
)

_TRANSITIONS: dict[JobState, frozenset[JobState]] = {
    JobState.PENDING: frozenset({JobState.ADMITTED, JobState.CANCELLED, JobState.REJECTED}),
    JobState.ADMITTED: frozenset(
        {JobState.RUNNING, JobState.PENDING, JobState.CANCELLED, JobState.FAILED,
         JobState.PREEMPTED, JobState.LOST}),
    JobState.RUNNING: frozenset(
        {JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.PREEMPTED,
         JobState.LOST}),
    JobState.PREEMPTED: frozenset({JobState.PENDING, JobState.CANCELLED, JobState.FAILED}),
    JobState.SUCCEEDED: frozenset(),
    JobState.FAILED: frozenset(),
    JobState.CANCELLED: frozenset(),
    JobState.LOST: frozenset(),
    JobState.REJECTED: frozenset(),
}


@dataclass(frozen=True, slots=True)
class WorkerGroup:
    """A named group of identical workers of a heterogeneous gang (case 024; issue 16).

    A job may ask for, say, one 1-GPU ``launcher`` and four 8-GPU ``trainer`` workers: all start or
    none, each on one node; placed, charged and shown as one job.

    Attributes:
        name: the group's name (lower-case letters, digits and ``-``; it names the group's pods).
        gpus: whole GPUs per worker of the group (>= 0).
        workers: workers in the group (>= 1).
        cpu_millis: CPU per worker in millicores (0 = not asked).
        memory_mib: host memory per worker in MiB (0 = not asked).
    """

    name: str
    gpus: int
    workers: int = 1
    cpu_millis: int = 0
    memory_mib: int = 0


@dataclass(frozen=True, slots=True)
class ResourceRequest:
    """What one job needs.

    Attributes:
        gpus: whole GPUs per worker (>= 0). With ``gpu_milli < 1000`` it must be 1.
        gpu_milli: share of each GPU in milli-GPUs (1..1000); below 1000 the job shares a GPU.
        gpu_models: acceptable GPU models in preference order; empty means any model.
        min_memory_mib: minimum memory per GPU in MiB (0 = any).
        mig_profile: a MIG profile such as ``"1g.10gb"`` instead of whole GPUs.
        nvlink: require all GPUs of a worker inside one NVLink domain.
        cpu_millis: CPU per worker in millicores.
        memory_mib: host memory per worker in MiB.
        workers: number of workers of a gang (multi-node job), each with ``gpus`` GPUs;
            all start or none.
        node_selector: labels a node must carry.
        tolerations: taint keys (or ``key=value``) this job tolerates.
        groups: named worker groups of a heterogeneous gang (empty: ``workers`` identical
            workers). With groups, ``gpus`` is the largest worker's GPUs, ``workers`` the number of
            workers of all groups, ``cpu_millis``/``memory_mib`` the largest worker's — build such a
            request with :meth:`of_groups`. GPU model, memory per GPU, NVLink, node selector and
            tolerations apply to every worker.

    Raises:
        ValidationError: groups whose summary fields disagree with them (field ``groups``).
    """

    gpus: int = 1
    gpu_milli: int = GPU_MILLI
    gpu_models: tuple[str, ...] = ()
    min_memory_mib: int = 0
    mig_profile: str | None = None
    nvlink: bool = False
    cpu_millis: int = 0
    memory_mib: int = 0
    workers: int = 1
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[str, ...] = ()
    groups: tuple[WorkerGroup, ...] = ()

    def __post_init__(self) -> None:
        groups = self.groups
        if groups and (self.gpus != max(g.gpus for g in groups) or self.workers != sum(g.workers for g in groups)
                       or self.gpu_milli != GPU_MILLI):
            raise ValidationError("the request's gpus/workers do not match its worker groups", field="groups",
                                  hint="build grouped requests with ResourceRequest.of_groups(...)")

    @classmethod
    def of_groups(cls, groups: tuple[WorkerGroup, ...], **shared: Any) -> ResourceRequest:
        """A heterogeneous gang of ``groups``; ``shared``: the fields every worker shares
        (``gpu_models``, ``min_memory_mib``, ``nvlink``, ``node_selector``, ``tolerations``)."""
        return cls(gpus=max(g.gpus for g in groups), workers=sum(g.workers for g in groups),
                   cpu_millis=max(g.cpu_millis for g in groups), memory_mib=max(g.memory_mib for g in groups),
                   groups=groups, **shared)

    @property
    def total_gpus(self) -> int:
        """Whole GPUs over all workers (a fractional request counts as 1 GPU slot)."""
        if self.groups:
            return sum(g.gpus * g.workers for g in self.groups)
        return self.gpus * self.workers

    @property
    def total_milli(self) -> int:
        """Milli-GPUs over all workers (what quota and capacity arithmetic use)."""
        if self.groups:
            return GPU_MILLI * sum(g.gpus * g.workers for g in self.groups)
        if self.gpus == 0:
            return 0
        return self.gpus * self.gpu_milli * self.workers

    def worker_requests(self) -> tuple[ResourceRequest, ...]:
        """One single-worker request per worker, in group order (``workers`` copies without groups)."""
        one = replace(self, workers=1, groups=())
        if not self.groups:
            return (one,) * self.workers
        out: list[ResourceRequest] = []
        for g in self.groups:
            out.extend([replace(one, gpus=g.gpus, cpu_millis=g.cpu_millis, memory_mib=g.memory_mib)] * g.workers)
        return tuple(out)

    def worker_groups(self) -> tuple[str, ...]:
        """The group name of each worker, in the order of :meth:`worker_requests` (empty without groups)."""
        return tuple(g.name for g in self.groups for _ in range(g.workers))

    @property
    def fractional(self) -> bool:
        """True when the job shares one GPU with others."""
        return self.gpu_milli < GPU_MILLI

    @property
    def requested_gpus(self) -> float:
        """GPUs per worker as the user asks for them: ``0.5`` for half a GPU (``gpus`` is 1 then, the
        share is in ``gpu_milli``), ``2`` for two whole ones, ``0`` for none — what the audit's
        ``submit`` record says (new user 14, N6: a 0.3-GPU job was audited as ``"gpus": 1``)."""
        return self.gpu_milli / GPU_MILLI if self.gpus and self.fractional else self.gpus


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A user's request for work, as validated at submission.

    Attributes:
        name: human name (not unique).
        user: owner (identity from auth, never from the request body).
        team: team / queue the job is charged to.
        kind: training, inference service or interactive lease.
        priority: priority class.
        resources: what it needs.
        time_limit_s: wall-clock limit in seconds, > 0 (None = none given: the queue's default or
            maximum applies for planning, see :mod:`jupyter_sched.queues.limits`).
        command: argv to run (local executor) or container command (Kubernetes).
        script: path of a Python script to run with the kernel's interpreter.
        notebook: path of a notebook to execute headless.
        working_dir: directory to run in.
        env: extra environment variables.
        image: container image (Kubernetes executor only).
        port: service port for inference services.
        kernel_id: the Jupyter kernel a lease is bound to.
        kernel_notebook: for a lease, the notebook whose kernel it serves (the Jupyter session's
            path, relative to its server's root). Private like ``kernel_id``: its owner and admins
            see it, nobody else (a lease's name is public); a job blocked by its owner's own lease
            names it to that owner (issue 20: "%gpu release in that notebook" — which one?).
        parent_job_id: for a lease, the batch job whose process asked for it (a notebook or
            script job's kernel, which finds its id in ``JUPYTER_SCHED_JOB_ID``). The lease ends
            when that job stops running, however it ends — even by SIGKILL, when no code in the
            kernel can release it (new user 5, finding 3). Always a job of the lease's own user.
        released_at_exit: for a lease with no ``kernel_id``, the process that asked gives it back
            itself when it exits (a kernel this server did not start — ``jupyter nbconvert
            --execute``, nbclient, papermill, VS Code — whose ``%gpu request`` registers the
            release at exit and on SIGTERM). Held by a live kernel, not "for no kernel" (new user
            16, N1). Private like ``kernel_id``: its owner and admins see it.
        asking_process: for a ``released_at_exit`` lease, ``(pid, start ticks, host)`` of the process that
            asked (:mod:`jupyter_sched.asking_process`): a service on that same host ends the lease once
            that process is gone without releasing it (killed: newuser41 N1). The asker's word.
        profile: name of the admin-defined template this spec was built from.
        checkpointable: the job handles SIGUSR1 by checkpointing; it may be preempted/moved cheaply.
        parameters: values for a notebook's ``parameters`` cell (papermill's convention) or a
            script's ``--name value`` arguments (see :mod:`jupyter_sched.definitions.parameters`).
        definition_id: the job definition this job is a run of (set by the definitions service,
            never taken from a request body).
        source: text of the script named by ``script`` (then a bare file name), carried with the
            job so it runs where the submitter's files are not (``%%schedule`` through a hub); the
            executor writes it into the job's work directory as the job's owner.
        notebook_json: JSON text of the notebook named by ``notebook`` (then a bare file name),
            carried the same way.
        time_limit_source: where ``time_limit_s`` came from when the job gave none — ``"queue default"``,
            ``"queue max"`` or ``"unlimited asked"`` (written with the limit at its admission, newuser28 N8, so its
            line says ``its 30m time limit (queue default; none given)``); None: given (or none at all).
        not_kept: what a finished job's stored row no longer keeps (red30 R4): ``env_bytes`` — its env's size
            in bytes, its values (and names past the bound) not kept; ``command_bytes`` — the bytes of its
            command cut off. Empty while everything is kept.
        no_preempt: the request never preempts nor reclaims (``%gpu request 1 --no-preempt``; newuser36 N6: the
            quickstart's demo lease evicted another team's running job on a shared hub): it starts on free GPUs
            only (its own team's guarantee included, when free) and otherwise waits, nominating no victim — as a
            Slurm job that is no preemptor, Kueue's ``reclaimWithinCohort: Never`` for one workload.
    """

    name: str
    user: str
    team: str = "default"
    kind: JobKind = JobKind.TRAINING
    priority: PriorityClass = PriorityClass.NORMAL
    resources: ResourceRequest = field(default_factory=ResourceRequest)
    time_limit_s: float | None = None
    command: tuple[str, ...] = ()
    script: str | None = None
    notebook: str | None = None
    working_dir: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    image: str | None = None
    port: int | None = None
    kernel_id: str | None = None
    profile: str | None = None
    checkpointable: bool = False
    unlimited: bool = False
    parameters: Mapping[str, Any] = field(default_factory=dict)
    definition_id: str | None = None
    source: str | None = None
    notebook_json: str | None = None
    kernel_notebook: str | None = None
    parent_job_id: str | None = None
    released_at_exit: bool = False
    asking_process: tuple[int, int, str] | None = None
    time_limit_source: str | None = None
    not_kept: Mapping[str, int] = field(default_factory=dict)
    no_preempt: bool = False

    def __post_init__(self) -> None:
        # The core refuses a zero or negative limit itself, not only the API (case 033): a limit
        # of 0 read as "ends at once" lets a job backfill ahead of a reservation and then delay
        # it without bound. "No limit" is ``None``; the API maps an explicit 0 to that.
        limit = self.time_limit_s
        if limit is not None and not (isinstance(limit, (int, float)) and math.isfinite(limit) and limit > 0):
            raise ValidationError(f"time_limit_s must be a positive number of seconds (got {shown(limit)})",
                                  field="time_limit_s",
                                  hint="give e.g. 3600 for one hour, or leave it out for no limit")
        if limit is not None and self.unlimited:
            raise ValidationError("a job cannot have a time limit and be unlimited", field="time_limit_s",
                                  hint="give either a time limit or unlimited, not both")


def public_name(spec: JobSpec) -> str:
    """``spec.name`` as users other than its owner may read it: a lease still named after its
    kernel id (stored before N11, or asked for by an older client) reads as its default name."""
    if spec.kind is JobKind.LEASE and kernel_named(spec.name, spec.kernel_id):
        return default_lease_name(spec.kernel_id, spec.kernel_notebook, released_at_exit=spec.released_at_exit)
    return spec.name


_NOUNS = {"lease": "lease", "inference": "service"}


def work_noun(spec: JobSpec) -> str:
    """What a reason calls a piece of work by its kind: ``lease`` (a kernel's GPUs), ``service``
    (inference), else ``job`` — new user 16, N12: a lease that preempted a job was "a
    higher-priority normal job"."""
    return _NOUNS.get(spec.kind.value, "job")


@fast_init
@dataclass(frozen=True, slots=True)
class Allocation:
    """Where a job runs: per worker, a node and GPUs on it.

    Attributes:
        node: node of the first worker (convenience for single-node work).
        gpu_uuids: GPUs of the first worker (GPU or MIG UUIDs).
        gpu_milli: milli-GPUs taken on each listed GPU (1000 for whole GPUs).
        workers: for gangs, one ``(node, gpu_uuids)`` per worker; single-node work has one.
    """

    node: str
    gpu_uuids: tuple[str, ...]
    gpu_milli: int = GPU_MILLI
    workers: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def per_worker(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Every worker's ``(node, gpu_uuids)``."""
        return self.workers or ((self.node, self.gpu_uuids),)

    def all_gpu_uuids(self) -> tuple[str, ...]:
        """All GPU UUIDs over all workers."""
        return tuple(uuid for _, uuids in self.per_worker() for uuid in uuids)


@fast_init
@dataclass(frozen=True, slots=True)
class PendingReason:
    """Why a job waits: exactly one primary reason, as data with numbers (STYLE §5).

    Attributes:
        code: one of ``ExceedsQuota``, ``BorrowingLimitReached``, ``BudgetExhausted``, ``BudgetUnbounded``,
            ``WaitingForCapacity``, ``Fragmented``, ``NoMatchingGpuModel``, ``NoMatchingMigProfile``
            (no GPU here has the MIG profile asked for), ``UnhealthyGpu``,
            ``Priority``, ``OutsideTimeWindow``, ``WaitingForPreemption``, ``Preempted``,
            ``Unschedulable``, ``Backoff``, ``CpuJobLimit`` (its user runs the most CPU-only jobs
            allowed: it starts when one of them ends), ``PortInUse`` (an inference job whose declared
            port another job holds on every node), ``MigPartitioned`` (whole GPUs never hold it, the
            physical GPUs would once an admin turns MIG mode off: it pends, case 022), ``Reinstalled``
            (jupyter_sched was reinstalled under the running server: batch jobs wait for its restart, newuser31 N10).
        message: the reason rendered as one sentence, numbers included.
        details: the numbers (JSON-serializable), e.g. ``{"requested": 4, "free": 2}``.
        unblock: what would unblock it, one sentence.
        position: 1-based position in its queue (None when not queued).
        eta: reservation / expected start time (None = unknown, with ``eta_reason``).
        eta_reason: why the ETA is unknown, when it is.
        per_flavor: one structured entry per GPU model tried (case 005).
        predicted_start: the start predicted when the job was first queued (carried unchanged
            from cycle to cycle; None: unknown then) — compared with the actual start to
            measure ETA accuracy (case 034).
    """

    code: str
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)
    unblock: str = ""
    position: int | None = None
    eta: datetime | None = None
    eta_reason: str = ""
    per_flavor: tuple[Mapping[str, Any], ...] = ()
    predicted_start: datetime | None = None


@dataclass(frozen=True, slots=True)
class Hold:
    """A hold put on a pending job by a person (hubadmin25 B18; Slurm's ``scontrol hold``): the job stays
    pending, is never admitted nor nominated GPUs and takes no reservation, until it is released.

    Attributes:
        by: who held it (a user name).
        at: when (UTC).
        admin: held by an admin acting on another user's job, or as an admin: only an admin may release
            it (Slurm's admin hold, priority 0, which a user's ``scontrol release`` does not lift).
    """

    by: str
    at: datetime
    admin: bool = False


@dataclass(frozen=True, slots=True)
class Job:
    """A job as the scheduler sees it: spec plus lifecycle state.

    Attributes:
        id: unique id (injected; the core never generates ids).
        spec: the validated request.
        state: lifecycle state.
        submitted_at: original submit time (UTC); kept when a preempted job is requeued.
        admitted_at / started_at / finished_at: lifecycle times (UTC).
        allocation: where it runs, while it holds GPUs.
        reason: the primary pending reason, while pending.
        exit_code: process exit code when finished.
        message: last human-readable status message (e.g. why it was lost).
        attempts: how many times it was admitted (preemptions requeue it): the run number (its usage
            intervals, its job token), counting runs stopped just after they started too.
        false_starts: runs stopped before or just after they started (new user 24, N1: within the
            engine's poll interval of the executor's start confirmation) — no attempts: its owner is
            told of :attr:`counted_attempts` starts.
        not_before: earliest time it may be admitted again (requeue backoff).
        preempted_by: id of the job whose admission preempted this one last (loop guard).
        nominated: GPUs held for this job after a preemption it caused (case 004), or taken
            over from a lower-class job of its team (case 032).
        stopping_since: when a stop was requested (preemption, cancel, time limit) while the job
            still holds its GPUs; it releases them when it exits (at the latest after the grace
            period). The core never picks such a job as a victim again.
        held: the person's hold that keeps it pending (:class:`Hold`), None when none does.
        top_at: when an admin put it first within its class (``jupyter-sched top``; Slurm's ``scontrol
            top``): the queue order puts topped jobs first in their class, the latest topped first.
        eligible_at: when a person last released its hold (verify26 V13; Slurm's ``EligibleTime``), None
            when never held and released: its place in the queue and its age count from then
            (:attr:`queued_at`), so a job held early and released late goes behind everyone who submitted
            meanwhile; ``submitted_at`` stays its submit time for display.
    """

    id: str
    spec: JobSpec
    state: JobState = JobState.PENDING
    submitted_at: datetime | None = None
    admitted_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    allocation: Allocation | None = None
    reason: PendingReason | None = None
    exit_code: int | None = None
    message: str = ""
    attempts: int = 0
    false_starts: int = 0
    not_before: datetime | None = None
    preempted_by: str | None = None
    nominated: Allocation | None = None
    stopping_since: datetime | None = None
    held: Hold | None = None
    top_at: datetime | None = None
    eligible_at: datetime | None = None

    def transition(self, new_state: JobState, **changes: Any) -> Job:
        """Return a copy in ``new_state`` with ``changes`` applied.

        Raises:
            ConflictError: the transition is not allowed (e.g. succeeded → running).
        """
        if new_state is not self.state and new_state not in _TRANSITIONS[self.state]:
            raise ConflictError(
                f"job {self.id} cannot go from {self.state.value} to {new_state.value}",
                field="state",
                hint=f"allowed from {self.state.value}: "
                + (", ".join(sorted(s.value for s in _TRANSITIONS[self.state])) or "none (final)"))
        return replace(self, state=new_state, **changes)

    @property
    def counted_attempts(self) -> int:
        """Runs that count as attempts: :attr:`attempts` less :attr:`false_starts` (never below 0)."""
        return max(0, self.attempts - self.false_starts)

    @property
    def queued_at(self) -> datetime | None:
        """Where it stands in the queue and what its age counts from: :attr:`eligible_at` (a release)
        when set, else :attr:`submitted_at` (UTC; None only for a job not yet submitted)."""
        return self.eligible_at if self.eligible_at is not None else self.submitted_at

    @property
    def is_lease(self) -> bool:
        """True for interactive leases bound to a kernel."""
        return self.spec.kind is JobKind.LEASE
