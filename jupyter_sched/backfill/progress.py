"""A running job's own progress report, and the end it projects for ETAs (issue 16 item 4).

A training loop knows how many steps it has done and has to do. A running job may report that
(``jupyter_sched.report_progress(done, total)``, ``POST /api/sched/jobs/{id}/progress``); the latest
report is kept with the job and handed to the core in ``Snapshot.progress``. No runtime learnt from
users, names, requests or limits gets the loaded replay's ETAs under ~30 % of the median wait (session
19): the error is what *running* jobs still run, which only the job itself knows.

The projection is the rate so far. From one report: a job that had run ``ran_s`` seconds (from its
start) when it was ``fraction`` done runs ``ran_s / fraction`` in all, so from ``now`` it still has
``ran_s / fraction - (now - start)`` (that is ``elapsed x (1 - f) / f`` at the report, less what it ran
since). Start-up time (imports, data loading, compiling) counts in ``ran_s`` but not as progress, so
that reading projects long, most of all early on. From three reports on, the edge keeps the sums of a
least-squares line ``fraction = a + b x ran`` through every report of the run (:class:`ProgressFit`:
five numbers, however many reports) and the job ends where the line reaches 1, ``(1 - a) / b``: the
intercept takes the start-up out and the fit averages the noise of single reports. On the loaded
replay (``benchmarks/jct_loaded.py``, "Progress reports": reports every 5 minutes, 10 % start-up,
±15 % noise per report, a quarter of the jobs silent) the ETA error is 36 % of the median wait without
reports, 27 % from the latest report alone and 23 % from the line (means over 8 seeds; second workload
46 / 37 / 21 %); with every job reporting 26 % and 17 % (second 34 / 16 %). The time limit bounds
either. Since session 21 a job with a learnt end it has not outrun keeps that end until its line exists
(``single=False``, :func:`~jupyter_sched.scheduling.runtimes.progress_end`): the latest report alone
was 61 % too long at the median there (its start-up), the learnt end 16 %; 23 -> 20 % (second 21 -> 20 %),
every job reporting 17 -> 15 % (second 16 -> 15 %). Since session 25 a learnt end from other users' runs is not kept so (new user 24, N10: a reporting
job's end came from runs unrelated to it): only one from the job's own user — its run key's runs, or the
user's other programs under time limits within :data:`~jupyter_sched.backfill.history.LIMIT_REACH` of its
own (new user 25, N6). Keeping only the same work's cost 20 -> 23 % here (second 20 -> 21 %), every job
reporting 15 -> 17 % (17 %), as 53 of the 60 jobs are first runs of their key; with the user's other
programs kept: 20 % (second 20 %), every job reporting 15 % (16 %) — the same tree, session 25. A report is not used when it

* says under :data:`MIN_FRACTION` done (a rate from a few steps is mostly start-up and noise);
* is older than :data:`STALE_S` (a job that stopped reporting may have stopped progressing);
* is the only reading (no line yet) of a run that had run under :data:`MIN_SINGLE_RAN_S` and reported once
  (a rate from the first second of a run is start-up alone: new user 21, N4).

A report that is read may still project no end *now* (:class:`ProgressReading` ``lapse``; new user 21,
N4: "ETA in 56s" for ever behind a job that stalled at 90 %): its projected end has passed (``"late"``:
the job is behind its own progress), or it is older than :data:`STALE_REPORTS` of the run's report
intervals (at least :data:`STALE_MIN_S`; ``"stale"``). Its end is then its limit or learnt runtime
again, and the ETAs say why. No floor turns a passed end into one that is always a minute away: the
margin (:func:`end_margin_s`) applies only while the projected end is still ahead. A report of 100 %
done is read even alone and early: the job says it is finishing.
* was made before the job's current start (an earlier attempt's: a preempted job starts again),
  or after ``now``, or with a non-positive run time.
* projects an end more than ten years away (:data:`~jupyter_sched.model.horizon.HORIZON_S`; a line of
  ~zero slope: red team 21, R5) — the fitted line is then not read, and a single report's rate past it
  projects nothing.

**ETAs only, never admission.** A report is the job's own claim and nobody checks it. The core
reads it for the ETAs it shows (:func:`~jupyter_sched.scheduling.runtimes.time_left` with
``progress=True``: the ETA projection and its forward replay), never for a decision: EASY and
conservative backfill reserve on time limits and the runtimes the admission plan reads, which a
report does not change, and the executor enforces limits. A job that lies about its progress gains
nothing; what it can do is make the ETAs of the jobs waiting on it wrong (test: a lying report
changes no admission decision).

Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model.horizon import HORIZON_S
from ..model.progress_stale import STALE_MIN_S, STALE_REPORTS, STALE_S, stale_after_s

__all__ = ["END_MARGIN_S", "END_MARGIN_SHARE", "MIN_FIT_REPORTS", "MIN_FRACTION", "MIN_SINGLE_RAN_S", "PACE_TOLERANCE", "STARTUP_ALLOWANCE",
           "STALE_MIN_S", "STALE_REPORTS", "STALE_S", "ProgressFit", "ProgressReading", "ProgressReport", "end_margin_s",
           "paced_past", "projected_left", "read_progress", "stale_after_s"]

MIN_FRACTION = 0.01
"""Reports saying less than this share done (1 %) project no end: too little of the run to read a rate from."""
END_MARGIN_S = 5.0
"""The least a job whose end is projected from its progress is given still to run (seconds, bounded by
its limit), or :data:`END_MARGIN_SHARE` of the span its report projects past itself where that is more:
a job a little behind its own projection holds its GPUs at this cycle, and its next report moves its
end. (A learnt end has no such floor since new user 25, N2.) Until session 26 a flat 60 s: "82 % done
after 40 s" read "projected end in 57s" (9 s left by its rate) and "100 % done" "in 51s" (newuser26 N5)."""
END_MARGIN_SHARE = 0.1
"""The margin's share of the span a report projects past itself (``total - ran_s``, seconds): a
projection over an hour is less sure than one over a minute (see :func:`end_margin_s`)."""


MIN_FIT_REPORTS = 3
"""Reports of a run (each at least :data:`MIN_FRACTION` done) before its end is read from the fitted line."""
MIN_SINGLE_RAN_S = 30.0
"""The run time (seconds) a run's only report must have been made after to be read alone: one report 0.2 s
into a run drove ETAs as if its start-up were its pace (new user 21, N4). Two reports or more are read."""


STARTUP_ALLOWANCE = 0.75
"""The share of a run's only report's run time that :func:`paced_past` allows to have been start-up, with no
progress (one report cannot tell start-up from pace: session 21's learnt end, 2 h in all, stands beside "20 %
done after 50 minutes")."""
PACE_TOLERANCE = 1.5
"""How much faster than the pace between its reports :func:`paced_past` allows a run's rest to go (the noise of
reports: ±15 % each on the loaded replay)."""


@dataclass(frozen=True, slots=True)
class ProgressFit:
    """The sums of a least-squares line ``fraction = a + b x ran_s`` through a run's reports.

    Attributes:
        n: reports (each at least :data:`MIN_FRACTION` done).
        t: sum of their ``ran_s`` (seconds).
        f: sum of their fractions.
        tt: sum of ``ran_s`` squared.
        tf: sum of ``ran_s x fraction``.
    """

    n: int = 0
    t: float = 0.0
    f: float = 0.0
    tt: float = 0.0
    tf: float = 0.0

    def add(self, ran_s: float, fraction: float) -> ProgressFit:
        """The sums with one more report (one under :data:`MIN_FRACTION` done adds nothing)."""
        if not (math.isfinite(ran_s) and math.isfinite(fraction)) or fraction < MIN_FRACTION:
            return self
        return ProgressFit(self.n + 1, self.t + ran_s, self.f + fraction, self.tt + ran_s * ran_s,
                           self.tf + ran_s * fraction)

    def slope(self) -> float | None:
        """Share done per second along the line through two reports or more (None: fewer, all at one time, or no
        progress between them)."""
        n = self.n
        if n < 2:
            return None
        mean_t, mean_f = self.t / n, self.f / n
        var = self.tt / n - mean_t * mean_t
        if not var > 1e-9 * max(mean_t * mean_t, 1.0):
            return None
        slope = (self.tf / n - mean_t * mean_f) / var
        return slope if math.isfinite(slope) and slope > 0 else None

    def total_s(self) -> float | None:
        """Seconds of run at which the line reaches 1 (all done); None with under
        :data:`MIN_FIT_REPORTS` reports, reports all at one time, no progress along the line, or an
        end further than :data:`~jupyter_sched.model.horizon.HORIZON_S` (a line of ~zero slope)."""
        n = self.n
        slope = self.slope() if n >= MIN_FIT_REPORTS else None
        if slope is None:
            return None
        total = self.t / n + (1.0 - self.f / n) / slope
        # a line of ~zero slope (0.5, 0.5, 0.5000000000000001: ~1e16 s) projects no end (red team 21, R5)
        return total if 0 < total <= HORIZON_S else None


@dataclass(frozen=True, slots=True)
class ProgressReport:
    """A running job's latest progress report.

    Attributes:
        fraction: share of its work done, 0..1 (``done / total`` as the job reported it).
        at: when it reported (UTC, aware).
        ran_s: seconds the job had run when it reported (from its current start).
        fit: the sums of the line through this run's reports so far, this one included
            (:class:`ProgressFit`; empty: the latest report alone is read).
    """

    fraction: float
    at: datetime
    ran_s: float
    fit: ProgressFit = ProgressFit()


@dataclass(frozen=True, slots=True)
class ProgressReading:
    """What a usable report says of its run's end now (:func:`read_progress`).

    Attributes:
        left_s: seconds it still runs after now by its rate (never under :func:`end_margin_s` while the
            projected end is ahead, nor past its limit); None where the report projects no end now
            (``lapse``).
        from_progress: the rate ends it (False: its time limit stops it sooner; ``left_s`` is then what
            is left of the limit and ``total_s`` what the rate says it needs).
        total_s: the run the rate says it needs in all (seconds from its start).
        limit_s: its effective time limit (seconds; None: none).
        lapse: ``""`` (read), ``"late"`` (its projected end, ``said``, has passed: the job is behind its own
            progress) or ``"stale"`` (no report for :data:`STALE_REPORTS` of its intervals).
        said: the end its progress projected (UTC; ``start + total_s``).
    """

    left_s: float | None
    from_progress: bool
    total_s: float
    limit_s: float | None
    lapse: str
    said: datetime


def end_margin_s(total_s: float, report_ran_s: float) -> float:
    """The least a job projected to run ``total_s`` seconds in all by a report made ``report_ran_s``
    into its run is still given (seconds): :data:`END_MARGIN_SHARE` of the span the report projects past
    itself, at least :data:`END_MARGIN_S`."""
    return max(END_MARGIN_S, END_MARGIN_SHARE * (total_s - report_ran_s))


def _stale_after_s(report: ProgressReport) -> float:
    """Seconds after which ``report`` is stale (:func:`stale_after_s` of its run)."""
    return stale_after_s(report.ran_s, report.fit.n)



def read_progress(report: ProgressReport, *, start: datetime, now: datetime,
                  limit_s: float | None, single: bool = True) -> ProgressReading | None:
    """What the running job's (started at ``start``) latest ``report`` says of its end at ``now``.

    Args:
        report: its latest report.
        start: its current start (UTC).
        now: the cycle's time (UTC).
        limit_s: its effective time limit (seconds; None: none).
        single: read the latest report alone while no line is fitted (under :data:`MIN_FIT_REPORTS`
            reports, or a line that does not reach 1 after the report) — if made after
            :data:`MIN_SINGLE_RAN_S` of run or with another report before it; False: None then — the
            caller has a better reading (a runtime learnt from past runs, :func:`~jupyter_sched.
            scheduling.runtimes.progress_end`).

    Returns:
        The reading (:class:`ProgressReading`: ``left_s`` None with a ``lapse`` where the projected end
        passed or the report went stale), or None: the report is not usable (module doc), the job
        already ran to its limit (its stop is projected elsewhere), or the projection lies past
        :data:`~jupyter_sched.model.horizon.HORIZON_S` (the job's limit or learnt runtime then sets its end).
    """
    f = report.fraction
    if not (math.isfinite(f) and MIN_FRACTION <= f <= 1.0) or not (math.isfinite(report.ran_s) and report.ran_s > 0):
        return None
    if report.at < start or report.at > now or (now - report.at).total_seconds() > STALE_S:
        return None
    ran = (now - start).total_seconds()
    room = math.inf if limit_s is None else limit_s - ran
    if room <= 0:
        return None
    total = report.fit.total_s()
    if total is None or total < report.ran_s:  # no line yet, or one that says it ended before this report
        # all done by its own count outranks a learnt end and needs no rate (newuser26 N5: "100 % done" read
        # "projected end in 51s, if it ends at ~20 % of its time limit, as your other runs did")
        if f < 1.0 and (not single or (report.ran_s < MIN_SINGLE_RAN_S and report.fit.n < 2)):
            return None
        total = report.ran_s / f
    margin = end_margin_s(total, report.ran_s)
    if f >= 1.0:  # all done by its own count: what is left (saving, evaluating) gets the margin once
        total = max(total, report.ran_s + margin)
    said = start + timedelta(seconds=min(total, 1e10))
    if total <= ran:  # its own projection has passed: late, never a rolling "in 1 min" (new user 21, N4)
        return ProgressReading(None, False, total, limit_s, "late", said)
    if (now - report.at).total_seconds() > _stale_after_s(report):  # it stopped reporting (new user 21, N4)
        return ProgressReading(None, False, total, limit_s, "stale", said)
    left = max(total - ran, margin)
    if not left <= HORIZON_S:  # past any meaningful time (red team 21, R5): no end from progress
        return None
    if left >= room:
        return ProgressReading(room, False, total, limit_s, "", said)
    return ProgressReading(left, True, total, limit_s, "", said)


def paced_past(report: ProgressReport, learnt_s: float) -> bool:
    """Does ``report``'s pace rule out a learnt end ``learnt_s`` seconds into the run (newuser31 n3: "18 % done"
    after 11 s beside "projected end in 10s, if it ends at ~10 % of its time limit, as your other runs did")?

    From two reports of the run on, the pace between them (the slope of the line through them: start-up is not
    in it) must be beaten more than :data:`PACE_TOLERANCE` times over to end by ``learnt_s``: ``learnt_s < ran_s +
    (1 - fraction) / (slope x PACE_TOLERANCE)``. From its only report, even were :data:`STARTUP_ALLOWANCE` of its
    run so far start-up without progress: ``learnt_s < ran_s + (1 - fraction) x (1 - STARTUP_ALLOWANCE) x ran_s /
    fraction``. Either keeps a learnt end that a start-up or the reports' noise explains (the latest report alone
    reads long early on: :func:`~jupyter_sched.scheduling.runtimes.progress_end`). A report under
    :data:`MIN_FRACTION` or of 100 % done, or a run time of 0, rules out nothing."""
    f, ran = report.fraction, report.ran_s
    if not (math.isfinite(f) and MIN_FRACTION <= f < 1.0 and math.isfinite(ran) and ran > 0 and math.isfinite(learnt_s)):
        return False
    slope = report.fit.slope()
    if slope is not None:
        return learnt_s < ran + (1.0 - f) / (slope * PACE_TOLERANCE)
    return learnt_s < ran + (1.0 - f) * (1.0 - STARTUP_ALLOWANCE) * ran / f


def projected_left(report: ProgressReport, *, start: datetime, now: datetime,
                   limit_s: float | None, single: bool = True) -> tuple[float, bool] | None:
    """Seconds the running job (started at ``start``) still runs after ``now`` by its ``report``
    (:func:`read_progress`, which has the arguments).

    Returns:
        ``(seconds > 0, from_progress)``: the rate's projection (the fitted line's from
        :data:`MIN_FIT_REPORTS` reports on, else the latest report's), never under :func:`end_margin_s`
        while its end is ahead (nor past its limit); ``from_progress`` is False where the limit ends it
        sooner than the rate says (the seconds are then what is left of the limit). None: the report is
        not usable (module doc), projects no end now (late or stale: :class:`ProgressReading`), or the
        job already ran to its limit (its stop is projected elsewhere).
    """
    found = read_progress(report, start=start, now=now, limit_s=limit_s, single=single)
    if found is None or found.left_s is None:
        return None
    return found.left_s, found.from_progress
