"""hubadmin23 A19: a redeploy onto a fresh data folder (same store, running jobs) silently made a new
job-token secret, so every running job's progress reports were refused (401) from then on.

``install_job_tokens`` is run as a start runs it, over a store that holds running jobs; the secret
file is missing (made anew), then present (kept)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.extension.job_tokens import install_job_tokens
from jupyter_sched.model import JobKind, JobState


class _Store:
    """Two running jobs (leases, which report no progress, are not asked for)."""

    def list_jobs(self, *, states: Any = None, kinds: Any = None, **_: Any) -> list[str]:
        assert list(states) == [JobState.RUNNING] and JobKind.LEASE not in list(kinds), (states, kinds)
        return ["j-a", "j-b"]


class _Executor:
    name = "local"
    job_env: Any = None


def _start(tmp_path: Path, store: Any, caplog: pytest.LogCaptureFixture) -> list[str]:
    app = SimpleNamespace(job_api_url="", job_token_secret_file="", sched_data_dir=tmp_path / "data",
                          serverapp=SimpleNamespace(connection_url="http://127.0.0.1:8888/"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.extension.job_tokens"):
        install_job_tokens(app, SimpleNamespace(executor=_Executor(), ctx=object(), store=store))
    return [r.getMessage() for r in caplog.records]


def test_s23_hubadmin23_a19_a_new_secret_under_running_jobs_is_said_naming_the_file_to_restore(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    said = _start(tmp_path, _Store(), caplog)
    path = tmp_path / "data" / "job_token_secret"
    assert len(said) == 1, said
    assert said[0].startswith(f"jupyter_sched: made a new job-token secret at {path}: the 2 running job(s)"), said
    assert "cannot report progress until they end" in said[0] and "restore the old file" in said[0], said
    assert "c.SchedApp.job_token_secret_file" in said[0], said
    assert _start(tmp_path, _Store(), caplog) == [], "the file kept: nothing to say"


def test_s23_hubadmin23_a19_a_first_start_with_no_running_job_says_nothing(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    empty = SimpleNamespace(list_jobs=lambda **_: [])
    assert _start(tmp_path, empty, caplog) == []
