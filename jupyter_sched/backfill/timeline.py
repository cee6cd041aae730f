"""Free capacity over future time as a step function — the resource profile of conservative backfill.

A :class:`Timeline` says how many units (GPUs of a node or pool, or milli-GPUs of a quota line)
are free from now on, given when the current holders release them. Jobs are then *reserved* on
it one by one (Mu'alem & Feitelson, "Utilization, predictability, workloads, and user runtime
estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 2001: conservative backfill
gives every queued job a reservation; Slurm's ``sched/backfill`` keeps the same kind of
node-time map to answer ``squeue --start``).

Times are seconds after the cycle's ``now`` (floats; ``math.inf`` = never). The step function
is two parallel lists: ``ts[i]`` (ascending, ``ts[0] == 0``) and ``free[i]``, the units free on
``[ts[i], ts[i+1])``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable

__all__ = ["Timeline"]


class Timeline:
    """Free units over time for one capacity (a node, a pool or a quota line).

    Args:
        free_now: units free at time 0.
        releases: ``(time, units)`` freed at ``time`` (> 0) by holders that end then; holders
            that never end (no known end) are simply not listed.
    """

    __slots__ = ("free", "ts")

    def __init__(self, free_now: int, releases: Iterable[tuple[float, int]] = ()) -> None:
        self.ts: list[float] = [0.0]
        self.free: list[int] = [free_now]
        for t, units in sorted(releases):
            if not math.isfinite(t):
                continue
            t = max(t, 0.0)
            if t == self.ts[-1]:
                self.free[-1] += units
            else:
                self.ts.append(t)
                self.free.append(self.free[-1] + units)

    def copy(self) -> Timeline:
        """An independent copy (reservations on it leave this one as it is)."""
        other = Timeline.__new__(Timeline)
        other.ts, other.free = list(self.ts), list(self.free)
        return other

    def at(self, t: float) -> int:
        """Units free at time ``t``."""
        return self.free[bisect.bisect_right(self.ts, t) - 1]

    def min_free(self, t0: float, t1: float) -> int:
        """Fewest units free at any time in ``[t0, t1)``."""
        ts, free = self.ts, self.free
        i = bisect.bisect_right(ts, t0) - 1
        low = free[i]
        i += 1
        n = len(ts)
        while i < n and ts[i] < t1:
            if free[i] < low:
                low = free[i]
            i += 1
        return low

    def earliest(self, units: int, duration: float, after: float = 0.0) -> float | None:
        """First time ``t >= after`` with ``units`` free throughout ``[t, t + duration)`` (None: never).

        O(breakpoints): a segment without room rules out every start before its end, so the search
        jumps past it.
        """
        ts, free = self.ts, self.free
        n = len(ts)
        i = bisect.bisect_right(ts, max(after, 0.0)) - 1  # the segment holding the candidate start
        t = after
        while True:
            end = t + duration
            j, bad = i, -1
            while j < n and (j == i or ts[j] < end):
                if free[j] < units:
                    bad = j
                    break
                j += 1
            if bad < 0:
                return t
            i = bad + 1
            if i >= n:
                return None
            t = ts[i]

    def free_since(self, units: int, t: float) -> float:
        """When the stretch of time up to ``t`` through which at least ``units`` have been free
        began (the start of ``t``'s own segment at the latest; 0.0, now, at the earliest)."""
        ts, free = self.ts, self.free
        i = bisect.bisect_right(ts, t) - 1
        while i > 0 and free[i - 1] >= units:
            i -= 1
        return ts[max(i, 0)]

    def next_change(self, after: float) -> float | None:
        """The first breakpoint strictly after ``after`` (None: nothing changes any more)."""
        i = bisect.bisect_right(self.ts, after)
        return self.ts[i] if i < len(self.ts) else None

    def reserve(self, t0: float, t1: float, units: int) -> None:
        """Take ``units`` during ``[t0, t1)`` (``t1`` may be ``math.inf``)."""
        if units <= 0 or t1 <= t0:
            return
        i0 = self._split(t0)
        i1 = self._split(t1) if math.isfinite(t1) else len(self.ts)
        free = self.free
        free[i0:i1] = [f - units for f in free[i0:i1]]  # one pass in a comprehension (thousands of
        # breakpoints once every pending job of a large queue is reserved: an indexed loop cost ~2 % of a cycle)

    def _split(self, t: float) -> int:
        """Index of the breakpoint at ``t``, inserting one if needed."""
        ts = self.ts
        i = bisect.bisect_left(ts, t)
        if i < len(ts) and ts[i] == t:
            return i
        ts.insert(i, t)
        self.free.insert(i, self.free[i - 1])
        return i
