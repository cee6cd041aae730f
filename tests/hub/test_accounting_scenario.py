"""Accounting against a scenario with known answers, through the real engine and store.

Three jobs of known duration run as real processes under ``SchedulerService`` (real store:
SQLite and PostgreSQL; simulated GPUs of two models — no GPU here) on a manual clock, and the
service is restarted while one of them runs. Utilization samples are given in the telemetry
shape (``UtilizationSample``: percent per GPU UUID per instant) because the store does not
persist telemetry. The local executor reports a job's exit at the wall-clock instant its
process ended; on the manual clock the test stamps that exit with the manual time instead
(:class:`VirtualTimeExecutor`, the real ``LocalExecutor`` otherwise). Expected values were
computed by hand:

====  ====  ====  =========  ================  ============  ========================
job   user  team  GPUs       runs              utilization   notes
====  ====  ====  =========  ================  ============  ========================
J1    ana   ml    2 x A100   12:00 - 13:00     50 %
J2    bob   cv    1 x H100   12:00 - 14:00     100 %, 1st h  service restarted 13:00;
                                                             no telemetry after 13:00
J3    ana   ml    1 x H100   12:00 - 12:30     25 %
====  ====  ====  =========  ================  ============  ========================

Prices: A100 2.00, H100 4.00 per GPU-hour.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.accounting import UtilizationSample, report_csv, usage_report
from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Inventory
from jupyter_sched.store import Store, sqlite_url

T0 = datetime.fromisoformat("2026-11-29T12:00:00+00:00")
A100, H100 = "A100 80GB", "H100 80GB"
PRICES = {A100: 2.0, H100: 4.0}
WAIT_S = 60.0


class TwoModels:
    """Inventory source: node n1 with 2 simulated A100s, node n2 with 2 simulated H100s."""

    def __init__(self) -> None:
        self.a = SimulatedInventory(2, node="n1", model=A100)
        self.h = SimulatedInventory(2, node="n2", model=H100)

    def current(self) -> Inventory:
        return Inventory(nodes=self.a.current().nodes + self.h.current().nodes, source="simulated")


class VirtualTimeExecutor(LocalExecutor):
    """The real local executor whose exit events carry the manual clock's time (virtual time)."""

    def __init__(self, root: Path, clock: ManualClock) -> None:
        super().__init__(root)
        self.clock = clock

    def poll(self) -> list[Any]:
        return [replace(e, finished_at=self.clock.now()) if isinstance(e, Exited) else e for e in super().poll()]


def service(url: str, tmp_path: Path, clock: ManualClock, owner: str) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=TwoModels(),
                            executor=VirtualTimeExecutor(tmp_path / "jobs", clock),
                            clock=clock, owner_id=owner, cycle_interval_s=0.0, stop_grace_s=5.0)


def gated(tmp_path: Path, name: str) -> list[str]:
    """A job that runs until the file ``tmp_path/name`` exists."""
    gate = str(tmp_path / name)
    return [sys.executable, "-c", f"import os, time\nwhile not os.path.exists({gate!r}):\n    time.sleep(0.02)\n"]


def wait_until(predicate: Callable[[], Any], what: str, tick: Callable[[], Any]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        tick()
        if predicate():
            return
        time.sleep(0.03)
    raise AssertionError(f"timed out waiting for {what}")


def samples(gpus: list[str], start: datetime, minutes: int, percent: float) -> list[UtilizationSample]:
    """One sample a minute on each GPU from ``start`` for ``minutes`` minutes."""
    return [UtilizationSample(gpu, start + timedelta(minutes=m), percent) for gpu in gpus for m in range(minutes)]


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "sched.sqlite")
    return str(request.getfixturevalue("pg_url"))


def test_known_scenario_with_a_restart_gives_exact_gpu_hours_and_cost(db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    first = service(db, tmp_path, clock, "engine-1")
    first.set_quotas({"user_teams": {"ana": "ml", "bob": "cv"}}, actor="admin")
    j1 = first.submit({"gpus": 2, "model": A100, "command": gated(tmp_path, "j1")}, user="ana")["id"]
    j2 = first.submit({"gpus": 1, "model": H100, "command": gated(tmp_path, "j2")}, user="bob")["id"]
    j3 = first.submit({"gpus": 1, "model": H100, "command": gated(tmp_path, "j3")}, user="ana")["id"]

    def state(svc: SchedulerService, job: str) -> str:
        return str(svc.get_job(job, user="admin", is_admin=True)["state"])

    wait_until(lambda: all(state(first, j) == "running" for j in (j1, j2, j3)), "all three to run", first.tick)
    clock.set(T0 + timedelta(minutes=30))
    (tmp_path / "j3").touch()
    wait_until(lambda: state(first, j3) == "succeeded", "J3 to end at 12:30", first.tick)
    clock.set(T0 + timedelta(hours=1))
    (tmp_path / "j1").touch()
    wait_until(lambda: state(first, j1) == "succeeded", "J1 to end at 13:00", first.tick)

    # restart the service while J2 runs: a new engine on the same store adopts it
    first.engine.resign()
    first.store.close()
    second = service(db, tmp_path, clock, "engine-2")
    wait_until(lambda: second.engine.is_leader, "the new engine to lead", second.tick)
    assert state(second, j2) == "running"
    clock.set(T0 + timedelta(hours=2))
    (tmp_path / "j2").touch()
    wait_until(lambda: state(second, j2) == "succeeded", "J2 to end at 14:00", second.tick)

    intervals = second.store.usage_rows()
    gpus = {job: sorted(iv.gpu_uuid for iv in intervals if iv.job_id == job) for job in (j1, j2, j3)}
    assert [len(gpus[j]) for j in (j1, j2, j3)] == [2, 1, 1]  # one interval per GPU: the restart added none
    telemetry = (samples(gpus[j1], T0, 60, 50) + samples(gpus[j2], T0, 60, 100) + samples(gpus[j3], T0, 30, 25))
    now = T0 + timedelta(hours=3)
    second.store.close()

    def report(*by: str) -> list[dict[str, Any]]:
        return usage_report(intervals, telemetry, now=now, by=by, prices=PRICES, max_sample_gap_s=60)

    assert report("user") == [
        {"user": "ana", "allocated_gpu_seconds": 9000.0, "allocated_gpu_hours": 2.5,
         "utilized_gpu_seconds": 4050.0, "utilized_gpu_hours": 1.125, "telemetry_coverage": 1.0,
         "efficiency": 0.45, "cost": 6.0, "cost_unit": "price units", "jobs": 2, "telemetry_pending": False,
         "since": None, "until": "2026-11-29T15:00:00Z"},  # the period (s23-acct): unbounded, up to now
        {"user": "bob", "allocated_gpu_seconds": 7200.0, "allocated_gpu_hours": 2.0,
         "utilized_gpu_seconds": 3600.0, "utilized_gpu_hours": 1.0, "telemetry_coverage": 0.5,
         "efficiency": 1.0, "cost": 8.0, "cost_unit": "price units", "jobs": 1, "telemetry_pending": False,
         "since": None, "until": "2026-11-29T15:00:00Z"},
    ]
    by_team = {r["team"]: (r["allocated_gpu_hours"], r["utilized_gpu_hours"], r["cost"]) for r in report("team")}
    assert by_team == {"ml": (2.5, 1.125, 6.0), "cv": (2.0, 1.0, 8.0)}
    by_model = {r["gpu_model"]: (r["allocated_gpu_hours"], r["utilized_gpu_hours"], r["cost"])
                for r in report("gpu_model")}
    assert by_model == {A100: (2.0, 1.0, 4.0), H100: (2.5, 1.125, 10.0)}
    by_team_model = {(r["team"], r["gpu_model"]): r["cost"] for r in report("team", "gpu_model")}
    assert by_team_model == {("ml", A100): 4.0, ("ml", H100): 2.0, ("cv", H100): 8.0}
    month = report("team", "period")
    assert {(r["team"], r["period"]) for r in month} == {("ml", "2026-11-01T00:00:00+00:00"),
                                                         ("cv", "2026-11-01T00:00:00+00:00")}
    assert report("job_id")[0]["job_id"] in (j1, j2, j3) and len(report("job_id")) == 3

    # the second hour of J2 alone: the window clips, and no telemetry there means unknown, not idle
    late = usage_report(intervals, telemetry, now=now, by=("user",), prices=PRICES, max_sample_gap_s=60,
                        since=T0 + timedelta(hours=1), until=T0 + timedelta(hours=2))
    assert late == [{"user": "bob", "allocated_gpu_seconds": 3600.0, "allocated_gpu_hours": 1.0,
                     "utilized_gpu_seconds": None, "utilized_gpu_hours": None, "telemetry_coverage": 0.0,
                     "efficiency": None, "cost": 4.0, "cost_unit": "price units", "jobs": 1, "telemetry_pending": False,
                     "since": "2026-11-29T13:00:00Z", "until": "2026-11-29T14:00:00Z"}]

    assert report_csv(report("user"), by=("user",)).splitlines() == [
        "user,allocated_gpu_seconds,allocated_gpu_hours,utilized_gpu_seconds,utilized_gpu_hours,"
        "telemetry_coverage,efficiency,cost,cost_unit,jobs,telemetry_pending,since,until",  # s23-acct: unit, period
        "ana,9000.0,2.5,4050.0,1.125,1.0,0.45,6.0,price units,2,False,,2026-11-29T15:00:00Z",
        "bob,7200.0,2.0,3600.0,1.0,0.5,1.0,8.0,price units,1,False,,2026-11-29T15:00:00Z",
    ]
