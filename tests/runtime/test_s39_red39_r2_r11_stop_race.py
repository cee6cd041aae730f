"""red39 R2 and R11: a stop that reaches a job whose command had already ended on its own.

R2: 10 jobs ``sh -c "sleep 4; exit 3"`` cancelled at their expected end: 3 of 20 were recorded ``cancelled`` with exit
code 3, "cancelled by r39c (exited with code 3)". Session 38's fix (newuser38 N4) decided once, when the stop came,
from "nothing of the job runs and its end is recorded" — false while the wrapper still wrote its record or ended what
the job left running. Now the wrapper decides at the command's end whether any signal had reached it (its
``exit.json``'s ``before_signal``; the stop's signals reach the wrapper, the leader of the job's group, no later than
any process of the job), and the engine keeps the job's own end: "…; it had ended before the cancel reached it".

R11: a job that had exited 0 when a reclaim reached it was requeued ("preempted to return borrowed quota …") and would
run again; the engine applied an own end only to cancel, idle stop and time limit. Now a preemption and an idle reclaim
too: its own end stands, said so, and nothing is requeued.

Real parts: SchedulerService in-process, SQLite, the local executor running real processes under its real wrapper.
The wrapper is held after its command's end deterministically: the command leaves a process that ignores SIGTERM
(and SIGUSR1), which the wrapper waits out for its leftover grace — the window the tester hit by chance.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.store import Store
from tests.in_process import cancel_all_and_close, tick_until
from tests.runtime.test_engine import state_of

HELD_S = 120.0
"""The wrapper's leftover grace here: it waits this long for a leftover that ignores SIGTERM (the stop's SIGKILL ends
it first)."""


def _ends_leaving_a_lingering_child(tmp_path: Path, code: int) -> list[str]:
    """A command that starts a process ignoring SIGTERM/SIGUSR1, waits until it runs, then exits ``code``."""
    ready = tmp_path / f"leftover-ready-{code}"
    return ["sh", "-c", f"(trap '' TERM USR1; touch {ready}; exec sleep {HELD_S:g}) & "
                        f"while [ ! -e {ready} ]; do sleep 0.02; done; exit {code}"]


def _service(url: str, tmp_path: Path, **kwargs: Any) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=SimulatedInventory(4, node="vm"),
                            executor=LocalExecutor(tmp_path / "jobs", leftover_grace_s=HELD_S),
                            cycle_interval_s=0.0, stop_grace_s=1.0, poll_interval_s=0.05,
                            scheduling_profile=SchedulingProfile(grace_s=1, min_runtime_s=0), **kwargs)


def _hold_after_its_end(svc: SchedulerService, job_id: str) -> None:
    """Wait (no tick: nothing settles it) until the job's command ended and its wrapper recorded it, while the wrapper
    still runs, ending the leftover: the window in which the stop comes."""
    tracked = svc.executor._jobs[job_id]
    record = tracked.job_dir / "exit.json"
    deadline = time.monotonic() + 60
    while not record.exists():
        assert time.monotonic() < deadline, "the wrapper never recorded its command's end"
        time.sleep(0.05)
    ended = json.loads(record.read_text())
    assert ended.get("before_signal") is not False, ended  # no signal had reached it at its command's end
    # the check the stop made before (newuser38 N4): something of the job still runs, so it said "the stop ended it"
    assert not svc.executor._ended_on_its_own(tracked)


def test_red39_r2_job_that_exited_while_its_wrapper_finished_is_not_recorded_cancelled(
        sqlite_db: str, tmp_path: Path) -> None:
    svc = _service(sqlite_db, tmp_path)
    try:
        ended = svc.submit({"gpus": 0, "name": "r2-ended", "command": _ends_leaving_a_lingering_child(tmp_path, 3)},
                           user="r39c")["id"]
        # a stop that reaches the job while it runs ends it, even when it answers with an exit code of its own
        answers = svc.submit({"gpus": 0, "name": "r2-answers", "command": [
            "sh", "-c", f"trap 'exit 3' TERM; touch {tmp_path / 'trapped'}; while :; do sleep 0.05; done"]},
            user="r39c")["id"]
        runs = svc.submit({"gpus": 0, "name": "r2-runs", "command": [sys.executable, "-c",
                                                                      "import time; time.sleep(60)"]},
                          user="r39c")["id"]
        tick_until(svc, "the three jobs to run", lambda: (tmp_path / "trapped").exists()
                   and all(state_of(svc, j) == "running" for j in (ended, answers, runs)))
        _hold_after_its_end(svc, ended)
        for job_id in (ended, answers, runs):
            svc.cancel(job_id, user="r39c")
        tick_until(svc, "the three to end", lambda: all(state_of(svc, j) not in ("running", "pending")
                                                        for j in (ended, answers, runs)))
        job = svc.get_job(ended, user="r39c")
        # failed before: "cancelled", exit code 3, "cancelled by r39c (exited with code 3)"
        assert (job["state"], job["exit_code"]) == ("failed", 3), job
        assert job["message"].startswith("exited with code 3"), job["message"]
        assert job["message"].endswith("; it had ended before the cancel reached it"), job["message"]
        assert "cancelled" not in job["message"], job["message"]
        log = svc.logs(ended, user="r39c")["text"]
        assert "cancelled by r39c" not in log, log  # the stop did not end it: its words are not the log's last line
        # the leftover the stop found is still named (what its signals reached)
        assert "sleep" in log, log
        answered = svc.get_job(answers, user="r39c")
        assert (answered["state"], answered["exit_code"]) == ("cancelled", 3), answered
        assert answered["message"].startswith("cancelled by r39c"), answered["message"]
        assert "had ended before" not in answered["message"], answered["message"]
        ran = svc.get_job(runs, user="r39c")
        assert ran["state"] == "cancelled" and "had ended before" not in ran["message"], ran
    finally:
        cancel_all_and_close(svc)


QUOTAS = {"quotas": [{"team": "ml", "guaranteed": 2, "borrowing_limit": 2},
                     {"team": "cv", "guaranteed": 2, "borrowing_limit": 0}]}


def test_red39_r11_job_ended_before_preemption_keeps_its_end(sqlite_db: str, tmp_path: Path) -> None:
    svc = _service(sqlite_db, tmp_path, user_teams={"root": ("ml", "cv")})
    svc.set_quotas(QUOTAS, actor="admin")
    try:
        # ml borrows a GPU of cv's guarantee; its command ends (exit 0) and leaves a process the wrapper waits out
        done = svc.submit({"gpus": 3, "name": "r11-done", "team": "ml", "priority": "low", "time_limit_s": 600,
                           "command": _ends_leaving_a_lingering_child(tmp_path, 0)}, user="root")["id"]
        tick_until(svc, "the borrower to run", lambda: state_of(svc, done) == "running")
        _hold_after_its_end(svc, done)
        cv = svc.submit({"gpus": 2, "name": "r11-owner", "team": "cv", "time_limit_s": 240,
                         "command": [sys.executable, "-c", "import time; time.sleep(60)"]}, user="root")["id"]
        tick_until(svc, "the borrower's reclaim", lambda: svc.store.get_job(done).stop_intent is not None)
        assert svc.store.get_job(done).stop_intent == "preempt"
        tick_until(svc, "the borrower to be settled", lambda: state_of(svc, done) not in ("running", "admitted"))
        job = svc.get_job(done, user="root")
        # failed before: pending again, "preempted to return borrowed quota to cv", to run a second time
        assert (job["state"], job["exit_code"]) == ("succeeded", 0), job
        assert job["message"].endswith("; it had ended before the preemption reached it"), job["message"]
        assert not [e for e in svc.audit(limit=200) if e["action"] == "requeued" and e["job_id"] == done]
        log = svc.logs(done, user="root")["text"]
        assert "waits in the queue again" not in log, log
        tick_until(svc, "the owner to run on the GPUs it reclaimed", lambda: state_of(svc, cv) == "running")
    finally:
        cancel_all_and_close(svc)
