"""The scheduler's own lines in a job's log, their clocks said in the reader's zone (newuser41 n2).

A job's log holds the job's output and the scheduler's lines about it (``[jupyter_sched] preempted at 20:24:21 UTC
by …``, written by the service and the job's wrapper). Those are server sentences: written in UTC, for readers in
every zone — the file on disk stays so. ``jupyter-sched logs`` (``-f`` too) and ``%schedule logs`` say their clocks
as every other server sentence is said (:func:`~jupyter_sched.model.units.clocks_said`: the reader's ``TZ``), so a
reader in Los Angeles no longer reads ``20:24:21 UTC`` in the log beside ``requeued at 12:24 PST`` in ``jobs``; the
panel's log viewer does the same (``logClocksAsOf``, format.ts). The job's own lines are never touched, and ISO
times in the scheduler's lines (a notebook's injected parameters) stay as written: they are data, not clocks said.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

__all__ = ["MARK", "log_clocks_said", "log_note_said"]

MARK = "[jupyter_sched]"
"""How every line the scheduler writes into a job's log begins."""


def log_clocks_said(text: str, now: datetime | None = None, *, line_start: bool = True) -> str:
    """``text`` (a slice of a job's log) with the clocks of the scheduler's own lines — each beginning with
    :data:`MARK` — said in the reader's zone; the other lines as written. ``line_start``: ``text`` begins a line
    (a followed log's slice may begin mid-line: its first piece is then left as written). ``now``: the reader's
    now (default: the clock's); a clock without a date is of that UTC day, as the log does not say its date."""
    if MARK not in text:
        return text
    from ..model.units import clocks_said

    now = now or datetime.now(timezone.utc)
    lines = text.splitlines(keepends=True)
    return "".join(clocks_said(line, now, iso=False) if (i or line_start) and line.startswith(MARK) else line
                   for i, line in enumerate(lines))


def log_note_said(note: Mapping[str, Any], now: datetime | None = None) -> str:
    """The text of a log answer's note (``notes``: ``{"at", "text"}`` — its pace outruns its time limit, …) with
    its clocks in the reader's zone, each of the day the note was said (``at``), as the log's own lines are: the
    CLI's ``logs`` printed them on stderr in UTC (newuser41, nu41's left-over) beside a log said in ``TZ``."""
    from ..model.units import clocks_said
    from .reasons import wire_time

    return clocks_said(str(note.get("text") or ""), now or datetime.now(timezone.utc), ref=wire_time(note.get("at")))
