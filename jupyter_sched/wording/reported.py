"""A running job's own progress report in words: ``42 % done, reported 02:10 UTC (3m ago)``.

A job reports its progress (``jupyter_sched.report_progress(done, total)``, ``POST
jobs/{id}/progress``; issue 16 item 4) and the job answers carry the latest report (``progress``:
fraction, at, run_started_at, …). :func:`progress_text` is the one wording of it: the server writes
it without a clock of its own into ``progress.text`` (``42 % done, reported Dec 5 02:10 UTC``, which
stays true while an answer is kept), the panel shows that with the clock as of its own now and how
long ago (labextension/src/format.ts ``progressLine``), and the CLI (``jupyter-sched jobs``, ``wait``)
and the magics (``%schedule jobs``, ``%schedule status JOB``) call it with theirs. A job that never
reported says nothing ("no progress reported" on every other row would be noise), nor does a report
of an earlier run of a restarted job, nor one of work that no longer runs. Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from ..model.progress_stale import stale_after_s
from ..model.units import ago_text, clock_text, format_duration
from .estimates import done_text
from .reasons import wire_time

__all__ = ["ProgressWords", "over_limit_note", "over_limit_said", "pace_needs_s", "progress_text", "progress_words"]

_RUNNING = ("admitted", "running")
_PACE_AFTER_S = 30.0
"""Run time (seconds) before a report's pace is said (as the ETAs read a lone report only after it:
:data:`jupyter_sched.backfill.progress.MIN_SINGLE_RAN_S`): the first seconds are start-up, not pace."""


class ProgressWords(NamedTuple):
    """A running job's own progress report in its pieces (:func:`progress_words`), for a line that says
    them apart: a wait's bar says ``done`` beside its fill and the rest in its line (newuser23 N4).

    Attributes:
        done: ``42 % done`` (rounded down, :func:`~.estimates.done_text`).
        pace: ``at this pace it needs ~6m40s in all: its 2m time limit stops it at 02:19 UTC`` when its
            pace says it cannot finish within its time limit, else "".
        pace_brief: the same fact for a narrow line, ``at this pace its 2m limit stops it at 02:19 UTC``; "".
        reported: ``reported 02:10 UTC (3m ago)`` (``now`` None: ``reported Dec 5 02:10 UTC``).
    """

    done: str
    pace: str
    pace_brief: str
    reported: str

    @property
    def text(self) -> str:
        """The one wording (:func:`progress_text`): ``10 % done (at this pace …), reported 02:18 UTC (40s ago)``."""
        return f"{self.done}{f' ({self.pace})' if self.pace else ''}, {self.reported}"


def progress_text(job: Mapping[str, Any], now: datetime | None) -> str:
    """``42 % done, reported 02:10 UTC (3m ago)`` for ``job`` (REST shape, with ``progress``) at ``now``
    (UTC); ``now`` None: ``42 % done, reported Dec 5 02:10 UTC`` (the clock with its day, no "ago":
    the server's ``progress.text``). The fraction is rounded down (:func:`~.estimates.done_text`: a
    job never reads "100 % done" before it is).

    Returns "" when there is nothing to say: no report (``progress`` absent or not an object), a
    fraction that is no finite number, a report of another run than the current one
    (``progress.run_started_at`` is not the job's ``started_at``, else ``admitted_at``: a requeued job
    starts its count again), or a job that is not ``admitted``/``running``. When its pace says it cannot
    finish within its time limit, the fraction says so: ``10 % done (at this pace it needs ~6m40s in all:
    its 2m time limit stops it at 02:19 UTC), reported 02:18 UTC (40s ago)`` (new user 21, N7)."""
    words = progress_words(job, now)
    return words.text if words is not None else ""


def progress_words(job: Mapping[str, Any], now: datetime | None) -> ProgressWords | None:
    """:func:`progress_text`'s pieces (:class:`ProgressWords`), None where it says ""."""
    progress = job.get("progress")
    if not isinstance(progress, Mapping) or job.get("state") not in _RUNNING:
        return None
    fraction, at = progress.get("fraction"), wire_time(progress.get("at"))
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not math.isfinite(fraction):
        return None
    if at is None:
        return None
    run, start = wire_time(progress.get("run_started_at")), wire_time(job.get("started_at") or job.get("admitted_at"))
    if run is None or run != start:
        return None
    over, brief = _over_limit(job, float(fraction), progress.get("ran_s"), run, now)
    # the pace inside the fraction's words: the panel adds "(3m ago)" after the text (format.ts progressLine)
    reported = f"reported {clock_text(at, now)}"
    if now is not None:
        age = (now - at).total_seconds()
        ran_s, reports = progress.get("ran_s"), progress.get("reports")
        if isinstance(ran_s, (int, float)) and not isinstance(ran_s, bool) and math.isfinite(ran_s) \
                and isinstance(reports, int) and not isinstance(reports, bool) and age > stale_after_s(ran_s, reports):
            # it stopped reporting: its fraction is as of then, and no end is read from it (newuser27 N8: a
            # job reporting to a server that had stopped read "60 % done … projected end" for minutes)
            reported = f"no progress report since {clock_text(at, now, seconds=True)} ({format_duration(age)})"
        else:
            reported = f"{reported} ({ago_text(age)})"
    return ProgressWords(done_text(float(fraction)), over, brief, reported)


def _over_limit(job: Mapping[str, Any], fraction: float, ran_s: Any, start: datetime,
                now: datetime | None) -> tuple[str, str]:
    """``at this pace it needs ~6m40s in all: its 2m time limit stops it at 02:19 UTC`` and its brief
    form ``at this pace its 2m limit stops it at 02:19 UTC`` when the job's own rate (its run time at the
    report over the share done) says it cannot finish within its time limit (new user 21, N7: only the
    jobs waiting for it were told, and credited to its progress); ``("", "")`` otherwise (:func:`pace_needs_s`)."""
    limit = job.get("time_limit_s")
    needs = pace_needs_s(limit, fraction, ran_s)
    if needs is None or not isinstance(limit, (int, float)):
        return "", ""
    stop, span = clock_text(start + timedelta(seconds=float(limit)), now), format_duration(float(limit))
    return (f"at this pace it needs ~{format_duration(min(needs, 1e9))} in all: its {span} time limit stops it at "
            f"{stop}", f"at this pace its {span} limit stops it at {stop}")


def pace_needs_s(limit_s: Any, fraction: Any, ran_s: Any) -> float | None:
    """Seconds the whole run needs at the pace of a report (``ran_s`` seconds into the run, ``fraction``
    0..1 done) when that is more than its time limit ``limit_s`` (seconds); None otherwise: no limit,
    a run time under :data:`_PACE_AFTER_S` or under 1 % done (start-up and noise, as the ETAs read
    it), a pace that fits, or anything that is no finite number."""
    numbers = [v for v in (limit_s, fraction, ran_s) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) < 3 or not all(math.isfinite(v) for v in numbers):
        return None
    limit, done, ran = (float(v) for v in numbers)
    if limit <= 0 or not ran >= _PACE_AFTER_S or not done >= 0.01:
        return None
    needs = ran / done
    return needs if needs > limit else None


def over_limit_note(*, fraction: float, ran_s: float, needs_s: float, limit_s: float, stops_at: datetime,
                    at: datetime) -> str:
    """The one-time line a job's log readers are told when its progress says its time limit stops it
    unfinished (new user 21, N7): ``jupyter_sched: at this pace (10 % done after 40s) the job needs
    ~6m40s in all; its 2m time limit stops it at 11:52 UTC`` — the clock as of ``at``, when it was
    said (a log line keeps its words). ``fraction`` 0..1; seconds otherwise."""
    return (f"jupyter_sched: at this pace ({done_text(fraction)} after {format_duration(ran_s)}) the job needs "
            f"~{format_duration(min(needs_s, 1e9))} in all; its {format_duration(limit_s)} time limit stops it at "
            f"{clock_text(stops_at, at)}")


def over_limit_said(*, fraction: float, ran_s: float, needs_s: float, limit_s: float, stops_at: datetime,
                    at: datetime, now: datetime | None = None) -> str:
    """:func:`over_limit_note` read after the run it spoke of ended (or its stop passed): when it was said, in
    the past tense — ``jupyter_sched: at 12:38:35 UTC its pace (16 % done after 33s) said the job needed
    ~3m24s in all; its 1m time limit was to stop it at 12:39 UTC`` (newuser31 n12: a finished job's log still
    read "stops it at", the future, under the line that said it had stopped). It says no more than was
    known then: whether the limit did stop it is the log's own last line. ``fraction`` 0..1; seconds;
    ``now``: the reader's clock (its day is said bare), None: with its date."""
    return (f"jupyter_sched: at {clock_text(at, now, seconds=True)} its pace ({done_text(fraction)} after "
            f"{format_duration(ran_s)}) said the job needed ~{format_duration(min(needs_s, 1e9))} in all; its "
            f"{format_duration(limit_s)} time limit was to stop it at {clock_text(stops_at, at)}")
