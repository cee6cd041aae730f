"""How far along a wait is: one fraction and one label, drawn as a tqdm bar by the CLI and as an
ipywidgets bar by the magics, so both show the same thing.

* pending with an ETA: time waited / time from submission to the ETA (capped below 1: an ETA is
  an estimate, only the start ends the wait);
* running, when the job reported its progress (``jupyter_sched.report_progress``): the reported
  fraction, its words after the label (:func:`~.reported.progress_text`);
* running with a time limit: run time / time limit;
* otherwise (no ETA, no time limit) the fraction is unknown and the bar only counts time.
"""

from __future__ import annotations

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
from .reported import progress_text

__all__ = ["WaitProgress", "wait_progress"]


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
    """

    fraction: float | None
    label: str
    phase: str
    detail: str = ""
    wide: str = ""
    reported: bool = False
    narrow: str = ""

    @property
    def long_label(self) -> str:
        """``wide`` when there is one, else ``label``."""
        return self.wide or self.label


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
        eta_text = eta_sentence(reason, now=now, relative=True, mine=job.get("mine") is True)
        eta_short = eta_text if reason.get("eta") else "ETA unknown"
        label = f"{head} · {eta_short}"
        submitted, eta = wire_time(job.get("submitted_at")), wire_time(reason.get("eta"))
        fraction = None
        if submitted is not None and eta is not None and eta > submitted:
            fraction = _clip((now - submitted) / (eta - submitted), 0.99)
        detail = render_reason(reason, now=now, kind=str(job.get("kind") or "")).summary
        # the wide line says why an ETA is unknown, as the reason line does (issue 20: the bar said
        # "ETA unknown" while the timed-out request's message said why)
        wide = " · ".join(part for part in (head, detail.rstrip("."), eta_text) if part)
        return WaitProgress(fraction, label, "queued", detail, wide)
    held_back = cluster_wait(job)
    if held_back:  # GPUs given, but the cluster has not started it (case 027): still a wait
        return WaitProgress(None, IN_CLUSTER, "queued", held_back, f"{IN_CLUSTER} · {held_back.rstrip('.')}")
    started = wire_time(job.get("started_at")) or wire_time(job.get("admitted_at"))
    alloc = job.get("allocation") if isinstance(job.get("allocation"), Mapping) else {}
    assert isinstance(alloc, Mapping)
    where = f" on {alloc.get('node')}" if alloc.get("node") else ""
    ran = (now - started).total_seconds() if started is not None else None
    limit = job.get("time_limit_s")
    label = f"{state_word(job)}{where}"  # "starting", not "admitted" (new user 11, N4)
    # its own progress report, when it made one of this run: the bar is how far the job says it is (session 21)
    reported = progress_text(job, now)
    done = float(job["progress"]["fraction"]) if reported else None  # a finite number when there are words
    # its planned preemption, on wide surfaces (a notebook, a log), as its queue line says it (new user 21, N5)
    planned = planned_text(job, now)
    # its projected end, the time its waiters are given (new user 22, N10): the time beside the bar, where it
    # came from on wide surfaces; "" on another user's job (its answer has none) and while it is stopping
    ends = projected_text(job, now, brief=True)
    tail = " · ".join(part for part in (projected_text(job, now), planned) if part)
    if ran is not None:
        label += f" · {format_duration(max(ran, 0.0))}"
        if isinstance(limit, (int, float)) and limit > 0:
            label += f" of {format_duration(float(limit))} limit"
            if done is None:
                short, label = label, f"{label} · {ends}" if ends else label
                wide = f"{short} · {tail}" if tail else ""
                return WaitProgress(_clip(ran / float(limit), 1.0), label, "running", wide=wide,
                                    narrow=short if ends else "")
    if done is not None:
        short, label = label, f"{label} · {reported}"
        label = f"{label} · {ends}" if ends else label
        return WaitProgress(_clip(done, 1.0), label, "running",
                            wide=f"{short} · {reported} · {tail}" if tail else "", reported=True, narrow=short)
    short, label = label, f"{label} · {ends}" if ends else label
    return WaitProgress(None, label, "running", wide=f"{short} · {tail}" if tail else "")


def _clip(value: float, top: float) -> float:
    return max(0.0, min(top, value))

