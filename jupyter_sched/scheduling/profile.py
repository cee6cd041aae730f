"""A scheduling profile: which plugins run and the frozen policy knobs (STYLE §4, §6).

The edge (traitlets on ``SchedApp``) builds one of these per named profile; the core only reads
it. Defaults follow DESIGN.md: bin-packing plus NVLink locality, reclaim and priority preemption
on, EASY backfill on, 60 s grace, 5 minutes minimum runtime protection.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ValidationError
from ..model import PriorityClass
from ..placement.fragmentation import check_fragmentation
from ..placement.placer import PlacementConfig
from ..preemption.policy import preemption_policy, reclaim_policy
from ..queues.limits import TimeLimitRule
from ..queues.order import QUEUE_SORTS
from ..queues.windows import TimeWindow

__all__ = ["ELECT_OVERDUE_MAX", "GPU_SHARING", "SchedulingProfile"]

GPU_SHARING = ("any", "team", "none")
"""Values of :attr:`SchedulingProfile.gpu_sharing`."""


BUDGET_ADMISSION = ("overrun", "safe")
"""``SchedulingProfile.budget_admission``'s values (``c.SchedApp.budget_admission``)."""


ELECT_OVERDUE_MAX = 100.0
"""The largest ``SchedulingProfile.elect_overdue`` (x the promised wait; 0 is off)."""


@dataclass(frozen=True, slots=True)
class SchedulingProfile:
    """Frozen policy for one cycle.

    Attributes:
        name: profile name.
        placement: filters, weighted scores and candidates per worker.
        preemption: allow within-team priority preemption (False: as ``preemption_policy="never"``).
        reclaim: allow teams within their guarantee to reclaim borrowed GPUs from others
            (False: as every team's reclaim rule ``never``).
        preemption_policy: the within-team :class:`~jupyter_sched.preemption.PreemptionPolicy`
            by name: ``lower-class`` (default: a higher class preempts ``preemptible_classes``),
            ``lower-or-newer-equal`` (also newer jobs of the same preemptible class; Kueue's
            ``LowerOrNewerEqualPriority``) or ``never``.
        reclaim_policy: the :class:`~jupyter_sched.preemption.ReclaimPolicy` of teams whose
            :class:`~jupyter_sched.model.TeamPolicy` names none: ``any`` (default; DESIGN.md),
            ``lower-or-equal``, ``lower`` or ``never`` (Kueue's ``reclaimWithinCohort``).
        preemptible_classes: classes a higher class of the same team may preempt.
        borrow_within_cohort: ``""`` (off, the default) or a class name, the threshold: a job that
            must *borrow* to fit may evict jobs of other, borrowing teams of a class lower than its
            own and at most this one (Kueue's ``borrowWithinCohort: {policy: LowerPriority,
            maxPriorityThreshold}``). Such a victim's team is never taken below its guarantee, so
            the victim cannot reclaim its GPUs back (no loop); reclaim itself (for jobs within
            their guarantee) is unchanged.
        min_runtime_s: seconds since start before another team's job may be reclaimed (a rule,
            Slurm's ``PreemptExemptTime``: the reclaimer waits, its reason and ETA saying until
            when — red team 15 R13); within a team, lower-class victims younger than this are
            spared where another choice exists.
        reclaim_cooldown_s: seconds what a reclaim takes back is to be held: a preemptor (job or lease) that
            ended sooner after its reclaim, by any cause, holds its team's reclaims of other teams' running
            borrowed work until this long after its reclaim (``Snapshot.reclaims``, :mod:`.preempt.cooldown`;
            red31 R5, red32 R5: a reclaim then a cancel, an exit, a 1-s time limit or a lease's release at
            once restarted another team's work at no cost to the taker). The team's other ways in are not
            held. 0 = off; at most an hour (what the edge reads back).
        grace_s: seconds between SIGTERM and SIGKILL for victims.
        checkpoint_signal: send the checkpoint signal (SIGUSR1) to checkpointable victims first.
        backfill: backfill around blocked jobs (False: a blocked job holds nothing back).
        backfill_mode: ``"easy"`` (Lifka 1995: the first blocked job per GPU model gets a
            reservation; later jobs start if they do not delay it) or ``"conservative"`` (Mu'alem &
            Feitelson 2001: every job is reserved on the ETA projection in queue order and starts
            only when that does not delay any job reserved before it). ETAs replay either rule
            forward (:mod:`.eta`).
        windows: time windows (admit / borrow) per team or class.
        timezone: IANA zone for windows that name none (never the host zone).
        max_preemption_attempts: pending jobs per cycle allowed to search for victims (bounds
            the cost of a cycle on a saturated cluster).
        defragment: migrate checkpointable jobs (fewest moves) so a ``Fragmented`` single-node job
            gets one node (case 006); off by default — moving work costs a restart.
        queue_sort: ``"fair"`` (class, fair share, then the user's usage counting the job's own
            expected GPU-seconds, submit time), ``"fair-usage"`` (the same with the user's usage
            alone), ``"fifo"`` (class,
            submit time) or ``"short-first"`` (class, highest response ratio from the expected
            runtimes of ``eta_source``); see :data:`jupyter_sched.queues.order.QUEUE_SORTS`.
        time_limits: default and maximum time limits per queue (team) and class for jobs that give
            none (:mod:`jupyter_sched.queues.limits`); backfill and ETAs plan with them. Empty: a
            job without a limit is never backfilled and the ETAs behind it say so.
        eta_move_margin_s: a pending job's ETA moving by more than this (seconds) is recorded with
            its cause (in the reason's ``details["eta_moved"]`` and an ``eta_moved`` audit record).
        eta_depth: pending jobs per GPU model that get a projected start each cycle (bounds the
            cost of a cycle with a very long queue; the rest say how many jobs are ahead).
        eta_source: what running and queued jobs are expected to last, for ETAs (and the
            ``fair`` and ``short-first`` orders): ``"limits"`` (their time limits) or ``"history"``
            (``Snapshot.runtime_estimates`` where known, capped by the limit; the default: on the
            loaded replay of ``benchmarks/jct_loaded.py`` it cuts the ETA error by more than half over
            limits). Backfill always plans with limits, which are guaranteed.
        gpu_sharing: who a fractional job may share a GPU with: ``"any"`` (the default here: packing
            as the simulator replays the traces), ``"team"`` (only jobs of its own team; a server's
            default, ``c.SchedApp.gpu_sharing``) or ``"none"`` (a fraction never shares a GPU with
            another job). A shared GPU is time-sliced with no isolation of compute or memory: eve's
            1/1000-GPU jobs were packed onto alice's half GPU (red-team 5 finding 2). The
            per-candidate placement path applies it; the vectorised (FGD) policies do not.
        max_running_cpu_jobs_per_user: most CPU-only (0-GPU) jobs one user may have admitted or
            running at once; more pend with code ``CpuJobLimit`` until one ends (0 = no cap, the
            in-process default; servers take ``c.SchedApp.max_running_cpu_jobs_per_user``). 0-GPU
            work is charged to no quota, so without it one hub user ran ~1,000 processes on the
            host (red-team 15 R2, new user 15 N9).
        host_ports: an inference job's declared port is a resource of the node it runs on (one job
            per port and node: :mod:`.ports`; red team 15 R11) — jobs share the node's network, as
            the local executor runs them. False where each job has its own (Kubernetes pods: a
            ``containerPort`` binds nothing on the node).
        budget_admission: ``"overrun"`` (the default): a GPU-hour budget holds new GPU work once it
            is spent; a job may start on any remainder (its submit is warned). ``"safe"``: a job whose
            GPUs times its time limit pass what its budget has left, less what its running work may
            still spend (GPUs x the rest of each running job's limit, and this cycle's admissions':
            red28 R3), also pends, code ``BudgetExhausted``, naming the numbers — Slurm's
            ``AccountingStorageEnforce=safe`` (``GrpTRESMins`` counts running jobs' remaining
            TRES-minutes); a job with no time limit then pends too, and a running one with none leaves
            nothing (hubadmin25 B22). A kernel's GPU lease has no time limit: it is bounded by
            ``lease_budget_s`` instead (red30 R5).
        lease_budget_s: under ``budget_admission = "safe"``, the seconds of its GPUs a kernel's lease
            must find left in its budget to start, and holds ahead of its teammates' jobs while it runs
            (a rolling horizon: GPUs x this, from now); a running lease is released once its budget is
            spent (:mod:`.budget_spent`), its kernel kept running (``c.SchedApp.lease_budget_hours`` x
            3600; default one hour). Red30 R5: a lease passed safe admission on any remainder and ran on
            past the budget unbounded.
        elect_overdue: a pending job waiting longer than this many times the wait it was promised
            when queued (its first ETA without progress reports, :func:`.eta.promises`; at least
            600 s) is visited first in its class and so holds its model's EASY reservation
            (:func:`jupyter_sched.queues.order.elect_overdue`; issue 16: gangs overtaken again and
            again by lighter later jobs), unless its user's running job outran its learnt runtime
            (:func:`.runtimes.elected_in`); 0: off; at most :data:`ELECT_OVERDUE_MAX`
            (``c.SchedApp.elect_overdue``). Default 0.75: on the loaded replay
            (``benchmarks/jct_loaded.py``) the ETA error 20 % -> 11 % of the median wait at the same
            average JCT; the second workload's JCT vs SJF +12.8 % -> +20 % (the price: one-node
            jobs wait longer behind elected gangs).
    """

    name: str = "default"
    placement: PlacementConfig = field(default_factory=PlacementConfig)
    preemption: bool = True
    reclaim: bool = True
    preemption_policy: str = "lower-class"
    reclaim_policy: str = "any"
    preemptible_classes: tuple[str, ...] = ("low",)
    borrow_within_cohort: str = ""
    min_runtime_s: float = 300.0
    reclaim_cooldown_s: float = 900.0
    grace_s: float = 60.0
    checkpoint_signal: bool = True
    backfill: bool = True
    backfill_mode: str = "easy"
    windows: tuple[TimeWindow, ...] = ()
    timezone: str = "UTC"
    max_preemption_attempts: int = 64
    queue_sort: str = "fair"
    defragment: bool = False
    time_limits: tuple[TimeLimitRule, ...] = ()
    eta_move_margin_s: float = 600.0
    eta_depth: int = 2000
    eta_source: str = "history"
    gpu_sharing: str = "any"
    max_running_cpu_jobs_per_user: int = 0
    host_ports: bool = True
    max_ports_per_user: int = 4
    budget_admission: str = "overrun"
    lease_budget_s: float = 3600.0
    elect_overdue: float = 0.75

    def __post_init__(self) -> None:
        check_fragmentation(self.placement.fragmentation)
        if self.gpu_sharing not in GPU_SHARING:
            raise ValidationError(f"unknown gpu_sharing {self.gpu_sharing!r}", field="gpu_sharing",
                                  hint="use " + ", ".join(GPU_SHARING))
        if self.queue_sort not in QUEUE_SORTS:
            raise ValidationError(f"unknown queue_sort {self.queue_sort!r}", field="queue_sort",
                                  hint="use one of " + ", ".join(sorted(QUEUE_SORTS)))
        preemption_policy(self.preemption_policy, self.preemptible_classes)  # raises on a bad name
        reclaim_policy(self.reclaim_policy)
        if self.borrow_within_cohort and self.borrow_within_cohort not in {p.value for p in PriorityClass}:
            raise ValidationError(f"unknown borrow_within_cohort class {self.borrow_within_cohort!r}",
                                  field="borrow_within_cohort", hint="use low, normal, high or '' (off)")
        if self.backfill_mode not in ("easy", "conservative"):
            raise ValidationError(f"unknown backfill_mode {self.backfill_mode!r}", field="backfill_mode",
                                  hint="use easy or conservative")
        if self.eta_source not in ("limits", "history"):
            raise ValidationError(f"unknown eta_source {self.eta_source!r}", field="eta_source",
                                  hint="use limits or history")
        if isinstance(self.elect_overdue, bool) or not isinstance(self.elect_overdue, (int, float)) \
                or not 0 <= self.elect_overdue <= ELECT_OVERDUE_MAX:  # NaN fails too
            raise ValidationError(f"elect_overdue must be a number from 0 to {ELECT_OVERDUE_MAX:g} "
                                  f"(got {self.elect_overdue!r})", field="elect_overdue",
                                  hint="e.g. 0.75 (elect a job once it waited 3/4 of its promised wait); 0 = off")
        if self.eta_move_margin_s < 0 or self.eta_depth < 0:
            raise ValidationError("eta_move_margin_s and eta_depth must be >= 0", field="eta_move_margin_s",
                                  hint="use e.g. eta_move_margin_s=600, eta_depth=2000")
        if isinstance(self.max_ports_per_user, bool) or not isinstance(self.max_ports_per_user, int) \
                or self.max_ports_per_user < 0:
            raise ValidationError(f"max_ports_per_user must be a whole number >= 0 (got {self.max_ports_per_user!r})",
                                  field="max_ports_per_user", hint="e.g. 4; 0 = no cap")
        if self.budget_admission not in BUDGET_ADMISSION:
            raise ValidationError(f"unknown budget_admission {self.budget_admission!r}", field="budget_admission",
                                  hint="use " + " or ".join(BUDGET_ADMISSION))
        horizon = self.lease_budget_s
        if isinstance(horizon, bool) or not isinstance(horizon, (int, float)) or not 0 < horizon <= 366 * 86400:
            raise ValidationError(f"lease_budget_hours must be a number of hours above 0, at most a year (got "
                                  f"{horizon if not isinstance(horizon, (int, float)) else horizon / 3600!r})",
                                  field="lease_budget_hours", hint="e.g. 1 (a lease needs 1 h of its GPUs left "
                                  "in a safe budget to start)")
        cap = self.max_running_cpu_jobs_per_user
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
            raise ValidationError(f"max_running_cpu_jobs_per_user must be a whole number >= 0 (got {cap!r})",
                                  field="max_running_cpu_jobs_per_user", hint="e.g. 8; 0 = no cap")
        cool = self.reclaim_cooldown_s
        if isinstance(cool, bool) or not isinstance(cool, (int, float)) or not 0 <= cool <= 3600:
            raise ValidationError(f"reclaim_cooldown_s must be between 0 and 3600 seconds (got {cool!r})",
                                  field="reclaim_cooldown_s", hint="e.g. 900; 0 = off")
        if self.grace_s < 0 or self.min_runtime_s < 0:
            raise ValidationError("grace_s and min_runtime_s must be >= 0 seconds", field="grace_s",
                                  hint="use e.g. grace_s=60, min_runtime_s=300")
