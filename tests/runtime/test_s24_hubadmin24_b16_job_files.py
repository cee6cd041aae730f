"""Hubadmin24 B16: job directories (output logs up to 1 GiB each, carried files, executed notebooks)
and the executor's ``.state`` records were never deleted; retention pruned the job's record and
orphaned its files. The leader's retention pass now removes a job's directory and records with the
same rule as its record (finished before the cutoff), plus folders of jobs the store no longer
knows that nothing touched since the cutoff; never an unfinished job's; bounded per pass; counted
in the ``pruned`` audit record; a symlinked job folder is never followed.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.engine import SchedulerService
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.retention import Pruner
from jupyter_sched.executors.jobdirs import JobDirs
from jupyter_sched.model import JobState
from jupyter_sched.services.jobfiles import job_files_sweep
from jupyter_sched.store import JobRecord, Store, sqlite_url
from jupyter_sched.store.retention import RetentionPolicy
from tests.runtime.builders import make_job

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)


def _job_dir(dirs: JobDirs, job_id: str, *, age_days: float, log_bytes: int = 1000) -> Path:
    """A job folder as the executor leaves it (log + notebook + a carried subfolder) and its
    ``.state`` records, everything last modified ``age_days`` before NOW."""
    folder = dirs.root / job_id
    (folder / "carried").mkdir(parents=True)
    (folder / "output.log").write_bytes(b"x" * log_bytes)
    (folder / "executed.ipynb").write_text("{}")
    (folder / "carried" / "data.csv").write_text("a,b\n")
    dirs.write_record(job_id, {"job_dir": str(folder)})
    dirs.err_path(job_id).write_text("")
    stamp = (NOW - age_days * DAY).timestamp()
    for path in (folder / "carried" / "data.csv", folder / "carried", folder / "output.log",
                 folder / "executed.ipynb", folder, dirs.record_path(job_id), dirs.err_path(job_id)):
        os.utime(path, (stamp, stamp), follow_symlinks=False)
    return folder


def _seed(store: Store, dirs: JobDirs) -> dict[str, Path]:
    with store.transaction(now=NOW) as tx:
        for job_id, age_days, state in (("old-done", 500, JobState.SUCCEEDED), ("new-done", 10, JobState.FAILED),
                                        ("old-running", 600, JobState.RUNNING)):
            job = make_job(job_id, state=state, submitted_at=NOW - age_days * DAY)
            if state.terminal:
                job = replace(job, started_at=job.submitted_at, finished_at=job.submitted_at + timedelta(hours=1))
            tx.insert_job(JobRecord(job=job))
    return {job_id: _job_dir(dirs, job_id, age_days=age)
            for job_id, age in (("old-done", 500), ("new-done", 10), ("old-running", 600),
                                ("orphan-old", 520), ("orphan-new", 5))}


def test_s24_hubadmin24_b16_old_job_dirs_and_records_go_with_the_retention_pass(tmp_path: Path) -> None:
    """Failed before the fix: nothing removed any job directory (Pruner took no files sweep)."""
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    dirs = JobDirs(tmp_path / "jobs")
    folders = _seed(store, dirs)
    secret = tmp_path / "root-only"
    secret.mkdir()
    (secret / "keep").write_text("not a job's")
    (dirs.root / "j-planted").symlink_to(secret)  # a link dressed as an old orphan: never followed
    old = (NOW - 300 * DAY).timestamp()
    os.utime(secret, (old, old))
    pruner = Pruner(store, ManualClock(NOW), RetentionPolicy(), files=job_files_sweep(store, dirs))
    report = pruner()
    assert report is not None
    pruner.wait_files()  # the files go in the Pruner's worker thread (red team 25, R3)
    assert {name for name, folder in folders.items() if folder.exists()} == {"new-done", "old-running",
                                                                            "orphan-new"}
    assert (secret / "keep").read_text() == "not a job's" and (dirs.root / "j-planted").is_symlink()
    assert not dirs.record_path("old-done").exists() and not dirs.err_path("orphan-old").exists()
    assert dirs.record_path("old-running").exists() and dirs.record_path("new-done").exists()
    pruned = [e for e in store.list_events() if e.action == "pruned" and "job_files" in e.details]
    assert len(pruned) == 1
    assert pruned[0].details["job_files"] == {"dirs": 2, "files": 6, "bytes": 2 * (1000 + 2 + 4), "records": 4,
                                              "more": False}
    assert "2 job directories" in pruned[0].message
    store.close()


def test_s24_hubadmin24_b16_a_pass_is_bounded_and_the_rest_follow_at_the_catch_up_pace(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    dirs = JobDirs(tmp_path / "jobs")
    for i in range(5):
        _job_dir(dirs, f"orphan-{i}", age_days=500)
    ticks = [0.0]
    pruner = Pruner(store, ManualClock(NOW), RetentionPolicy(), files=job_files_sweep(store, dirs, limit=2),
                    catch_up_s=5.0, monotonic=lambda: ticks[0])
    left = []
    for _ in range(3):
        report = pruner()
        assert report is not None
        pruner.wait_files()
        left.append(sum(1 for p in dirs.root.iterdir() if not p.name.startswith(".")))
        ticks[0] += 5.0
    assert left == [3, 1, 0]
    assert pruner() is None  # nothing left: back to the interval
    store.close()


def test_s24_hubadmin24_b16_the_server_wires_the_sweep_to_its_log_dir(tmp_path: Path) -> None:
    """Failed before the fix: the server's orphan of 520 days (past the default retention) stayed."""
    url = sqlite_url(tmp_path / "s.sqlite")
    svc = SchedulerService.from_config({"db_url": url, "log_dir": str(tmp_path / "logs"),
                                        "inventory_source": "simulated", "simulated_gpus": 1})
    try:
        dirs = svc.services.executor.dirs
        real_now = datetime.now(timezone.utc)
        folder = dirs.root / "j-gone"
        folder.mkdir()
        (folder / "output.log").write_text("old")
        for path in (folder / "output.log", folder):
            stamp = (real_now - 520 * DAY).timestamp()
            os.utime(path, (stamp, stamp))
        svc.tick()
        for hook in svc.services.engine.leader_hooks:
            if isinstance(hook, Pruner):
                hook.wait_files()
        assert not folder.exists()
    finally:
        svc.services.store.close()
