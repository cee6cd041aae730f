"""Red team 40 R1 through the service: a GPU share is billed what it keeps from others.

Two 0.1-GPU jobs asking 70 GiB of 80 GiB simulated GPUs each sit alone on a GPU (no room beside them): admission and
quota count each GPU whole (red38 R3), and so now do usage (``GET usage``, by job and by team), the report
(``usage/report``), ``GET me``'s ``gpu_hours_7d`` and a GPU-hour budget — which trips on the whole-GPU charge (it
charged a tenth: a budget of 0.05 GPU-hours never tripped). On one GPU the charge follows the packing: a half alone
is charged the whole GPU, then 2/3 once a quarter of its team joins (1/3). Store rows: a GPU two teams share
charges each its fraction; an old row (schema before 30, ``billed`` null) is charged its share.

Real parts: the services on a SQLite store (and PostgreSQL for the store's rows), the engine, the local executor
(``sleep``), a manual clock; the GPUs are the simulated inventory's (no GPU here).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from jupyter_sched.admission import Caller
from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetUsageReportRequest, GetUsageRequest, SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import Store, schema, sqlite_url
from tests.leftovers import end_jobs
from tests.runtime.builders import T0

_SPREAD = {"command": ["sleep", "600"], "gpus": 0.1, "mem_per_gpu": "70GiB"}


def _services(tmp_path: Path, gpus: int) -> tuple[Services, ManualClock]:
    clock = ManualClock(T0)
    return Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                    inventory=SimulatedInventory(gpus, node="vm"), executor=LocalExecutor(tmp_path / "jobs"),
                    clock=clock), clock


@pytest.fixture
def two_gpus(tmp_path: Path) -> Iterator[tuple[Services, ManualClock]]:
    svc, clock = _services(tmp_path, 2)
    yield svc, clock
    assert end_jobs(svc.executor) == []
    svc.store.close()


@pytest.fixture
def one_gpu(tmp_path: Path) -> Iterator[tuple[Services, ManualClock]]:
    svc, clock = _services(tmp_path, 1)
    yield svc, clock
    assert end_jobs(svc.executor) == []
    svc.store.close()


def _stop(svc: Services, caller: Caller, job_id: str) -> None:
    """Cancel a running job and tick until the engine has seen it stop (its SIGTERM'd ``sleep``)."""
    svc.jobs.cancel(caller, job_id)
    for _ in range(400):
        svc.engine.tick()
        if svc.jobs.get(caller, job_id).model_dump(mode="json")["state"] == "cancelled":
            return
        time.sleep(0.05)
    raise AssertionError(f"{job_id} did not stop")


def _by_job(svc: Services, who: str) -> dict[str, float]:
    rows = svc.accounting.usage(svc.caller(who, admin=False), GetUsageRequest(by="job_id")).model_dump(mode="json")
    return {r["job_id"]: r["gpu_seconds"] for r in rows}


def test_red40_r1_spread_shares_are_billed_the_whole_gpu_in_usage_report_me_and_budget(
        two_gpus: tuple[Services, ManualClock]) -> None:
    svc, clock = two_gpus
    root, al = svc.caller("root", admin=True), svc.caller("al", admin=False)
    team = svc.accounting.me(al).team
    svc.quotas.set(root, SetQuotasRequest.model_validate({"budgets": [{"team": team, "gpu_hours": 0.05}]}))
    al = svc.caller("al", admin=False)
    jobs = [svc.jobs.submit(al, SubmitJobRequest.model_validate({"name": f"spread{i}", **_SPREAD})) for i in range(2)]
    svc.engine.tick()
    wires = [svc.jobs.get(al, j.id).model_dump(mode="json") for j in jobs]
    assert [w["state"] for w in wires] != ["pending", "pending"], wires
    assert len({w["allocation"]["gpu_uuids"][0] for w in wires}) == 2, wires  # each alone on a GPU
    clock.advance(100)
    svc.engine.tick()
    for j in jobs:
        svc.jobs.cancel(al, j.id)
    by_job = _by_job(svc, "al")
    assert by_job == {jobs[0].id: pytest.approx(100.0), jobs[1].id: pytest.approx(100.0)}, by_job  # was 10.0 each
    by_team = svc.accounting.usage(root, GetUsageRequest(by="team", all=True)).model_dump(mode="json")
    assert [(r["team"], r["gpu_seconds"]) for r in by_team] == [(team, pytest.approx(200.0))], by_team
    report = svc.accounting.report(root, GetUsageReportRequest(by="team", all=True)).model_dump(mode="json")
    assert report[0]["allocated_gpu_seconds"] == pytest.approx(200.0), report
    me = svc.accounting.me(al).model_dump(mode="json")
    assert me["gpu_hours_7d"] == pytest.approx(200.0 / 3600, abs=1e-6), me["gpu_hours_7d"]
    (budget,) = me["budgets"]
    assert budget["used_gpu_hours"] == pytest.approx(200.0 / 3600, abs=1e-4), budget  # 0.0556 > 0.05: spent
    # the budget trips on the whole-GPU charge: the next GPU job waits for it (it ran on 0.0056 GPU-hours)
    late = svc.jobs.submit(al, SubmitJobRequest.model_validate({"name": "late", **_SPREAD}))
    svc.engine.tick()
    waiting = svc.jobs.get(al, late.id).model_dump(mode="json")
    assert waiting["state"] == "pending", waiting
    assert "budget" in waiting["reason"]["message"], waiting["reason"]


def test_red40_r1_a_shares_charge_follows_the_packing_of_its_gpu(one_gpu: tuple[Services, ManualClock]) -> None:
    svc, clock = one_gpu
    al = svc.caller("al", admin=False)
    half = svc.jobs.submit(al, SubmitJobRequest.model_validate({"name": "half", "command": ["sleep", "600"],
                                                                "gpus": 0.5}))
    svc.engine.tick()
    clock.advance(100)  # alone: the whole GPU
    quarter = svc.jobs.submit(al, SubmitJobRequest.model_validate({"name": "quarter", "command": ["sleep", "600"],
                                                                   "gpus": 0.25}))
    svc.engine.tick()
    assert svc.jobs.get(al, quarter.id).model_dump(mode="json")["state"] != "pending"
    clock.advance(90)  # packed with a quarter of its team: 2/3 and 1/3
    by_job = _by_job(svc, "al")  # open rows count to now
    assert by_job == {half.id: pytest.approx(160.0), quarter.id: pytest.approx(30.0)}, by_job
    assert sum(by_job.values()) == pytest.approx(190.0)  # the GPU was held 190 s: billed 190 GPU-s, no more
    _stop(svc, al, quarter.id)  # its end is when its process ended (wall clock: the wrapper's record)
    with svc.store.transaction() as tx:
        rows = sorted(tx.usage_rows(job_ids=[half.id]), key=lambda iv: iv.started_at)
        (ended,) = tx.usage_rows(job_ids=[quarter.id])
    # the half: whole while alone, 2/3 from the quarter's start, whole again from the quarter's end
    assert [(iv.charged, iv.share) for iv in rows] == [(1.0, 0.5), (pytest.approx(2 / 3), 0.5), (1.0, 0.5)], rows
    assert rows[1].started_at == ended.started_at and rows[2].started_at == ended.ended_at, (rows, ended)
    assert rows[0].ended_at == rows[1].started_at and rows[1].ended_at == rows[2].started_at and rows[2].ended_at is None
    assert ended.charged == pytest.approx(1 / 3) and ended.share == 0.25, ended
    _stop(svc, al, half.id)


def test_red40_r1_store_rows_cross_team_shares_and_old_rows(db_url: str) -> None:
    store = Store(db_url, now=lambda: T0)
    try:
        with store.transaction(now=T0) as tx:
            tx.open_usage(job_id="j-a", attempt=1, user="u1", team="a", kind="training",
                          gpus=[("GPU-x", "A100", 0.5)], started_at=T0)
            tx.open_usage(job_id="j-b", attempt=1, user="u2", team="b", kind="training",
                          gpus=[("GPU-x", "A100", 0.25)], started_at=T0 + timedelta(seconds=60))
            tx.open_usage(job_id="j-m", attempt=1, user="u1", team="a", kind="training",
                          gpus=[("MIG-1", "A100", 3 / 7)], started_at=T0)  # a MIG slice: its own device
            tx.close_usage("j-b", T0 + timedelta(seconds=120))
            tx.close_usage("j-a", T0 + timedelta(seconds=180))
            tx.close_usage("j-m", T0 + timedelta(seconds=70))
        with store.transaction(now=T0) as tx:
            rows = tx.usage_rows()
            seconds: dict[str, float] = {}
            for iv in rows:
                assert iv.ended_at is not None
                seconds[iv.job_id] = seconds.get(iv.job_id, 0.0) + iv.charged * (iv.ended_at - iv.started_at).seconds
        # j-a alone 60 s (whole), beside team b 60 s (its half), alone again 60 s (whole); j-b its quarter
        assert seconds == {"j-a": pytest.approx(150.0), "j-b": pytest.approx(15.0), "j-m": pytest.approx(30.0)}
        assert [(iv.job_id, iv.share) for iv in rows if iv.job_id == "j-a"] == [("j-a", 0.5)] * 3  # held: its half
        with store.transaction(now=T0) as tx:  # the database's sums agree with the rows
            assert tx.gpu_seconds(since=T0, until=T0 + timedelta(hours=1), team="a") == pytest.approx(180.0)
            tx.conn.execute(schema.usage.insert().values(  # a row written before schema 30: billed null
                job_id="j-old", attempt=1, user="u3", team="c", kind="training", gpu_uuid="GPU-y", gpu_model="A100",
                share=0.1, started_at="2026-11-29T12:00:00.000000Z", ended_at="2026-11-29T12:01:40.000000Z"))
            assert tx.gpu_seconds(since=T0, until=T0 + timedelta(hours=1), team="c") == pytest.approx(10.0)
            assert tx.conn.execute(sa.select(sa.func.count()).select_from(schema.usage)).scalar() == 6
    finally:
        store.close()
