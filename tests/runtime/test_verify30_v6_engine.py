"""verify30 V6 through the engine (real SQLite store and its finished runs, the engine's RuntimeFeed, the
local executor running real processes on simulated GPUs, a manual clock): a flood's first ETA that rests
on a guess is no promise, and a job with no time limit that outran its learnt end is not "stopping within
the grace period" of a limit it never had. The core's cases: tests/core/test_verify30_v6_guessed_promise.py.
"""

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
from jupyter_sched.queues.order import PROMISE
from jupyter_sched.services.facade import SchedulerService
from jupyter_sched.store import JobRecord, Store
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reasons import wire_time
from tests.runtime.builders import T0, make_job

LOOP = (sys.executable, "-c", "import time; time.sleep(600)")


def _service(sqlite_db: str, tmp_path: Path, clock: ManualClock,
             past: list[tuple[str, tuple[str, ...], float, float | None]]) -> SchedulerService:
    """A 2-GPU personal lab whose store holds the finished runs ``past``: ``(user, command, ran_s, limit_s)``."""
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "runs"), clock=clock, owner_id="a",
                           cycle_interval_s=0.0)
    for i, (user, command, ran_s, limit_s) in enumerate(past):
        job = make_job(f"past-{i}", user=user, command=command, time_limit_s=limit_s)
        start = T0 - timedelta(hours=1) + timedelta(minutes=i)
        svc.store.insert_job(JobRecord(job=replace(job, state=JobState.SUCCEEDED, admitted_at=start, started_at=start,
                                                   finished_at=start + timedelta(seconds=ran_s))))
    return svc


def _pending(svc: SchedulerService, user: str) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in svc.queue(user=user) if row["state"] == "pending"}


def test_verify30_v6_engine_a_job_with_no_limit_past_its_learnt_end_is_not_said_to_stop_in_a_grace_period(
        sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    # root ran this same command twice before, 5 s each, with no time limit (a personal lab's default)
    svc = _service(sqlite_db, tmp_path, clock, [("root", LOOP, 5.0, None), ("root", LOOP, 5.0, None)])
    jobs = [svc.submit({"gpus": 1, "command": list(LOOP), "name": f"f{i}"}, user="root") for i in range(3)]
    try:
        svc.tick()
        (name, row), = _pending(svc, "root").items()  # two of the three started: one waits
        first = row["reason"]
        assert wire_time(first["eta"]) == T0 + timedelta(seconds=5), first  # as its similar runs took
        clock.advance(20)
        svc.tick()
        reason = _pending(svc, "root")[name]["reason"]
        now = clock.now()
        text = render_reason(reason, now=now, relative=True).eta
        # was "ETA … (in 1m), when … ends (… within the 1m grace period: it ran past its 5s time limit)"
        assert reason["eta"] is None and "grace" not in text and "5s time limit" not in text, text
        assert text.startswith("ETA unknown") and "none of which has a time limit" in text, text
    finally:
        for job in jobs:
            svc.cancel(job["id"], user="root")
        svc.tick()


def test_verify30_v6_engine_a_floods_eta_read_from_other_users_runs_is_no_promise(
        sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    # ana's runs of another program ended at ~10 % of their 10m limits; bo has no finished run yet
    ana = (sys.executable, "-c", "print('ana')")
    svc = _service(sqlite_db, tmp_path, clock, [("ana", ana, 60.0, 600.0), ("ana", ana, 62.0, 600.0)])
    jobs = [svc.submit({"gpus": 1, "command": list(LOOP), "time_limit": "10m", "name": f"f{i}"}, user="bo")
            for i in range(2)]
    try:
        svc.tick()  # f0 and f1 start: 2 of 2 GPUs
        clock.advance(10)
        jobs.append(svc.submit({"gpus": 1, "command": list(LOOP), "time_limit": "10m", "name": "f2"}, user="bo"))
        svc.tick()
        first = _pending(svc, "bo")["f2"]["reason"]
        # shown: when f0 or f1 end as other users' runs of their size did (~60 s after they started)
        assert wire_time(first["eta"]) == T0 + timedelta(seconds=61), first
        assert PROMISE not in first["details"], first["details"][PROMISE]  # was promised 12:01:01
        clock.advance(120)  # they outran that guess: their 10m limits bound them now
        svc.tick()
        later = _pending(svc, "bo")["f2"]["reason"]
        promise = later["details"][PROMISE]
        assert wire_time(promise["at"]) == clock.now()
        assert wire_time(promise["start"]) == T0 + timedelta(minutes=10), promise
    finally:
        for job in jobs:
            svc.cancel(job["id"], user="bo")
        svc.tick()
