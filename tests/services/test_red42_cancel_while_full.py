"""Red team 42 ("held up so far", nit b): while the store's disk is full nobody can cancel anything (507), admins
included — and where the log folder shares the store's disk, the job filling it cannot be stopped through the
scheduler. A cancel still saves nothing and signals nothing (a job signalled by a cancel the store never saw would
be settled later as killed, its cancel lost); its 507 now says how to stop the job by hand — its process group on its
node — and that its end is recorded once the store has room, or to free space and cancel again.

Real parts: the services over a real SQLite store, a real running job (the local executor, a subprocess). The full
disk is a stand-in: the cancel's write raises the store's own :class:`StoreFullError` as the store raises it on
SQLite's "database or disk is full" (a SQLite file cannot be filled to the page here reliably; the real full disk
under a real server is tests/reliability/test_newuser41_store_start.py's tmpfs).
"""

from __future__ import annotations

import os
import time

import pytest

from jupyter_sched.errors import StoreFullError
from jupyter_sched.services import Services, jobs
from jupyter_sched.services.models import SubmitJobRequest


def _full(*_: object, **__: object) -> None:
    raise StoreFullError("store failure: the store's disk /x is full (0 bytes free; ENOSPC) (OperationalError: "
                         "database or disk is full)", hint="nothing of it was saved; free space there, then send it again")


def test_red42_b_a_cancel_while_the_store_is_full_says_how_to_stop_the_job_by_hand(
        services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    bo, boss = services.caller("bo", admin=False), services.caller("boss", admin=True)
    job = services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["sleep", "600"]))
    for _ in range(3):
        services.engine.tick()
    waiting = services.jobs.submit(bo, SubmitJobRequest(gpus=4, command=["sleep", "600"]))  # 3 of 4 GPUs free
    seen = services.jobs.get(bo, job.id)
    assert seen.state == "running", (seen.message, seen.reason)
    with services.store.transaction(write=False) as tx:
        handle = dict(tx.get_job(job.id).handle or {})
    pgid = int(handle.get("pgid") or handle["pid"])
    monkeypatch.setattr(jobs, "write_cancel", _full)
    for caller in (bo, boss):
        with pytest.raises(StoreFullError) as raised:
            services.jobs.cancel(caller, job.id)
        body = raised.value.public_json("ref")["error"]
        assert body["code"] == "store_full"
        assert f"kill -TERM -{pgid}" in body["hint"] and "on vm" in body["hint"], body
        assert "recorded (as killed) once the store has room" in body["hint"], body
    assert os.getpgid(pgid) == pgid  # nothing signalled: the job runs on
    with pytest.raises(StoreFullError) as raised:
        services.jobs.cancel(bo, waiting.id)  # nothing runs: free space and cancel again
    assert "free space on the disk of the scheduler's store" in raised.value.public_json("r")["error"]["hint"]
    assert "kill" not in raised.value.public_json("r")["error"]["hint"]
    monkeypatch.undo()
    services.jobs.cancel(bo, waiting.id)
    services.jobs.cancel(bo, job.id)  # room again: the cancel is saved and carried out
    deadline = time.monotonic() + 60
    while services.jobs.get(bo, job.id).state != "cancelled" and time.monotonic() < deadline:
        services.engine.tick()  # the stop carried out: SIGTERM to its group, its end recorded
    assert services.jobs.get(bo, job.id).state == "cancelled"
