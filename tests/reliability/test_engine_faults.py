"""Fault injection at the executor: one job's failing start or stop never freezes the engine.

Issue 17, "Done when": an executor start raising ``OSError``, ``ValueError`` or
``PermissionError`` fails or requeues that job with a reason naming the cause, while the other
jobs of the same cycle start and pending cancels are carried out; a paused leader that lost its
lease performs no start or stop after it resumes (counted at the executor).

Real parts: SQLite store, the real core, the real :class:`LocalExecutor` running real
processes. The ``ValueError`` is the real one: a stored job whose environment key contains
``=`` makes ``subprocess.Popen`` raise it. ``OSError`` (EAGAIN: the machine is out of
processes) and ``PermissionError`` (EACCES on exec) cannot be provoked per job on a root-run
machine, so :class:`FaultyExecutor` — a wrapper implementing the executor protocol around the
real executor — raises them for the jobs named ``faulty``; every other call goes to the real one.
The Kubernetes faults (HTTP 409 / 422 / 500 from the API server) are in ``tests/kube``.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.backoff import Backoff
from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.base import ExecutorEvent, ExecutorHandle
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.runas import RunAs
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation, Job, JobSpec, ResourceRequest
from jupyter_sched.store import JobRecord, Store, check_integrity
from tests.leftovers import end_jobs
from tests.runtime.builders import T0

WAIT_S = 60.0


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    from jupyter_sched.store import sqlite_url

    return sqlite_url(tmp_path / "sched.sqlite")


class FaultyExecutor:
    """The executor protocol around a real executor; ``start`` of jobs named ``faulty`` raises
    ``fault`` (the fault injector), and every call is counted."""

    name = "local"

    def __init__(self, real: LocalExecutor, fault: BaseException | None = None) -> None:
        self.real = real
        self.fault = fault
        self.starts: list[str] = []
        self.stops: list[str] = []
        self.gate: threading.Event | None = None  # when set: the next tracked() waits on it (a paused leader)
        self.paused = threading.Event()

    def start(self, job: Job, allocation: Allocation, run_as: RunAs | None = None) -> ExecutorHandle:
        self.starts.append(job.id)
        if self.fault is not None and job.spec.name == "faulty":
            raise self.fault
        return self.real.start(job, allocation, run_as)

    def poll(self) -> list[ExecutorEvent]:
        return self.real.poll()

    def stop(self, job_id: str, *, grace_s: float, checkpoint_signal: bool = False, reason: str = "") -> None:
        self.stops.append(job_id)
        self.real.stop(job_id, grace_s=grace_s, checkpoint_signal=checkpoint_signal, reason=reason)

    def logs(self, job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        return self.real.logs(job_id, offset, limit)

    def adopt(self, job: Job, handle: ExecutorHandle | None) -> ExecutorEvent | None:
        return self.real.adopt(job, handle)

    def tracked(self) -> frozenset[str]:
        gate, self.gate = self.gate, None
        if gate is not None:  # the engine asks this right before acting: pause it here, once
            self.paused.set()
            gate.wait(WAIT_S)
        return self.real.tracked()

    def detach(self) -> None:
        self.real.detach()


def wait_until(predicate: Callable[[], Any], what: str, *, tick: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        tick()
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def service(url: str, executor: Any, *, clock: Any = None, owner: str = "a", gpus: int = 4,
            **engine: Any) -> SchedulerService:
    svc = SchedulerService(store=Store(url), inventory=SimulatedInventory(gpus, node="n1"), executor=executor,
                           clock=clock, owner_id=owner, cycle_interval_s=0.0, stop_grace_s=2.0)
    for key, value in engine.items():
        setattr(svc.engine.starts, key, value)
    return svc


def sleeper(tmp_path: Path) -> list[str]:
    return [sys.executable, "-c", f"import time\nwhile True: time.sleep(0.05)  # {tmp_path}"]


def state(svc: SchedulerService, job_id: str) -> dict[str, Any]:
    return svc.get_job(job_id, user="admin", is_admin=True)


FAULTS = [
    pytest.param(PermissionError(errno.EACCES, "Permission denied", "/opt/python"), "failed",
                 "PermissionError: [Errno 13] Permission denied: '/opt/python'", id="PermissionError fails the job"),
    pytest.param(OSError(errno.EAGAIN, "Resource temporarily unavailable"), "pending",
                 "could not start after 2 attempts: BlockingIOError: [Errno 11] Resource temporarily unavailable",
                 id="OSError EAGAIN is retried with backoff then requeued"),
    pytest.param(ValueError("a bug in the executor"), "failed", "ValueError: a bug in the executor",
                 id="ValueError fails the job"),
]


@pytest.mark.parametrize(("fault", "want_state", "want_cause"), FAULTS)
def test_a_failing_start_concerns_its_job_only_and_cancels_still_happen(
        sqlite_db: str, tmp_path: Path, fault: BaseException, want_state: str, want_cause: str) -> None:
    executor = FaultyExecutor(LocalExecutor(tmp_path / "jobs"), fault)
    svc = service(sqlite_db, executor, max_retries=2)
    svc.engine.retries.backoff = Backoff(base_s=0.01, cap_s=0.02)
    to_cancel = svc.submit({"command": sleeper(tmp_path), "name": "victim"}, user="ana")
    wait_until(lambda: state(svc, to_cancel["id"])["state"] == "running", "the first job to run", tick=svc.tick)
    svc.cancel(to_cancel["id"], user="ana")
    before = svc.submit({"command": sleeper(tmp_path), "name": "before"}, user="ana")
    faulty = svc.submit({"command": sleeper(tmp_path), "name": "faulty"}, user="ana")
    after = svc.submit({"command": sleeper(tmp_path), "name": "after"}, user="ana")
    report = svc.tick()  # one cycle: three admissions, one cancel
    assert set(report.admitted) == {before["id"], faulty["id"], after["id"]}
    assert {before["id"], after["id"]} <= set(report.started)
    assert to_cancel["id"] in executor.stops
    wait_until(lambda: state(svc, to_cancel["id"])["state"] == "cancelled", "the cancel", tick=svc.tick)
    got = wait_until(lambda: (s := state(svc, faulty["id"]))["state"] == want_state and s, want_state, tick=svc.tick)
    if want_state == "failed":
        assert got["message"] == f"could not start: {want_cause}"
    else:
        assert got["reason"]["code"] in ("StartFailed", "Backoff")  # requeued, waiting out its backoff
        assert got["reason"]["message"].startswith(want_cause)
        assert executor.starts.count(faulty["id"]) >= 2  # retried before giving up
    assert [state(svc, j["id"])["state"] for j in (before, after)] == ["running", "running"]
    assert check_integrity(svc.store).ok
    for job in (before, after):
        svc.cancel(job["id"], user="ana")
    wait_until(lambda: not svc.engine.executor.tracked(), "every job to end", tick=svc.tick)


def test_a_stored_env_key_with_an_equals_sign_fails_that_job_with_popens_value_error(
        sqlite_db: str, tmp_path: Path) -> None:
    """The real ValueError: ``subprocess.Popen`` refuses an environment name containing '='. The row
    is stored directly, as one accepted before validation refused such keys."""
    executor = FaultyExecutor(LocalExecutor(tmp_path / "jobs"))
    svc = service(sqlite_db, executor)
    bad = Job(id="j-bad-env", submitted_at=T0, spec=JobSpec(
        name="bad-env", user="ana", resources=ResourceRequest(gpus=1), command=tuple(sleeper(tmp_path)),
        env={"A=B": "1"}))
    svc.store.insert_job(JobRecord(job=bad))
    good = svc.submit({"command": sleeper(tmp_path), "name": "good"}, user="ana")
    report = svc.tick()
    assert set(report.admitted) == {bad.id, good["id"]} and report.started == [good["id"]]
    failed = state(svc, bad.id)
    assert failed["state"] == "failed" and failed["message"].startswith("could not start: ValueError: ")
    assert "environment" in failed["message"]
    start_failed = [e for e in svc.audit(limit=50) if e["action"] == "start_failed"]
    assert start_failed[0]["details"]["error"] == "ValueError"
    svc.cancel(good["id"], user="ana")
    wait_until(lambda: state(svc, good["id"])["state"] == "cancelled", "the cancel", tick=svc.tick)
    assert check_integrity(svc.store).ok


def test_a_paused_leader_that_lost_its_lease_starts_and_stops_nothing_after_it_resumes(
        sqlite_db: str, tmp_path: Path) -> None:
    """Engine A is paused after it decided and before it acts (its executor blocks, as a
    SIGSTOPped process would) past its lease; B takes over. When A resumes it must act on
    nothing: the executor counts no start and no stop from A."""
    clock = ManualClock(T0)
    paused = FaultyExecutor(LocalExecutor(tmp_path / "a"))
    a = service(sqlite_db, paused, clock=clock, owner="a")
    b_executor = FaultyExecutor(LocalExecutor(tmp_path / "b"))
    b = service(sqlite_db, b_executor, clock=clock, owner="b")
    running = a.submit({"command": sleeper(tmp_path), "name": "running"}, user="ana")
    wait_until(lambda: state(a, running["id"])["state"] == "running", "the job to run", tick=a.tick)
    a.cancel(running["id"], user="ana")  # a stop to send …
    clock.advance(1)
    waiting = a.submit({"command": sleeper(tmp_path), "name": "waiting"}, user="ana")  # … and a start
    starts, stops = len(paused.starts), len(paused.stops)
    gate = paused.gate = threading.Event()
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.setdefault("report", a.tick()))
    worker.start()
    assert paused.paused.wait(WAIT_S)  # A decided (admitted the job) and is about to act
    assert state(a, waiting["id"])["state"] == "admitted"
    clock.advance(a.engine.lease_ttl_s + 1)
    assert b.tick().leader  # B took over while A was paused
    gate.set()  # A resumes
    worker.join(WAIT_S)
    assert not result["report"].leader and not a.engine.is_leader
    assert (len(paused.starts), len(paused.stops)) == (starts, stops)  # counted at the executor
    wait_until(lambda: state(b, running["id"])["state"] == "cancelled", "B to carry out the cancel", tick=b.tick)
    assert check_integrity(a.store).ok
    assert end_jobs(b_executor.real) == [] and end_jobs(paused.real) == []  # B started "waiting": it ends here


@pytest.mark.parametrize(("intent", "want_state"), [
    pytest.param("cancel", "cancelled", id="a cancel ends it cancelled, not lost"),
    pytest.param("timeout", "failed", id="a time limit fails it as timed out, not lost"),
])
def test_an_adopted_job_killed_by_its_stop_before_writing_its_exit_is_settled_by_the_stop(
        sqlite_db: str, tmp_path: Path, intent: str, want_state: str) -> None:
    """The cause of the paused-leader test's flake: a job the new leader adopted is not its child,
    so when the stop plan's SIGKILL reaches the wrapper before it wrote ``exit.json`` (a wrapper
    slower than the grace on a loaded machine) nothing tells its exit code, and the job read as
    ``lost``. Here the wrapper is ``SIGSTOP``ped (as the scheduler starves it under load) before
    the stop, with a grace of 0 s: the SIGKILL always reaches it before it can write its exit."""
    clock = ManualClock(T0)
    a = service(sqlite_db, FaultyExecutor(LocalExecutor(tmp_path / "a")), clock=clock, owner="a")
    job = a.submit({"command": sleeper(tmp_path), "name": "adopted", "time_limit_s": 3600}, user="ana")
    wait_until(lambda: state(a, job["id"])["state"] == "running", "the job to run", tick=a.tick)
    a.engine.resign()  # clean shutdown: the job keeps running for the next leader
    b_executor = FaultyExecutor(LocalExecutor(tmp_path / "b"))
    b = service(sqlite_db, b_executor, clock=clock, owner="b")
    b.engine.stops.grace_s = 0.0
    assert b.tick().leader and job["id"] in b_executor.tracked()  # adopted
    handle = b.store.get_job(job["id"]).handle
    assert handle is not None
    os.kill(int(handle["pid"]), signal.SIGSTOP)  # the wrapper: SIGTERM waits, SIGKILL does not
    if intent == "cancel":
        b.cancel(job["id"], user="ana")
    else:
        with b.store.transaction() as tx:  # as the stop reconciler writes it once the limit passed
            tx.update_job(replace(tx.get_job(job["id"]), stop_intent="timeout", stop_actor="scheduler"))
    wait_until(lambda: job["id"] in b_executor.stops, "B to send the stop", tick=b.tick)
    got = wait_until(lambda: (s := state(b, job["id"]))["state"] not in ("running", "admitted") and s,
                     "the job to end", tick=b.tick)
    assert got["state"] == want_state, got
    assert "left no exit code" in got["message"]  # the SIGKILL did come first: the case under test
    assert check_integrity(b.store).ok
