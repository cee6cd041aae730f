"""How far along a wait is: one fraction and its words, drawn as a tqdm bar by the CLI and as an
ipywidgets bar by the magics, so both show the same thing.

Beside a bar, :attr:`WaitProgress.gauge` says what the bar's fill is (``12 % done``, ``1m27s of 10m
limit``, ``waited 10s of ~1m``: never a bare percentage, newuser23 N18) and :attr:`WaitProgress.lines`
the rest, the facts the wait's final line says (its planned preemption, its pace: newuser23 N4), longest
first: a terminal draws the longest that fits, a notebook the first.

* pending with an ETA: time waited / time from submission to the ETA (capped below 1: an ETA is
  an estimate, only the start ends the wait);
* running, when the job reported its progress (``jupyter_sched.report_progress``): the reported
  fraction, its words after the label (:func:`~.reported.progress_text`);
* running with a time limit: run time / time limit;
* otherwise (no ETA, no time limit) the fraction is unknown and the bar only counts time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from ..model.units import format_duration
from .jobs import (
    IN_CLUSTER,
    TERMINAL_STATES,
    WAITING_STATES,
    cluster_wait,
    job_line,
    planned_text,
    projected_text,
    state_word,
)
from .reasons import eta_sentence, render_reason, wire_time
from .reported import progress_words

__all__ = ["WaitProgress", "wait_progress", "within_timeout"]


class WaitProgress(NamedTuple):
    """One frame of a wait (a NamedTuple, not a dataclass: importing ``dataclasses`` is ~15 ms of
    each CLI call, a new process, and nothing else on its paths needs it).

    Attributes:
        fraction: 0..1 along the current phase (queue or run), None when unknown.
        label: short text beside the bar (``queued #2 · ETA 19:42 UTC (in 5m)``).
        phase: ``queued``, ``running`` or ``done``.
        detail: while queued, what blocks it (the reason's summary); "" otherwise. A terminal
            bar leaves it out.
        wide: the label with ``detail`` in the order every reason line uses (``queued #1 · needs 4
            GPUs, 3 free · ETA unknown``, no sentence's full stop inside the ·-separated line), for
            wide surfaces (a notebook); "" when it would equal ``label``.
        reported: ``fraction`` is the job's own progress report, not its run time over its limit
            (a log without a bar prints a line as it moves: new user 21, N6).
        narrow: ``label`` for a narrow terminal, beside a bar that shows the percentage: without the
            report's words (``44 % done, reported 05:22 UTC (7s ago)``), which the bar says as its
            number; "" when it would equal ``label`` (newuser22 N9: at 80 columns the bar shrank to one
            cell and its number was cut, the words kept).
        gauge: what the bar's fill is, in words, said beside the bar: ``12 % done`` (the job's own report),
            ``1m27s of 10m limit`` (its run time), ``waited 10s of ~1m`` (the time from its submission to
            its ETA); "" when ``fraction`` is None (newuser23 N18: a bare ``15%`` of the *wait* beside the
            blocker's ``25 % done`` read as the job's own progress).
        lines: the line beside the bar, without the gauge's words, longest first, each a shortening of
            the one before (what is least news goes first: the report's time before the planned
            preemption and the pace); the last is the shortest said. A terminal draws the longest that
            fits (:func:`jupyter_sched.cli.progress.fitted`), a notebook the first; together with
            ``gauge`` they say what the wait's final line says (newuser23 N4: the bar left out "to be
            reclaimed at ~08:43 UTC for cvnorm" and, at 120 columns, the pace). Empty: ``(long_label,)``.
        news: what a log without a bar says a line for when it comes or changes, besides the phase and
            the report's tenths: the planned preemption, briefly (``to be reclaimed at ~08:43 UTC for
            cvnorm``); "" when none is planned.
    """

    fraction: float | None
    label: str
    phase: str
    detail: str = ""
    wide: str = ""
    reported: bool = False
    narrow: str = ""
    gauge: str = ""
    lines: tuple[str, ...] = ()
    news: str = ""

    @property
    def long_label(self) -> str:
        """``wide`` when there is one, else ``label``."""
        return self.wide or self.label

    @property
    def bar_lines(self) -> tuple[str, ...]:
        """:attr:`lines`, or ``(long_label,)`` for a frame made without them."""
        return self.lines or (self.long_label,)


def _levels(*lines: tuple[str, ...]) -> tuple[str, ...]:
    """Each line's non-empty parts joined with `` · ``, longest first, a line equal to the one before left out."""
    out: list[str] = []
    for parts in lines:
        line = " · ".join(part for part in parts if part)
        if line and (not out or line != out[-1]):
            out.append(line)
    return tuple(out)


_ETA_CLOCK = re.compile(r"ETA [^,;]*? UTC(?: \((?:in [^)]*|now)\))?")
"""The clock of an ETA sentence (``ETA 09:15 UTC (in 1m)``, ``ETA Mar 3 19:42 UTC``), without its "when …"."""


def _eta_clock(eta_text: str) -> str:
    """``ETA 09:15 UTC (in 1m)`` of ``ETA 09:15 UTC (in 1m), when cvfill (j-…) ends, from its progress (…)``;
    the sentence itself when it has no clock (``ETA unknown: …`` is cut to ``ETA unknown``)."""
    found = _ETA_CLOCK.match(eta_text)
    return found.group(0) if found else eta_text.partition(":")[0]


def _waited(waited_s: float, expected_s: float) -> str:
    """``waited 10s of ~1m``; ``waited 1m30s, over the ~1m10s expected`` once its ETA has passed."""
    if waited_s < expected_s:
        return f"waited {format_duration(waited_s)} of ~{format_duration(expected_s)}"
    return f"waited {format_duration(waited_s)}, over the ~{format_duration(expected_s)} expected"


def within_timeout(frame: WaitProgress, waited_s: float, timeout_s: float | None) -> WaitProgress:
    """``frame`` of a wait that gives up after ``timeout_s`` (``%gpu request --timeout 15s``): while queued, the
    bar fills toward the time-out and says so — ``waited 1s (gives up after 15s)`` — the ETA staying in the
    line (newuser26 n1: "waited 1s of ~12m57s" read as a wait of 13 minutes). Unchanged without a timeout."""
    if timeout_s is None or timeout_s <= 0 or frame.phase != "queued":
        return frame
    gauge = f"waited {format_duration(waited_s)} (gives up after {format_duration(timeout_s)})"
    return frame._replace(fraction=_clip(waited_s / timeout_s, 1.0), gauge=gauge)


def wait_progress(job: Mapping[str, Any], now: datetime) -> WaitProgress:
    """The wait's frame for ``job`` (REST shape) at ``now`` (UTC)."""
    state = str(job.get("state"))
    if state in TERMINAL_STATES:
        return WaitProgress(1.0, job_line(job, now), "done")
    if state in WAITING_STATES:
        reason = job.get("reason") if isinstance(job.get("reason"), Mapping) else {}
        assert isinstance(reason, Mapping)
        position = reason.get("position")
        head = f"queued #{position}" if isinstance(position, int) and position > 0 else "queued"
        if not reason:  # submitted a moment ago: no cycle has looked at it yet
            return WaitProgress(None, "queued · waiting for the next scheduling cycle", "queued")
        mine = job.get("mine") is True  # the owner's own leases are theirs in every line (newuser35 N1)
        eta_text = eta_sentence(reason, now=now, relative=True, mine=mine)
        eta_short = eta_text if reason.get("eta") else "ETA unknown"
        label = f"{head} · {eta_short}"
        submitted, eta = wire_time(job.get("submitted_at")), wire_time(reason.get("eta"))
        fraction, gauge = None, ""
        if submitted is not None and eta is not None and eta > submitted:
            fraction = _clip((now - submitted) / (eta - submitted), 0.99)
            gauge = _waited(max((now - submitted).total_seconds(), 0.0), (eta - submitted).total_seconds())
        detail = render_reason(reason, now=now, kind=str(job.get("kind") or ""), mine=mine).summary
        # the wide line says why an ETA is unknown, as the reason line does (issue 20: the bar said
        # "ETA unknown" while the timed-out request's message said why)
        wide = " · ".join(part for part in (head, detail.rstrip("."), eta_text) if part)
        # beside a bar the reason's head stays before the ETA's clock (newuser23 N18: only "queued #1 · ETA …")
        clock = _eta_clock(eta_text) if reason.get("eta") else eta_short
        lines = _levels((head, detail.rstrip("."), eta_text), (head, detail.rstrip("."), clock), (head, clock))
        return WaitProgress(fraction, label, "queued", detail, wide, gauge=gauge, lines=lines)
    held_back = cluster_wait(job)
    if held_back:  # GPUs given, but the cluster has not started it (case 027): still a wait
        wide = f"{IN_CLUSTER} · {held_back.rstrip('.')}"
        return WaitProgress(None, IN_CLUSTER, "queued", held_back, wide, lines=(wide, IN_CLUSTER))
    started = wire_time(job.get("started_at")) or wire_time(job.get("admitted_at"))
    alloc = job.get("allocation") if isinstance(job.get("allocation"), Mapping) else {}
    assert isinstance(alloc, Mapping)
    where = f" on {alloc.get('node')}" if alloc.get("node") else ""
    ran = (now - started).total_seconds() if started is not None else None
    limit = job.get("time_limit_s")
    word = state_word(job)  # "starting", not "admitted" (new user 11, N4)
    label = f"{word}{where}"
    # its own progress report, when it made one of this run: the bar is how far the job says it is (session 21)
    words = progress_words(job, now)
    reported = words.text if words is not None else ""
    done = float(job["progress"]["fraction"]) if reported else None  # a finite number when there are words
    # its planned preemption, on wide surfaces (a notebook, a log), as its queue line says it (new user 21, N5)
    planned = planned_text(job, now)
    # its projected end, the time its waiters are given (new user 22, N10): the time beside the bar, where it
    # came from on wide surfaces; "" on another user's job (its answer has none) and while it is stopping
    ends = projected_text(job, now, brief=True)
    tail = " · ".join(part for part in (projected_text(job, now), planned) if part)
    ran_words = format_duration(max(ran, 0.0)) if ran is not None else ""
    limit_s = float(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0 else None
    timed = ran is not None and limit_s is not None
    if limit_s is not None and ran is not None:
        ran_words += f" of {format_duration(limit_s)} limit"
    # the line beside the bar (newuser23 N4): what the final line says — the pace, the planned preemption —
    # shortened, never left out, before anything else; the report's time and the projection's source go first
    gauge = words.done if words is not None else ran_words if timed else ""
    time_part = "" if gauge == ran_words else ran_words
    pace, pace_brief = (words.pace, words.pace_brief) if words is not None else ("", "")
    report_at = f"progress {words.reported}" if words is not None else ""
    plan_brief = planned_text(job, now, brief=True)
    lines = _levels((label, time_part, report_at, pace, projected_text(job, now), planned),
                    (label, time_part, pace, ends, planned),
                    (label, time_part, pace_brief, ends, plan_brief),
                    (label, pace_brief, plan_brief),
                    (word, plan_brief, pace_brief))
    if ran is not None:
        label += f" · {ran_words}"
        if limit_s is not None and done is None:
            short, label = label, f"{label} · {ends}" if ends else label
            wide = f"{short} · {tail}" if tail else ""
            return WaitProgress(_clip(ran / limit_s, 1.0), label, "running", wide=wide,
                                narrow=short if ends else "", gauge=gauge, lines=lines, news=plan_brief)
    if done is not None:
        short, label = label, f"{label} · {reported}"
        label = f"{label} · {ends}" if ends else label
        return WaitProgress(_clip(done, 1.0), label, "running",
                            wide=f"{short} · {reported} · {tail}" if tail else "", reported=True, narrow=short,
                            gauge=gauge, lines=lines, news=plan_brief)
    short, label = label, f"{label} · {ends}" if ends else label
    return WaitProgress(None, label, "running", wide=f"{short} · {tail}" if tail else "", lines=lines, news=plan_brief)


def _clip(value: float, top: float) -> float:
    return max(0.0, min(top, value))

