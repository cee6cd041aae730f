"""hubadmin24 B2 / B7: a store that does not have a job whose wrapper still runs on this host — submitted and
started after the backup that was restored, or a new empty store — adopts it as running: its GPU is never
handed to another job, it is listed, ``cancel`` reaches it; one WARNING and one audit record name it.

Real subprocesses (the local executor's wrappers) and real SQLite stores: the backup is sqlite3's online copy
of the file, restored by putting the copy back (the README's steps), and B7's "start it empty" is a new file.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import NotFoundError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation
from jupyter_sched.services import SchedulerService
from jupyter_sched.store import check_integrity
from tests.pg import PostgresServer
from tests.runtime.builders import make_job
from tests.runtime.test_engine import gated, gone, make_service, state_of, wait_until
from tests.runtime.test_s23_hubadmin23_a13_restore import _wrappers_of


def _backup(db: Path, copy: Path) -> None:
    with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def _put_back(db: Path, copy: Path) -> str:
    for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        leftover.unlink(missing_ok=True)
    copy.rename(db)
    return f"sqlite:///{db}"


def _run_x_then_lose_the_store(tmp_path: Path, before_start: Callable[[Path], None],
                               after: Callable[[Path], str], url: str | None = None,
                               ) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """One 1-GPU service (on ``url``, else a SQLite file): ``before_start(db)``, ana submits X (1 GPU, runs until
    ``tmp_path/go``), it starts; the service stops (X runs on); ``after(db)`` → the store URL the next service
    starts on. Returns that URL, X's job object and its handle as the first service had them."""
    db = tmp_path / "sched.sqlite"
    first = make_service(url or f"sqlite:///{db}", tmp_path, gpus=1)
    before_start(db)
    x = first.submit({"command": gated(tmp_path, "go", "print('x done', flush=True)\n"), "time_limit": "1h",
                      "name": "x-after-backup"}, user="ana")["id"]
    wait_until(lambda: first.logs(x, user="ana")["text"], "X's first output", tick=first.tick)
    ran = first.get_job(x, user="ana")
    handle = dict(first.store.get_job(x).handle or {})
    assert ran["state"] == "running" and handle
    first.engine.resign()  # the service stops; X's wrapper runs on
    first.store.close()
    return after(db), ran, handle


def _restored_service(url: str, tmp_path: Path) -> tuple[SchedulerService, list[dict[str, Any]]]:
    svc = make_service(url, tmp_path, gpus=1, owner="engine-restored")
    events: list[dict[str, Any]] = []
    publish = svc.engine.writer.publish

    def seen(event: dict[str, Any]) -> None:
        events.append(event)
        publish(event)

    svc.engine.writer.publish = seen
    return svc, events


def _x_is_adopted_and_keeps_its_gpu(svc: SchedulerService, events: list[dict[str, Any]], x: str,
                                    ran: dict[str, Any], handle: dict[str, Any], tmp_path: Path,
                                    caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.engine.restored"):
        wait_until(lambda: svc.engine.is_leader, "the restored service to lead", tick=svc.tick)
    job = svc.get_job(x, user="ana")  # listed: its owner reads it
    assert job["state"] == "running", job
    assert job["allocation"]["gpu_uuids"] == ran["allocation"]["gpu_uuids"]
    assert job["name"] == "x-after-backup" and job["time_limit_s"] == 3600 and job["user"] == "ana"
    assert [e["data"]["state"] for e in events if e["data"].get("id") == x][:1] == ["running"]  # pushed at adoption
    warned = [r.getMessage() for r in caplog.records if x in r.getMessage()]
    assert len(warned) == 1 and f"wrapper pid {handle['pid']}" in warned[0] and "of ana" in warned[0]
    assert ran["allocation"]["gpu_uuids"][0] in warned[0] and "was not in this store" in warned[0]
    adopted = svc.audit(job_id=x, action="adopted")
    assert len(adopted) == 1 and adopted[0]["details"]["not_in_store"] is True
    stored = svc.store.get_job(x).handle or {}
    assert stored["pid"] == handle["pid"] and "spec" not in stored  # the spec (env, source) is the row's only
    assert "spec" not in adopted[0]["details"]["handle"]
    # the B2 probe: another user's 1-GPU job is not put on X's GPU (the only one)
    probe = svc.submit({"command": gated(tmp_path, "go-probe"), "name": "p-probe"}, user="bo")["id"]
    for _ in range(4):
        svc.tick()
    assert state_of(svc, probe) == "pending"
    assert _wrappers_of(x, tmp_path) == [handle["pid"]]  # one copy of X, the first one
    assert check_integrity(svc.store).ok
    svc.cancel(x, user="ana")  # cancel reaches it
    wait_until(lambda: state_of(svc, x) == "cancelled", "X to be cancelled", tick=svc.tick)
    wait_until(lambda: gone(int(handle["pid"])), "X's wrapper to end", tick=svc.tick)
    wait_until(lambda: state_of(svc, probe) == "running", "the probe to get the GPU X held", tick=svc.tick)
    intervals = [r for r in svc.store.usage_rows() if r.job_id == x]
    assert len(intervals) == 1 and intervals[0].ended_at is not None


def test_s24_hubadmin24_b2_a_job_submitted_after_the_backup_is_adopted_not_double_booked(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    copy = tmp_path / "backup.sqlite"
    url, ran, handle = _run_x_then_lose_the_store(tmp_path, lambda db: _backup(db, copy),
                                                  lambda db: _put_back(db, copy))
    x = ran["id"]
    svc, events = _restored_service(url, tmp_path)
    try:
        with pytest.raises(NotFoundError):
            svc.store.get_job(x)  # the backup never had it
        _x_is_adopted_and_keeps_its_gpu(svc, events, x, ran, handle, tmp_path, caplog)
    finally:
        (tmp_path / "go").touch()
        (tmp_path / "go-probe").touch()
        wait_until(lambda: gone(int(handle["pid"])), "X's wrapper to end")
        svc.engine.resign()
        svc.store.close()


def test_s24_hubadmin24_b2_pg_dump_then_pg_restore_adopts_the_job_submitted_after_the_dump(
        tmp_path: Path, pg_server: PostgresServer, caplog: pytest.LogCaptureFixture) -> None:
    """The hub admin's exact steps: ``pg_dump -Fc``, submit+start X, ``pg_restore`` into a new database, start."""
    dump = tmp_path / "sched.dump"
    libpq = f"postgresql://postgres@127.0.0.1:{pg_server.port}/"
    live = pg_server.create_database("b2_live")

    def restore(db: Path) -> str:
        restored = pg_server.create_database("b2_restored")
        subprocess.run(["pg_restore", "--no-owner", "-d", libpq + "b2_restored", str(dump)], check=True,
                       capture_output=True)
        return restored

    url, ran, handle = _run_x_then_lose_the_store(
        tmp_path, lambda db: subprocess.run(["pg_dump", "-Fc", "-f", str(dump), libpq + "b2_live"], check=True,
                                            capture_output=True), restore, url=live)
    svc, events = _restored_service(url, tmp_path)
    try:
        _x_is_adopted_and_keeps_its_gpu(svc, events, ran["id"], ran, handle, tmp_path, caplog)
    finally:
        (tmp_path / "go").touch()
        (tmp_path / "go-probe").touch()
        wait_until(lambda: gone(int(handle["pid"])), "X's wrapper to end")
        svc.engine.resign()
        svc.store.close()


def test_s24_hubadmin24_b7_a_new_empty_store_adopts_the_running_work_and_warns(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url, ran, handle = _run_x_then_lose_the_store(tmp_path, lambda db: None,
                                                  lambda db: f"sqlite:///{tmp_path / 'moved.sqlite'}")
    svc, events = _restored_service(url, tmp_path)
    svc.services.set_held_users(lambda: {"ana": "ana is no hub user any more"})  # the owner re-checked as admission would
    try:
        _x_is_adopted_and_keeps_its_gpu(svc, events, ran["id"], ran, handle, tmp_path, caplog)
        said = svc.audit(job_id=ran["id"], action="adopted")[0]
        assert said["details"]["owner_held"] == "ana is no hub user any more"
        assert "its owner: ana is no hub user any more — cancel it if it should not run" in said["message"]
        summary = [r.getMessage() for r in caplog.records if "this store did not have" in r.getMessage()]
        assert len(summary) == 1 and "1 adopted" in summary[0] and "must submit it again" in summary[0]
    finally:
        (tmp_path / "go").touch()
        (tmp_path / "go-probe").touch()
        wait_until(lambda: gone(int(handle["pid"])), "X's wrapper to end")
        svc.engine.resign()
        svc.store.close()


def test_s24_hubadmin24_b2_a_launch_record_without_its_spec_is_adopted_on_its_gpus(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A wrapper launched by a version that did not record the spec: adopted under its owner's name with
    the recorded GPUs and its wrapper's argv, so its GPU is still never handed out."""
    def forget_spec(db: Path) -> str:
        record_path = tmp_path / "jobs" / ".state" / f"{x_id[0]}.json"
        record = json.loads(record_path.read_text())
        for key in ("spec", "attempts", "submitted_at"):
            record.pop(key, None)
        record_path.write_text(json.dumps(record))
        return f"sqlite:///{tmp_path / 'empty.sqlite'}"

    x_id: list[str] = []
    db = tmp_path / "sched.sqlite"
    first = make_service(f"sqlite:///{db}", tmp_path, gpus=1)
    x = first.submit({"command": gated(tmp_path, "go")}, user="ana")["id"]
    x_id.append(x)
    wait_until(lambda: first.logs(x, user="ana")["text"], "X's first output", tick=first.tick)
    handle = dict(first.store.get_job(x).handle or {})
    gpu = first.get_job(x, user="ana")["allocation"]["gpu_uuids"]
    first.engine.resign()
    first.store.close()
    svc, _ = _restored_service(forget_spec(db), tmp_path)
    try:
        wait_until(lambda: svc.engine.is_leader, "the new service to lead", tick=svc.tick)
        job = svc.get_job(x, user="ana")
        assert job["state"] == "running" and job["allocation"]["gpu_uuids"] == gpu and job["resources"]["gpus"] == 1
        assert job["command"] == handle["argv"] and job["name"].startswith("(not in this store")
        probe = svc.submit({"command": ["true"]}, user="bo")["id"]
        for _ in range(3):
            svc.tick()
        assert state_of(svc, probe) == "pending"
    finally:
        (tmp_path / "go").touch()
        wait_until(lambda: gone(int(handle["pid"])), "X's wrapper to end")
        svc.engine.resign()
        svc.store.close()


def test_s24_a13_a_copy_found_at_start_is_adopted_on_its_own_gpus_not_failed(tmp_path: Path) -> None:
    """A13 leftover: a copy the start-up check did not see (it appeared later) made the job fail ("could not
    start: … already runs") while the copy ran on untracked. Now the start adopts it, on the GPUs it holds."""
    gate = tmp_path / "go"
    job = make_job("j-late", command=(sys.executable, "-c",
                                      f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.02)\n"))
    running = LocalExecutor(tmp_path / "jobs")
    handle = running.start(job, Allocation("n1", ("GPU-0",)))
    running.detach()
    again = LocalExecutor(tmp_path / "jobs")
    try:
        got = again.start(job, Allocation("n1", ("GPU-1",)))  # the scheduler chose another GPU
        assert got.data["pid"] == handle.data["pid"] and got.data["allocation"]["gpu_uuids"] == ["GPU-0"]
        assert job.id in again.tracked() and _wrappers_of(job.id, tmp_path) == [handle.data["pid"]]
    finally:
        gate.touch()
    wait_until(lambda: any(e.job_id == job.id for e in again.poll()), "the adopted copy's end to be seen")


def test_s24_a13_a_late_copy_runs_the_job_in_the_store_on_the_copys_gpus(sqlite_db: str, tmp_path: Path) -> None:
    """Through the engine: a pending job whose copy appears after the start-up check is written running on
    the copy's GPUs with the copy's handle (not failed, not started twice)."""
    gate = tmp_path / "go"
    svc = make_service(sqlite_db, tmp_path, gpus=2)
    try:
        wait_until(lambda: svc.engine.is_leader, "the service to lead", tick=svc.tick)
        x = svc.submit({"command": gated(tmp_path, "go"), "gpus": 1}, user="ana")["id"]
        spec_job = svc.store.get_job(x).job
        late = LocalExecutor(tmp_path / "jobs")  # another process launched it meanwhile, on the 2nd GPU
        handle = late.start(spec_job, Allocation("n1", ("GPU-sim-n1-1",)))
        late.detach()
        wait_until(lambda: state_of(svc, x) == "running", "X to run", tick=svc.tick)
        job = svc.get_job(x, user="ana")
        assert job["allocation"]["gpu_uuids"] == ["GPU-sim-n1-1"]
        assert (svc.store.get_job(x).handle or {})["pid"] == handle.data["pid"]
        assert _wrappers_of(x, tmp_path) == [handle.data["pid"]]
        gate.touch()
        wait_until(lambda: state_of(svc, x) == "succeeded", "X to end", tick=svc.tick)
    finally:
        gate.touch()
        svc.engine.resign()
        svc.store.close()


def test_s24_hubadmin24_b2_the_start_up_scan_reads_only_the_records_of_live_wrappers(tmp_path: Path) -> None:
    """Launch records are never removed (one per job ever started): the leader-start scan looks up only the
    jobs a live wrapper's command line names, so a host with years of records starts as fast as a new one."""
    gate = tmp_path / "go"
    job = make_job("j-live", command=(sys.executable, "-c",
                                      f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.02)\n"))
    running = LocalExecutor(tmp_path / "jobs")
    handle = running.start(job, Allocation("n1", ("GPU-0",)))
    running.detach()
    again = LocalExecutor(tmp_path / "jobs")
    old = again.dirs.read_record(job.id) or {}
    ended = {f"j-ended-{i}" for i in range(200)}
    for job_id in ended:  # jobs long over: their wrappers' pids are gone
        again.dirs.write_record(job_id, {**old, "pid": 1 << 22, "create_time": 1.0})
    read: list[str] = []
    real = again.dirs.read_record

    def counted(job_id: str) -> dict[str, Any] | None:
        read.append(job_id)
        return real(job_id)

    again.dirs.read_record = counted  # type: ignore[method-assign]
    try:
        found = again.live_unknown(lambda job_id: False)
        assert [(j.id, h.data["pid"]) for j, h, _ in found if j.id in {"j-live", *ended}] == [("j-live", handle.data["pid"])]
        assert ended.isdisjoint(read) and "j-live" in read
    finally:
        gate.touch()
        wait_until(lambda: gone(int(handle.data["pid"])), "the wrapper to end")
