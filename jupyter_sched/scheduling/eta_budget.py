"""The GPU-hour budgets an ETA projection spends as it starts projected work (newuser35 N6; pure).

After a budget's reset the ETA projection let every job a spent budget held start from the reset as if the budget
stayed free: two 10-minute jobs on 3 GPUs spend a 0.1 GPU-hour day budget in 2 minutes, yet the three 1-hour jobs
behind them were promised the same day. :class:`Spend` charges each budget, as the projection starts work, with the
GPU-hours that work runs by the same runtimes the projection plans with (time limits, or learnt runtimes), on top of
what the budget's period has used (``Snapshot.usage.gpu_hours_this_period``) and what its running work spends from
now to its expected end. A job whose projected start finds a budget it is charged to spent (used >= GPU-hours, the
gate's rule: :func:`.gates._budget`) is moved to that budget's next reset after the start — where nothing of the new
period is used yet, so it may start then — and the projection goes on from there.

The projection is a plan: new work, runs longer or shorter than planned and a ``"safe"`` budget's stricter rule
(a job starts only while its GPUs x its limit fit what is left: :mod:`.budget_fit`) are not foreseen; the ETA says
it assumes the budget lasts (:func:`~jupyter_sched.wording.reasons.render_reason`). A budget of 0 GPU-hours is
never charged (nothing could start under it in any period; its jobs keep the reset as their ETA's lower bound).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from ..model import GPU_MILLI, Budget, Job
from ..model.horizon import HORIZON_S
from ..model.periods import PERIODS, next_period_start, period_start

__all__ = ["Spend"]


class Spend:
    """What each budget of a cycle's snapshot has spent, as a projection starts work (module doc).

    Built once per projection (``budgets`` the snapshot's, ``used`` GPU-hours of each ``(team, user or None)`` in
    its current period, ``running`` ``(job, end in seconds after now)`` of the work holding GPUs now). Times are
    seconds after ``now``.

    Attributes:
        moved: per job id moved past a reset, ``(the last reset it was moved to, the period start whose budget
            the work ahead spends first — None: the current one —, the budget's period)`` (given: the cycle's
            ``budget_moved``, read by the ETA's record).
        checked: the jobs whose projected start was checked against their budgets (and found within them).
    """

    __slots__ = ("_applies", "_base", "_bounds", "_budgets", "_now", "_spans", "checked", "moved")

    def __init__(self, now: datetime, budgets: Sequence[Budget], used: Mapping[tuple[str, str | None], float],
                 running: Sequence[tuple[Job, float]], *,
                 moved: dict[str, tuple[datetime, datetime | None, str]] | None = None,
                 checked: set[str] | None = None) -> None:
        self._now = now
        self._budgets = [b for b in budgets if b.gpu_hours > 0]
        self._base = [used.get((b.team, b.user), 0.0) for b in self._budgets]
        self._spans: list[list[tuple[float, float, float]]] = [[] for _ in self._budgets]  # (start, end, GPUs)
        self._applies: dict[tuple[str, str], tuple[int, ...]] = {}
        self._bounds: dict[tuple[str, float], tuple[float, float]] = {}
        self.moved = {} if moved is None else moved
        self.checked = set() if checked is None else checked
        for job, end in running:
            self.charge(job, 0.0, end)

    def __bool__(self) -> bool:
        return bool(self._budgets)

    def of(self, job: Job) -> tuple[int, ...]:
        """The budgets (indices) a GPU ``job`` is charged to: its team's and its user's there."""
        spec = job.spec
        if not spec.resources.total_milli:
            return ()
        key = (spec.team, spec.user)
        found = self._applies.get(key)
        if found is None:
            found = self._applies[key] = tuple(i for i, b in enumerate(self._budgets)
                                               if b.team == spec.team and b.user in (None, spec.user))
        return found

    def charge(self, job: Job, start: float, end: float) -> None:
        """Charge ``job``'s GPUs from ``start`` to ``end`` (``math.inf``: no known end) to its budgets."""
        gpus = job.spec.resources.total_milli / GPU_MILLI
        for i in self.of(job):
            self._spans[i].append((start, end, gpus))

    def defer(self, job: Job, t: float) -> float | None:
        """None when ``job`` may start at ``t`` by its budgets; else the reset (seconds after now) it is moved to:
        the next reset, after ``t``, of a budget it is charged to that the work charged before has spent by ``t``
        (recorded in :attr:`moved`)."""
        to: float | None = None
        spent_from, period = 0.0, ""
        for i in self.of(job):
            budget = self._budgets[i]
            begin, reset = self._period(budget.period, t)
            used = self._base[i] if begin <= 0 else 0.0
            lo = max(begin, 0.0)
            used += sum(g * (min(e, t) - max(s, lo)) for s, e, g in self._spans[i] if s < t and e > lo) / 3600
            if used >= budget.gpu_hours and (to is None or reset > to):
                to, spent_from, period = reset, begin, budget.period
        if to is None:
            self.checked.add(job.id)
            return None
        self.moved[job.id] = (self._now + timedelta(seconds=to),
                              None if spent_from <= 0 else self._now + timedelta(seconds=spent_from), period)
        self.checked.discard(job.id)
        return to

    def _period(self, period: str, t: float) -> tuple[float, float]:
        """``(start, next reset)`` of the ``period`` holding ``t``, in seconds after now (memoised by the day)."""
        key = (period, t // 86400 if t < HORIZON_S else math.inf)
        found = self._bounds.get(key)
        if found is not None and found[0] <= t < found[1]:
            return found
        at = self._now + timedelta(seconds=min(t, HORIZON_S))
        name = period if period in PERIODS else "month"
        begin, reset = period_start(at, name), next_period_start(at, name)
        found = self._bounds[key] = ((begin - self._now).total_seconds(), (reset - self._now).total_seconds())
        return found
