"""New-user report, session 3, finding 1, through the engine (real SQLite store, the local
executor running real processes, the engine's RuntimeFeed learning from the store): a job that
waits only for GPUs, behind a job that outlived its learned runtime, is re-projected to that
job's time limit and its reason and ETA name one start time — never "waits on something other
than GPUs" with a start in the past. The core's rules are in tests/core/test_eta_reprojection.py."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord, Store
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reasons import wire_time
from tests.runtime.builders import T0, make_job


def test_finding_1_the_queue_re_projects_a_passed_start_and_names_the_job_it_waits_for(sqlite_db: str,
                                                                                      tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(4, node="n1"),
                           executor=LocalExecutor(tmp_path / "runs"), clock=clock, owner_id="a",
                           cycle_interval_s=0.0)
    # ana's earlier run of the same 4-GPU command took 20 s: the feed expects the next one to take 20 s too
    earlier = make_job("earlier", user="ana", gpus=4, command=("sleep", "120"), time_limit_s=180)
    svc.store.insert_job(JobRecord(job=replace(earlier, state=JobState.SUCCEEDED, admitted_at=T0 - timedelta(hours=1),
                                               started_at=T0 - timedelta(hours=1),
                                               finished_at=T0 - timedelta(hours=1) + timedelta(seconds=20))))
    hold = svc.submit({"gpus": 4, "command": ["sleep", "120"], "time_limit": "3m", "name": "hold"}, user="ana")
    try:
        svc.tick()
        assert svc.get_job(hold["id"], user="ana")["state"] in ("admitted", "running")
        res = svc.submit({"gpus": 2, "command": ["sleep", "1"], "time_limit": "1m", "name": "res"}, user="ana")
        clock.advance(1)  # submitted after res (at one time, random ids would decide their order)
        nolimit = svc.submit({"gpus": 1, "command": ["sleep", "1"], "name": "nolimit"}, user="ana")
        clock.advance(39)  # hold was expected to end 20 s after its start: the projected start has passed
        svc.tick()
        rows = {row["id"]: row for row in svc.queue(user="ana")}
        now = clock.now()
        for job_id in (res["id"], nolimit["id"]):
            reason = rows[job_id]["reason"]
            eta = wire_time(reason["eta"])
            assert reason["details"]["eta_code"] == "Projected", reason["eta_reason"]
            assert eta is not None and eta > now
            assert reason["details"]["eta_waits_on"] == [hold["id"]]
            text = render_reason(reason, now=now)
            # newuser3 finding 4; since b3d4299 (issue 20) the job is named by its name and id
            assert text.eta.endswith(f"when hold ({hold['id']}) ends (by its 3m time limit)")
            assert "other than GPUs" not in text.line
        backfill = rows[nolimit["id"]]["reason"]["details"]["backfill"]
        assert backfill["reserved_for"] == res["id"]
        assert wire_time(backfill["reservation"]) == wire_time(rows[res["id"]]["reason"]["eta"])  # one start time
    finally:
        svc.cancel(hold["id"], user="ana")
        svc.tick()
