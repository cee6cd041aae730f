"""Utilized GPU-hours from the store's telemetry rollups (``gpu_rollups``) in the usage report.

Known answers: usage intervals and one-minute rollup rows are written directly through the real
store (SQLite and PostgreSQL), then ``usage_report_for`` (what ``GET usage/report`` serves) must
give exact allocated / utilized GPU-hours and efficiency per user, team and model. Derivation:

====  ====  ====  ==================  =============  ==================================  ===========
job   user  team  GPUs                held           rollups (utilization_avg)           utilized s
====  ====  ====  ==================  =============  ==================================  ===========
J1    ana   ml    2 x A100 (a1, a2)   12:00-12:10    50 % every minute on both           2*0.5*600
J2    bob   cv    1 x H100 (h1)       12:00-12:20    100 % 12:00-12:09, none 12:10-12:14  600 + 0.2*300
                                                     (gap), 20 % 12:15-12:19
J3    ana   ml    0.5 x H100 (h2)     12:05:30-12:15 40 % every minute                    0.4*570
====  ====  ====  ==================  =============  ==================================  ===========

J3, alone on h2, is charged (allocated) the whole H100 — what a share its team alone holds a GPU with keeps from
others (red40 R1) — and its 40 % is its own (utilized 0.4 of the GPU).

Noise the report must ignore: a second, smaller row for a1 at 12:00 (written twice across a
restart), a MIG-instance row on h1 in the gap, and a row on h1 in the gap without a value.

End to end: a real ``SchedulerService`` with the simulated collector's ``TelemetryMonitor``
(no GPU here) on a manual clock writes the rollups itself; the report then has a non-null
utilized figure whose coverage is exactly the completed minute's share of the interval.
"""

from __future__ import annotations

import re
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.usage import usage_report_for
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import to_iso
from jupyter_sched.store import Store, schema, sqlite_url
from jupyter_sched.telemetry import SimulatedCollector

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
M = timedelta(minutes=1)
A100, H100 = "A100 80GB", "H100 80GB"


def rollup(gpu: str, minute: datetime, percent: float | None, *, samples: int = 60,
           mig: int | None = None) -> dict[str, Any]:
    return {"gpu_uuid": gpu, "mig_instance": mig, "minute": minute.isoformat(), "samples": samples,
            "utilization_avg": percent, "utilization_max": percent}


def minutes(gpu: str, first: int, count: int, percent: float) -> list[dict[str, Any]]:
    return [rollup(gpu, T0 + (first + m) * M, percent) for m in range(count)]


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "sched.sqlite")
    return str(request.getfixturevalue("pg_url"))


def scenario_service(url: str, tmp_path: Path) -> SchedulerService:
    svc = SchedulerService(store=Store(url), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0 + 30 * M))
    jobs = (("J1", "ana", "ml", [("a1", A100, 1.0), ("a2", A100, 1.0)], T0, T0 + 10 * M),
            ("J2", "bob", "cv", [("h1", H100, 1.0)], T0, T0 + 20 * M),
            ("J3", "ana", "ml", [("h2", H100, 0.5)], T0 + 5.5 * M, T0 + 15 * M))
    for job, user, team, gpus, start, end in jobs:
        with svc.store.transaction(now=start) as tx:
            tx.open_usage(job_id=job, attempt=1, user=user, team=team, kind="training", gpus=gpus, started_at=start)
            tx.close_usage(job, end)
    svc.store.add_rollups(minutes("a1", 0, 10, 50) + minutes("a2", 0, 10, 50) + [rollup("a1", T0, 90, samples=3)]
                          + minutes("h1", 0, 10, 100) + minutes("h1", 15, 5, 20) + minutes("h2", 5, 10, 40)
                          + [rollup("h1", T0 + 11 * M, 70, mig=1), rollup("h1", T0 + 12 * M, None)], node="n1")
    return svc


def row(alloc_s: float, util_s: float, covered_s: float, jobs: int) -> dict[str, Any]:
    """The expected report values of a group (rounded as the report rounds them)."""
    return {"allocated_gpu_seconds": round(alloc_s, 3), "allocated_gpu_hours": round(alloc_s / 3600, 9),
            "utilized_gpu_seconds": round(util_s, 3), "utilized_gpu_hours": round(util_s / 3600, 9),
            "telemetry_coverage": round(covered_s / alloc_s, 6), "efficiency": round(util_s / covered_s, 6),
            "cost": None, "cost_unit": None, "jobs": jobs, "gpu_seconds": round(alloc_s, 3), "gpu_hours": round(alloc_s / 3600, 9),
            "telemetry_pending": False, "since": None, "until": to_iso(T0 + 30 * M)}  # the period (s23-acct)


J1 = (2 * 600.0, 2 * 0.5 * 600, 2 * 600.0)
J2 = (1200.0, 600 + 0.2 * 300, 900.0)
J3 = (570.0, 0.4 * 570, 570.0)  # a 0.5 share alone on h2 is charged the whole GPU (red40 R1), and uses its 40 %


def add(*parts: tuple[float, float, float]) -> tuple[float, float, float]:
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


@pytest.mark.parametrize(
    "by, want",
    [
        pytest.param("user", {("ana",): row(*add(J1, J3), 2), ("bob",): row(*J2, 1)}, id="per user"),
        pytest.param("team", {("ml",): row(*add(J1, J3), 2), ("cv",): row(*J2, 1)}, id="per team"),
        pytest.param("gpu_model", {(A100,): row(*J1, 1), (H100,): row(*add(J2, J3), 2)}, id="per GPU model"),
        pytest.param("job_id", {("J1",): row(*J1, 1), ("J2",): row(*J2, 1), ("J3",): row(*J3, 1)}, id="per job"),
    ],
)
def test_utilized_gpu_hours_and_efficiency_come_from_the_stored_rollups(
        db: str, tmp_path: Path, by: str, want: dict[tuple[str, ...], dict[str, Any]]) -> None:
    svc = scenario_service(db, tmp_path)
    try:
        got = {tuple(r[k] for k in by.split(",")): {k: v for k, v in r.items() if k not in by.split(",")}
               for r in usage_report_for(svc, user=None, by=tuple(by.split(",")))}
    finally:
        svc.store.close()
    assert got == want


def test_a_window_inside_the_telemetry_gap_reports_unknown_not_idle(tmp_path: Path) -> None:
    svc = scenario_service(sqlite_url(tmp_path / "s.sqlite"), tmp_path)
    rows = usage_report_for(svc, user="bob", since=(T0 + 10 * M).isoformat(), until=(T0 + 15 * M).isoformat())
    svc.store.close()
    assert [(r["allocated_gpu_seconds"], r["utilized_gpu_seconds"], r["telemetry_coverage"], r["efficiency"])
            for r in rows] == [(300.0, None, 0.0, None)]


def test_an_unreadable_usage_start_is_skipped_and_quarantined_naming_the_row(tmp_path: Path) -> None:
    """One bad row never stops a reader (issue 17): it is left out and noted with its error."""
    store = Store(sqlite_url(tmp_path / "s.sqlite"))
    with store.transaction(now=T0) as tx:
        tx.open_usage(job_id="J9", attempt=2, user="ana", team="ml", kind="training", gpus=[("g9", A100, 1.0)],
                      started_at=T0)
        tx.open_usage(job_id="J8", attempt=1, user="bob", team="ml", kind="training", gpus=[("g8", A100, 1.0)],
                      started_at=T0)
        tx.conn.execute(sa.update(schema.usage).where(schema.usage.c.job_id == "J9").values(started_at="not a time"))
    assert [iv.job_id for iv in store.usage_rows()] == ["J8"]
    (entry,) = store.quarantined()
    assert re.fullmatch(r"usage row \d+ \(job J9 attempt 2 GPU g9\): started_at 'not a time' is unreadable .*",
                        entry.error), entry.error
    assert (entry.table, entry.attributes["user"], entry.attributes["team"]) == ("usage", "ana", "ml")
    store.close()


def test_a_real_engine_with_the_simulated_collector_writes_rollups_the_report_uses(tmp_path: Path) -> None:
    start = T0 + timedelta(seconds=5)
    clock = ManualClock(start)
    store = Store(sqlite_url(tmp_path / "s.sqlite"))
    inventory = SimulatedInventory(1, node="n1")
    monitors: list[TelemetryMonitor] = []
    collector = SimulatedCollector(lambda: inventory.current().gpus(), pids=lambda: monitors[0].holders(),
                                   scan_env=False)
    monitor = TelemetryMonitor(collector, clock=clock, interval_s=1.0, retention_s=600,
                               rollup_sink=lambda rows: store.add_rollups(rows, node="n1"))
    monitors.append(monitor)
    svc = SchedulerService(store=store, inventory=inventory, executor=LocalExecutor(tmp_path / "jobs"), clock=clock,
                           monitor=monitor, cycle_interval_s=0.0, stop_grace_s=5.0)
    gate = tmp_path / "gate"
    job = svc.submit({"gpus": 1, "command": [sys.executable, "-c", "import os, time\n"
                                             f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.02)\n"]},
                     user="ana")["id"]
    try:
        deadline = time.monotonic() + 60
        while svc.get_job(job, user="ana", is_admin=False)["state"] != "running":
            assert time.monotonic() < deadline, "the job did not start"
            svc.tick()
            time.sleep(0.03)
        for step in (5, 20, 20, 20):  # 12:00:10, :30, :50, 12:01:10: the minute 12:00 is complete
            clock.advance(step)
            monitor.sample()
        assert [r["minute"][:16] for r in store.rollup_rows()] == ["2026-11-29T12:00"]
        (report,) = usage_report_for(svc, user="ana")
    finally:
        gate.touch()
        deadline = time.monotonic() + 60
        while svc.get_job(job, user="ana", is_admin=False)["state"] == "running" and time.monotonic() < deadline:
            svc.tick()
            time.sleep(0.03)
        store.close()
    assert report["allocated_gpu_seconds"] == 65.0  # 12:00:05 .. 12:01:10
    assert report["telemetry_coverage"] == round(55 / 65, 6)  # the 12:00 rollup covers 12:00:05 .. 12:01:00
    assert report["utilized_gpu_seconds"] is not None and report["efficiency"] is not None
    assert 0 <= report["utilized_gpu_seconds"] <= 55
