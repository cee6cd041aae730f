"""Usage rows that overlap on one GPU: found, counted once, and said (hubadmin25 B7).

The store opens one usage interval per (job, attempt, GPU), so a GPU is never held by more than one
whole GPU's worth of intervals at once — unless a restore, an adoption bug or a hand edit left two
rows overlapping. One such pair used to fail the whole month's bill ("the database failed, retry").
:func:`resolve_overlaps` keeps every interval as held by whichever row held the GPU first and cuts
the time a later row overlaps it (the later row starts when the GPU has room for it again; a row
wholly inside another is dropped), so the report counts each GPU-second at most once and carries a
warning per cut (:meth:`UsageOverlap.warning`). ``jupyter-sched doctor`` lists the same pairs with
the SQL that makes the store say what the report counts.

Pure: no I/O. Rows whose own times are wrong (an end before the start) are left as they are for
:func:`~.report.check_intervals` to refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from ..model.units import gpu_hours_phrase, to_iso
from .usage import UsageInterval

__all__ = ["UsageOverlap", "resolve_overlaps"]

_SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class UsageOverlap:
    """A later usage row cut where it overlapped an earlier one on the same GPU.

    Attributes:
        held: the row that held the GPU first (counted).
        cut: the overlapping row (its time from ``cut.started_at`` to ``until`` is not counted).
        until: where the counted part of ``cut`` begins (its end, or later, when none of it counts).
    """

    held: UsageInterval
    cut: UsageInterval
    until: datetime

    @property
    def dropped(self) -> bool:
        """True when none of ``cut`` is counted (it lies wholly inside what was held)."""
        return self.cut.ended_at is not None and self.until >= self.cut.ended_at

    @property
    def gpu_hours(self) -> float:
        """GPU-hours of ``cut`` not counted."""
        end = self.until if self.cut.ended_at is None else min(self.until, self.cut.ended_at)
        return max(0.0, (end - self.cut.started_at) / timedelta(hours=1)) * self.cut.share

    def warning(self) -> str:
        """The sentence a report carries for it."""
        return (f"usage of job {self.cut.job_id} (attempt {self.cut.attempt}, {self.cut.user}) on GPU "
                f"{self.cut.gpu_uuid} overlaps job {self.held.job_id}'s ({self.held.user}) from "
                f"{to_iso(self.cut.started_at)} to {to_iso(self.until)}: {gpu_hours_phrase(self.gpu_hours, f'{self.gpu_hours:.3g}')} counted "
                f"once, for job {self.held.job_id} — `jupyter-sched doctor` lists such rows and how to repair them")



def resolve_overlaps(intervals: Sequence[UsageInterval], *,
                     now: datetime) -> tuple[list[UsageInterval], list[UsageOverlap]]:
    """The intervals with every overlap on a GPU counted once, and the cuts made.

    Per GPU, in order of start: an interval that would make the GPU held more than once (shares over 1
    GPU, or its own job holding it twice) starts instead at the first instant from which it fits to
    its end (an end of an earlier interval); one that never fits is dropped. A GPU without overlap
    keeps its intervals untouched (one sweep).

    Args:
        intervals: usage intervals (aware datetimes); open ones end at ``now``.
        now: the report time.

    Returns:
        ``(intervals, overlaps)``: the counted intervals (input order, cut ones replaced, dropped ones
        left out) and one :class:`UsageOverlap` per cut.
    """
    per_gpu: dict[str, list[int]] = {}
    for index, iv in enumerate(intervals):
        if (iv.ended_at or now) > iv.started_at:
            per_gpu.setdefault(iv.gpu_uuid, []).append(index)
    replaced: dict[int, UsageInterval | None] = {}
    overlaps: list[UsageOverlap] = []
    for indexes in per_gpu.values():
        rows = [intervals[i] for i in indexes]
        if not _overlapping(rows, now):
            continue
        accepted: list[tuple[datetime, datetime, UsageInterval]] = []
        for i in sorted(indexes, key=lambda k: (intervals[k].started_at, intervals[k].job_id, intervals[k].attempt)):
            iv = intervals[i]
            end = iv.ended_at or now
            # what ended by this start is near no later row (none starts earlier): only the rows still held are
            # looked at, in their order — every row against all before it took 47 of 66 s of a 20,000-row report
            # with overlaps (s27-perf: quadratic in a GPU's rows once one pair overlapped)
            accepted = [a for a in accepted if a[1] > iv.started_at]
            start, held = _fit(iv, end, accepted) if accepted else (iv.started_at, None)  # none held: it fits
            if held is None:
                accepted.append((start, end, iv))
                continue
            overlaps.append(UsageOverlap(held, iv, start))
            kept = replace(iv, started_at=start) if start < end else None
            replaced[i] = kept
            if kept is not None:
                accepted.append((start, end, kept))
    out = [replaced.get(i, iv) for i, iv in enumerate(intervals)]
    return [iv for iv in out if iv is not None], overlaps


def _overlapping(rows: Sequence[UsageInterval], now: datetime) -> bool:
    """True when at some instant the rows hold more than one GPU, or one job holds it twice."""
    points: list[tuple[datetime, int, float, str]] = []
    for iv in rows:
        points += [(iv.started_at, 1, iv.share, iv.job_id), (iv.ended_at or now, 0, iv.share, iv.job_id)]
    points.sort(key=lambda p: (p[0], p[1]))  # ends before starts at the same instant
    held, holders = 0.0, dict[str, int]()
    for _at, is_start, share, job in points:
        sign = 1 if is_start else -1
        held += sign * share
        holders[job] = holders.get(job, 0) + sign
        if is_start and (held > 1 + _SLACK or holders[job] > 1):
            return True
    return False


def _fit(iv: UsageInterval, end: datetime,
         accepted: Sequence[tuple[datetime, datetime, UsageInterval]]) -> tuple[datetime, UsageInterval | None]:
    """``(start, None)`` when ``iv`` fits from its own start; else the first instant from which it
    fits to ``end`` (``end`` or later: never) and the first accepted interval it overlapped."""
    near = [a for a in accepted if a[1] > iv.started_at and a[0] < end]
    candidates = sorted({iv.started_at, *(e for _s, e, _a in near if iv.started_at < e < end)})
    first: UsageInterval | None = None
    for start in candidates:
        clash = _clash(iv, start, end, near)
        if clash is None:
            return start, first
        first = first or clash
    return end, first


def _clash(iv: UsageInterval, start: datetime, end: datetime,
           near: Sequence[tuple[datetime, datetime, UsageInterval]]) -> UsageInterval | None:
    """An accepted interval ``iv`` would overlap over ``[start, end)`` (None: it fits)."""
    for at in sorted({start, *(s for s, _e, _a in near if start < s < end)}):
        live = [a for s, e, a in near if s <= at < e]
        own = next((a for a in live if a.job_id == iv.job_id), None)
        if own is not None:
            return own
        if sum(a.share for a in live) + iv.share > 1 + _SLACK:
            return live[0]
    return None
