"""When a running job's progress report is stale: it stopped reporting, so it may have stopped progressing.

The ETAs stop reading an end from a stale report (:mod:`jupyter_sched.backfill.progress`, new user 21, N4),
and the owner's line says since when no report came instead of "reported … ago" (:mod:`jupyter_sched.wording.reported`,
newuser27 N8; labextension/src/format.ts ``staleAfterS`` mirrors it). Here, not in the backfill package, so the
CLI's lean import path reads it without the scheduling core. Pure: no clock, no I/O.
"""

from __future__ import annotations

__all__ = ["STALE_MIN_S", "STALE_REPORTS", "STALE_S", "stale_after_s"]

STALE_S = 1800.0
"""Reports older than this (seconds; 30 min) project no end: the job may have stopped progressing.
A job that reports less often than every half hour keeps its ETAs on its limit or learnt runtime."""
STALE_REPORTS = 3.0
"""A report older than this many of its run's report intervals (its run time at the report over the reports
made, ``ran_s / n``) is stale: the job stopped reporting, so it may have stopped progressing (new user 21, N4)."""
STALE_MIN_S = 120.0
"""The least age (seconds) at which a report is stale (:data:`STALE_REPORTS`), whatever the interval: the
server stores at most one report in 10 s, and a job may pause a minute (a checkpoint, an evaluation)."""


def stale_after_s(ran_s: float, reports: int) -> float:
    """Seconds after a report past which it is stale — the job stopped reporting, so no end is read from
    it: :data:`STALE_REPORTS` of its run's mean report interval (``ran_s`` seconds into the run over its
    ``reports`` reports), between :data:`STALE_MIN_S` and :data:`STALE_S`."""
    return min(STALE_S, max(STALE_MIN_S, STALE_REPORTS * ran_s / max(reports, 1)))
