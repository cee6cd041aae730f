"""Red team 21, R5, at the engine: one user's stored progress reports never freeze the ticks of everyone.

Real parts: SQLite store, the engine and core, the LocalExecutor running real processes (``sleep``),
the stored reports (``record_progress``, as the route stores them). eve's two jobs without a time
limit report 0.5, 0.5, 0.5000000000000001 (10.5 s apart): before the fix every tick raised
OverflowError from the ETA replay and cy's job on a free GPU stayed pending.
"""

from __future__ import annotations

import logging
import time
import types
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.scheduling import eta as eta_module
from jupyter_sched.services.facade import SchedulerService
from jupyter_sched.store import Store
from jupyter_sched.store.progress import record_progress
from tests.runtime.builders import T0

SLEEP = ["sleep", "300"]


def _state(svc: SchedulerService, job_id: str) -> dict[str, Any]:
    return svc.get_job(job_id, user="admin", is_admin=True)


def _until(svc: SchedulerService, job_ids: list[str], states: tuple[str, ...]) -> None:
    deadline = time.monotonic() + 60
    while not all(_state(svc, j)["state"] in states for j in job_ids):
        assert time.monotonic() < deadline, [_state(svc, j)["state"] for j in job_ids]
        svc.engine.kick("change")
        svc.tick()
        time.sleep(0.05)


def _liars(svc: SchedulerService, clock: ManualClock) -> list[str]:
    """eve's two jobs without a limit, running, each with R5's three reports stored."""
    liars = [svc.submit({"name": f"liar{i}", "gpus": 1, "command": SLEEP}, user="eve")["id"] for i in range(2)]
    _until(svc, liars, ("running",))
    for job_id in liars:
        started = svc.store.get_job(job_id).job.started_at
        for ran, done in ((10.0, 0.5), (20.5, 0.5), (31.0, 0.5000000000000001)):
            with svc.store.transaction() as tx:
                record_progress(tx, job_id, run_started_at=started, at=started + timedelta(seconds=ran), done=done,
                                total=1.0, min_interval_s=10)
    clock.advance(40)
    return liars


def _service(tmp_path: Path, sqlite_db: str) -> tuple[SchedulerService, ManualClock]:
    clock = ManualClock(T0)
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(3, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=0.0,
                           stop_grace_s=1.0, admins=["admin"])
    return svc, clock


def _end(svc: SchedulerService, job_ids: list[str]) -> None:
    for job_id in job_ids:
        if _state(svc, job_id)["state"] not in ("succeeded", "failed", "cancelled"):
            svc.cancel(job_id, user="admin", is_admin=True)
    _until(svc, job_ids, ("succeeded", "failed", "cancelled"))


def test_red21_r5_stored_reports_never_freeze_an_engine_tick(tmp_path: Path, sqlite_db: str) -> None:
    svc, clock = _service(tmp_path, sqlite_db)
    jobs: list[str] = []
    try:
        jobs += _liars(svc, clock)
        waits = svc.submit({"name": "waits", "gpus": 3, "command": SLEEP}, user="bob")["id"]
        jobs.append(waits)
        svc.engine.kick("change")
        report = svc.tick()  # raised OverflowError before
        assert report.decided
        bystander = svc.submit({"name": "bystander", "gpus": 1, "command": SLEEP}, user="cy")["id"]
        jobs.append(bystander)
        _until(svc, [bystander], ("running",))  # the free GPU is given
        reason = _state(svc, waits)["reason"]
        assert reason["position"] == 1, reason
        assert svc.engine.applier.eta_failure == ""
    finally:
        _end(svc, jobs)
        svc.store.close()


def test_red21_r5_a_failing_eta_pass_is_logged_once_and_decisions_go_on(
        tmp_path: Path, sqlite_db: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise OverflowError("Python int too large to convert to C int")

    svc, clock = _service(tmp_path, sqlite_db)
    jobs: list[str] = []
    try:
        jobs += _liars(svc, clock)
        jobs.append(svc.submit({"name": "waits", "gpus": 3, "command": SLEEP}, user="bob")["id"])
        monkeypatch.setattr(eta_module, "lookahead", broken)
        monkeypatch.setattr(eta_module.Plan, "estimate", broken)
        with caplog.at_level(logging.INFO, logger="jupyter_sched.engine.apply"):
            for _ in range(5):  # five full cycles, one log line
                svc.engine.kick("change")
                assert svc.tick().decided
            bystander = svc.submit({"name": "bystander", "gpus": 1, "command": SLEEP}, user="cy")["id"]
            jobs.append(bystander)
            _until(svc, [bystander], ("running",))
            failed = [r.getMessage() for r in caplog.records if "ETAs could not be projected" in r.getMessage()]
            assert len(failed) == 1, failed
            assert "OverflowError" in failed[0] and jobs[0] in failed[0], failed[0]
            reason = _state(svc, jobs[2])["reason"]
            assert reason["eta"] is None and reason["details"]["eta_code"] == "EstimateFailed", reason
            monkeypatch.undo()
            svc.engine.kick("change")
            svc.tick()
            assert any("ETAs are projected again" in r.getMessage() for r in caplog.records)
            assert svc.engine.applier.eta_failure == ""
    finally:
        monkeypatch.undo()
        _end(svc, jobs)
        svc.store.close()


class _FailingEngine:
    """An engine whose tick raises the same error until told otherwise (the runner is what is tested)."""

    cycle_gap_s = 0.0

    def __init__(self) -> None:
        self.ticks = 0
        self.fail = True
        # the runner tells the engine's writer how long a look at the work takes (newuser24 N1)
        self.writer = types.SimpleNamespace(settle_s=None)

    def tick(self) -> None:
        self.ticks += 1
        if self.fail:
            raise OverflowError("Python int too large to convert to C int")

    def wait_hint_s(self, default_s: float) -> float:
        return 0.0

    def resign(self) -> None:
        pass


def test_red21_r5_a_tick_that_fails_every_time_says_its_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    """Before: one traceback per tick (52 in two minutes), none naming the job or the cause."""
    import asyncio

    from jupyter_sched.engine.runner import REPEAT_EVERY, EngineRunner

    engine = _FailingEngine()
    runner = EngineRunner(engine, poll_interval_s=0.0, courteous=False)  # type: ignore[arg-type]

    async def main() -> None:
        await runner.start()
        try:
            while engine.ticks < 2 * REPEAT_EVERY + 5:  # no time asserted: until it ticked that often
                await asyncio.sleep(0.01)
            engine.fail = False
            passed = engine.ticks
            while engine.ticks < passed + 3:
                await asyncio.sleep(0.01)
        finally:
            await runner.stop()

    with caplog.at_level(logging.INFO, logger="jupyter_sched.engine.runner"):
        asyncio.run(main())
    said = [r for r in caplog.records if r.name == "jupyter_sched.engine.runner"]
    tracebacks = [r for r in said if r.exc_info]
    assert len(tracebacks) == 1, [r.getMessage() for r in tracebacks]
    assert "OverflowError at test_red21_r5_engine_tick.py" in tracebacks[0].getMessage()
    repeats = [r.getMessage() for r in said if "times in a row" in r.getMessage()]
    assert repeats[:2] == [f"jupyter_sched engine tick failed {n} times in a row (OverflowError at "
                           f"test_red21_r5_engine_tick.py:{_FailingEngine.tick.__code__.co_firstlineno + 3} in tick): "
                           "Python int too large to convert to C int" for n in (REPEAT_EVERY, 2 * REPEAT_EVERY)]
    assert sum("pass again" in r.getMessage() for r in said) == 1
    assert runner.failing is None
