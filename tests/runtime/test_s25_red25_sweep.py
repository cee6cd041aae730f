"""Red team 25, R4 and R3: one bad folder must never stop cleanup or stall the engine.

R4: a folder whose name is not valid UTF-8 (``mkdir $'j-\\xff…'`` in the user's own
``jobs/users/<name>/``) came back from ``listdir`` with surrogate escapes; the files sweep sent it to
the store, PostgreSQL (and SQLite) refused it, only OSError was caught, and the Pruner failed before
it pruned the tables or set its next run: every engine tick walked every job folder, failed, and
logged a traceback; no job, audit, rollup or job folder was pruned again.

R3: the files sweep walked every planted folder on the engine thread (red team 19, R6's kind,
brought back by hubadmin24 B16's sweep), unbounded by entries looked at, every 5 s while any was left.

Now only names shaped like job ids reach the store, a batch the store refuses is passed over (said
once), the tables are pruned whatever the files do, the next run is always set, and the files sweep
runs in the Pruner's worker thread, looking at a bounded number of entries per pass and resuming
where it stopped.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.retention import Pruner
from jupyter_sched.executors.jobdirs import JobDirs, RemovedJobFiles, is_job_name
from jupyter_sched.model import JobState
from jupyter_sched.services.jobfiles import JobFilesSweep, job_files_sweep
from jupyter_sched.store import JobRecord, Store, sqlite_url
from jupyter_sched.store.retention import RetentionPolicy
from tests.runtime.builders import make_job

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)
OLD = (NOW - 700 * DAY).timestamp()
PLANTED = b"j-\xff\xfe-r25bad"


def _old(path: Path | bytes) -> None:
    os.utime(path, (OLD, OLD), follow_symlinks=False)


def _folder(parent: Path, name: str) -> Path:
    """An old job folder with a log, as a job leaves it."""
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "output.log").write_text("done\n")
    _old(folder / "output.log")
    _old(folder)
    return folder


def _store(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Store:
    url = sqlite_url(tmp_path / "s.sqlite") if backend == "sqlite" else request.getfixturevalue("pg_url")
    return Store(url, now=lambda: NOW)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_red25_r4_a_non_utf8_folder_name_never_stops_retention(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture) -> None:
    """Failed before the fix: the Pruner raised UnicodeEncodeError ("surrogates not allowed") on
    every run, the finished job's row and folder stayed, and the next run was due at once."""
    store = _store(request, backend, tmp_path)
    dirs = JobDirs(tmp_path / "jobs")
    amy = dirs.root / "users" / "amy"
    with store.transaction(now=NOW) as tx:
        job = make_job("j-old0001", user="amy", state=JobState.SUCCEEDED, submitted_at=NOW - 600 * DAY)
        tx.insert_job(JobRecord(job=replace(job, started_at=job.submitted_at,
                                            finished_at=job.submitted_at + timedelta(hours=1))))
    finished = _folder(amy, "j-old0001")
    planted = os.path.join(os.fsencode(amy), PLANTED)
    os.mkdir(planted)
    _old(planted)
    ticks = [0.0]
    pruner = Pruner(store, ManualClock(NOW), RetentionPolicy(), interval_s=600.0, catch_up_s=5.0,
                    monotonic=lambda: ticks[0], files=job_files_sweep(store, dirs))
    caplog.set_level(logging.INFO)
    try:
        report = pruner()
        pruner.wait_files()
        assert report is not None and report.jobs == 1  # the tables were pruned
        assert not finished.exists()  # the valid folder beside the planted one went
        assert os.path.isdir(planted)  # never a store key: left alone, never opened
        assert store.list_jobs() == []
        for later in (1.0, 5.0, 599.0):  # not due again before the interval (it was due every tick)
            ticks[0] = later
            assert pruner() is None
        assert pruner.runs == 1 and pruner.files_runs == 1
        assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []  # no traceback, no warning
        assert [e.details["job_files"]["dirs"] for e in store.list_events()
                if e.action == "pruned" and "job_files" in e.details] == [1]
    finally:
        store.close()


def test_red25_r4_a_failing_files_sweep_never_stops_table_cleanup_and_is_said_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Failed before the fix: the files' exception left the Pruner before the tables were pruned and
    before its next run was set (a traceback every engine tick)."""
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    ticks = [0.0]

    def broken(cutoff: datetime) -> RemovedJobFiles:
        raise UnicodeEncodeError("utf-8", "j-\udcff", 2, 3, "surrogates not allowed")

    pruner = Pruner(store, ManualClock(NOW), RetentionPolicy(), interval_s=600.0, monotonic=lambda: ticks[0],
                    files=broken)
    try:
        with store.transaction(now=NOW) as tx:
            for i in range(3):
                job = make_job(f"j-done{i}", state=JobState.FAILED, submitted_at=NOW - 500 * DAY)
                tx.insert_job(JobRecord(job=replace(job, finished_at=job.submitted_at)))
        caplog.set_level(logging.WARNING)
        reports = []
        for run in range(4):
            ticks[0] = run * 600.0
            reports.append(pruner())
            pruner.wait_files()
            assert pruner() is None  # the next run was set despite the failure
        assert reports[0] is not None and reports[0].jobs == 3 and store.list_jobs() == []
        assert pruner.runs == 4 and pruner.files_runs == 4
        said = [r for r in caplog.records if "job directories" in r.getMessage()]
        assert len(said) == 1 and said[0].exc_info is not None  # one WARNING for one fault, not one per run
    finally:
        store.close()


def test_red25_r4_a_batch_the_store_refuses_is_kept_and_the_other_batches_still_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before the fix: the store's error on one batch ended the whole sweep."""
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    dirs = JobDirs(tmp_path / "jobs")
    for i in range(6):
        _folder(dirs.root, f"j-gone{i}")
    from jupyter_sched.store.store import StoreTx

    real = StoreTx.get_jobs
    asked: list[list[str]] = []

    def first_fails(self: StoreTx, job_ids: list[str]) -> dict[str, JobRecord]:
        asked.append(list(job_ids))
        if len(asked) == 1:
            raise RuntimeError("the database went away")
        return real(self, job_ids)

    monkeypatch.setattr(StoreTx, "get_jobs", first_fails)
    try:
        removed = dirs.remove_job_dirs(OLD + 1, JobFilesSweep(store, dirs).chooser(NOW), batch=2)
        assert len(asked) == 3 and removed.dirs == 4  # the first batch of 2 is kept, the other 4 go
        assert sorted(p.name for p in dirs.root.iterdir() if not p.name.startswith(".")) == sorted(asked[0])
    finally:
        store.close()


def test_red25_r4_only_job_shaped_names_are_store_keys() -> None:
    assert is_job_name("j-01hf3k2m9-x7q4za") and is_job_name("j-000001") and is_job_name("l-1m8vcdgaj-hf02n5")
    for name in ("j-\udcff\udcfe-r25bad", "j-é", "J-ABC", "users", ".state", "j-a b", "j-a\nb", "x" * 40,
                 "j-" + "a" * 200, "j-", "-j"):
        assert not is_job_name(name), name


def test_red25_r4_the_executed_notebook_sweep_passes_over_a_non_utf8_folder(tmp_path: Path) -> None:
    """Failed before the fix: the planted name reached ``remove`` (and so the store)."""
    dirs = JobDirs(tmp_path / "jobs")
    amy = dirs.root / "users" / "amy"
    real = _folder(amy, "j-real")
    (real / "executed.ipynb").write_text("{}")
    _old(real / "executed.ipynb")
    planted = os.path.join(os.fsencode(amy), PLANTED)
    os.mkdir(planted)
    with open(os.path.join(planted, b"executed.ipynb"), "w") as fh:
        fh.write("{}")
    _old(os.path.join(planted, b"executed.ipynb"))
    seen: list[str] = []

    def remove(found: list[tuple[str, os.stat_result]]) -> set[str]:
        seen.extend(job_id for job_id, _ in found)
        return {job_id for job_id, _ in found}

    assert dirs.remove_old("executed.ipynb", OLD + 1, remove) == 1
    assert seen == ["j-real"] and not (real / "executed.ipynb").exists()
    assert os.path.exists(os.path.join(planted, b"executed.ipynb"))


def test_red25_r3_the_files_sweep_runs_in_a_worker_never_on_the_engine_thread(tmp_path: Path) -> None:
    """Failed before the fix: the sweep ran inside the engine's hook call (the caller's thread), and
    the hook did not return until it was done."""
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    release = threading.Event()
    threads: list[threading.Thread] = []

    def slow(cutoff: datetime) -> RemovedJobFiles:
        threads.append(threading.current_thread())
        release.wait(60)  # a walk over a planted tree
        return RemovedJobFiles()

    ticks = [0.0]
    pruner = Pruner(store, ManualClock(NOW), RetentionPolicy(), interval_s=600.0, monotonic=lambda: ticks[0],
                    files=slow)
    try:
        assert pruner() is not None  # returned while the sweep is still at work
        assert pruner.files_running
        ticks[0] = 600.0
        assert pruner() is not None  # the tables are pruned on time; no second sweep while one runs
        assert len(threads) == 1 and threads[0] is not threading.current_thread()
        assert threads[0].name == "job-files-sweep"
    finally:
        release.set()
        pruner.wait_files()
        store.close()
    assert pruner.files_runs == 1


def test_red25_r3_a_pass_looks_at_a_bounded_number_of_entries_and_resumes_where_it_stopped(tmp_path: Path) -> None:
    """Failed before the fix: every pass looked at every planted entry (``examine`` did not exist)."""
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    dirs = JobDirs(tmp_path / "jobs")
    mal = dirs.root / "users" / "mal"
    for i in range(40):  # planted: not job ids (never opened) and job-shaped orphans (removed)
        (mal / f"junk{i}").mkdir(parents=True)
        _folder(mal, f"j-plant{i}")
    _folder(dirs.root / "users" / "amy", "j-amy1")
    sweep = JobFilesSweep(store, dirs, examine=10)
    examined, passes = [], 0
    try:
        while True:
            removed = sweep(NOW - 90 * DAY)
            passes += 1
            examined.append(removed.examined)
            if not removed.more:
                break
            assert removed.cursor is not None and sweep.cursor == removed.cursor
            assert passes < 20
        # each entry looked at once in the round: 80 planted, amy's folder, the root's .state and users
        assert max(examined) <= 10 and sum(examined) == 83
        assert passes == 9 and sweep.cursor is None
        assert sorted(p.name for p in mal.iterdir()) == sorted(f"junk{i}" for i in range(40))
        assert not (dirs.root / "users" / "amy" / "j-amy1").exists()
    finally:
        store.close()


def test_red25_r3_a_backlog_is_audited_once_not_once_per_catch_up_pass(tmp_path: Path) -> None:
    """Failed before the fix: one ``pruned`` record per 5-s pass (68 in 7 minutes, red team 25)."""
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    dirs = JobDirs(tmp_path / "jobs")
    for i in range(5):
        _folder(dirs.root, f"j-orphan{i}")
    ticks = [0.0]
    pruner = Pruner(store, ManualClock(NOW), RetentionPolicy(), catch_up_s=5.0, monotonic=lambda: ticks[0],
                    files=job_files_sweep(store, dirs, limit=2))
    try:
        for _ in range(3):
            assert pruner() is not None
            pruner.wait_files()
            ticks[0] += 5.0
        assert pruner() is None
        assert [p.name for p in dirs.root.iterdir() if not p.name.startswith(".")] == []
        records = [e.details["job_files"] for e in store.list_events() if e.action == "pruned"]
        assert records == [{"dirs": 5, "files": 5, "bytes": 25, "records": 0, "more": False}]
    finally:
        store.close()
