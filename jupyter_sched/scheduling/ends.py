"""Phase 7: when each running job is projected to end, as its waiters are told (new user 22, N10).

A waiting job's ETA hangs on when the running jobs ahead of it end, and the ETA pass projects those
ends from more than their time limits: a job's own progress report (its rate, fitted through its
reports, with the margins and lapses of :func:`~jupyter_sched.backfill.progress.read_progress`) or the
runtime learnt from past runs (profile ``eta_source="history"``) — :func:`.runtimes.time_left` with
``progress=True``, what :func:`.eta._holder_end` reads for the ETAs shown. The job's own line said only
"ends by 05:23 UTC, its 15m time limit" while its waiter read "ETA 05:09, when stuck ends, from its
progress". :func:`projected_ends` keeps, per running job whose projected end comes before its limit's,
that end and where it came from, so the owner's line says the time its waiters are given — the same
function on the same snapshot, not a second model.

Cost: one :func:`.runtimes.progress_end` per running job that reported (as the ETA pass reads it),
one :func:`.runtimes.time_left` per running job with a learnt runtime; nothing for the others.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime

from ..backfill.history import SAME_RUNS
from ..backfill.progress import ProgressReport, paced_past, read_progress
from ..model import Job
from ..model.horizon import later
from ..queues.limits import effective_limit
from .context import CycleContext
from .runtimes import expected_runtime, progress_end, time_left
from .snapshot import ProjectedEnd

__all__ = ["SAME_END_S", "as_of_report", "projected_ends"]

SAME_END_S = 1.0
"""Seconds within which a projected end is its time limit's end (then its line says only the limit)."""


def projected_ends(ctx: CycleContext) -> dict[str, ProjectedEnd]:
    """The running jobs of the cycle whose projected end is before their time limit's, by id (module doc).

    Args:
        ctx: the cycle (its snapshot's progress reports and learnt runtimes, its profile's time limits).

    Returns:
        ``{job id: ProjectedEnd}`` — ``source`` ``"progress"`` (with the report's time and share done)
        or ``"history"`` (with what the runtime was learnt from). Left out: leases (their end is their
        idle reclaim, said by the idle line), jobs stopping or preempted this cycle, jobs ending at their
        limit (within :data:`SAME_END_S`), and ends with no known time or past the horizon. Jobs admitted this
        cycle are in: their end from now is the one their waiters read, and their owner's card showed only
        the limit's beside a waiter's "in 6s" (new user 25, N4).
    """
    reports = ctx.snap.progress or {}
    learnt = ctx.snap.runtime_estimates if ctx.profile.eta_source == "history" else {}
    if not reports and not learnt:
        return {}
    candidates: Iterable[str] = reports.keys()
    if learnt:
        candidates = {*reports, *(h for h in ctx.state.holdings if h in learnt)}
    stopped = {p.job_id for p in ctx.preempts}
    by_id = ctx.by_id
    out: dict[str, ProjectedEnd] = {}
    for job_id in sorted(candidates):
        fresh = job_id in ctx.fresh
        job = ctx.admitted.get(job_id) if fresh else by_id.get(job_id)
        if job is None or job.is_lease or not (fresh or job.state.holds_gpus) or job.stopping_since is not None \
                or job_id in stopped or (job_id in ctx.admitted and not fresh):
            continue
        end = _projected(ctx, job, fresh=fresh)
        if end is not None:
            out[job_id] = end
    return out


def _projected(ctx: CycleContext, job: Job, *, fresh: bool = False) -> ProjectedEnd | None:
    """``job``'s projected end where it is before its limit's (:func:`projected_ends`), else None.

    As :func:`.eta._holder_end` reads it for the ETAs shown: a job admitted this cycle (``fresh``) runs its
    expected runtime from now (the ETA pass's ``ctx.fresh_end``); a running one that is no lease and not
    stopping ends where its progress report projects (:func:`.runtimes.progress_end`), else at its learnt
    or limit end (:func:`.runtimes.time_left`)."""
    now = ctx.now
    start = now if fresh else (job.started_at or job.admitted_at or now)
    report = ctx.snap.progress.get(job.id) if ctx.snap.progress and not fresh else None
    reported = progress_end(ctx, job, start) if report is not None else None
    if reported is not None:
        left, source = reported[0], "progress"
    elif fresh:
        left, source = expected_runtime(ctx, job), "history"
    else:
        left, _ = time_left(ctx, job, start)
        source = "history"
    limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    limit_left = math.inf if limit is None else (start - now).total_seconds() + limit
    if not math.isfinite(left) or left >= limit_left - SAME_END_S:
        return None  # no known end, or its limit ends it: its line says that already
    at = later(now, left)
    if at is None:
        return None
    if source == "progress":
        assert report is not None
        return ProjectedEnd(at=at, source=source, report_at=report.at, fraction=round(report.fraction, 4))
    runs = ctx.snap.runtime_sources.get(job.id, SAME_RUNS)
    share = None if runs == SAME_RUNS or not limit else round(min(expected_runtime(ctx, job) / limit, 1.0), 4)
    return ProjectedEnd(at=at, source=source, runs=runs, share=share)


def as_of_report(end: ProjectedEnd, report: ProgressReport, *, start: datetime, now: datetime,
                 limit_s: float | None) -> ProjectedEnd | None:
    """The cycle's projected ``end`` of a running job as its latest ``report`` (of the run started at ``start``)
    reads it at ``now``, for the owner's line that shows that report's "% done" beside it (newuser31 n3: "51 %
    done, reported 12:26" beside "projected end ~12:27, from its progress report of 12:26:28" — the 35 % one).

    * ``end`` from an older report than ``report``: read again from ``report`` (:func:`~jupyter_sched.backfill.
      progress.read_progress`, as :func:`.runtimes.progress_end` reads a report once a cycle did);
    * ``end`` from a learnt runtime that ``report``'s pace rules out (:func:`~jupyter_sched.backfill.progress.
      paced_past`): from ``report`` likewise, as the next cycle plans it;
    * otherwise ``end`` itself.

    Returns:
        The end (``source`` ``"progress"`` with ``report``'s time and share when read again), ``end`` where
        ``report`` cannot be read alone (the cycle's reading stands), or None where ``report`` says its time limit
        ends it first, or its end passed (the line then says only the limit's end). Pure: ``now`` is given."""
    if end.source == "progress":
        if end.report_at is None or report.at <= end.report_at:
            return end
    elif not paced_past(report, (end.at - start).total_seconds()):
        return end
    reading = read_progress(report, start=start, now=now, limit_s=limit_s, single=True)
    if reading is None:
        return end if end.source != "progress" else None
    if reading.left_s is None or not reading.from_progress:
        return None
    at = later(now, reading.left_s)
    return None if at is None else ProjectedEnd(at=at, source="progress", report_at=report.at,
                                                fraction=round(report.fraction, 4))
