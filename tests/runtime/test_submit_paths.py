"""What keeps REST submits fast (issue 2) without changing what they answer: the store's decoded
row cache, pending reasons written only when their content changes, and the cached "can it ever
fit" check. Real SQLite files, real core; nothing asserts durations (the speed is measured by
``benchmarks/submit_bench.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import ConflictError, UnschedulableError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobState, PendingReason
from jupyter_sched.scheduling import CycleResult
from jupyter_sched.scheduling.snapshot import Pend
from jupyter_sched.store import JobRecord, Store
from tests.runtime.builders import T0, make_job


def make_service(url: str, tmp_path: Path, *, gpus: int = 1) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=SimulatedInventory(gpus, node="n1"),
                            executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0),
                            cycle_interval_s=0.0, stop_grace_s=5.0)


def waiting(position: int, *, message: str = "waiting for 1 GPU: 0 of 1 free") -> PendingReason:
    return PendingReason(code="WaitingForCapacity", message=message, details={"requested": 1, "free": 0},
                         position=position)


@dataclass(frozen=True)
class ReasonCase:
    id: str
    stored: PendingReason | None
    fresh: PendingReason
    written: bool


REASON_CASES = [
    ReasonCase("a job without a stored reason gets one", None, waiting(1), True),
    ReasonCase("a position change alone is not written", waiting(1), waiting(2), False),
    ReasonCase("a changed message is written", waiting(1), waiting(1, message="waiting for 2 GPUs"), True),
    ReasonCase("a changed code is written", waiting(1),
               PendingReason(code="ExceedsQuota", message="over quota", position=1), True),
]


@pytest.mark.parametrize("case", REASON_CASES, ids=[c.id for c in REASON_CASES])
def test_pending_reasons_are_persisted_only_when_their_content_changes(case: ReasonCase, sqlite_db: str,
                                                                       tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path)
    job = replace(make_job("j-wait"), reason=case.stored)
    record = svc.store.insert_job(JobRecord(job=job))
    result = CycleResult(pending=(Pend(job.id, case.fresh),))
    chosen = svc.engine._reasons_to_write(result, {job.id: record})
    assert (chosen == [Pend(job.id, case.fresh)]) is case.written
    assert svc.engine.reasons[job.id] == case.fresh  # served fresh either way


def test_a_row_changed_by_another_store_is_read_fresh_and_terminal_rows_are_not_cached(
        sqlite_db: str) -> None:
    mine, theirs = Store(sqlite_db), Store(sqlite_db)
    record = mine.insert_job(JobRecord(job=make_job("j-1")))
    assert mine.get_job("j-1") is mine.get_job("j-1")  # same version: decoded once
    with theirs.transaction() as tx:
        tx.update_job(replace(record, stop_intent="cancel", stop_actor="ana"))
    assert mine.get_job("j-1").stop_intent == "cancel" and mine.list_jobs()[0].version == 2
    done = mine.get_job("j-1")
    with mine.transaction() as tx:
        tx.update_job(replace(done, job=done.job.transition(JobState.CANCELLED, finished_at=T0)))
    assert mine.get_job("j-1") is not mine.get_job("j-1")  # terminal: decoded per read
    with pytest.raises(ConflictError):
        mine.insert_job(JobRecord(job=make_job("j-1")))
    assert [e.action for e in mine.list_events()] == ["submit"]  # the refused insert wrote nothing


def test_a_job_that_can_never_fit_is_refused_every_time_until_the_inventory_changes(
        sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=2)
    for name in ("first", "second"):  # the second answer comes from the cache: same request shape
        with pytest.raises(UnschedulableError):
            svc.submit({"name": name, "gpus": 3, "command": ["true"]}, user="ana")
    svc.inventory_source = SimulatedInventory(4, node="n1")
    assert svc.submit({"name": "third", "gpus": 3, "command": ["true"]}, user="ana")["state"] == "pending"
