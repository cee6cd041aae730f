"""New user 5, findings 4 and 8, through the engine (real SQLite store, the local executor running
real processes, the engine's RuntimeFeed learning from the store): an ETA is learned only from
runs of the same work — the same user, the same script, notebook or whole command line, and the
same request (issue 16 item 4) — never from the user's unrelated short runs. The core's rules are
in tests/core/test_eta.py (``test_runtime_history_*``) and tests/core/test_eta_waits.py."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobState
from jupyter_sched.services.facade import SchedulerService
from jupyter_sched.store import JobRecord, Store
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reasons import wire_time
from tests.runtime.builders import T0, make_job

LOOP = [sys.executable, "-c", "import time; time.sleep(600)"]


def _service(sqlite_db: str, tmp_path: Path, clock: ManualClock) -> SchedulerService:
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(4, node="n1"),
                           executor=LocalExecutor(tmp_path / "runs"), clock=clock, owner_id="a",
                           cycle_interval_s=0.0)
    # root's earlier runs: all short, none of them the work submitted below
    for i, (command, ran_s, limit_s) in enumerate(((("true",), 0.05, 60.0),
                                                   ((sys.executable, "-c", "print(3)"), 3.0, 1800.0),
                                                   (("sleep", "5"), 5.0, 1800.0))):
        job = make_job(f"past-{i}", user="root", command=command, time_limit_s=limit_s)
        start = T0 - timedelta(hours=1) + timedelta(minutes=i)
        svc.store.insert_job(JobRecord(job=replace(job, state=JobState.SUCCEEDED, admitted_at=start, started_at=start,
                                                   finished_at=start + timedelta(seconds=ran_s))))
    return svc


def _rows(svc: SchedulerService) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in svc.queue(user="root")}


def test_newuser5_finding_8_right_after_submit_the_eta_is_not_learned_from_unrelated_runs(
        sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)
    notebook = svc.submit({"gpus": 2}, user="root", kind="lease")  # the user's notebook holds 2 of the 4 GPUs
    survivor = svc.submit({"gpus": 1, "command": LOOP, "time_limit": "30m", "name": "survivor"}, user="root")
    jobs = [notebook, survivor]
    try:
        svc.tick()
        started = svc.get_job(survivor["id"], user="root")
        assert started["state"] in ("admitted", "running")
        waiter = svc.submit({"gpus": 2, "command": ["sleep", "20"], "time_limit": "30m", "name": "waiter"},
                            user="root")
        jobs.append(waiter)
        clock.advance(2)
        svc.tick()
        for _ in range(2):  # and two seconds later: the same ETA (it flipped to the limit once the 3 s passed)
            reason = _rows(svc)[waiter["id"]]["reason"]
            now = clock.now()
            start = wire_time(started.get("started_at") or started["admitted_at"])
            assert start is not None
            # the survivor is a 600-s loop, not root's 3-s `python -c print(3)` nor its other runs:
            # the waiter starts when the survivor's 30m limit ends, not "now"
            assert wire_time(reason["eta"]) == start + timedelta(minutes=30), reason
            assert reason["details"]["eta_waits_on"] == [survivor["id"]]
            assert "eta_learned" not in reason["details"]
            text = render_reason(reason, now=now, relative=True).eta
            assert "(now)" not in text and "similar past runs" not in text, text
            clock.advance(2)
            svc.tick()
    finally:
        for job in jobs:
            svc.cancel(job["id"], user="root")
        svc.tick()


def test_newuser5_finding_4_a_job_queued_ahead_is_not_said_to_end_when_it_starts(
        sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)
    notebook = svc.submit({"gpus": 2}, user="root", kind="lease")
    long_a = svc.submit({"gpus": 2, "command": LOOP, "time_limit": "20m", "name": "long-a"}, user="root")
    jobs = [notebook, long_a]
    try:
        svc.tick()
        assert svc.get_job(long_a["id"], user="root")["state"] in ("admitted", "running")
        clock.advance(1)
        small1 = svc.submit({"gpus": 1, "command": ["sleep", "60"], "time_limit": "30m", "name": "small1"},
                            user="root")
        jobs.append(small1)
        clock.advance(1)
        other = svc.submit({"gpus": 1, "command": ["sleep", "30"], "time_limit": "30m", "name": "other"}, user="root")
        jobs.append(other)
        clock.advance(60 * 15)
        lease = svc.submit({"gpus": 1}, user="root", kind="lease")
        jobs.append(lease)
        svc.tick()
        clock.advance(2)
        svc.tick()
        rows = _rows(svc)
        reason = rows[lease["id"]]["reason"]
        eta = wire_time(reason["eta"])
        assert eta is not None
        # long-a frees 2 GPUs at its 20m limit; small1 and `other` start then and take them. root's
        # `sleep 5` and `true` runs are other work: small1 (`sleep 60`) is not expected to end 5 s
        # after it starts, so the lease waits for one of them to end, by its 30m limit
        first = wire_time(rows[small1["id"]]["reason"]["eta"])
        assert first is not None
        assert eta == first + timedelta(minutes=30), reason
        for waited in reason["details"]["eta_waits_on"]:  # nothing named ends before it could have run
            if waited in (small1["id"], other["id"]):
                assert wire_time(rows[waited]["reason"]["eta"]) + timedelta(minutes=30) <= eta  # type: ignore[operator]
        assert "eta_learned" not in reason["details"]
    finally:
        for job in jobs:
            svc.cancel(job["id"], user="root")
        svc.tick()
