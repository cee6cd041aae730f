"""Whether a GPU job fits what a budget has left under ``budget_admission = "safe"`` — one rule for the
scheduling gate and the submit's warning (red28 R3).

Slurm's safe ``GrpTRESMins`` counts running jobs' remaining TRES-minutes: a job is admitted only while its GPUs
times its time limit fit the budget's GPU-hours left less what the budget's running work may still spend by its
limits (:func:`running_holds`). The gate (:func:`~.gates.gate`) holds a job by :func:`budget_fit`; the submit
answer's warning (:func:`~jupyter_sched.services.budget_standing.overrun_on_submit`) says by the same function
whether the job will wait (it compared with the GPU-hours spent only, so a job could pend by the running hold
with no word at submit). Pure: ``now`` is given, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model import GPU_MILLI, Job, JobKind
from ..model.kept_share import kept_charges
from ..model.units import gpu_hours_text, gpus_phrase
from ..queues.limits import TimeLimitRule, run_limit

__all__ = ["LEASE_BUDGET_S", "BudgetShort", "budget_fit", "budget_limit", "held_clause", "running_holds",
           "spending_lease", "spent_by", "unbounded_holder"]

LEASE_BUDGET_S = 3600.0
"""The default lease horizon (``SchedulingProfile.lease_budget_s``, ``c.SchedApp.lease_budget_hours`` x 3600)."""


def budget_limit(job: Job, rules: Sequence[TimeLimitRule], lease_s: float = LEASE_BUDGET_S) -> float | None:
    """The seconds safe budget admission bounds ``job`` by: its run limit (:func:`~..queues.limits.run_limit`;
    None: nothing bounds it), or for a kernel's lease — which has no time limit and takes none — the lease
    horizon ``lease_s`` (red30 R5: red29 R4 admitted a lease on any remainder and held nothing ahead, so a
    2-GPU lease ran 55 % over a 0.1 GPU-hour budget in 3 minutes; a lease is bounded instead by being released
    once its budget is spent, :mod:`.budget_spent`, and by starting only while GPUs x ``lease_s`` are left)."""
    if job.spec.kind is JobKind.LEASE:
        return lease_s
    return run_limit(job.spec, rules)[0]


def unbounded_holder(jobs: Iterable[Job], rules: Sequence[TimeLimitRule], team: str, user: str | None) -> Job | None:
    """The first running GPU job of ``team`` (``user``'s, for a user budget) that nothing bounds (no limit it is
    stopped at: what makes :func:`running_holds` ``inf``), to name it in a reason (red29 R4); None: none.
    A lease is bounded (:func:`budget_limit`)."""
    for j in jobs:
        if j.spec.team != team or (user is not None and j.spec.user != user) or not j.spec.resources.total_milli:
            continue
        if j.state.holds_gpus and j.stopping_since is None and j.spec.kind is not JobKind.LEASE and \
                run_limit(j.spec, rules)[0] is None:
            return j
    return None


def spending_lease(jobs: Iterable[Job], team: str, user: str | None, *, releasing: bool = False) -> Job | None:
    """The running kernel lease of ``team`` (``user``'s, for a user budget) holding the most GPUs, not being
    released (``releasing``: those too) — what spends the budget with no end of its own, to name in a teammate's
    reason (red30 R5: teammates were told "spent" and not that bob's running lease spends it); None: none."""
    found: Job | None = None
    for j in jobs:
        if j.spec.kind is not JobKind.LEASE or j.spec.team != team or (user is not None and j.spec.user != user):
            continue
        if j.state.holds_gpus and (releasing or j.stopping_since is None) and j.spec.resources.total_milli and \
                (found is None or j.spec.resources.total_milli > found.spec.resources.total_milli):
            found = j
    return found


def running_holds(jobs: Iterable[Job], rules: Sequence[TimeLimitRule], now: datetime,
                  lease_s: float = LEASE_BUDGET_S) -> dict[tuple[str, str | None], float]:
    """GPU-hours each budget's running work may still spend, by ``(team, None)`` (the whole team's) and
    ``(team, user)``: over GPU jobs that hold GPUs and are not being stopped, GPUs x the rest of the time limit
    they are stopped at (:func:`~..queues.limits.run_limit`: a ``time_limit: 0`` job at its queue's maximum,
    less the seconds run since the start). ``inf`` where one has no limit (nothing bounds what it spends).
    A kernel's lease holds GPUs x the lease horizon ``lease_s`` from now, however long it has run (a rolling
    hold: it spends until released, and is released once the budget is spent — red30 R5). A share is counted at
    what it is charged (:func:`charged_factor`: a share its team's shares alone hold a GPU with spends the whole GPU
    between them, red40 R1)."""
    jobs = list(jobs)
    factor = charged_factor(jobs)
    holds: dict[tuple[str, str | None], float] = {}
    for j in jobs:
        milli = j.spec.resources.total_milli
        if not milli or not j.state.holds_gpus or j.stopping_since is not None:
            continue
        charged = milli * factor.get(j.id, 1.0)
        if j.spec.kind is JobKind.LEASE:
            rest = charged / GPU_MILLI * lease_s / 3600
        else:
            limit_s = run_limit(j.spec, rules)[0]
            start = j.started_at or j.admitted_at
            ran = 0.0 if start is None else max(0.0, (now - start).total_seconds())
            rest = math.inf if limit_s is None else charged / GPU_MILLI * max(0.0, limit_s - ran) / 3600
        for key in ((j.spec.team, None), (j.spec.team, j.spec.user)):
            holds[key] = holds.get(key, 0.0) + rest
    return holds


def charged_factor(jobs: Iterable[Job]) -> dict[str, float]:
    """Per running share among ``jobs`` (absent: 1), what it is charged over what it asks — usage's rule
    (:func:`~jupyter_sched.model.kept_share.kept_charges`, red40 R1) over the holders of its GPUs among ``jobs``
    (a 0.1 share alone on its GPU: 10; 4 x 0.25 of one team: 1). Only the holders given are seen: given one team's
    jobs, a GPU it shares with another team reads as its own (counted whole: the safe side of a budget)."""
    on: dict[str, list[tuple[str, str, float]]] = {}
    for j in jobs:
        alloc = j.allocation
        if alloc is None or not j.state.holds_gpus or not 0 < alloc.gpu_milli < GPU_MILLI:
            continue
        for gpu in alloc.all_gpu_uuids():
            if not gpu.startswith("MIG-"):  # a slice is a device of its own: charged its part
                on.setdefault(gpu, []).append((j.id, j.spec.team, alloc.gpu_milli / GPU_MILLI))
    factor: dict[str, float] = {}
    for holders in on.values():
        for (job_id, _, fraction), charge in zip(holders, kept_charges([(t, f) for _, t, f in holders]), strict=True):
            factor[job_id] = max(factor.get(job_id, 1.0), charge / fraction)
    return factor


@dataclass(frozen=True, slots=True)
class BudgetShort:
    """Why a job does not fit a budget (:func:`budget_fit`).

    Attributes:
        most: GPU-hours the job may use (GPUs x its time limit); None: it has no limit, nothing bounds it.
        free: GPU-hours left less the running hold (may be below 0, or ``-inf``).
        fits_s: the longest time limit that fits ``free`` for its GPUs, in seconds (>= 0).
    """

    most: float | None
    free: float
    fits_s: float


def budget_fit(left: float, hold: float, gpus: float, limit_s: float | None) -> BudgetShort | None:
    """None when a job of ``gpus`` GPUs (> 0) for ``limit_s`` seconds (None: no limit) fits the GPU-hours ``left``
    of a budget less ``hold`` (:func:`running_holds`); else why not."""
    most = None if limit_s is None else gpus * limit_s / 3600
    free = left - hold
    if most is not None and most <= free:
        return None
    return BudgetShort(most=most, free=free, fits_s=max(0.0, free) / gpus * 3600)


def held_clause(left: float, hold: float, holder: Job | None = None, lease: Job | None = None) -> str:
    """``, 1.5 of them held by running jobs' limits`` (red28 R3); ``, all of them held by bob's running job
    j-… (train), which has no time limit`` (``holder``: :func:`unbounded_holder`); ``, 1.5 of them held by
    running work, among it bob's running lease l-… (2 GPUs until it is released or the budget is spent)``
    (``lease``: :func:`spending_lease`, red30 R5); empty when running work holds none of what is left."""
    if hold <= 0 or left <= 0:
        return ""
    if hold == math.inf:
        if holder is not None:
            named = f"{holder.id} ({holder.spec.name})" if holder.spec.name else holder.id
            return f", all of them held by {holder.spec.user}'s running job {named}, which has no time limit"
        return ", all of them held by a running job with no time limit"
    if lease is not None:
        gpus = gpus_phrase(lease.spec.resources.total_milli / GPU_MILLI)
        return (f", {gpu_hours_text(min(hold, left))} of them held by running work, among it {lease.spec.user}'s "
                f"running lease {lease.id} ({gpus} until it is released or the budget is spent)")
    return f", {gpu_hours_text(min(hold, left))} of them held by running jobs' limits"


def spent_by(lease: Job, safe: bool) -> str:
    """What a spent budget's reason adds about the running lease that spent it (red30 R5): ``bob's lease l-… (2
    GPUs) spent the last of it and is being released`` (``safe``: :mod:`.budget_spent` releases it), else
    ``bob's running lease l-… (2 GPUs) still spends it`` (``"overrun"``: a budget stops no running work)."""
    gpus = gpus_phrase(lease.spec.resources.total_milli / GPU_MILLI)
    if safe:
        return f"{lease.spec.user}'s lease {lease.id} ({gpus}) spent the last of it and is being released"
    return f"{lease.spec.user}'s running lease {lease.id} ({gpus}) still spends it"
