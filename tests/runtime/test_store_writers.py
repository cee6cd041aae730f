"""Writers of one process wait for each other on a lock, not in SQLite's busy handler (issue 17).

SQLite lets one writer in at a time; the busy handler of the one that finds the database locked
sleeps 1, 2, 5, 10, 15... ms between tries, so a submit that began while the engine committed
a decision woke up to ~18 ms after a lock held for well under one. Every write transaction of a
process on one database file now takes the file's lock first (woken by the release); read
transactions never take it (WAL: readers do not wait for the writer)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.store import Store, sqlite_url


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    url = sqlite_url(tmp_path / "sched.sqlite")
    first, second = Store(url), Store(url)  # two objects on one file: the engine's and the API's, say
    yield first, second
    first.close()
    second.close()


def _wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + 30  # a wait for the other thread, not a timing assertion
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_a_second_writer_of_the_process_waits_on_the_lock_and_enters_after_the_commit(
        stores: tuple[Store, Store]) -> None:
    first, second = stores
    inside, release = threading.Event(), threading.Event()
    seen: list[list[str]] = []

    def hold() -> None:
        with first.transaction() as tx:
            tx.add_event(actor="engine", action="decide", message="first")
            inside.set()
            assert release.wait(30)

    def write_after() -> None:
        with second.transaction() as tx:  # waits on the file's lock, not in BEGIN IMMEDIATE
            seen.append([e.message for e in tx.list_events()])
            tx.add_event(actor="api", action="submit", message="second")

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(30)
    writer = threading.Thread(target=write_after)
    writer.start()
    _wait_for(lambda: second.writer_waits == 1, "the second writer never waited on the lock")
    # meanwhile a read transaction (another Store, this thread) is not held up by either writer
    assert [e.message for e in second.list_events()] == []
    assert writer.is_alive() and seen == []  # not inside its transaction while the first is open
    release.set()
    holder.join(30)
    writer.join(30)
    assert not writer.is_alive()
    assert seen == [["first"]]  # it began after the first committed: it saw that write
    assert sorted(e.message for e in first.list_events()) == ["first", "second"]
    assert first.writer_waits == 0


def test_a_failed_write_transaction_releases_the_lock(stores: tuple[Store, Store]) -> None:
    first, second = stores
    with pytest.raises(RuntimeError), first.transaction() as tx:
        tx.add_event(actor="engine", action="decide", message="rolled back")
        raise RuntimeError("the engine's write failed")
    done = threading.Event()

    def write() -> None:
        second.add_event(actor="api", action="submit", message="after")
        done.set()

    thread = threading.Thread(target=write)
    thread.start()
    thread.join(30)
    assert done.is_set()
    assert second.writer_waits == 0  # the lock was free: nobody had to wait
    assert [e.message for e in second.list_events()] == ["after"]


def test_stores_on_different_files_do_not_share_a_lock(tmp_path: Path) -> None:
    one, other = Store(sqlite_url(tmp_path / "a.sqlite")), Store(sqlite_url(tmp_path / "b.sqlite"))
    try:
        with one.transaction() as tx:
            tx.add_event(actor="a", action="x", message="a")
            other.add_event(actor="b", action="x", message="b")  # same thread, other file: no wait, no hang
        assert other.writer_waits == 0 and one.writer_waits == 0
        assert [e.message for e in other.list_events()] == ["b"]
    finally:
        one.close()
        other.close()


def test_a_waiting_writer_goes_before_the_holders_next_transaction(stores: tuple[Store, Store]) -> None:
    """First come, first served: the engine writes a cycle's pending reasons in back-to-back
    batches, one transaction each, so that submits get in between them; a plain RLock was taken
    again by the releasing thread (it holds the GIL and runs) before the woken submit did."""
    first, second = stores
    lock = first._writers
    assert lock is not None and lock is second._writers  # one lock per file
    order: list[str] = []
    inside = threading.Event()

    def engine() -> None:
        with first.transaction() as tx:
            tx.add_event(actor="engine", action="reasons", message="batch 1")
            order.append("batch 1")
            inside.set()
            _wait_for(lambda: lock.waiting == 1, "the submit never queued for the lock")
        with first.transaction() as tx:  # at once, as write_reasons does
            order.append("batch 2")
            tx.add_event(actor="engine", action="reasons", message="batch 2")

    def submit() -> None:
        with second.transaction() as tx:
            order.append("submit")
            tx.add_event(actor="api", action="submit", message="submit")

    holder = threading.Thread(target=engine)
    holder.start()
    assert inside.wait(30)
    writer = threading.Thread(target=submit)
    writer.start()
    holder.join(30)
    writer.join(30)
    assert not holder.is_alive() and not writer.is_alive()
    assert order == ["batch 1", "submit", "batch 2"]
    assert [e.message for e in first.list_events()] == ["batch 1", "submit", "batch 2"]


def test_the_writers_lock_is_reentrant_and_gives_up_a_wait_at_its_timeout() -> None:
    from jupyter_sched.store.writers import FairLock

    lock = FairLock()
    got: list[bool] = []

    def try_from_another_thread(**how: float | bool) -> bool:
        thread = threading.Thread(target=lambda: got.append(lock.acquire(**how)))  # type: ignore[arg-type]
        thread.start()
        thread.join(30)
        return got[-1]

    assert lock.acquire() and lock.acquire(blocking=False)  # reentrant on this thread
    assert try_from_another_thread(timeout=0.05) is False and lock.waiting == 0  # timed out, left the line
    lock.release()
    assert try_from_another_thread(blocking=False) is False  # still held once
    lock.release()
    assert try_from_another_thread(blocking=False) is True  # free once released as often as taken
    with pytest.raises(RuntimeError):
        lock.release()  # held by that other thread, not this one


def test_the_engine_encodes_pending_reasons_before_it_takes_the_write_lock(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle's reasons go out in batches, one write transaction each; a submit waits for the
    write lock (first come, first served) only while a batch's rows are written, not while they are
    encoded (JSON of spec, reason, allocation: ~1/3 of a row's write; hold per batch ~0.6x)."""
    from jupyter_sched.engine import apply
    from jupyter_sched.model import PendingReason
    from jupyter_sched.scheduling.snapshot import Pend
    from tests.runtime.test_incremental import make_service

    svc = make_service(sqlite_url(tmp_path / "sched.sqlite"), tmp_path, gpus=1)
    holder = svc.submit({"gpus": 1, "command": ["sleep", "30"]}, user="ana")
    svc.tick()
    jobs = [svc.submit({"gpus": 1, "command": ["true"]}, user="ana") for _ in range(3)]  # they wait for it
    lock = svc.store._writers
    held_while_encoding: list[bool] = []
    real = apply.job_columns

    def spy(record: Any, *, updated_at: Any, **how: Any) -> dict[str, Any]:
        held_while_encoding.append(lock._owner is not None)  # type: ignore[union-attr]
        return real(record, updated_at=updated_at, **how)

    monkeypatch.setattr(apply, "job_columns", spy)
    records = {r.job.id: r for r in svc.store.live_jobs()}
    pends = [Pend(j["id"], PendingReason(code="WaitingForCapacity", message="rewritten")) for j in jobs]
    written = svc.engine.applier.write_reasons(pends, records)
    assert [j.id for j in written] == [j["id"] for j in jobs]
    assert held_while_encoding == [False, False, False]
    assert {svc.store.get_job(j["id"]).job.reason.message for j in jobs} == {"rewritten"}  # type: ignore[union-attr]
    svc.cancel(holder["id"], user="ana")
    svc.tick()
