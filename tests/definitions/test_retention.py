"""Executed notebooks are kept per run for ``executed_notebook_retention_days`` after the run ended."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from def_builders import Server

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.codec import JobRecord

NOW = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)


def run(store: Store, executor: LocalExecutor, job_id: str, *, state: JobState, ended_days_ago: float | None) -> Path:
    finished = NOW - timedelta(days=ended_days_ago) if ended_days_ago is not None else None
    job = Job(id=job_id, spec=JobSpec(name=job_id, user="fay", notebook="r.ipynb"), state=state,
              submitted_at=NOW - timedelta(days=60), finished_at=finished)
    store.insert_job(JobRecord(job=job))
    path = executor.job_dir(job_id) / "executed.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    stamp = (finished or NOW).timestamp()
    os.utime(path, (stamp, stamp))
    return path


def test_old_runs_lose_their_executed_notebook_recent_and_live_ones_keep_it(tmp_path: Path) -> None:
    clock = ManualClock(NOW)
    keeps_30 = Server(sqlite_url(tmp_path / "s.sqlite"), clock, tmp_path / "jobs", retention_days=30)
    keeps_all = Server(sqlite_url(tmp_path / "s.sqlite"), clock, tmp_path / "jobs", retention_days=0)
    store, executor = keeps_30.store, keeps_30.services.executor
    old = run(store, executor, "j-old", state=JobState.FAILED, ended_days_ago=45)
    recent = run(store, executor, "j-recent", state=JobState.SUCCEEDED, ended_days_ago=3)
    live = run(store, executor, "j-live", state=JobState.RUNNING, ended_days_ago=None)
    os.utime(live, (time.time() - 90 * 86400,) * 2)  # an old file of a run still going: kept
    assert keeps_30.definitions.sweep_executed_notebooks(now=NOW.timestamp()) == 1
    assert not old.exists() and recent.exists() and live.exists()
    assert keeps_all.definitions.sweep_executed_notebooks(now=NOW.timestamp()) == 0, "0 keeps them forever"
