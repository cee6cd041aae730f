"""Fair-share and budget usage kept as running sums over the usage rows (red26 R1).

Every snapshot (each engine cycle, every dry run) needs each user's decayed GPU-seconds and each
budget's GPU-hours this period. Reading every usage row of the last month for that each time made
a busy month (or one user's flood of instant jobs, ~190k rows a day) slow every start ten- to
fifty-fold. As Slurm's priority plugin keeps a decayed usage per association, this ledger reads a
closed row once and folds it into sums:

* decayed GPU-seconds per user of the closed rows still in the window (ended after ``since``):
  a closed interval's decayed value only shrinks by ``2^(-Δt/h)``, so the sum is scaled by it each
  time (exponential decay composes); a row leaving the window (its end passes ``since``) is read
  once more and taken off;
* allocated GPU-seconds of the closed rows per ``(team, user, UTC day)``: a budget period starts
  at 00:00 UTC, so its figure is the sum of the days from its start (days before the window and
  the earliest budget period's start — a quarter reaches 92 days back — are dropped).

Rows still open (or ending after now) are re-read each time and counted afresh — but for one whose
job does not hold its GPUs (a runaway row, :mod:`~jupyter_sched.accounting.runaway`: left out, one
WARNING naming it, not billed to now; hubadmin26 B15); rows added since
the last read are read once (a cursor on the row id). So a snapshot decodes the open rows, the new
rows and the rows leaving the window: O(open + new), not every row of the month. The figures equal
:func:`~jupyter_sched.accounting.decayed_gpu_seconds` and
:func:`~jupyter_sched.accounting.budget_usage` over the old full read (within float rounding).

A full read (the first, at each start) has the database sum the closed rows per user (decayed) and
per ``(team, user, UTC day)`` (:meth:`~jupyter_sched.store.StoreTx.usage_ledger_first`) and decodes
only the open rows, those spanning days and those not of the store's shape (red37 R5: decoding
300,000 rows of one user's flood held everyone's first start after each restart ~10 s).

The table's highest id is checked each time and its rows counted every :data:`CHECK_EVERY`; a
row removed by hand (doctor's repairs) or a window moved back (clock, half-life) makes the next
read a full one.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

from ..accounting import UsageInterval, gpu_seconds, period_start
from ..accounting.runaway import RunawayUsage
from ..accounting.usage import decayed_seconds
from ..model import Budget
from ..store import Store

__all__ = ["UsageLedger", "usage_since"]

log = logging.getLogger(__name__)

_DAY = timedelta(days=1)
CHECK_EVERY = timedelta(minutes=1)
"""How often the table's rows are counted (O(rows) in the database): a row removed behind the
running sums by hand is noticed within this time, and the sums read again."""


def usage_since(now: datetime, half_life_s: float) -> datetime:
    """Start of the usage window of fair share and budgets: 4 half-lives or 31 days back, the earlier."""
    return min(now - timedelta(seconds=4 * half_life_s), now - timedelta(days=31))


def _decayed(iv: UsageInterval, now: datetime, k: float) -> float:
    """``iv``'s GPU-seconds decayed to ``now`` (the arithmetic of ``decayed_gpu_seconds``)."""
    return decayed_seconds(iv, now=now, k=k) or 0.0


@dataclass
class _Sums:
    """What the ledger has folded: see :class:`UsageLedger`."""

    cursor: int = 0  # every row with an id up to it was read
    count: int = 0  # the table's rows up to the cursor (removal check)
    checked: datetime | None = None  # when ``count`` was last counted, not added to
    open_ids: set[int] = field(default_factory=set)  # rows up to the cursor still open when last read
    at: datetime | None = None  # when the decayed sums were last scaled
    since: datetime | None = None  # the window's start then: closed rows ending after it are folded
    floor: datetime | None = None  # the earliest of ``since`` and the budgets' period starts then (days kept)
    decayed: dict[str, float] = field(default_factory=dict)  # per user, closed rows, decayed to ``at``
    days: dict[tuple[str, str, date], float] = field(default_factory=dict)  # (team, user, day) → GPU-s


class UsageLedger:
    """Running fair-share and budget sums over a store's usage rows (see the module docstring).

    Thread-safe: the engine's cycles and dry runs from the web threads share one ledger.
    ``decoded`` counts the rows decoded by the last :meth:`read` (the cost the ledger bounds);
    ``full_reads`` the reads that were full ones (summed by the database: red37 R5).
    """

    def __init__(self, store: Store, *, half_life_s: float) -> None:
        self.store = store
        self.half_life_s = half_life_s
        self._k = math.log(2) / half_life_s if half_life_s > 0 else 0.0
        self._lock = threading.Lock()
        self._sums = _Sums()
        self._said: set[int] = set()  # runaway rows already warned of
        self._summed: set[int] = set()  # closed rows of the full read the database summed (red37 R5)
        self.decoded = 0
        self.full_reads = 0  # how many reads were full ones (read every row of the window again)

    def reset(self) -> None:
        """Forget the sums: the next :meth:`read` reads the window in full."""
        with self._lock:
            self._sums = _Sums()

    def read(self, now: datetime, budgets: Iterable[Budget]) -> tuple[dict[str, float],
                                                                       dict[tuple[str, str | None], float]]:
        """``(decayed GPU-seconds per user, GPU-hours this period per (team, user or None))`` at ``now``.

        Raises:
            ValueError: the half-life is not > 0.
            StoreError, TypeError: the store could not be read (the sums are forgotten, the next
                read is a full one).
        """
        if self.half_life_s <= 0:
            raise ValueError("half_life_s must be > 0")
        with self._lock:
            try:
                return self._read(now, list(budgets))
            except BaseException:
                self._sums = _Sums()
                raise

    def _read(self, now: datetime, budgets: list[Budget]) -> tuple[dict[str, float],
                                                                   dict[tuple[str, str | None], float]]:
        since = usage_since(now, self.half_life_s)
        # budget periods may reach further back than fair share's window (a quarter: up to 92 days)
        floor_at = min([since, *(period_start(now, b.period) for b in budgets)])
        sums = self._sums
        if sums.at is not None and (now < sums.at or sums.since is None or since < sums.since
                                    or sums.floor is None or floor_at < sums.floor):
            sums = self._sums = _Sums()  # the clock, the window or a budget's period moved back: read it again
        self.decoded = 0
        with self.store.transaction(write=False) as tx:
            check = sums.checked is None or now - sums.checked >= CHECK_EVERY or now < sums.checked
            count, above, top = tx.usage_extent(sums.cursor, count=check)
            if sums.at is not None and (top < sums.cursor or (check and count - above != sums.count)):
                # rows removed behind the cursor (a repair by hand) or committed there late: read again
                sums = self._sums = _Sums()
                check, count, above, top = True, *tx.usage_extent(0)
            summed: tuple[dict[str, float], dict[tuple[str, str, date], float]] | None = None
            leaving: list[tuple[int, UsageInterval]] = []
            if sums.at is None:
                fresh, summed = self._first(tx, since=since, floor_at=floor_at, now=now, top=top)
            else:
                fresh = tx.usage_delta(after_id=sums.cursor, up_to_id=top, ids=sums.open_ids, since=since)
                assert sums.since is not None
                leaving = tx.usage_delta(ended=(sums.since, since), up_to_id=sums.cursor) if since > sums.since \
                    else []
            runaway = tx.runaway_usage() if any(iv.ended_at is None for _, iv in fresh) else []
        self._say_runaways(runaway)
        left_out = {r.row_id for r in runaway}
        self.decoded = len(fresh) + len(leaving)
        scale = 1.0 if sums.at is None else math.exp(-self._k * ((now - sums.at) / timedelta(seconds=1)))
        decayed = {user: value * scale for user, value in sums.decayed.items()}
        if summed is not None:  # the database's sums of the closed rows it could sum (red37 R5)
            decayed, sums.days = dict(summed[0]), dict(summed[1])
        for row_id, iv in leaving:
            if row_id not in sums.open_ids:
                decayed[iv.user] = decayed.get(iv.user, 0.0) - _decayed(iv, now, self._k)
        floor = floor_at.astimezone(timezone.utc).date()
        days = {key: seconds for key, seconds in sums.days.items() if key[2] >= floor}
        still_open: list[UsageInterval] = []
        open_ids: set[int] = set()
        for row_id, iv in fresh:
            if iv.ended_at is None or iv.ended_at > now:
                if row_id not in left_out:  # its job does not hold the GPU: not billed to now (B15)
                    still_open.append(iv)
                open_ids.add(row_id)
                continue
            if iv.ended_at > since and row_id not in self._summed:
                decayed[iv.user] = decayed.get(iv.user, 0.0) + _decayed(iv, now, self._k)
            self._fold_days(days, iv, floor)
        self._summed = set()
        if check:
            sums.count, sums.checked = count, now
        else:
            sums.count += above
        sums.cursor, sums.open_ids = max(sums.cursor, top), open_ids
        sums.at, sums.since, sums.floor, sums.decayed, sums.days = now, since, floor_at, decayed, days
        return self._figures(now, budgets, still_open)

    def _first(self, tx: Any, *, since: datetime, floor_at: datetime, now: datetime, top: int,
               ) -> tuple[list[tuple[int, UsageInterval]], tuple[dict[str, float], dict[tuple[str, str, date], float]]
                          | None]:
        """The full read: ``(rows to fold here, the database's sums or None)``. The database sums the
        closed rows (:meth:`StoreTx.usage_ledger_first`), so the engine's thread decodes the open rows,
        those spanning days and those not of the store's shape, not every row of the window (red37 R5:
        300,000 rows held the first start after each restart ~10 s); ``self._summed`` names the decoded
        closed rows whose decayed value the database already has. Without SQLite's math functions the
        rows are decoded as before (same figures, old cost)."""
        self._summed = set()
        self.full_reads += 1
        got = tx.usage_ledger_first(since=since, floor=floor_at, now=now, k=self._k, up_to_id=top)
        if got is None:
            return tx.usage_delta(after_id=0, up_to_id=top, since=floor_at), None
        decayed, days, rows = got
        self._summed = {row_id for row_id, iv, summed in rows
                        if summed and iv.ended_at is not None and iv.ended_at <= now}
        return [(row_id, iv) for row_id, iv, _ in rows], (decayed, days)

    def _say_runaways(self, runaway: list[RunawayUsage]) -> None:
        """One WARNING per open row left out because its job does not hold the GPU (hubadmin26 B15)."""
        for row in runaway:
            if row.row_id not in self._said:
                log.warning("fair share and budgets: %s", row.warning())
        self._said = {row.row_id for row in runaway}

    @staticmethod
    def _fold_days(days: dict[tuple[str, str, date], float], iv: UsageInterval, floor: date) -> None:
        """Add closed ``iv``'s GPU-seconds to ``days``, split at 00:00 UTC, from day ``floor`` on."""
        assert iv.ended_at is not None
        start = max(iv.started_at, datetime(floor.year, floor.month, floor.day, tzinfo=timezone.utc))
        while start < iv.ended_at:
            day = start.astimezone(timezone.utc).date()
            cut = min(iv.ended_at, datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + _DAY)
            key = (iv.team, iv.user, day)
            days[key] = days.get(key, 0.0) + iv.charged * ((cut - start) / timedelta(seconds=1))
            start = cut

    def _figures(self, now: datetime, budgets: list[Budget], still_open: list[UsageInterval],
                 ) -> tuple[dict[str, float], dict[tuple[str, str | None], float]]:
        sums = self._sums
        decayed = {user: max(0.0, value) for user, value in sums.decayed.items()}
        for iv in still_open:
            value = _decayed(iv, now, self._k)
            if value > 0:
                decayed[iv.user] = decayed.get(iv.user, 0.0) + value
        decayed = {user: value for user, value in decayed.items() if value > 0}
        hours: dict[tuple[str, str | None], float] = {}
        for budget in budgets:
            begin = period_start(now, budget.period)
            first = begin.date()
            seconds = sum(value for (team, user, day), value in sums.days.items()
                          if day >= first and team == budget.team and (budget.user is None or user == budget.user))
            seconds += sum(gpu_seconds(iv, now=now, since=begin) for iv in still_open
                           if iv.team == budget.team and (budget.user is None or iv.user == budget.user))
            hours[(budget.team, budget.user)] = seconds / 3600
        return decayed, hours
