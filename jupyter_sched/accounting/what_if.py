"""Quota planning's "what if": a past period's usage replayed against a proposed quota line (hubadmin26 B7).

An admin planning next quarter's lines asks what a line would have meant last quarter: ``jupyter-sched quotas
what-if --team cv --guaranteed 4 --limit 2 --quarter 2026Q4`` (``GET quotas/what-if``). The team's allocated
GPUs over time are read from its usage intervals (what ran, as the reports count it: each interval once, runaway
rows left out) and compared, instant by instant, with the line:

- **within guarantee**: GPU-hours at or below ``guaranteed`` (no other team's reclaim could take them);
- **borrowed**: GPU-hours above the guarantee and within ``guaranteed + borrowing_limit`` (they would have run
  as borrowed work, which another team's reclaim of its guarantee can take);
- **over limit**: GPU-hours above ``guaranteed + borrowing_limit``: under that line this work would not have
  started then — it would have waited (and then run later, which the figures cannot say: the rest of the
  queue would have moved too; that needs a replay through the simulator).

Also the hours (wall clock) the team spent above each, and its peak. The same figures are given for the line in
force now (the comparison). Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise

from .usage import UsageInterval

__all__ = ["LineReplay", "replay_line"]

_EPS = 1e-9


@dataclass(frozen=True)
class LineReplay:
    """A line's meaning over a period (module docstring). GPU-hours are allocated GPU-hours; hours are wall clock.

    Attributes:
        guaranteed / borrowing_limit: the line (``borrowing_limit`` None: no limit).
        used_gpu_hours: all the team's allocated GPU-hours in the period (on the line's model).
        within_guarantee_gpu_hours, borrowed_gpu_hours, over_limit_gpu_hours: their split (they add up to ``used``).
        hours_above_guarantee, hours_above_limit: how long it held more than the guarantee, than the limit.
        peak_gpus: the most GPUs it held at once.
    """

    guaranteed: float
    borrowing_limit: float | None
    used_gpu_hours: float
    within_guarantee_gpu_hours: float
    borrowed_gpu_hours: float
    over_limit_gpu_hours: float
    hours_above_guarantee: float
    hours_above_limit: float
    peak_gpus: float

    def to_dict(self) -> dict[str, float | None]:
        return {"guaranteed": self.guaranteed, "borrowing_limit": self.borrowing_limit,
                "used_gpu_hours": round(self.used_gpu_hours, 6),
                "within_guarantee_gpu_hours": round(self.within_guarantee_gpu_hours, 6),
                "borrowed_gpu_hours": round(self.borrowed_gpu_hours, 6),
                "over_limit_gpu_hours": round(self.over_limit_gpu_hours, 6),
                "hours_above_guarantee": round(self.hours_above_guarantee, 6),
                "hours_above_limit": round(self.hours_above_limit, 6), "peak_gpus": round(self.peak_gpus, 6)}


def replay_line(intervals: Iterable[UsageInterval], *, team: str, gpu_model: str | None, guaranteed: float,
                borrowing_limit: float | None, since: datetime, until: datetime) -> LineReplay:
    """``team``'s allocation in ``[since, until)`` (its intervals on ``gpu_model``; None: every model) against
    the line ``guaranteed`` + ``borrowing_limit``. ``intervals`` are the billed ones (open ones already ended
    at the report time by the caller, or ending after ``until``).

    Raises:
        ValueError: ``until`` not after ``since``, a negative guarantee or limit.
    """
    if until <= since:
        raise ValueError("until must be after since")
    if guaranteed < 0 or (borrowing_limit is not None and borrowing_limit < 0):
        raise ValueError("guaranteed and borrowing_limit must be >= 0")
    ceiling = None if borrowing_limit is None else guaranteed + borrowing_limit
    steps: dict[datetime, float] = {}
    for iv in intervals:
        if iv.team != team or (gpu_model is not None and iv.gpu_model != gpu_model):
            continue
        start = max(iv.started_at, since)
        end = min(iv.ended_at or until, until)
        if end <= start:
            continue
        steps[start] = steps.get(start, 0.0) + iv.charged  # a GPU its shares alone hold counts whole (red40 R1)
        steps[end] = steps.get(end, 0.0) - iv.charged
    used = within = borrowed = over = above_g = above_l = peak = 0.0
    held = 0.0
    times = sorted(steps)
    for at, after in pairwise(times):
        held += steps[at]
        hours = (after - at) / timedelta(hours=1)
        if held <= _EPS or hours <= 0:
            continue
        peak = max(peak, held)
        used += held * hours
        within += min(held, guaranteed) * hours
        top = held if ceiling is None else min(held, ceiling)
        borrowed += max(0.0, top - guaranteed) * hours
        if ceiling is not None and held > ceiling + _EPS:
            over += (held - ceiling) * hours
            above_l += hours
        if held > guaranteed + _EPS:
            above_g += hours
    return LineReplay(guaranteed=guaranteed, borrowing_limit=borrowing_limit, used_gpu_hours=used,
                      within_guarantee_gpu_hours=within, borrowed_gpu_hours=borrowed, over_limit_gpu_hours=over,
                      hours_above_guarantee=above_g, hours_above_limit=above_l, peak_gpus=peak)
