"""hubadmin23 A19: a redeploy onto a fresh data folder (same store, running jobs) silently made a new
job-token secret, so every running job's progress reports were refused (401) from then on.

Since session 25 the secret is in the store (tests/services/test_s24_a19_job_secret_in_store.py), so a fresh
data folder over the same store keeps it; a start that still makes one anew (a store without one and no old
file to move in) under running jobs says so, naming the file to put back.
``install_job_tokens`` is run as a start runs it, over a real store that holds running jobs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.extension.job_tokens import install_job_tokens
from jupyter_sched.model import JobKind, JobState
from jupyter_sched.store import JobRecord, Store, sqlite_url
from tests.runtime.builders import T0, make_job


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(sqlite_url(tmp_path / "sched.sqlite"))
    yield opened
    opened.close()


def _running(store: Store, *job_ids: str, kind: JobKind = JobKind.TRAINING) -> None:
    for job_id in job_ids:
        job = make_job(job_id, user="ivan")
        job = replace(job, spec=replace(job.spec, kind=kind), state=JobState.RUNNING, admitted_at=T0, started_at=T0,
                      attempts=1)
        store.insert_job(JobRecord(job=job))


class _Executor:
    name = "local"
    job_env: Any = None


def _start(tmp_path: Path, store: Any, caplog: pytest.LogCaptureFixture, data: str = "data") -> list[str]:
    app = SimpleNamespace(job_api_url="", job_token_secret_file="", sched_data_dir=tmp_path / data,
                          serverapp=SimpleNamespace(connection_url="http://127.0.0.1:8888/"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.extension.job_tokens"):
        install_job_tokens(app, SimpleNamespace(executor=_Executor(), ctx=object(), store=store))
    return [r.getMessage() for r in caplog.records]


def test_s23_hubadmin23_a19_a_new_secret_under_running_jobs_is_said_naming_the_file_to_restore(
        tmp_path: Path, store: Store, caplog: pytest.LogCaptureFixture) -> None:
    _running(store, "j-a", "j-b")
    said = _start(tmp_path, store, caplog)
    assert len(said) == 1, said
    assert said[0].startswith("jupyter_sched: made a new job-token secret in the store: the 2 running job(s)"), said
    assert "cannot report progress until they end" in said[0] and "put the old secret file back" in said[0], said
    assert "c.SchedApp.job_token_secret_file" in said[0], said
    assert _start(tmp_path, store, caplog) == [], "the store's secret kept: nothing to say"
    assert _start(tmp_path, store, caplog, data="fresh") == [], "a fresh data folder over the same store keeps it"


def test_s23_hubadmin23_a19_a_first_start_with_no_running_job_says_nothing(
        tmp_path: Path, store: Store, caplog: pytest.LogCaptureFixture) -> None:
    _running(store, "l-lease", kind=JobKind.LEASE)  # a lease reports no progress
    assert _start(tmp_path, store, caplog) == []
