"""``GET me`` reads a user's job rows only when a job changed (issue 17: fifty panels polling it
each second decoded them for every poll, ~13 % of a busy server's interpreter), while its
GPU-hour sums, which move with time, are summed on every call — never served stale."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, StoreTx, sqlite_url
from tests.runtime.builders import T0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                   inventory=SimulatedInventory(2, node="n1"), executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    yield svc
    svc.store.close()


def test_get_me_reads_job_rows_only_after_a_change_and_its_gpu_hours_keep_moving(
        services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Any] = []
    list_jobs = StoreTx.list_jobs

    def counted(self: StoreTx, **filters: Any) -> Any:
        reads.append(filters.get("user"))
        return list_jobs(self, **filters)

    monkeypatch.setattr(StoreTx, "list_jobs", counted)
    ana = services.caller("ana", admin=False)
    services.leases.request(ana, SubmitJobRequest(gpus=1, kernel_id="k1"))
    services.engine.tick()  # the lease holds a GPU from now on (an open usage interval)
    services.jobs.submit(ana, SubmitJobRequest(gpus=2, command=["true"]))  # pending: one GPU left
    reads.clear()
    first = services.accounting.me(ana)
    assert (first.in_use.gpus, first.in_use.leases, first.pending) == (1, 1, 1) and reads.count("ana") == 1

    services.clock.advance(1800)  # half an hour, no job written
    later = services.accounting.me(ana)
    assert reads.count("ana") == 1  # the held work was kept ...
    assert later.gpu_hours_7d == pytest.approx(first.gpu_hours_7d + 0.5)  # ... the sums were not
    assert (later.in_use.gpus, later.pending) == (1, 1)

    other = Store(sqlite_url(tmp_path / "sched.sqlite"))  # another process on the store: the CLI, a server
    try:
        with other.transaction() as tx:
            [pending] = [r for r in tx.list_jobs(user="ana", states=(JobState.PENDING,))]
            tx.update_job(replace(pending, job=pending.job.transition(
                JobState.CANCELLED, finished_at=T0 + timedelta(hours=1), message="cancelled")))
    finally:
        other.close()
    reads.clear()
    after = services.accounting.me(ana)
    assert after.pending == 0 and reads.count("ana") == 1  # its change was seen at once
    bo = services.caller("bo", admin=False)
    assert services.accounting.me(bo).in_use.gpus == 0  # never another user's figures


def test_get_inventory_reads_the_holders_only_after_a_change(services: Services, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``GET inventory`` (part of ``jupyter-sched status``) read and decoded every GPU-holding row on
    each call; it now keeps who holds each GPU while the ``jobs`` counter is unchanged."""
    reads: list[Any] = []
    list_jobs = StoreTx.list_jobs

    def counted(self: StoreTx, **filters: Any) -> Any:
        reads.append(filters.get("states"))
        return list_jobs(self, **filters)

    monkeypatch.setattr(StoreTx, "list_jobs", counted)
    ana = services.caller("ana", admin=False)
    lease = services.leases.request(ana, SubmitJobRequest(gpus=1, kernel_id="k1"))
    services.engine.tick()
    reads.clear()
    first = services.system.inventory(ana).to_wire()
    again = services.system.inventory(ana).to_wire()
    assert len(reads) == 1 and first["allocations"] == again["allocations"]
    [[holder]] = list(first["allocations"].values())
    assert holder["job_id"] == lease.id and holder["user"] == "ana"

    other = Store(sqlite_url(tmp_path / "sched.sqlite"))  # the lease ends through another process
    try:
        with other.transaction() as tx:
            record = tx.get_job(lease.id)
            assert record is not None
            tx.update_job(replace(record, job=record.job.transition(
                JobState.CANCELLED, finished_at=T0 + timedelta(minutes=1), message="released")))
    finally:
        other.close()
    assert services.system.inventory(ana).to_wire()["allocations"] == {} and len(reads) == 2
