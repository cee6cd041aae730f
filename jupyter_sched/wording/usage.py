"""The period a usage figure covers, said one way on every Python surface (``jupyter-sched status``,
``jupyter-sched usage``, ``%schedule status``); the panel's ``lastDaysText``
(labextension/src/format.ts) says it the same way.

Before, ``status`` said "the last 7 days", ``usage`` "this month" while its server counted all time,
and the REST answers said no period. The rule is now one (:data:`~jupyter_sched.accounting.usage.USAGE_WINDOW`:
the 7 days before the answer unless ``since`` is given), and each figure says it with its start, as
every clock is written (:func:`~jupyter_sched.model.units.clock_text`: UTC, the date unless today):
``in the last 7 days (since Nov 28 08:40 UTC)``; a period asked for is said as ``jupyter-sched usage``
says it (``Dec 1 00:00 UTC → now``, :func:`period_text`; ``quotas what-if`` too).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from ..model.units import clock_text

__all__ = ["USAGE_DAYS", "cost_cell", "efficiency_cell", "last_days", "parsed_utc", "period_text", "submitted_window"]

USAGE_DAYS = 7
"""Days of the default usage period (``accounting.usage.USAGE_WINDOW``; kept apart: this package
imports nothing heavy, and a test pins the two equal)."""


def _when(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def last_days(since: str | datetime | None, now: datetime | None) -> str:
    """The default period (the 7 days before the answer) with its start: ``in the last 7 days (since
    Nov 28 08:40 UTC)`` — ``GET me``'s ``gpu_hours_since`` for ``gpu_hours_7d``; without a start (a
    server that does not say it) ``in the last 7 days``."""
    start = _when(since)
    return f"in the last {USAGE_DAYS} days" + (f" (since {clock_text(start, now)})" if start is not None else "")


def _num(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f}"


def cost_cell(row: Mapping[str, Any]) -> str:
    """A usage row's COST, in ``jupyter-sched usage`` and ``%schedule usage`` (newuser31 n9: the magic
    showed ``None``): ``12.500``; ``≥ 2.500`` when some of its usage had no price in force (its warning
    names the model and GPU-hours; hubadmin26 B21: the priced part, a lower bound); ``-`` when none is known."""
    if row.get("cost") is None and row.get("unpriced_gpu_hours") and row.get("priced_cost") is not None:
        return f"≥ {_num(row['priced_cost'])}"
    return _num(row.get("cost"))


def efficiency_cell(value: Any) -> str:
    """An EFFICIENCY cell, in ``jupyter-sched usage`` and ``%schedule usage`` (newuser31 n9: the magic showed
    the fraction 0.002): ``42 %``; ``<1 %`` for a share above nothing that rounds to 0, ``>99 %`` for one
    short of all that rounds to 100 (newuser28 n15: 0.26 % read ``0 %``, "never used the GPU"); ``-`` unknown."""
    if value is None:
        return "-"
    percent = float(value) * 100
    if 0 < percent < 0.5:
        return "<1 %"
    if 99.5 <= percent < 100:
        return ">99 %"
    return f"{percent:.0f} %"


def parsed_utc(text: str | None) -> datetime | None:
    """``text`` (an ISO 8601 time with its offset, as sent) in UTC; None when absent or not readable here."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(timezone.utc) if when.tzinfo is not None else None


def period_text(since: str, until: str | None, now: datetime) -> str:
    """The period a report covers, as the CLI says times (:func:`~jupyter_sched.model.units.clock_text`,
    UTC): ``Dec 1 00:00 UTC → now``, ``Nov 1 00:00 UTC → Dec 1 00:00 UTC (not included)``,
    ``09:00 UTC → 12:10 UTC (not included)`` (both today). The end has its date unless both ends are
    today (new user 24, N9: "Dec 1 00:00 UTC → 00:00 UTC" for an end of today's midnight); an end
    after ``now`` is "now" (the figures end at the report time); a time this cannot read is said as
    typed (the server has read it)."""
    start, end = parsed_utc(since), parsed_utc(until)
    first = since if start is None else clock_text(start, now)
    if until is None or (end is not None and end > now):
        return f"{first} → now"
    today = start is not None and end is not None and start.date() == end.date() == now.date()
    return f"{first} → {until if end is None else clock_text(end, now if today else None)} (not included)"


def submitted_window(since: str | None, until: str | None, now: datetime) -> str:
    """A list's ``--since``/``--until`` as a clause, the moments as every clock is written (the reader's zone,
    named; :func:`~jupyter_sched.model.units.clock_text`): ``submitted since Nov 30 04:26 UTC``, ``submitted before
    Dec 1 00:00 UTC``, ``submitted since … and before …``; "" for neither. newuser36 n5: ``jobs --since 7d``
    found nothing "since 2026-11-30T04:26:10Z" where ``status`` and ``usage`` say ``since Nov 30 04:26 UTC``.
    A time this cannot read is said as sent (the server has read it)."""
    start, end = parsed_utc(since), parsed_utc(until)
    said = [f"since {since if start is None else clock_text(start, now)}" if since else "",
            f"before {until if end is None else clock_text(end, now)}" if until else ""]
    return f"submitted {' and '.join(part for part in said if part)}" if any(said) else ""
