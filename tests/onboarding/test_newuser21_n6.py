"""New user 21, N6: a job's owner sees its reported progress wherever they look at it, in one wording.

Session 21's progress-shown work (tests/onboarding/test_issue20_progress_shown.py) put
:func:`~jupyter_sched.wording.reported.progress_text` in ``jobs``, ``queue``, ``status``, ``wait``'s bar
and the panel. Left: ``%gpu``'s table named the job holding a GPU without it, and ``wait`` into a log
(no terminal: one line per phase) said "running" once and never how far the job said it was.
Every surface is checked here to say the same words, and the bar to follow the report (time-based
only when the job never reported).
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from jupyter_sched.cli.progress import TerminalProgress
from jupyter_sched.magics.render import gpu_frame, queue_frame
from jupyter_sched.wording import job_detail, job_line, progress_text, wait_progress
from jupyter_sched.wording.status import status_lines
from tests.onboarding.test_issue20_progress_shown import AT, NOW, running

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pandas' own, on some versions

WORDS = "75 % done, reported 02:10 UTC (3m ago)"
INVENTORY = {"gpus": [{"node": "n1", "index": 0, "model": "A100", "memory_mib": 81920, "uuid": "GPU-0",
                       "health": "healthy"}]}


def _surfaces(job: dict[str, Any]) -> dict[str, str]:
    me = {"user": "ann", "team": "ml", "in_use": {"gpus": 1, "jobs": 1}}
    return {
        "jobs detail": job_detail(job, NOW),
        "%schedule status JOB": job_line(job, NOW),
        "%schedule queue": str(queue_frame([job], NOW)["detail"][0]),
        "jupyter-sched status": "\n".join(status_lines("http://x/", {}, me, INVENTORY, running=[job], now=NOW)),
        "wait bar": wait_progress(job, NOW).label,
        "%gpu status": str(gpu_frame(INVENTORY, [job], now=NOW)["allocated_to"][0]),
    }


@pytest.mark.parametrize("surface", ["jobs detail", "%schedule status JOB", "%schedule queue", "jupyter-sched status",
                                     "wait bar", "%gpu status"])
def test_newuser21_n6_every_surface_that_shows_my_running_job_says_its_reported_progress_in_one_wording(
        surface: str) -> None:
    # before: %gpu status said "ann: training j-1 (train)" and nothing of the job's 75 %
    job = running(fraction=0.75)
    assert progress_text(job, NOW) == WORDS
    assert WORDS in _surfaces(job)[surface], _surfaces(job)[surface]
    # a job that never reported says nothing of progress anywhere
    assert "% done" not in _surfaces(running(fraction=None))[surface]


def test_newuser21_n6_the_wait_bar_follows_the_report_and_is_time_based_only_without_one() -> None:
    reported = wait_progress(running(fraction=0.75), NOW)
    assert (reported.fraction, reported.reported) == (0.75, True)  # not 23m of a 2h limit (0.19)
    timed = wait_progress(running(fraction=None), NOW)
    assert timed.reported is False and timed.fraction == pytest.approx(23 * 60 / 7200)


class _Log(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_newuser21_n6_wait_into_a_log_prints_a_line_as_the_reported_progress_moves() -> None:
    # before: a log (no terminal) got one line per phase: "running on n1 · 23m of 2h limit · 5 % done …"
    # and nothing more while the job went on to 95 %
    log = _Log()
    bar = TerminalProgress(log)
    for fraction in (0.05, 0.07, 0.12, 0.5, 0.52, 0.95):
        bar.show(wait_progress(running(fraction=fraction), NOW))
    lines = log.getvalue().splitlines()
    said = [re.search(r"(\d+) % done", line) for line in lines]
    assert [m.group(1) if m else line for m, line in zip(said, lines, strict=True)] == [
        "5", "12", "50", "95"], lines  # a line per new tenth, not per poll
    # a job that never reports: one line for the phase, as before
    quiet = _Log()
    plain = TerminalProgress(quiet)
    for _ in range(3):
        plain.show(wait_progress(running(fraction=None), NOW))
    assert len(quiet.getvalue().splitlines()) == 1


def test_newuser21_n6_the_server_words_and_the_readers_words_name_the_same_report() -> None:
    job = running(fraction=0.75)
    server = progress_text(job, None)  # progress.text in the job answers (the panel adds "(3m ago)")
    assert server == "75 % done, reported Dec 5 02:10 UTC"
    assert progress_text(running(fraction=0.75, at=AT), NOW).startswith(server.replace("Dec 5 ", ""))
