"""New user 21, N8: ``jupyter_sched.report_progress``'s warnings inside a job.

A job whose server restarted read (job log, verbatim): ``…/jupyter_sched/__init__.py:50: RuntimeWarning:
jupyter_sched.report_progress: the scheduler could not be reached (cannot reach the jupyter_sched server at
http://localhost:18900/: the connection was closed before an answer (is the Jupyter server still running?
restart it, or connect(url, token) to another one)); the job runs on, its progress is not reported`` — three
levels of brackets, advice for a notebook user, "not reported" as if for good (the next report got through),
and the line of the package's wrapper instead of the job's own.
"""

from __future__ import annotations

import socket
import warnings
from pathlib import Path

import pytest

import jupyter_sched
from jupyter_sched.client import progress as client_progress


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def in_a_job(monkeypatch: pytest.MonkeyPatch) -> str:
    """A job's environment whose scheduler does not answer; fresh client state. Returns the URL."""
    url = f"http://127.0.0.1:{_closed_port()}/"
    monkeypatch.setattr(client_progress, "_state", {"client": None, "sent_at": None, "interval_s": 10.0,
                                                    "warned": set()})
    monkeypatch.setenv("JUPYTER_SCHED_JOB_ID", "j-n8")
    monkeypatch.setenv("JUPYTER_SCHED_URL", url)
    monkeypatch.setenv("JUPYTER_SCHED_JOB_TOKEN", "job-token-n8")
    return url


def _report(done: float, total: float) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert jupyter_sched.report_progress(done, total) is None  # the job's line: the warning points here
    return seen


def test_newuser21_n8_an_unreachable_scheduler_is_said_in_one_sentence_at_the_jobs_line(in_a_job: str) -> None:
    seen = _report(1, 10)
    assert len(seen) == 1 and seen[0].category is RuntimeWarning
    text = str(seen[0].message)
    assert text.startswith(f"jupyter_sched.report_progress: cannot reach the jupyter_sched server at {in_a_job}: ")
    assert text.endswith("; this report is dropped and later ones are tried again; the job runs on"), text
    assert "restart it" not in text and "connect(" not in text  # a notebook user's advice, not a job's
    depth, deepest = 0, 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    assert deepest <= 1, text  # no brackets inside brackets
    assert Path(seen[0].filename).resolve() == Path(__file__).resolve(), seen[0].filename  # the caller's line


@pytest.mark.parametrize("how", ["jupyter_sched.report_progress", "jupyter_sched.client.progress.report_progress"])
def test_newuser21_n8_every_warning_points_at_the_callers_line(how: str, monkeypatch: pytest.MonkeyPatch,
                                                               in_a_job: str) -> None:
    call = jupyter_sched.report_progress if how == "jupyter_sched.report_progress" else client_progress.report_progress
    cases = [(5, 0), (11, 10)]  # a bad value (warned in _checked), done past total (sent, then unreachable)
    for done, total in cases:
        client_progress._state["sent_at"] = None
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call(done, total)
        assert seen, (done, total)
        for warning in seen:
            assert Path(warning.filename).resolve() == Path(__file__).resolve(), (how, warning.filename, warning.message)
    monkeypatch.delenv("JUPYTER_SCHED_JOB_ID")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call(1, 10)
    assert [Path(w.filename).resolve() for w in seen] == [Path(__file__).resolve()]
    assert "not inside a scheduled job" in str(seen[0].message)
