"""newuser23 N4 and N18: the live bar of `jupyter-sched wait` (and `submit --wait`, `%schedule wait`) says
what the wait's final line says, and never a bare percentage.

N4: a running job to be reclaimed at ~08:43 for cvnorm, whose pace outruns its 10m limit: every frame at 250
columns left out "to be reclaimed …"; at 120 columns the first frame was cut mid-clock ("stops it at 08:") and
the next ones dropped the pace as well. Only the line after `--for` said them.
N18: a pending job's bar showed `15%` (of the predicted *wait*) beside the blocker's "25 % done", unlabelled,
and its reason (`cv has 0 of 2 GPUs free …`) was left out.

Real parts: the CLI's tqdm bar drawn on a terminal-like stream at a given width, the magics' text bar (the
frames of `wait_progress`, the one renderer of both).
"""

from __future__ import annotations

import io
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.cli import progress
from jupyter_sched.cli.progress import TerminalProgress
from jupyter_sched.magics.display import Progress
from jupyter_sched.wording import job_line, wait_progress

NOW = datetime(2026, 12, 5, 8, 39, 9, tzinfo=timezone.utc)
STARTED = NOW - timedelta(seconds=87)
PLAN = "to be reclaimed at ~08:43 UTC for cvnorm"
PACE = "at this pace its 10m limit stops it at 08:47 UTC"
BARE_PERCENT = re.compile(r"\d%")
"""A percentage with nothing between it and its sign: tqdm's unlabelled ``15%`` (the words say ``15 % done``)."""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _lowml() -> dict[str, Any]:
    """N4's job: 12 % done after 78 s of a 10m limit (it needs ~10m24s), to be reclaimed for cvnorm."""
    return {"id": "j-5f2c9a1b", "name": "lowml", "state": "running", "kind": "training", "mine": True, "gpus": 3,
            "started_at": STARTED.isoformat(), "time_limit_s": 600, "allocation": {"node": "vm"},
            "progress": {"fraction": 0.125, "at": (NOW - timedelta(seconds=9)).isoformat(),
                         "run_started_at": STARTED.isoformat(), "ran_s": 78},
            "preemption_planned": {"at": (NOW + timedelta(minutes=4)).isoformat(), "for_job": "j-77aa0c3d",
                                   "for_name": "cvnorm", "for_team": "cv", "same_team": False, "verb": "reclaimed"}}


def _cvwait() -> dict[str, Any]:
    """N18's job: queued #1 behind cvfill (25 % done), submitted 10 s ago, ETA in 1m."""
    return {"id": "j-c0ffee01", "name": "cvwait", "state": "pending", "kind": "training", "mine": True, "gpus": 1,
            "submitted_at": (NOW - timedelta(seconds=10)).isoformat(),
            "reason": {"code": "QuotaExceeded", "message": "cv has 0 of 2 GPUs free (2 in use), job needs 1",
                       "position": 1, "eta": (NOW + timedelta(seconds=60)).isoformat(),
                       "details": {"eta_code": "Projected", "eta_waits_on": ["j-f1"],
                                   "eta_waits_on_names": {"j-f1": "cvfill"}, "eta_progress": {"j-f1": 0.25},
                                   "eta_progress_at": {"j-f1": (NOW - timedelta(seconds=20)).isoformat()}}}}


def _frames(job: dict[str, Any], columns: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every frame `wait` draws for ``job`` (twice) on a terminal ``columns`` wide, as the terminal shows it."""
    monkeypatch.setattr(progress, "_size", lambda stream=None: {"ncols": columns, "nrows": 24})
    stream = _Terminal()
    with TerminalProgress(stream) as bar:
        for _ in range(2):
            bar.show(wait_progress(job, NOW))
    frames = [frame.rstrip() for frame in stream.getvalue().split("\r") if frame.strip()]
    assert frames, stream.getvalue()
    return frames


@pytest.mark.parametrize("columns", [250, 160, 120])
def test_s24_newuser23_n4_the_live_bar_says_the_planned_preemption_and_the_pace(
        columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: "running on vm · 1m27s of 10m limit · 12 % done (at this pace …), reported 08:39 UTC (9s ago)
    # |█████▎ | 12% [00:00]" at 250 columns; at 120 "… stops it at 08:" then "running on vm · 1m15s of 10m limit |…"
    final = job_line(_lowml(), NOW)
    assert "to be reclaimed at ~08:43 UTC for cvnorm" in final and "at this pace" in final  # what the bar must say
    for frame in _frames(_lowml(), columns, monkeypatch):
        assert progress.cells(frame) <= columns, (len(frame), frame)
        assert PLAN in frame, frame
        assert "at this pace" in frame and "08:47 UTC" in frame, frame  # whole, never "stops it at 08:"
        assert "12 % done" in frame and not BARE_PERCENT.search(frame), frame


def test_s24_newuser23_n4_a_wide_terminal_says_the_final_lines_whole_clauses(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _frames(_lowml(), 250, monkeypatch)[-1]
    assert "to be reclaimed at ~08:43 UTC for cvnorm (j-77aa0c3d), to return borrowed quota to cv, unless it ends " \
           "first" in frame, frame
    assert "at this pace it needs ~10m24s in all: its 10m time limit stops it at 08:47 UTC" in frame, frame
    assert frame.endswith("| 12 % done"), frame  # the bar's number, said as what it is
    narrow = _frames(_lowml(), 100, monkeypatch)[-1]  # narrower still: the news first, whole parts left out
    assert PLAN in narrow and progress.cells(narrow) <= 100 and narrow.endswith(" · 12 % done"), narrow


@pytest.mark.parametrize("columns, reason", [(250, True), (150, True), (100, False)])
def test_s24_newuser23_n18_a_pending_bar_says_what_it_measures_and_why_it_waits(
        columns: int, reason: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: "queued #1 · ETA 09:15 UTC (in 1m), when cvfill (j-…) ends, from its progress (25 % done, reported
    # 09:14:10 UTC) |█▏      |  15% [00:10]": the wait's 15 % unlabelled beside the blocker's 25 %, no reason
    for frame in _frames(_cvwait(), columns, monkeypatch):
        assert progress.cells(frame) <= columns, (len(frame), frame)
        assert frame.startswith("queued #1 · ") and "ETA 08:40 UTC (in 1m)" in frame, frame
        assert frame.endswith("| waited 10s of ~1m10s"), frame
        assert not BARE_PERCENT.search(frame), frame
        assert ("cv has 0 of 2 GPUs free (2 in use), job needs 1" in frame) is reason, frame
        if columns == 250:  # the blocker's figure stays its own: "from its progress (25 % done …)"
            assert "when cvfill (j-f1) ends, from its progress (25 % done" in frame, frame


def test_s24_newuser23_n4_n18_the_magics_draw_the_same_words_with_the_bar_labelled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # before: "[#####---------------]  12% job j-… (lowml) · running on vm · …" (text) — a bare percentage
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")  # the text bar (what a headless run records)
    InteractiveShell.instance()
    for job, gauge in ((_lowml(), "12 % done"), (_cvwait(), "waited 10s of ~1m10s")):
        with capture_output() as shown:
            bar = Progress(f"job {job['id']} ({job['name']})")
            bar.show(wait_progress(job, NOW), 10.0)
            bar.show(wait_progress(job, NOW), 10.0)
        frame = wait_progress(job, NOW)
        text = str(shown.outputs[-1].data["text/plain"])
        assert text.startswith("[") and text.split("] ", 1)[1].startswith(f"{gauge} · job {job['id']}"), text
        assert text.endswith(frame.bar_lines[0]) and not BARE_PERCENT.search(text), text
        # the CLI's line at a wide terminal is the magics' line: one renderer
        assert progress.fitted(frame, 400) == (frame.bar_lines[0], True)


class _Log(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_s24_newuser23_n4_a_wait_into_a_log_says_a_line_when_a_preemption_is_planned() -> None:
    # before: a log got a line per phase and per tenth of the job's reported progress: a plan made between two
    # tenths (or for a job that reports none) was never said until the line after `--for`
    planned = {**_lowml(), "progress": None}  # a job that reports no progress: one line per phase
    unplanned = {k: v for k, v in planned.items() if k != "preemption_planned"}
    log = _Log()
    bar = TerminalProgress(log)
    for job in (unplanned, unplanned, planned, planned):
        bar.show(wait_progress(job, NOW))
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and PLAN not in lines[0] and PLAN in lines[1], lines
