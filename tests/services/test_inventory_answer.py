"""``GET inventory`` is answered again while its inputs are equal, and rebuilt as soon as one
changes: a job takes a GPU (here or in another process sharing the store), the inventory itself
changes, or the view differs (admin or not) (issue 17)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
