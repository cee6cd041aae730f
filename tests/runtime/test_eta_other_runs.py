"""New user 11, N15, through the engine (real SQLite store, the local executor running a real
process, the engine's RuntimeFeed learning from the store): a running first run of new work whose
end is guessed from its owner's runs of *other* programs says so — "as its owner's other runs
did" — not "as long as similar past runs did" (eve's ``sleep`` loop was predicted from her other
programs' runs, all at 40 % of their limits). The core's rules: tests/core/test_eta_sources.py."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobState
from jupyter_sched.services.facade import SchedulerService
from jupyter_sched.store import JobRecord, Store
from jupyter_sched.wording import render_reason
from tests.leftovers import end_jobs
from tests.runtime.builders import T0, make_job

LOOP = [sys.executable, "-c", "import time; time.sleep(600)"]


def _service(sqlite_db: str, tmp_path: Path, clock: ManualClock) -> SchedulerService:
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "runs"), clock=clock, owner_id="a",
                           cycle_interval_s=0.0)
    # eve's earlier runs: three other programs, each ended at 40 % of its limit
    for i, (command, ran_s, limit_s) in enumerate(((("echo", "a"), 24.0, 60.0), (("env",), 48.0, 120.0),
                                                   (("sleep", "120"), 120.0, 300.0))):
        job = make_job(f"past-{i}", user="eve", command=command, time_limit_s=limit_s)
        start = T0 - timedelta(hours=1) + timedelta(minutes=10 * i)
        svc.store.insert_job(JobRecord(job=replace(job, state=JobState.SUCCEEDED, admitted_at=start, started_at=start,
                                                   finished_at=start + timedelta(seconds=ran_s))))
    return svc


def test_newuser11_n15_the_engine_says_a_guess_came_from_the_owners_other_runs(sqlite_db: str,
                                                                                tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)
    eve_two = svc.submit({"gpus": 2, "command": LOOP, "time_limit": "10m", "name": "eve-two"}, user="eve")
    jobs = [(eve_two, "eve")]
    try:
        svc.tick()
        assert svc.get_job(eve_two["id"], user="eve")["state"] in ("admitted", "running")
        waiter = svc.submit({"gpus": 1, "command": ["true"], "time_limit": "1m", "name": "amy-cell-job"},
                            user="amy")
        jobs.append((waiter, "amy"))
        clock.advance(10)
        svc.tick()
        # eve's history is hers: an admin reads it (amy reads "as estimated from past runs", red team 22 R2:
        # tests/runtime/test_s23_red22_r2_learnt_history.py)
        reason = svc.get_job(waiter["id"], user="boss", is_admin=True)["reason"]
        assert reason["details"]["eta_waits_on"] == [eve_two["id"]], reason
        assert reason["details"]["eta_learned_other"] == {eve_two["id"]: 0.4}, reason  # 4m of its 10m limit
        text = render_reason(reason, now=clock.now(), relative=True).eta
        assert text.endswith(f"when eve's job \"eve-two\" ({eve_two['id']}) ends (if it ends at ~40 % of its time limit, as its "
                             "owner's other runs did)"), text
        assert "similar past runs" not in text
        clock.advance(250)  # past the 4m guess: re-estimated to its limit, and the note says from what
        svc.tick()
        reason = svc.get_job(waiter["id"], user="boss", is_admin=True)["reason"]
        assert reason["details"]["eta_note"] == (f"{eve_two['id']} ran longer than ~4m (its owner's other runs ended "
                                                 "at ~40 % of their time limits), so it is now expected to run to its "
                                                 "10m time limit"), reason
        assert render_reason(reason, now=clock.now(), relative=True).eta.endswith("(by its 10m time limit)")
    finally:
        for job, user in jobs:
            svc.cancel(job["id"], user=user)
        svc.tick()
        # the clock is the test's: the cancel's 60-s grace never elapses, so end the wrappers here, not the suite's net
        assert end_jobs(svc.engine.executor) == []


def test_newuser15_n5_quick_test_runs_are_no_guess_for_a_new_program_and_nothing_is_told_now(
        sqlite_db: str, tmp_path: Path) -> None:
    """New user 15, N5: after ``true``, a 2-s training and the 2.2-s quickstart (30m limits),
    ``big`` (a 600-s loop, 20m limit) was guessed to end at 0.12 % of its limit, "as your other runs
    did", and the job behind it read "ETA now" for a minute. Runs that ended within 1 % of their
    limits are tests, not padding: the ETA is big's limit, and it says no guess."""
    clock = ManualClock(T0)
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "runs"), clock=clock, owner_id="a",
                           cycle_interval_s=0.0)
    quick = ((("true",), 0.01, None), (("python", "train.py"), 2.0, 1800.0), (("python", "quickstart.py"), 2.2, 1800.0))
    for i, (command, ran_s, limit_s) in enumerate(quick):  # the second guessed the third within 10 %
        job = make_job(f"quick-{i}", user="nu", command=command, time_limit_s=limit_s)
        start = T0 - timedelta(hours=1) + timedelta(minutes=5 * i)
        svc.store.insert_job(JobRecord(job=replace(job, state=JobState.SUCCEEDED, admitted_at=start, started_at=start,
                                                   finished_at=start + timedelta(seconds=ran_s))))
    big = svc.submit({"gpus": 2, "command": LOOP, "time_limit": "20m", "name": "big"}, user="nu")
    jobs = [big]
    try:
        svc.tick()
        started = clock.now()
        waiter = svc.submit({"gpus": 1, "command": ["true"], "time_limit": "1h", "name": "waiter"}, user="nu")
        jobs.append(waiter)
        clock.advance(1)
        svc.tick()
        reason = svc.get_job(waiter["id"], user="nu")["reason"]
        assert reason["details"]["eta_waits_on"] == [big["id"]], reason
        assert "eta_learned_other" not in reason["details"] and "eta_learned" not in reason["details"], reason
        eta = datetime.fromisoformat(reason["eta"].replace("Z", "+00:00"))
        assert abs((eta - (started + timedelta(minutes=20))).total_seconds()) < 2, reason
        text = render_reason(reason, now=clock.now(), relative=True, mine=True).eta
        assert "(now)" not in text and "other runs" not in text, text
    finally:
        for job in jobs:
            svc.cancel(job["id"], user="nu")
        svc.tick()
        assert end_jobs(svc.engine.executor) == []
