"""red32 R5: the reclaim cool-down must hold whatever ends the preemptor, not only its owner's cancel. red32 took
r32a's borrowed jobs back again and again with a preemptor that just exits (``-- /bin/true``), one with a 1-s time
limit, and a lease (``%gpu request``) released at once: no record, no cool-down. Here each of those ends, through
the engine's own end paths, is read back from the store (audit ``reclaim`` + the preemptor's row) and holds
team teamb's next reclaim — by another member, cid — with the reason saying until when, and one audit record
``reclaim_dropped`` names the team and the cause; after the cool-down the team reclaims again. A preemptor that
held what it took past the cool-down, then exited, is not held back.

SchedulerService in-process with a real SQLite store, the real core and real subprocesses on 2 simulated GPUs;
the clock is a ManualClock, so "has run 6 minutes" needs no waiting. ann is in teama, bob and cid in teamb; both
teams are guaranteed 1 GPU and may borrow without limit (red32's quotas, scaled down)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.engine.reclaim_history import ReclaimHistory, end_cause
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.model import JobKind, JobState
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.store import JobRecord, Store
from tests.leftovers import end_jobs
from tests.runtime.builders import T0, make_job
from tests.runtime.test_engine import gated, state_of, wait_until

TEAMS = {"ann": "teama", "bob": "teamb", "cid": "teamb"}
QUOTAS = {"quotas": [{"team": "teama", "guaranteed": 1, "borrowing_limit": None},
                     {"team": "teamb", "guaranteed": 1, "borrowing_limit": None}]}
MADE: list[SchedulerService] = []


@pytest.fixture(autouse=True)
def _end_jobs() -> Iterator[None]:
    """After each test, end every job its services still run (no grace) and check none is left."""
    MADE.clear()
    yield
    made, MADE[:] = list(MADE), []
    left = {id(svc): end_jobs(svc.engine.executor) for svc in made}
    assert not any(left.values()), f"jobs still running after the test: {left}"


class Reclaim:
    """ann's two jobs on both GPUs (one borrowed), past the minimum runtime; bob's preemptor ``body`` takes
    one back (:attr:`victim`) and runs."""

    def __init__(self, sqlite_db: str, tmp_path: Path, body: dict[str, Any], kind: str | None = None, *,
                 took_ago_s: float = 40.0) -> None:
        # a job's end is its process's real exit time (the wrapper's), so the manual clock starts far enough
        # back that the reclaim is ``took_ago_s`` before the wall clock's now
        start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(seconds=360 + took_ago_s)
        self.clock, self.tmp = ManualClock(start), tmp_path
        self.took = start + timedelta(seconds=360)
        # the store's clock is the engine's: the audit's times (a reclaim's) and the rows' on one clock, as in a service
        self.svc = svc = SchedulerService(store=Store(sqlite_db, now=self.clock.now),
                                          inventory=SimulatedInventory(2, node="n1"),
                                          executor=LocalExecutor(tmp_path / "jobs"), clock=self.clock,
                                          cycle_interval_s=0.0, stop_grace_s=5.0, user_teams=TEAMS,
                                          scheduling_profile=SchedulingProfile(grace_s=5))
        MADE.append(svc)
        svc.set_quotas(QUOTAS, actor="admin")
        self.ann = [svc.submit({"gpus": 1, "command": gated(tmp_path, "never"), "name": f"a-bor{i}"},
                               user="ann")["id"] for i in (1, 2)]
        wait_until(lambda: all(state_of(svc, j) == "running" for j in self.ann), "ann's two jobs", tick=svc.tick)
        self.clock.advance(360)  # past the minimum runtime: reclaimable
        self.taker = svc.submit({"gpus": 1, "name": "b-take1", **body}, user="bob", kind=kind)["id"]
        self.victim = wait_until(lambda: next((j for j in self.ann if state_of(svc, j) == "pending"), None),
                                 "one of ann's borrowed jobs reclaimed", tick=svc.tick)
        wait_until(lambda: state_of(svc, self.taker) == "running", "b-take1 to run", tick=svc.tick)

    def ended(self, state: str) -> None:
        """Wait for the preemptor's end in ``state``, then for ann's job to run again on the GPU it gave up."""
        wait_until(lambda: state_of(self.svc, self.taker) == state, f"b-take1 {state}", tick=self.svc.tick)
        wait_until(lambda: state_of(self.svc, self.victim) == "running", "ann's job to run again", tick=self.svc.tick)
        self.clock.advance(360)  # its new run is past the minimum runtime too: only a cool-down can keep it

    def second(self) -> str:
        """cid (team teamb too) asks for its guaranteed GPU."""
        return str(self.svc.submit({"gpus": 1, "command": gated(self.tmp, "never"), "name": "b-take2"},
                                   user="cid")["id"])

    def held_back(self, taker2: str, cause: str) -> None:
        """``taker2`` waits out teamb's cool-down, said in its reason; one ``reclaim_dropped`` names teamb and
        ``cause``; 15 min after the reclaim it takes one of ann's jobs back."""
        svc = self.svc

        def rule() -> dict[str, Any] | None:
            svc.tick()
            job = svc.get_job(taker2, user="admin", is_admin=True)
            found = ((job.get("reason") or {}).get("details") or {}).get("preemption_rule") or {}
            return job["reason"] if found.get("rule") == "reclaim_cooldown" else None

        reason = wait_until(rule, "b-take2's cool-down reason")
        assert "team teamb's reclaims of other teams' borrowed GPUs wait until" in reason["message"], reason
        assert all(state_of(svc, j) == "running" for j in self.ann), "nothing taken back meanwhile"
        # restart-safe: a restarted service's first read of the store sees the same history
        now = self.clock.now()
        assert ReclaimHistory(svc.store)(now, {}) == svc.engine.decider.reclaims(now, {}), "read back alike"
        [record] = svc.audit(action="reclaim_dropped")
        assert (record["job_id"], record["user"]) == (self.taker, "bob"), record
        assert (record["details"]["team"], record["details"]["cause"]) == ("teamb", cause), record
        assert "team teamb: bob's " in record["message"] and "whose work restarts" in record["message"], record
        until = datetime.fromisoformat(reason["details"]["preemption_rule"]["until"])
        assert until == self.took + timedelta(minutes=15), until  # 15 min after the reclaim, whenever it ended
        self.clock.advance((until - self.clock.now()).total_seconds() + 1)
        wait_until(lambda: any(state_of(svc, j) == "pending" for j in self.ann), "teamb to reclaim after the cool-down",
                   tick=svc.tick)
        assert len(svc.audit(action="reclaim_dropped")) == 1, "told once"


def test_red32_r5_a_reclaimer_that_exits_at_once_holds_its_teams_next_reclaim(sqlite_db: str, tmp_path: Path) -> None:
    run = Reclaim(sqlite_db, tmp_path, {"command": gated(tmp_path, "b-go")})
    (tmp_path / "b-go").touch()  # it exits 0 at once (red32: `-- /bin/true`)
    run.ended("succeeded")
    run.held_back(run.second(), "exit")


def test_red32_r5_a_reclaimer_stopped_by_its_time_limit_holds_its_teams_next_reclaim(sqlite_db: str,
                                                                                   tmp_path: Path) -> None:
    run = Reclaim(sqlite_db, tmp_path, {"command": gated(tmp_path, "never"), "time_limit": "2s"})
    run.clock.advance(3)
    run.ended("failed")
    run.held_back(run.second(), "time_limit")


def test_red32_r5_a_lease_released_at_once_holds_its_teams_next_reclaim(sqlite_db: str, tmp_path: Path) -> None:
    run = Reclaim(sqlite_db, tmp_path, {"kernel_id": "k-red32"}, kind="lease")  # %gpu request
    run.svc.cancel(run.taker, user="bob")  # %gpu release
    run.ended("cancelled")
    run.held_back(run.second(), "release")


def test_red32_r5_a_reclaimer_that_held_what_it_took_is_not_held_back(sqlite_db: str, tmp_path: Path) -> None:
    run = Reclaim(sqlite_db, tmp_path, {"command": gated(tmp_path, "b-go")}, took_ago_s=960)
    (tmp_path / "b-go").touch()  # it ran its course, past the cool-down (16 min: its real exit is now)
    run.ended("succeeded")
    taker2 = run.second()
    wait_until(lambda: any(state_of(run.svc, j) == "pending" for j in run.ann), "b-take2 to reclaim at once",
               tick=run.svc.tick)
    assert state_of(run.svc, taker2) in ("pending", "admitted", "running")
    assert not run.svc.audit(action="reclaim_dropped")


@pytest.mark.parametrize(("state", "intent", "actor", "lease", "want"), [
    ("succeeded", None, None, False, ("exit", "")),
    ("failed", None, None, False, ("failure", "")),
    ("failed", "timeout", "scheduler", False, ("time_limit", "")),  # a time limit, or one shortened after its start
    ("cancelled", "cancel", "bob", False, ("cancel", "bob")),
    ("cancelled", None, None, False, ("cancel", "")),  # cancelled while it waited (its victims already told)
    ("cancelled", None, None, True, ("release", "")),  # %gpu release
    ("cancelled", "cancel", "boss", True, ("release", "boss")),
    ("cancelled", "idle", "scheduler", True, ("idle_reclaim", "")),
    ("cancelled", "budget", "scheduler", True, ("budget", "")),
    ("cancelled", "preempt", "scheduler", True, ("preempted", "")),
    ("lost", None, None, False, ("lost", "")),
    ("running", None, None, False, ("", "")),
])
def test_red32_r5_every_end_of_a_preemptors_row_names_its_cause(state: str, intent: str | None, actor: str | None,
                                                                 lease: bool, want: tuple[str, str]) -> None:
    job = make_job("b-take1", user="bob", kind=JobKind.LEASE if lease else JobKind.TRAINING,
                   **({"command": (), "kernel_id": "k-1"} if lease else {}))
    job = replace(job, state=JobState(state), started_at=T0, finished_at=T0 if state != "running" else None)
    assert end_cause(JobRecord(job=job, stop_intent=intent, stop_actor=actor)) == want
