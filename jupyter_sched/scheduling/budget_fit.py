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
from ..model.units import gpu_hours_text
from ..queues.limits import TimeLimitRule, run_limit

__all__ = ["BudgetShort", "bounded_by_limit", "budget_fit", "held_clause", "running_holds", "unbounded_holder"]


def bounded_by_limit(job: Job) -> bool:
    """Whether safe budget admission bounds ``job`` by a time limit. Not a kernel's lease (red29 R4): a lease
    has no time limit and takes none (:func:`~..queues.limits.effective_limit`: it ends when released, when
    its kernel stops or when idle reclaim takes it), so "its GPUs x its limit" is no bound — counted as one it
    could never start under a safe budget, and a running one held the whole budget ("all of them held by a
    running job with no time limit") so no teammate's job could start. A lease is admitted as without safe
    admission (while the budget is not spent) and charged for what it uses; a budget never stops running work."""
    return job.spec.kind is not JobKind.LEASE


def unbounded_holder(jobs: Iterable[Job], rules: Sequence[TimeLimitRule], team: str, user: str | None) -> Job | None:
    """The first running GPU job of ``team`` (``user``'s, for a user budget) that nothing bounds (no limit it is
    stopped at: what makes :func:`running_holds` ``inf``), to name it in a reason (red29 R4); None: none."""
    for j in jobs:
        if j.spec.team != team or (user is not None and j.spec.user != user) or not j.spec.resources.total_milli:
            continue
        if j.state.holds_gpus and j.stopping_since is None and bounded_by_limit(j) and \
                run_limit(j.spec, rules)[0] is None:
            return j
    return None


def running_holds(jobs: Iterable[Job], rules: Sequence[TimeLimitRule], now: datetime
                  ) -> dict[tuple[str, str | None], float]:
    """GPU-hours each budget's running work may still spend, by ``(team, None)`` (the whole team's) and
    ``(team, user)``: over GPU jobs that hold GPUs and are not being stopped, GPUs x the rest of the time limit
    they are stopped at (:func:`~..queues.limits.run_limit`: a ``time_limit: 0`` job at its queue's maximum,
    less the seconds run since the start). ``inf`` where one has no limit (nothing bounds what it spends).
    A kernel's lease holds nothing ahead (:func:`bounded_by_limit`)."""
    holds: dict[tuple[str, str | None], float] = {}
    for j in jobs:
        milli = j.spec.resources.total_milli
        if not milli or not j.state.holds_gpus or j.stopping_since is not None or not bounded_by_limit(j):
            continue
        limit_s = run_limit(j.spec, rules)[0]
        start = j.started_at or j.admitted_at
        ran = 0.0 if start is None else max(0.0, (now - start).total_seconds())
        rest = math.inf if limit_s is None else milli / GPU_MILLI * max(0.0, limit_s - ran) / 3600
        for key in ((j.spec.team, None), (j.spec.team, j.spec.user)):
            holds[key] = holds.get(key, 0.0) + rest
    return holds


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


def held_clause(left: float, hold: float, holder: Job | None = None) -> str:
    """``, 1.5 of them held by running jobs' limits`` (red28 R3); ``, all of them held by bob's running job
    j-… (train), which has no time limit`` (``holder``: :func:`unbounded_holder`); empty when running work
    holds none of what is left."""
    if hold <= 0 or left <= 0:
        return ""
    if hold == math.inf:
        if holder is not None:
            named = f"{holder.id} ({holder.spec.name})" if holder.spec.name else holder.id
            return f", all of them held by {holder.spec.user}'s running job {named}, which has no time limit"
        return ", all of them held by a running job with no time limit"
    return f", {gpu_hours_text(min(hold, left))} of them held by running jobs' limits"
