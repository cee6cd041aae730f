"""``GET inventory`` is answered again while its inputs are equal, and rebuilt as soon as one
changes: a job takes a GPU (here or in another process sharing the store), the inventory itself
changes, or the view differs (admin or not) (issue 17)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                   executor=LocalExecutor(tmp_path / "jobs"))
    yield svc
    svc.store.close()


def test_the_same_answer_while_nothing_changed_and_a_new_one_once_a_job_holds_a_gpu(services: Services) -> None:
    ana = services.caller("ana", admin=False)
    first = services.system.inventory(ana)
    assert services.system.inventory(ana) is first, "nothing changed: the answer kept (its JSON and ETag too)"
    assert first.to_wire()["allocations"] == {}
    job = services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["sleep", "30"])).id
    services.engine.tick()  # admitted: the jobs counter moved
    try:
        after = services.system.inventory(ana)
        assert after is not first
        holders = [h for hs in after.to_wire()["allocations"].values() for h in hs]
        assert [h["job_id"] for h in holders] == [job]
    finally:
        services.engine.executor.stop(job, grace_s=0)


def test_another_process_writing_a_job_is_seen_by_the_next_answer(services: Services, tmp_path: Path) -> None:
    ana = services.caller("ana", admin=False)
    first = services.system.inventory(ana)
    other = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                     executor=LocalExecutor(tmp_path / "jobs2"))
    try:
        other.jobs.submit(other.caller("bo", admin=False), SubmitJobRequest(gpus=1, command=["true"]))
        assert services.system.inventory(ana) is not first, "another server wrote a job: asked again"
    finally:
        other.store.close()


def test_a_changed_inventory_and_each_view_get_their_own_answer(services: Services) -> None:
    ana, boss = services.caller("ana", admin=False), services.caller("boss", admin=True)
    mine = services.system.inventory(ana)
    admins = services.system.inventory(boss)
    assert admins is not mine, "an admin's view is its own answer"
    assert services.system.inventory(boss) is admins and services.system.inventory(ana) is mine
    services.ctx.inventory_source = SimulatedInventory(3, node="n1")  # a GPU more
    grown = services.system.inventory(ana)
    assert grown is not mine and len(grown.to_wire()["nodes"][0]["gpus"]) == 3


class _Clock:
    """A monotonic clock the test moves (CachedInventory's refresh)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_kept_answer_is_served_without_a_transaction_only_while_it_is_still_right(
        services: Services, tmp_path: Path) -> None:
    """``kept_inventory`` (what the server answers on its event loop): the very answer
    ``inventory`` gave the same view while nothing it is computed from changed; None as soon as a
    job is written (here or by another process sharing the store), a refresh of the inventory is
    due, the source cannot say without reading, or the view differs."""
    from jupyter_sched.services.config import CachedInventory

    clock = _Clock()
    services.ctx.inventory_source = CachedInventory(SimulatedInventory(2, node="n1"), 30.0, monotonic=clock)
    ana, boss = services.caller("ana", admin=False), services.caller("boss", admin=True)
    assert services.system.kept_inventory(False) is None, "nothing answered yet"
    mine = services.system.inventory(ana)
    assert services.system.kept_inventory(False) is mine
    assert services.system.kept_inventory(True) is None, "an admin's view is never a non-admin's answer"
    admins = services.system.inventory(boss)
    assert services.system.kept_inventory(True) is admins and services.system.kept_inventory(False) is mine
    other = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                     executor=LocalExecutor(tmp_path / "jobs2"))
    try:
        other.jobs.submit(other.caller("bo", admin=False), SubmitJobRequest(gpus=1, command=["true"]))
    finally:
        other.store.close()
    assert services.system.kept_inventory(False) is None, "another server wrote a job: computed again"
    again = services.system.inventory(ana)
    assert services.system.kept_inventory(False) is again
    clock.now += 31  # the source is due a refresh: only inventory() may read it
    assert services.system.kept_inventory(False) is None
    assert services.system.inventory(ana) is again, "read again, the same inventory: the same answer"
    assert services.system.kept_inventory(False) is again
    services.ctx.inventory_source = SimulatedInventory(2, node="n1")  # cannot peek: always computed
    assert services.system.kept_inventory(False) is None


def test_peek_never_reads_the_source_nor_waits_for_a_thread_reading_it() -> None:
    from jupyter_sched.services.config import CachedInventory

    reads: list[int] = []

    class Source:
        def current(self) -> object:
            reads.append(1)
            return SimulatedInventory(1, node="n1").current()

    clock = _Clock()
    cached = CachedInventory(Source(), 30.0, monotonic=clock)
    assert cached.peek() is None and reads == [], "nothing read yet: peek does not read"
    value = cached.current()
    assert cached.peek() is value and reads == [1]
    with cached._lock:  # another thread refreshing it
        assert cached.peek() is None
    clock.now += 30
    assert cached.peek() is None and reads == [1], "due a refresh: left to current()"


def test_a_kept_answer_outlives_submits_and_pending_reasons_but_never_a_change_of_holders(
        services: Services, tmp_path: Path) -> None:
    """Under load every submit and every pending reason moves the store's ``jobs`` counter; the
    answer reads only the jobs holding GPUs, so this server's own writes of pending rows keep it
    (issue 17: ``jupyter-sched status``'s ``GET inventory`` went to a request thread almost every
    time under fifty pollers and five submitters). A job taking or giving back a GPU, a write this
    server cannot vouch for, or another process's write is asked again."""
    from jupyter_sched.services.config import CachedInventory

    services.ctx.inventory_source = CachedInventory(SimulatedInventory(2, node="n1"), 3600.0, monotonic=_Clock())
    ana, store = services.caller("ana", admin=False), services.store
    holder = services.jobs.submit(ana, SubmitJobRequest(gpus=2, command=["sleep", "30"])).id
    services.engine.tick()  # admitted: both GPUs held
    try:
        first = services.system.inventory(ana)
        assert [h["job_id"] for hs in first.to_wire()["allocations"].values() for h in hs] == [holder, holder]
        before = store.jobs_version_now()
        for _ in range(3):  # queued behind it: each submit and its pending reason move the counter
            services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))
            services.engine.tick()
        assert store.jobs_version_now() != before
        assert services.system.kept_inventory(False) is first, "only pending rows written: kept on the loop"
        assert services.system.inventory(ana) is first

        with store.transaction() as tx:  # a write whose effect on the holders nobody vouches for
            tx.jobs_changed = True
        assert services.system.kept_inventory(False) is None
        again = services.system.inventory(ana)
        assert again is not first and again.to_wire() == first.to_wire(), "computed again: the same holders"
        assert services.system.kept_inventory(False) is again

        other = Store(sqlite_url(tmp_path / "sched.sqlite"))  # another process sharing the store
        try:
            with other.transaction() as tx:
                tx.insert_job(replace(tx.get_job(holder), job=replace(tx.get_job(holder).job, id="bo-1")))
        finally:
            other.close()
        assert services.system.kept_inventory(False) is None, "another server wrote a job: computed again"
        seen = services.system.inventory(ana)
        assert "bo-1" in [h["job_id"] for hs in seen.to_wire()["allocations"].values() for h in hs]
        assert services.system.kept_inventory(False) is seen

        services.jobs.cancel(ana, holder)  # a holder's row written (its stop): asked again
        assert services.system.kept_inventory(False) is None
        assert services.system.inventory(ana) is not seen
    finally:
        services.engine.executor.stop(holder, grace_s=0)


def _update(store: Store, record: Any) -> None:
    with store.transaction() as tx:
        tx.update_job(record)


def test_holders_unchanged_spans_only_this_store_s_commits_of_pending_rows(tmp_path: Path) -> None:
    """``Store.holders_unchanged``: a span of ``jobs`` counter values is vouched for only when
    every value in it was made here by a commit writing pending rows only (an update is known
    only when the row it overwrites is in the decoded-row cache at its version)."""
    from jupyter_sched.model import Allocation, Job, JobSpec, JobState, ResourceRequest
    from jupyter_sched.store import JobRecord
    from tests.runtime.builders import T0, make_job

    url = sqlite_url(tmp_path / "span.sqlite")
    store, other = Store(url), Store(url)
    try:
        v0 = store.jobs_version_now()
        assert v0 is not None
        pending = store.insert_job(JobRecord(job=make_job("p-1")))  # a pending insert
        v1 = store.jobs_version_now()
        assert v1 == v0 + 1 and store.holders_unchanged(v0, v1)
        # its pending reason, before any read decoded the row: known, this store wrote it so
        _update(store, replace(pending, job=replace(pending.job, message="waiting")))
        v2 = store.jobs_version_now()
        assert v2 is not None and store.holders_unchanged(v0, v2)
        assert not other.holders_unchanged(v0, v2), "not this store object's commits: not known there"

        p2 = store.insert_job(JobRecord(job=make_job("p-2")))  # written here holding nothing ...
        with other.transaction() as tx:  # ... then admitted by another server
            taken = tx.update_job(replace(p2, job=replace(p2.job, state=JobState.ADMITTED, admitted_at=T0,
                                                          allocation=Allocation(node="n1", gpu_uuids=("GPU-1",)))))
        v2a = store.jobs_version_now()
        _update(store, replace(taken, job=replace(taken.job, state=JobState.PENDING, allocation=None)))  # requeued here
        v2b = store.jobs_version_now()
        assert v2a is not None and v2b is not None and not store.holders_unchanged(v2a, v2b), \
            "the row it overwrote held a GPU: known only at the version written here"

        written = other.insert_job(JobRecord(job=make_job("o-0")))  # another server's pending row ...
        v2b = store.jobs_version_now()
        _update(store, replace(written, job=replace(written.job, message="seen")))  # ... not decoded here
        v3 = store.jobs_version_now()
        assert v2b is not None and v3 is not None and not store.holders_unchanged(v2b, v3), \
            "the row before is not known: the update may have moved a holder"
        assert store.holders_unchanged(v3, v3)
        again = store.get_job("o-0")  # decoded now: in the cache at its version
        _update(store, replace(again, job=replace(again.job, message="seen again")))
        v3b = store.jobs_version_now()
        assert v3b is not None and store.holders_unchanged(v3, v3b)
        v3 = v3b

        row = store.get_job("p-1")  # admitted: it holds a GPU now
        _update(store, replace(row, job=replace(row.job, state=JobState.ADMITTED, admitted_at=T0,
                                                  allocation=Allocation(node="n1", gpu_uuids=("GPU-0",)))))
        v4 = store.jobs_version_now()
        assert v4 is not None and not store.holders_unchanged(v3, v4)
        row = store.get_job("p-1")  # any write of a holder's row (it is in the answer)
        _update(store, replace(row, job=replace(row.job, message="running")))
        v5 = store.jobs_version_now()
        assert v5 is not None and not store.holders_unchanged(v4, v5)
        store.insert_job(JobRecord(job=replace(make_job("h-2"), state=JobState.RUNNING, admitted_at=T0,
                                               allocation=Allocation(node="n1", gpu_uuids=("GPU-1",)))))
        v6 = store.jobs_version_now()
        assert v6 is not None and not store.holders_unchanged(v5, v6), "inserted holding a GPU"

        other.insert_job(JobRecord(job=Job(id="o-1", spec=JobSpec(name="o", user="bo", resources=ResourceRequest(gpus=1),
                                                                   command=("true",)), submitted_at=T0)))
        v7 = store.jobs_version_now()
        assert v7 is not None and not store.holders_unchanged(v6, v7), "another process's commit: never vouched for"
        assert not store.holders_unchanged(v7, v7 - 1) and not store.holders_unchanged(-1, v7)
    finally:
        store.close()
        other.close()
