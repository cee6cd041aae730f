"""hubadmin23 A13: a store restored from a backup is older than the host — a job it has as pending
whose first copy still runs is adopted as running, never launched a second time beside it.

Real subprocesses (the local executor's wrappers) and a real store put back to the state of a backup taken
before the job was admitted: SQLite (sqlite3's online backup copied back) and PostgreSQL (``pg_dump -Fc``,
``pg_restore`` into a new database, as the hub admin did).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from jupyter_sched.errors import ExecutorError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation
from jupyter_sched.store import check_integrity
from tests.pg import PostgresServer
from tests.runtime.builders import make_job
from tests.runtime.test_engine import gated, make_service, state_of, wait_until
from tests.runtime.test_local_executor import gone


def _wrappers_of(job_id: str, under: Path) -> list[int]:
    """Pids of live processes started with ``--job-dir <under>/…/<job_id>`` (the job's wrappers; this test's
    alone: another test file, in another process of a parallel run, may run a job of the same id meanwhile)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if "--job-dir" in cmdline and any(arg.startswith(f"{under}/") and arg.endswith(f"/{job_id}") for arg in cmdline) \
                and proc.status() != psutil.STATUS_ZOMBIE:
            found.append(proc.pid)
    return found


def _restore_runs_no_job_twice(tmp_path: Path, url: str, backup: Callable[[], None],
                               restore: Callable[[], str]) -> None:
    """Submit, ``backup()`` while the job is pending, let it start, stop the service (the job runs on),
    ``restore()`` (→ the restored store's URL), start a service on it: the running copy is adopted."""
    first = make_service(url, tmp_path, gpus=2)
    job_id = first.submit({"command": gated(tmp_path, "go", "print('done', flush=True)\n")}, user="ana")["id"]
    backup()  # the job is pending in it
    wait_until(lambda: first.logs(job_id, user="ana")["text"], "the job's first output", tick=first.tick)
    ran = first.get_job(job_id, user="ana")
    handle = first.store.get_job(job_id).handle
    assert ran["state"] == "running" and handle is not None
    first.engine.resign()  # the "disaster": the service stops, its running job goes on
    first.store.close()
    restored = make_service(restore(), tmp_path, gpus=2, owner="engine-restored")
    try:
        assert state_of(restored, job_id) == "pending"  # what the backup holds
        wait_until(lambda: restored.engine.is_leader, "the restored service to lead", tick=restored.tick)
        for _ in range(3):
            restored.tick()
        job = restored.get_job(job_id, user="ana", is_admin=True)
        assert job["state"] == "running", job
        assert job["allocation"]["gpu_uuids"] == ran["allocation"]["gpu_uuids"]  # the GPUs the copy holds
        assert (restored.store.get_job(job_id).handle or {})["pid"] == handle["pid"]
        assert _wrappers_of(job_id, tmp_path) == [handle["pid"]]  # one copy, the first one
        adopted = restored.audit(job_id=job_id, action="adopted")
        assert len(adopted) == 1 and "pending in the store but still runs" in adopted[0]["message"]
        assert [e for e in restored.audit(job_id=job_id, action="admit")] == []  # never admitted a second time
        (tmp_path / "go").touch()
        wait_until(lambda: state_of(restored, job_id) == "succeeded", "the adopted copy to finish",
                   tick=restored.tick)
        log = restored.logs(job_id, user="ana")["text"]
        assert log.count("done") == 1 and len(log.splitlines()) == 2, log  # one run in the job's log
        intervals = [r for r in restored.store.usage_rows() if r.job_id == job_id]
        assert len(intervals) == 1 and intervals[0].ended_at is not None
        report = check_integrity(restored.store)
        assert report.ok, report.problems
    finally:
        (tmp_path / "go").touch()
        restored.engine.resign()
        restored.store.close()


def test_s23_hubadmin23_a13_a_restored_store_adopts_the_running_copy_of_a_pending_job(tmp_path: Path) -> None:
    db, copy = tmp_path / "sched.sqlite", tmp_path / "backup.sqlite"

    def backup() -> None:  # sqlite3's online backup: what an admin's nightly copy is
        with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
            src.backup(dst)
        src.close()
        dst.close()

    def restore() -> str:
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            leftover.unlink(missing_ok=True)
        copy.rename(db)
        return f"sqlite:///{db}"

    _restore_runs_no_job_twice(tmp_path, f"sqlite:///{db}", backup, restore)


def test_s23_hubadmin23_a13_pg_dump_and_pg_restore_into_a_new_database_run_no_job_twice(
        tmp_path: Path, pg_server: PostgresServer) -> None:
    """The hub admin's steps: ``pg_dump -Fc``, later ``pg_restore`` into a new database, the service on it."""
    url = pg_server.create_database("a13_live")
    dump = tmp_path / "sched.dump"
    libpq = f"postgresql://postgres@127.0.0.1:{pg_server.port}/"

    def backup() -> None:
        subprocess.run(["pg_dump", "-Fc", "-f", str(dump), libpq + "a13_live"], check=True, capture_output=True)

    def restore() -> str:
        restored = pg_server.create_database("a13_restored")
        subprocess.run(["pg_restore", "--no-owner", "-d", libpq + "a13_restored", str(dump)], check=True,
                       capture_output=True)
        return restored

    _restore_runs_no_job_twice(tmp_path, url, backup, restore)


def test_s23_hubadmin23_a13_a_launch_into_a_job_dir_with_a_live_wrapper_is_refused(tmp_path: Path) -> None:
    gate = tmp_path / "go"
    job = make_job("j-restored", command=(sys.executable, "-c",
                                          f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.02)\n"))
    running = LocalExecutor(tmp_path / "jobs")
    handle = running.start(job, Allocation("n1", ("GPU-0",)))
    running.detach()  # its service went away; the wrapper runs on
    again = LocalExecutor(tmp_path / "jobs")  # the next service, on a store that has the job as pending
    try:
        found = again.live_copy(job)
        assert found is not None and found[0].data["pid"] == handle.data["pid"]
        assert found[1] == Allocation("n1", ("GPU-0",))
        record = again.dirs.read_record(job.id) or {}
        again.dirs.write_record(job.id, {k: v for k, v in record.items() if k != "allocation"})  # an older record
        with pytest.raises(ExecutorError) as refused:  # its GPUs unknown: refused, the job waits (s24: requeued)
            again.start(job, Allocation("n1", ("GPU-1",)))
        assert f"wrapper pid {handle.data['pid']}" in refused.value.message
        assert "a second copy is not started" in refused.value.message
        assert refused.value.details["code"] == "AlreadyRunning"
        assert _wrappers_of(job.id, tmp_path) == [handle.data["pid"]]
    finally:
        gate.touch()
        wait_until(lambda: gone(int(handle.data["pid"])), "the first copy to end")
    assert again.live_copy(job) is None  # ended: a new start is allowed again
