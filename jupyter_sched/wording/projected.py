"""When a running job is projected to end, in words — what its waiters are told, said to its owner (new user 22, N10).

The core projects a running job's end from its own progress report or from the runtime learnt from past
runs (:class:`~jupyter_sched.scheduling.snapshot.ProjectedEnd`, ``projected_end`` on the wire, its owner's
and admins' answers only); a job waiting on it reads that time as its ETA. Its own line said only "ends by
05:23 UTC, its 15m time limit". :func:`projected_end_text` is the one wording of the projection, which
:func:`~.jobs.ends_by` puts before the limit (``projected end ~05:10 UTC (in 1m20s), from its progress
report of 05:08:30 UTC · at the latest 05:23 UTC (in 14m26s), its 15m time limit``) on the CLI's queue,
jobs and wait lines, the magics' tables and ``%gpu``; the panel shows the server's ``text`` as of its own
clock (labextension/src/format.ts ``projectedLine``). Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..model.units import clock_text, relative_text
from .estimates import learnt_condition
from .reasons import wire_time

__all__ = ["projected_end_text"]

_SOURCES = ("progress", "history")


def projected_end_text(view: Any, now: datetime | None, *, yours: bool = False, brief: bool = False) -> str:
    """``projected end ~05:10 UTC (in 1m20s), from its progress report of 05:08:30 UTC``, or from a learnt
    runtime ``projected end ~05:10 UTC (in 1m20s), if it runs as long as similar past runs did``; a report
    of 100 % done: ``finishing: all done by its progress report of 05:09:58 UTC`` (brief: ``finishing``).

    Args:
        view: the wire ``projected_end`` (``at`` ISO time, ``source`` ``progress``/``history``,
            ``report_at``, ``runs``, ``share``); anything else says "".
        now: the reader's time (the clock on its day and how far off); None: the clock with its date and
            no relative time (the server's ``text``, which stays true while an answer is kept).
        yours: the reader owns the job (a learnt end from other runs: "your other runs").
        brief: the time only, ``projected end ~05:10 UTC (in 1m20s)`` (a wait's bar label).

    Returns:
        The clause, or "" when ``view`` is no projection (absent, no time, an unknown source).
    """
    if not isinstance(view, Mapping):
        return ""
    at, source = wire_time(view.get("at")), view.get("source")
    if at is None or source not in _SOURCES:
        return ""
    fraction = view.get("fraction")
    if source == "progress" and isinstance(fraction, (int, float)) and not isinstance(fraction, bool) \
            and fraction >= 1:  # all done by its own count: no "projected end in 51s" (newuser26 N5)
        report = wire_time(view.get("report_at"))
        return "finishing" if brief else "finishing: all done by its progress report" + (
            f" of {clock_text(report, now, seconds=True)}" if report is not None else "")
    when = clock_text(at, now)
    if now is not None:
        when += f" ({relative_text(max(0.0, (at - now).total_seconds()))})"
    if brief:
        return f"projected end ~{when}"
    if source == "progress":
        report = wire_time(view.get("report_at"))
        return f"projected end ~{when}, from its progress" + (
            f" report of {clock_text(report, now, seconds=True)}" if report is not None else "")
    share = view.get("share")
    share = float(share) if isinstance(share, (int, float)) and not isinstance(share, bool) \
        and math.isfinite(share) else None
    return f"projected end ~{when}, if {learnt_condition('it', str(view.get('runs') or 'same'), share=share, yours=yours)}"
