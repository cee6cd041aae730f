"""Budget and report periods: calendar days, weeks (from Monday), months and quarters, in UTC.

The one place their arithmetic lives (hubadmin26 B7 added ``"quarter"``: Jan to Mar, Apr to Jun, Jul to Sep,
Oct to Dec, as Slurm's ``PriorityUsageResetPeriod=QUARTERLY``); budgets, their resets, the ETA of a job
waiting for one and ``usage --by period`` rows all count from here. Pure: no clock reads.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Literal

__all__ = ["PERIODS", "PERIODS_TEXT", "Period", "next_period_start", "period_name", "period_start", "period_starts",
           "said_to_reader", "this_period_text"]

Period = Literal["day", "week", "month", "quarter"]
PERIODS: tuple[str, ...] = ("day", "week", "month", "quarter")
"""Every period a budget or a ``by=period`` report may use, shortest first."""
PERIODS_TEXT = "day, week, month or quarter"


def this_period_text(period: object) -> str:
    """The current ``period`` as a reader says it: ``"today"`` for a day (newuser27 n4: "0.21 of 0.1
    GPU-hours used this day"), ``"this week"``, ``"this month"``, ``"this quarter"``; another value
    ``"this <value>"``. The one place budget lines name their period (CLI, reasons, PUT warnings; the
    panel's ``thisPeriodText`` says the same). A day is a UTC day: it is "today" only to a reader known to be
    on UTC (:func:`~.units.reader_day_is_utc`: the CLI's and the magics' reader, :func:`~.units.shown_in`), else
    ``"this UTC day"`` — in another zone (newuser30 n11: "used today, resets 16:00 PST" in Los Angeles, whose
    today had begun hours later) and in the server's own words (a reason, a warning, GET quotas' ``text``:
    ``jupyter-sched quotas`` said "today" in Los Angeles), which readers in every zone read."""
    if period == "day":
        from .units import reader_day_is_utc

        return "today" if reader_day_is_utc() else UTC_DAY
    return f"this {period}"


UTC_DAY = "this UTC day"
"""A daily budget's period in the server's own words (:func:`this_period_text` with no reader known)."""


def said_to_reader(text: str, now: datetime | None = None, *, ref: datetime | None = None) -> str:
    """A server sentence as its reader says it: "this UTC day" is "today" to a reader on UTC
    (:func:`~.units.reader_day_is_utc`), and each clock in it is said in the reader's zone
    (:func:`~.units.clocks_said`, ``now`` and ``ref`` its; newuser38 n30: a warning's "until Dec 7 11:00 UTC" beside
    the CLI's own PST) — the server writes the form true for every reader (newuser30 n11: the pending reason said
    "today" where ``status`` said "this UTC day"); the panel's ``clocksAsOf`` does the same."""
    from .units import clocks_said, reader_day_is_utc

    text = clocks_said(text, now, ref=ref)
    return text.replace(UTC_DAY, "today") if UTC_DAY in text and reader_day_is_utc() else text


def period_start(now: datetime, period: str) -> datetime:
    """Start (00:00 UTC) of the ``"day"``, ``"week"`` (Monday), ``"month"`` or ``"quarter"``
    (Jan 1, Apr 1, Jul 1, Oct 1) holding ``now`` (an aware datetime).

    Raises:
        ValueError: unknown period.
    """
    day = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "day":
        return day
    if period == "week":
        return day - timedelta(days=day.weekday())
    if period == "month":
        return day.replace(day=1)
    if period == "quarter":
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    raise ValueError(f"unknown budget period {period!r}; use {PERIODS_TEXT}")


def next_period_start(now: datetime, period: str) -> datetime:
    """Start (00:00 UTC) of the period after the one holding ``now``: when a budget of that period
    resets. Raises ValueError for an unknown period (as :func:`period_start`)."""
    start = period_start(now, period)
    if period == "day":
        return start + timedelta(days=1)
    if period == "week":
        return start + timedelta(days=7)
    months = 3 if period == "quarter" else 1
    month = start.month - 1 + months
    return start.replace(year=start.year + month // 12, month=month % 12 + 1)


def period_name(start: datetime, period: str) -> str:
    """The ``period`` starting at ``start`` (an aware datetime, its start in UTC) as a report row names it:
    ``2026-12-06`` (a day), ``2026-11-30`` (a week: its Monday), ``2026-10`` (a month), ``2026Q4`` (a quarter,
    as ``--quarter`` takes it) — newuser29 n10: ``usage --by period`` said ``2026-12-01T00:00:00+00:00``.
    Another period: the start's date."""
    day = start.astimezone(timezone.utc)
    if period == "month":
        return f"{day:%Y-%m}"
    if period == "quarter":
        return f"{day.year}Q{(day.month - 1) // 3 + 1}"
    return f"{day:%Y-%m-%d}"


def period_starts(since: datetime, until: datetime, period: str, *, most: int = 1000) -> list[datetime]:
    """Starts (00:00 UTC) of every ``period`` that overlaps ``[since, until)`` (aware datetimes), in order: the
    rows a report by period has, used or not (newuser29 n10: a quarter by month listed only its used months).
    Empty when ``until`` is not after ``since`` or there would be more than ``most``.

    Raises:
        ValueError: unknown period (as :func:`period_start`).
    """
    starts: list[datetime] = []
    start = period_start(since, period)
    while start < until:
        if len(starts) == most:
            return []
        starts.append(start)
        start = next_period_start(start, period)
    return starts
