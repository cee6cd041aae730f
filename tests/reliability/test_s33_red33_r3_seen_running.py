"""red33 R3: a job that ends while no service watches it is charged at least until a service last saw it running.

The job's ``exit.json`` is its owner's word (the wrapper is the owner's process; the job can SIGKILL it and write the
file itself). A job that ended while the service was down was settled from that claim, bounded only by its start: a
2-GPU run of 92 s across a restart was charged 1 s. Now the leading engine keeps in the store when it last saw each
job running (``jobs.seen_running_at``: at most once a minute, and at a clean stop), and an earlier claim is taken as
that time, with one audit record naming the job, its owner and both times.

Real parts: SQLite store, the real engine and :class:`LocalExecutor` running a real process; a "restart" is a second
engine over the same store and job folders (no server: the adoption under test is the engine's first tick).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, check_integrity, sqlite_url
from tests.leftovers import end_jobs

WAIT_S = 60.0


def _service(url: str, jobs: Path, owner: str) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=SimulatedInventory(4, node="n1"),
                            executor=LocalExecutor(jobs), owner_id=owner, cycle_interval_s=0.0, stop_grace_s=2.0)


def _until(predicate: Callable[[], Any], what: str, tick: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        tick()
        if value := predicate():
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _running(svc: SchedulerService, tmp_path: Path) -> str:
    """A 2-GPU job of r33b's, running and seen by one poll of ``svc``'s executor since."""
    job = svc.submit({"command": [sys.executable, "-c", f"import time\nwhile True: time.sleep(0.05)  # {tmp_path}"],
                      "name": "cheap", "gpus": 2}, user="r33b")
    job_id = str(job["id"])
    _until(lambda: svc.store.get_job(job_id).job.state.value == "running", "the job to run", svc.tick)
    job_dir = Path(str((svc.store.get_job(job_id).handle or {})["job_dir"]))
    _until(lambda: (job_dir / "wrapper.json").exists(), "its wrapper to begin (its folder made)", svc.tick)
    svc.tick()  # a poll that finds it running
    return job_id


def _seen(store: Store, job_id: str) -> Any:
    with store.transaction(write=False) as tx:
        return tx.seen_running_at(job_id)


def test_red33_r3_an_end_claimed_while_down_is_not_before_the_last_time_a_service_saw_it_running(
        tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "sched.sqlite")
    a = _service(url, tmp_path / "jobs", "a")
    a.engine.seen.every_s = 0.0  # every poll writes: the crash below comes right after a write
    job_id = _running(a, tmp_path)
    record = a.store.get_job(job_id)
    started, handle = record.job.started_at, record.handle
    assert started is not None and handle is not None
    seen = _seen(a.store, job_id)
    assert seen is not None and seen > started
    # the service dies (no clean stop: nothing more is written) …
    a.engine.executor.detach()
    a.engine.leadership.release()
    # … and meanwhile the job kills its wrapper and writes its own exit.json: "I ran 0 s"
    os.killpg(int(handle["pgid"]), signal.SIGKILL)
    _until(lambda: not os.path.exists(f"/proc/{handle['pid']}") or
           open(f"/proc/{handle['pid']}/stat").read().split(")")[-1].split()[0] == "Z", "the wrapper to die",
           lambda: None)
    job_dir = Path(str(handle["job_dir"]))
    (job_dir / "exit.json").write_text(json.dumps({"exit_code": 0, "finished_at": started.isoformat()}))

    b = _service(url, tmp_path / "jobs", "b")  # the restart: its first tick settles the unwatched end
    assert b.tick().leader
    ended = b.store.get_job(job_id).job
    assert ended.state.value == "succeeded" and "while the server was down" in ended.message
    assert ended.finished_at == seen, (ended.finished_at, seen, started)  # was its claim: its start
    usage = b.store.usage_rows(job_ids=[job_id])
    assert len(usage) == 2 and all(iv.ended_at == seen for iv in usage)  # fair share, budgets, reports read these
    [audit] = b.store.list_events(job_id=job_id, action="end_claim_bounded")
    assert audit.user == "r33b" and audit.details["owner"] == "r33b"
    assert audit.details["claimed_end"] == started.isoformat() and audit.details["seen_running_at"] == seen.isoformat()
    for said in (job_id, "r33b", started.strftime("%H:%M:%S"), seen.strftime("%H:%M:%S")):
        assert said in audit.message, audit.message
    assert check_integrity(b.store).ok


def test_red33_r3_a_clean_stop_writes_when_its_jobs_were_last_seen_and_ticks_between_writes_write_nothing(
        tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "sched.sqlite")
    a = _service(url, tmp_path / "jobs", "a")
    try:
        job_id = _running(a, tmp_path)
        for _ in range(3):
            a.tick()
        assert _seen(a.store, job_id) is None  # written at most once a minute: not at each tick
        version = a.store.get_job(job_id).version
        a.engine.resign()  # a clean stop (an upgrade): the last poll's time is written
        seen = _seen(a.store, job_id)
        started = a.store.get_job(job_id).job.started_at
        assert seen is not None and started is not None and seen > started
        assert a.store.get_job(job_id).version == version  # no job write: no decode, no cycle, no conflict
        with a.store.transaction() as tx:  # a time is never moved back (a deposed leader's late write)
            assert tx.note_seen_running([job_id], seen - timedelta(seconds=30)) == 0
        assert _seen(a.store, job_id) == seen
    finally:
        assert end_jobs(a.engine.executor) == []
