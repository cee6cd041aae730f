"""Red team 19, R6: the hourly executed-notebook sweep ran inside the engine's tick and did one store
read per folder — 20,000 folders planted by one account froze admissions for everyone for 60 s.

The sweep now runs in its own thread (the tick only starts it), and reads the store once per batch
of folders. The slow sweep is a blocking fake (an event the test opens), not a timing.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from def_builders import Server

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import sqlite_url
from jupyter_sched.store.codec import JobRecord
from tests.leftovers import end_jobs

NOW = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)


def test_red19_r6_a_slow_sweep_does_not_hold_the_engine_another_users_job_is_admitted(tmp_path: Path) -> None:
    """Failed before: the tick ran the sweep itself (on the engine's thread, blocked until the fake's
    wait ran out)."""
    server = Server(sqlite_url(tmp_path / "s.sqlite"), ManualClock(NOW), tmp_path / "jobs", retention_days=30)
    dirs = server.services.executor.dirs
    gate, started, threads = threading.Event(), threading.Event(), []

    def slow_walk(*args: Any, **kwargs: Any) -> int:  # stands for 20,000 planted folders
        threads.append(threading.get_ident())
        started.set()
        gate.wait(60)
        return 0

    dirs.remove_old = slow_walk
    try:
        server.services.engine.tick()  # the first leading tick starts the sweep
        assert started.wait(60), "the sweep was started"
        assert threading.get_ident() not in threads, "the sweep ran on the engine's thread"
        bob = server.caller("bob")
        job = server.services.jobs.submit(bob, SubmitJobRequest(gpus=1, name="b", command=["sleep", "60"]))
        server.services.engine.tick()
        assert not gate.is_set()
        assert server.services.jobs.get(bob, job.id).state == "running", "admitted while the sweep runs"
        server.services.engine.tick()
        assert len(threads) == 1, "one sweep at a time (and once an hour)"
    finally:
        gate.set()
    server.services.jobs.cancel(server.caller("boss", admin=True), job.id)
    server.services.engine.tick()
    assert end_jobs(server.services.executor) == []  # bob's job ends with the test (session 22: it was left)


def test_red19_r6_planted_folders_cost_one_store_read_per_batch_and_are_left(tmp_path: Path) -> None:
    """600 planted folders with old executed notebooks and one real old run: 3 reads (256 a batch), not
    601; only the real run's notebook goes."""
    server = Server(sqlite_url(tmp_path / "s.sqlite"), ManualClock(NOW), tmp_path / "jobs", retention_days=30)
    executor, store = server.services.executor, server.store
    old = (NOW - timedelta(days=90)).timestamp()
    planted = []
    for i in range(600):
        path = executor.job_dir(f"j-fake{i}") / "executed.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text("{}")
        os.utime(path, (old, old))
        planted.append(path)
    job = Job(id="j-real", spec=JobSpec(name="r", user="fay", notebook="r.ipynb"), state=JobState.SUCCEEDED,
              submitted_at=NOW - timedelta(days=60), finished_at=NOW - timedelta(days=45))
    store.insert_job(JobRecord(job=job))
    real = executor.job_dir("j-real") / "executed.ipynb"
    real.parent.mkdir(parents=True)
    real.write_text("{}")
    os.utime(real, (old, old))
    reads = []
    opened = store.transaction

    def counting(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs.get("write", True))
        return opened(*args, **kwargs)

    store.transaction = counting  # type: ignore[method-assign]
    try:
        assert server.definitions.sweep_executed_notebooks(now=NOW.timestamp()) == 1
    finally:
        store.transaction = opened  # type: ignore[method-assign]
    assert len(reads) == 3 and not any(reads), reads
    assert not real.exists() and all(p.exists() for p in planted)
