"""How long jobs are expected to run, and how long a running job still has, for ETAs.

:func:`expected_runtime` is a job's expected runtime from its start: its time limit (the queue's
default or maximum when it gave none), or with the profile's ``eta_source="history"`` the runtime
learned from past runs where shorter (``Snapshot.runtime_estimates``).

:func:`time_left` is what a *running* job still has, conditioned on how long it has already run:
a job still running at its expected end is not about to free its GPUs "now" (a projection that
said so put the ETA of everything behind it in the past, then called it unknown — the new-user
report of session 3). It is re-estimated instead, and the re-estimate says why:

* ran past its learned runtime, under its limit: the learned figure was wrong for this run, so
  it is expected to run to its limit (the only bound known to hold); with no limit, nothing bounds
  it: no known end (``math.inf``), and the jobs behind it say so (verify 30, V6: it was said to stop
  "within the 1m grace period: it ran past its 5s time limit", a limit it never had, "in 1m" for ever);
* ran past its typical runtime, still short of some similar runs: it ends where the longer of them
  ended, but not sooner than it has already overrun the typical run (V6: a run barely short of the
  next sample was said to end "in 5s");
* ran past its time limit (the executor is stopping it, or is about to): it ends within the
  grace period of the stop;
* asked to stop longer ago than the grace period (a kill that did not take, a pod stuck
  Terminating): no honest end — ``math.inf``, and the jobs behind it say so.

With ``progress=True`` (the ETAs shown, never the admission plan: issue 16 item 4) a running job
that reported its progress (``Snapshot.progress``) ends where its rate so far takes it, capped by its
time limit (:func:`progress_end`, :func:`~jupyter_sched.backfill.progress.projected_left`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from ..backfill.history import OTHER_RUNS, POPULATION_GPU_RUNS, POPULATION_RUNS, SAME_RUNS
from ..backfill.progress import ProgressReading, paced_past, read_progress
from ..model import Job
from ..model.units import format_duration
from ..queues.limits import effective_limit
from ..queues.order import elected_of, election_barred, one_per_user, overdue
from ..wording.estimates import WITHHELD_RUNS, ran_past_note
from .context import CycleContext

__all__ = ["GUESSED_FROM", "MIN_LEFT_S", "Reestimate", "OVERRUN_FACTOR", "charged_runtime", "charged_runtime_of", "elected_in", "expected_runtime",
           "guessed_end", "overrunning_users", "progress_end", "progress_reading", "time_left"]

MIN_LEFT_S = 1.0
"""The least a running job is given still to run: it holds its GPUs at this cycle, so it ends after now."""
OVERRUN_FACTOR = 2.0
"""A running job has outrun its history (:func:`overrunning_users`) once it has run longer than this
many times what its similar past runs typically take: an honest estimate's miss stays under it."""


@dataclass(frozen=True, slots=True)
class Reestimate:
    """Why a running job's end was re-estimated.

    Attributes:
        job_id: the running job.
        cause: ``"past_typical"`` (ran longer than the runs it is learnt from usually take; still
            expected to end before its limit, at the median of the longer ones),
            ``"past_expected"`` (ran past its learned runtime), ``"no_limit"`` (ran past its learned
            runtime and has no time limit: no known end), ``"past_limit"`` (ran past
            its time limit; being stopped) or ``"stop_overdue"`` (did not stop within the grace period).
        message: one clause naming the job and why, kept with the ETA and its move records, e.g.
            ``"j-1 ran longer than the ~20s that similar past runs took, so it is now expected to
            run to its 3m time limit"``.
        bound: the short clause an ETA shows after "when j-1 ends", e.g. ``"by its 3m time
            limit"``: what now bounds the job's end, in terms its owner set (the learned ~20s is
            nobody's stated figure, so the ETA does not lead with it — new-user finding, session 3).
        source: where the learnt end it outran came from (``Snapshot.runtime_sources``):
            ``"same"`` (similar past runs) or ``"other"`` (its user's runs of other programs);
            the ``message`` says which (:mod:`jupyter_sched.wording.estimates`).
        public: the ``message`` without the learnt figure and whose runs it came from (``"j-1 ran
            longer than its estimate from past runs, so …"``), for a reader who may not see the
            job's owner's history (red team 22, R2 caveat); "" when ``message`` says no such figure.
    """

    job_id: str
    cause: str
    message: str
    bound: str = ""
    source: str = SAME_RUNS
    public: str = ""


def expected_runtime(ctx: CycleContext, job: Job) -> float:
    """Seconds ``job`` is expected to run from its start, for ETAs (``math.inf``: unknown)."""
    limit = job.spec.time_limit_s
    if limit is None:
        limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    learned_all = ctx.snap.runtime_estimates
    if learned_all and ctx.profile.eta_source == "history":
        learned = learned_all.get(job.id)
        if learned is not None and learned > 0:
            return learned if limit is None else min(learned, limit)
    return math.inf if limit is None else limit


def charged_runtime(ctx: CycleContext, job: Job) -> float:
    """Seconds ``job`` is charged for in the ``fair`` order inside its team (``math.inf``: unknown):
    its expected runtime (:func:`expected_runtime`), or its time limit (the queue's default or
    maximum when it gave none) while its user has a job running more than :data:`OVERRUN_FACTOR`
    times longer than its similar past runs typically take (:func:`overrunning_users`).

    A learnt runtime is the user's own history, theirs to write (red team 18, R2: two 1-second runs
    of a script that slept 50 min the third time put that job ahead of a lighter teammate's). A user
    whose running job outran what its history said is charged their limits — the bound they state
    and the executor enforces, which Slurm and Maui charge for ordering — until it ends: the next
    poisoned job no longer goes first. Charging limits always closed the first one too, but took
    the loaded replay's default-profile JCT from +6 % to +14 % of SJF (``benchmarks/jct_loaded.py``,
    session 18: padded limits ordered as long); any run past its typical runtime (factor 1) gave
    +7 % and ETA error 36 % -> 46 %; the factor 2 leaves the replay as it was (no honest job there
    outruns its history twice over).
    """
    if job.spec.user not in overrunning_users(ctx):
        return expected_runtime(ctx, job)
    limit = job.spec.time_limit_s
    if limit is None:
        limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    return math.inf if limit is None else limit


def charged_runtime_of(ctx: CycleContext) -> Callable[[Job], float] | None:
    """``QueueContext.charged_runtime`` for this cycle: :func:`charged_runtime` bound to ``ctx``, or
    None when no user overruns (:func:`overrunning_users`) — every job is then charged its expected
    runtime, which the order reads itself without a per-job call (issue 16: the small cycle's cost)."""
    return partial(charged_runtime, ctx) if overrunning_users(ctx) else None


def overrunning_users(ctx: CycleContext) -> frozenset[str]:
    """Users with a job holding GPUs that has run more than :data:`OVERRUN_FACTOR` times what its
    similar past runs typically take (``Snapshot.runtime_typical``, set at the edge for jobs past
    it), worked out once per snapshot."""
    snap = ctx.snap
    memo = ctx.overrunning
    if memo is not None and memo[0] is snap:
        return memo[1]
    by_id, now = ctx.by_id, ctx.now
    found: set[str] = set()
    for job_id, typical in snap.runtime_typical.items():
        job = by_id.get(job_id)
        start = job.started_at or job.admitted_at if job is not None else None
        if job is not None and start is not None and job.state.holds_gpus \
                and (now - start).total_seconds() > OVERRUN_FACTOR * typical:
            found.add(job.spec.user)
    users = frozenset(found)
    ctx.overrunning = (snap, users)
    return users


def elected_in(ctx: CycleContext, pending: Iterable[Job]) -> list[Job]:
    """The jobs of ``pending`` a cycle at ``ctx.now`` elects first in their class (issue 16):
    waited past ``elect_overdue`` x their promised wait (:func:`~jupyter_sched.queues.order.elected_of`),
    unless their user has a job running past :data:`OVERRUN_FACTOR` x what its history said
    (:func:`overrunning_users`): a promise reads learnt runtimes, which are the user's own to write
    (red team 18, R2), so a user whose history proved short is not elected until that job ends; nor is a
    user holding more than their equal share (no quota: ``ctx.held``, at the cycle's start) while another
    user's job waits that their share has room for (:func:`~jupyter_sched.queues.order.election_barred`;
    new user 30, N2). The overdue jobs so barred (one per user and class, those an election would have
    moved) are kept in ``ctx.barred`` with the numbers their line says (s30-fair2)."""
    if ctx.profile.elect_overdue <= 0:
        return []
    jobs = pending if isinstance(pending, list) else list(pending)
    barred = election_barred(jobs, ctx.held)
    if barred is not None and ctx.held is not None:  # the overdue jobs it bars say why they do not go first
        held, factor = ctx.held, ctx.profile.elect_overdue
        ctx.barred = {job.id: {"user": job.spec.user, "held": held.by_user.get(job.spec.user, 0.0),
                               "share": held.user_share, "total": ctx.snap.inventory.gpu_count(), "factor": factor}
                      for job in one_per_user(j for j in jobs if barred(j) and overdue(j, ctx.now, factor))}
    elected = elected_of(jobs, ctx.now, ctx.profile.elect_overdue, barred)
    if not elected:
        return elected
    overrunning = overrunning_users(ctx)
    return [job for job in elected if job.spec.user not in overrunning] if overrunning else elected


def progress_end(ctx: CycleContext, job: Job, start: datetime) -> tuple[float, float] | None:
    """``(seconds left, fraction done)`` of the running ``job`` (started at ``start``) from its
    latest progress report (``Snapshot.progress``), capped by its effective time limit; None where it
    reported nothing usable (:func:`~jupyter_sched.backfill.progress.projected_left`), is being
    stopped, or ran to its limit — and while no line is fitted through its reports yet (fewer than
    :data:`~jupyter_sched.backfill.progress.MIN_FIT_REPORTS`) if it has a learnt end
    (:func:`expected_runtime`, under its limit, from its own user's runs: new user 24, N10) it has not outrun: the latest report alone counts the
    start-up as run without progress (on the loaded replay 61 % too long at the median, against 16 %
    for the learnt end; ``benchmarks/jct_loaded.py``, session 21), so the learnt end is kept until then. For ETAs only: never called for an admission decision (a report is
    the job's own claim, :mod:`jupyter_sched.backfill.progress`)."""
    found = progress_reading(ctx, job, start)
    if found is None or found[0].left_s is None:
        return None
    return found[0].left_s, found[1]


def progress_reading(ctx: CycleContext, job: Job, start: datetime) -> tuple[ProgressReading, float] | None:
    """``(reading, fraction done)`` of the running ``job``'s latest progress report
    (:func:`~jupyter_sched.backfill.progress.read_progress`, with the choices :func:`progress_end`
    documents); the reading may project no end now (``lapse``: late against its own progress, or
    stale: new user 21, N4). None where it reported nothing usable or is being stopped.

    The learnt end kept over a single report is one learnt from its own user's runs
    (``Snapshot.runtime_sources`` absent, ``SAME_RUNS`` — the same command or notebook and request —
    or ``OTHER_RUNS`` — the user's other programs, only under limits within ``LIMIT_REACH`` of its
    own); one from other users' runs of its size is not (new user 24, N10: a reporting job's first
    projected ends came from runs unrelated to it). Keeping only ``SAME_RUNS`` cost the loaded
    replay's ETA 20 -> 23 % (:mod:`jupyter_sched.backfill.progress`, session 25)."""
    report = ctx.snap.progress.get(job.id) if ctx.snap.progress else None
    if report is None or job.stopping_since is not None:
        return None
    limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    # before a line is fitted through its reports, a learnt end of the same work it has not outrun reads
    # better than the latest report alone, whose rate counts the start-up as run without progress (session 21)
    own = ctx.snap.runtime_sources.get(job.id, SAME_RUNS) in (SAME_RUNS, OTHER_RUNS)
    learnt = expected_runtime(ctx, job) if own else math.inf
    # …unless the report's pace rules it out: then it is neither said nor planned on (newuser31 n3: "18 % done"
    # after 11 s beside a learnt end 30 s into the run)
    single = not (learnt < (math.inf if limit is None else limit) and learnt > (ctx.now - start).total_seconds()) \
        or paced_past(report, learnt)
    found = read_progress(report, start=start, now=ctx.now, limit_s=limit, single=single)
    return None if found is None else (found, report.fraction)


def time_left(ctx: CycleContext, job: Job, start: datetime, *,
              progress: bool = False) -> tuple[float, Reestimate | None]:
    """Seconds until the running ``job`` (started at ``start``) frees its GPUs, and the
    re-estimate when it ran past what was expected (module doc).

    ``progress``: read its progress report (:func:`progress_end`), and an idle lease's reclaim
    deadline (``Snapshot.idle_ends``) as its end — for the ETAs shown only; the admission plan
    (conservative backfill) never passes it, so neither changes a decision.

    Returns:
        ``(seconds > 0 or math.inf, Reestimate or None)``.
    """
    now = ctx.now
    grace = ctx.snap.stop_grace_s.get(job.id, ctx.profile.grace_s)  # the grace its stop was sent with (N1)
    if job.stopping_since is not None:
        stop_left = (job.stopping_since - now).total_seconds() + grace
        if stop_left <= 0:
            overdue = f"{job.id} did not stop within the {format_duration(grace)} grace period"
            return math.inf, Reestimate(job.id, "stop_overdue", overdue, overdue)
    elif progress and job.is_lease and (idle_end := ctx.snap.idle_ends.get(job.id)) is not None:
        # an idle lease's reclaim deadline, if it stays idle: for the ETAs shown only (session 21)
        return max((idle_end - now).total_seconds(), MIN_LEFT_S), None
    elif progress and ctx.snap.progress:
        reported = progress_end(ctx, job, start)
        if reported is not None:
            return reported[0], None
    ran = (now - start).total_seconds()
    expected = expected_runtime(ctx, job)
    left = expected - ran
    if job.stopping_since is not None:  # being stopped: it ends by its grace deadline at the latest
        stop_left = (job.stopping_since - now).total_seconds() + grace
        return max(min(left, stop_left) if left > 0 else stop_left, MIN_LEFT_S), None
    note: Reestimate | None = None
    source = ctx.snap.runtime_sources.get(job.id, SAME_RUNS)  # what the learnt end came from (new user 11, N15)
    typical = ctx.snap.runtime_typical.get(job.id) if ctx.profile.eta_source == "history" else None
    if left > 0 and typical is not None and typical <= ran:
        # it already ran longer than similar runs usually take: its end (the median of the longer
        # ones) moves on while it runs, so the ETA names its time limit as the bound (new-user 4
        # finding 8: "in 17s" twice, then "in 19s", each "as long as similar past runs did"); and a
        # run that outlived the typical one is given at least as long again as it overran it, never
        # "in 5s" because one longer sample ends then (verify 30, V6; benchmarks/jct_loaded.py: main
        # replay ETA error 13 % -> 13 %, per job 23 % -> 21 %, JCT unchanged; second workload without
        # reports 35 % -> 37 % mean, with them 18 % -> 17 %; half the overrun: 37 % -> 37 %)
        limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
        left = max(left, ran - typical if limit is None else min(ran - typical, limit - ran))  # never past its limit
        note = Reestimate(job.id, "past_typical", ran_past_note(job.id, typical, source, limit_s=limit),
                          f"by its {format_duration(limit)} time limit at the latest" if limit is not None else "",
                          source, ran_past_note(job.id, typical, WITHHELD_RUNS, limit_s=limit))
    if left <= 0:
        limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
        if limit is not None and ran < limit:
            left = limit - ran
            note = Reestimate(job.id, "past_expected",
                              ran_past_note(job.id, expected, source, limit_s=limit, then_limit=True),
                              f"by its {format_duration(limit)} time limit", source,
                              ran_past_note(job.id, expected, WITHHELD_RUNS, limit_s=limit, then_limit=True))
        elif limit is None:  # nothing stops it: not "within the grace period" of a limit it never had (V6)
            return math.inf, Reestimate(job.id, "no_limit", ran_past_note(job.id, expected, source, unbounded=True),
                                        "", source, ran_past_note(job.id, expected, WITHHELD_RUNS, unbounded=True))
        else:
            left = grace
            shown = format_duration(limit if limit is not None else expected)
            note = Reestimate(job.id, "past_limit", f"{job.id} ran past its {shown} time limit and is expected "
                              f"to stop within the {format_duration(grace)} grace period",
                              f"within the {format_duration(grace)} grace period: it ran past its {shown} time limit")
    return max(left, MIN_LEFT_S), note


GUESSED_FROM = frozenset({POPULATION_RUNS, POPULATION_GPU_RUNS})
"""``Snapshot.runtime_sources`` of a running job whose learnt end is a guess about its work: everybody's
runs of its size, read for a newcomer's job (:func:`guessed_end`). Its own user's runs of other programs
are their record, not a guess: counting them too left the loaded replay's promises unmade until the
jobs ran to their limits — ETA error 13 % -> 23 % of the median wait, avg JCT +7 % -> +16 % of SJF's
(``benchmarks/jct_loaded.py``, session 31; with only these two, both as before)."""


def guessed_end(ctx: CycleContext, job: Job, start: datetime) -> bool:
    """Does the end :func:`time_left` gives the running ``job`` (started at ``start``; no progress
    report read) rest on a guess, not on something (verify 30, V6)? A guess: a learnt end before its
    limit that it has run past the typical of (the median of the longer runs, which moves on while it
    runs), or one read from other users' runs (:data:`GUESSED_FROM`). Something: its time limit, the
    grace of its stop, a learnt end of its own user's runs it is still within — or no end.

    A promise (:func:`.eta.promises`) is not made from an ETA that waits on such an end: made once and
    kept, a flood's job was promised "start by 12:00:05" from other users' short runs of its size or from
    the next longer run of a job past its typical one, and its line said so — late — while it waited."""
    if job.stopping_since is not None or ctx.profile.eta_source != "history" \
            or job.id not in ctx.snap.runtime_estimates:
        return False
    ran = (ctx.now - start).total_seconds()
    limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    expected = expected_runtime(ctx, job)
    if expected <= ran or expected >= (math.inf if limit is None else limit):
        return False  # its limit, its stop's grace, or no end at all (time_left): nothing guessed
    typical = ctx.snap.runtime_typical.get(job.id)
    return (typical is not None and typical <= ran) or ctx.snap.runtime_sources.get(job.id, SAME_RUNS) in GUESSED_FROM
