"""Issue 20 / issue 16 item 4: a running job's own progress report is said where its owner looks.

GET jobs/{id} carried ``progress`` since session 20, but no list, no CLI command and no magic said
it. One wording (:func:`jupyter_sched.wording.progress_text`) for the server's ``progress.text``, the
CLI's ``jobs`` and ``queue`` tables, ``wait``/``%schedule status JOB`` lines and ``%schedule jobs``;
a job that never reported says nothing (no "no progress reported" on every row).
"""

from __future__ import annotations

import io
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, Streams, build_parser
from jupyter_sched.model.units import ago_text, clock_text
from jupyter_sched.store import ts
from jupyter_sched.wording import job_line, progress_text

NOW = datetime(2026, 12, 5, 2, 13, tzinfo=timezone.utc)
START = datetime(2026, 12, 5, 1, 50, tzinfo=timezone.utc)
AT = datetime(2026, 12, 5, 2, 10, tzinfo=timezone.utc)


def running(job_id: str = "j-1", *, at: datetime = AT, start: datetime = START, fraction: float | None = 0.42,
            **extra: Any) -> dict[str, Any]:
    """A running job of ann's as the API shows it, with a progress report (``fraction`` None: none)."""
    job: dict[str, Any] = {
        "id": job_id, "name": "train", "user": "ann", "team": "ml", "kind": "training", "state": "running",
        "priority": "normal", "resources": {"gpus": 1, "gpu_milli": 1000, "gpu_models": []}, "mine": True,
        "submitted_at": start.isoformat(), "admitted_at": start.isoformat(), "started_at": start.isoformat(),
        "time_limit_s": 7200.0, "allocation": {"node": "n1", "gpu_uuids": ["GPU-0"], "gpu_milli": 1000}}
    if fraction is not None:  # the wire's shape: the store's fixed-width times (services.progress.progress_view)
        job["progress"] = {"fraction": fraction, "done": fraction * 1000, "total": 1000, "at": ts(at),
                           "run_started_at": ts(start), "ran_s": (at - start).total_seconds(), "reports": 3}
    return {**job, **extra}


def test_issue20_progress_shown_in_one_wording_with_the_readers_clock_or_none() -> None:
    job = running()
    assert progress_text(job, NOW) == "42 % done, reported 02:10 UTC (3m ago)"
    # the server's text: no clock of its own, so the day stays with the time (true while an answer is kept)
    assert progress_text(job, None) == "42 % done, reported Dec 5 02:10 UTC"
    # read the next day: the report's clock carries its day; a day without a report is past the run's stale
    # bound, so the line says since when none came (newuser27 N8)
    assert progress_text(job, NOW + timedelta(days=1)) == "42 % done, no progress report since Dec 5 02:10:00 UTC (24h03m)"
    assert progress_text(running(fraction=0.999), NOW).startswith("99 % done,")  # never "100 %" before it is
    assert progress_text(running(fraction=0.004), NOW).startswith("under 1 % done,")
    assert progress_text(running(at=NOW + timedelta(seconds=2)), NOW).endswith("(just now)")  # a clock a little ahead
    assert (ago_text(0.4), ago_text(45), ago_text(3600)) == ("just now", "45s ago", "1h00m ago")


@pytest.mark.parametrize("job", [
    running(fraction=None),
    running(progress=None),
    running(progress="42 %"),
    running(progress={"fraction": float("nan"), "at": ts(AT), "run_started_at": ts(START)}),
    running(progress={"fraction": "0.4", "at": ts(AT), "run_started_at": ts(START)}),
    running(progress={"fraction": True, "at": ts(AT), "run_started_at": ts(START)}),
    running(progress={"fraction": 0.4, "at": "yesterday", "run_started_at": ts(START)}),
    # requeued and started again at 02:05: the 02:10 report... of the run that started at 01:50
    running(started_at=datetime(2026, 12, 5, 2, 5, tzinfo=timezone.utc).isoformat()),
    running(state="pending", started_at=None, admitted_at=None),
    running(state="succeeded", finished_at=NOW.isoformat()),
    running(state="failed", finished_at=NOW.isoformat()),
], ids=["never reported", "progress null", "progress not an object", "fraction NaN", "fraction text",
        "fraction a boolean", "unreadable time", "a report of an earlier run", "waiting again", "ended", "failed"])
def test_issue20_progress_shown_nothing_when_there_is_no_report_of_this_run(job: dict[str, Any]) -> None:
    assert progress_text(job, NOW) == "" and progress_text(job, None) == ""


def test_issue20_progress_shown_on_the_job_line_of_wait_and_schedule_status() -> None:
    line = job_line(running(), NOW)
    assert line.startswith("job j-1 (train): running on n1") and line.endswith(
        " · 42 % done, reported 02:10 UTC (3m ago) · ends by 03:50 UTC (in 1h37m), its 2h00m time limit"), line
    assert "done" not in job_line(running(fraction=None), NOW)


class _Server:
    """The answers `jupyter-sched jobs` and `queue` read: one running job that reported, one that did not."""

    def __init__(self, now: datetime) -> None:
        from types import SimpleNamespace

        self.connection = SimpleNamespace(url="http://127.0.0.1:1/")
        start = now - timedelta(minutes=20)
        self.rows = [running("j-1", at=now - timedelta(minutes=3), start=start),
                     running("j-2", start=start, fraction=None, name="quiet")]

    def idle_candidates(self) -> list[dict[str, Any]]:
        return []

    def config(self) -> dict[str, Any]:
        return {"version": "x"}

    def me(self) -> dict[str, Any]:
        return {"user": "ann", "team": "ml", "in_use": {"jobs": len(self.rows), "leases": 0, "gpus": len(self.rows)},
                "pending": 0}

    def inventory(self) -> dict[str, Any]:
        return {"gpus": [], "simulated": True}

    def jobs(self, **_: Any) -> list[dict[str, Any]]:
        return self.rows

    def jobs_upto(self, most: int, **_: Any) -> tuple[list[dict[str, Any]], bool]:
        return self.rows[:most], len(self.rows) > most

    def queue(self, limit: int | None = None) -> list[dict[str, Any]]:
        return self.rows

    def queue_head(self, limit: int) -> tuple[list[dict[str, Any]], int | None]:
        return self.rows, None


@pytest.mark.parametrize("argv", [["jobs"], ["queue"], ["status"]])
def test_issue20_progress_shown_by_jupyter_sched_jobs_queue_and_status(argv: list[str]) -> None:
    from jupyter_sched.cli.commands import COMMANDS

    now = datetime.now(timezone.utc)
    server = _Server(now)
    out = io.StringIO()
    assert COMMANDS[argv[0]](server, build_parser().parse_args(argv), Streams(out=out, err=io.StringIO(),
                                                                               stdin=io.StringIO())) == EXIT_OK
    lines = out.getvalue().splitlines()
    clock = re.escape(clock_text(now - timedelta(minutes=3), now))  # midnight-safe: the clock as the CLI says it
    said = [line for line in lines if "done" in line]
    assert len(said) == 1 and re.search(rf"42 % done, reported {clock} \(3m(0[0-9]s)? ago\)", said[0]), lines
    if argv == ["status"]:  # the summary names the job; the one that never reported is not named
        assert said[0].startswith("progress   train (j-1): ") and not any("j-2" in line for line in lines), lines
        return
    # the job that never reported: its lines say nothing of progress
    quiet = lines.index(next(line for line in lines if "j-2" in line))
    assert "progress" not in " ".join(lines[quiet:quiet + 2]) and "done" not in " ".join(lines[quiet:quiet + 2])


def test_issue20_progress_shown_in_schedule_jobs_and_queue_tables() -> None:
    pytest.importorskip("pandas")
    from jupyter_sched.magics.render import queue_frame

    frame = queue_frame([running("j-1"), running("j-2", fraction=None)], NOW)
    assert frame["detail"].tolist() == ["42 % done, reported 02:10 UTC (3m ago)", ""]


def test_issue20_progress_shown_in_the_status_summary_at_most_five_lines() -> None:
    """`jupyter-sched status` / `%schedule status`: one ``progress`` line per reporting job of mine,
    named as reasons name work; a sweep of many says how many more, not forty lines."""
    from jupyter_sched.wording.status import status_lines

    me = {"user": "ann", "team": "ml", "in_use": {"jobs": 7, "leases": 0, "gpus": 7}, "pending": 0}
    rows = [running(f"j-{i}", name=f"sweep-{i}") for i in range(7)]
    lines = status_lines("http://x/", {"version": "x"}, me, {"gpus": []}, running=rows, now=NOW)
    shown = [line for line in lines if "done" in line or "more" in line]
    assert shown[0] == "progress   sweep-0 (j-0): 42 % done, reported 02:10 UTC (3m ago)"
    assert len(shown) == 5 and shown[-1] == "           and 3 more (`jupyter-sched jobs` or `%schedule jobs` lists them)"
    assert lines.index(shown[0]) == next(i for i, line in enumerate(lines) if line.startswith("my work")) + 1
    quiet = status_lines("http://x/", {"version": "x"}, me, {"gpus": []}, running=[running(fraction=None)], now=NOW)
    assert not any(line.startswith("progress") for line in quiet)


def test_issue20_progress_shown_by_the_wait_bars_of_wait_and_schedule_wait() -> None:
    """`jupyter-sched wait` (tqdm) and `%schedule wait` (ipywidgets) draw one frame: a job that reported
    fills its bar as far as it says it is, with its words; one that did not keeps run time / time limit."""
    from jupyter_sched.wording import wait_progress

    frame = wait_progress(running(), NOW)
    assert (frame.phase, frame.fraction) == ("running", 0.42)
    assert frame.label == "running on n1 · 23m of 2h00m limit · 42 % done, reported 02:10 UTC (3m ago)"
    quiet = wait_progress(running(fraction=None), NOW)
    assert (quiet.fraction, quiet.label) == (23 * 60 / 7200, "running on n1 · 23m of 2h00m limit")
    no_limit = wait_progress(running(time_limit_s=None), NOW)
    assert (no_limit.fraction, no_limit.label) == (0.42, "running on n1 · 23m · 42 % done, reported 02:10 UTC (3m ago)")
