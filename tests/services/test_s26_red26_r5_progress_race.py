"""red26 R5: a job's first progress report sent by several workers at once — the losers got 503 "the
scheduler's database failed to answer" (a UniqueViolation on ``job_progress``'s key: each report
found no row and inserted one).

Now the first row is inserted ``ON CONFLICT DO NOTHING``; a report that finds the row there after all
applies itself to it (coalesced into it when it came within the interval, as any later report).

The session's real PostgreSQL: the first report's transaction holds its new row uncommitted while the
second one reads (no row), inserts and waits on the key; only then does the first commit — the exact
interleaving of the live race, made certain by watching ``pg_stat_activity``. Then eight workers at
one barrier through the service, on SQLite and PostgreSQL: all answered, one row.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import ReportProgressRequest, SubmitJobRequest
from jupyter_sched.store import Store
from jupyter_sched.store.progress import StoredProgress, read_progress, record_report
from tests.leftovers import end_jobs
from tests.runtime.builders import T0


def test_red26_r5_a_first_report_racing_another_is_applied_not_a_store_failure(pg_url: str) -> None:
    store = Store(pg_url)
    watcher = sa.create_engine(pg_url)
    holding, release = threading.Event(), threading.Event()
    results: dict[str, object] = {}

    def first() -> None:
        with store.transaction() as tx:
            results["first"] = record_report(tx, "job-1", run_started_at=T0, at=T0 + timedelta(seconds=40),
                                             done=1, total=100, min_interval_s=10)
            holding.set()
            release.wait(60)

    def second() -> None:
        holding.wait(60)
        try:
            with store.transaction() as tx:
                results["second"] = record_report(tx, "job-1", run_started_at=T0, at=T0 + timedelta(seconds=41),
                                                  done=2, total=100, min_interval_s=10)
        except Exception as exc:  # before the fix: StoreError (UniqueViolation)
            results["second"] = exc

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    try:
        for t in threads:
            t.start()
        assert holding.wait(60)
        with watcher.connect() as conn:  # until the second report's statement waits on the first's row
            for _ in range(6000):
                waiting = conn.execute(sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'")).scalar()
                if waiting or "second" in results:
                    break
                threading.Event().wait(0.01)
        release.set()
        for t in threads:
            t.join(60)
        second_result = results["second"]
        assert not isinstance(second_result, Exception), f"the racing report failed: {second_result!r}"
        assert isinstance(second_result, tuple)
        stored, fresh, _ = second_result
        assert isinstance(stored, StoredProgress) and fresh is False, "coalesced into the first (within 10 s)"
        assert stored.done == 1
        with store.transaction(write=False) as tx:
            rows = read_progress(tx, ["job-1"])
        assert rows["job-1"].done == 1 and rows["job-1"].report.fit.n == 1
    finally:
        release.set()
        watcher.dispose()
        store.close()


@pytest.fixture
def services(db_url: str, tmp_path: Path) -> Iterator[tuple[Services, ManualClock]]:
    clock = ManualClock(T0)
    svc = Services(store=Store(db_url, now=clock.now), inventory=SimulatedInventory(2, node="vm"),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock, owner_id="a")
    yield svc, clock
    assert end_jobs(svc.executor) == []
    svc.store.close()


def test_red26_r5_eight_workers_first_reports_at_one_moment_are_all_answered(
        services: tuple[Services, ManualClock]) -> None:
    svc, clock = services
    ana = svc.caller("ana", admin=False)
    job = svc.jobs.submit(ana, SubmitJobRequest(gpus=1, name="train", command=["sleep", "60"])).id
    svc.engine.tick()
    clock.advance(40)
    barrier = threading.Barrier(8)
    answers: list[object] = []

    def worker(rank: int) -> None:
        barrier.wait(60)
        try:
            answers.append(svc.progress.report(ana, job, ReportProgressRequest(done=1, total=100)))
        except Exception as exc:
            answers.append(exc)

    threads = [threading.Thread(target=worker, args=(rank,)) for rank in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    failures = [a for a in answers if isinstance(a, Exception)]
    assert len(answers) == 8 and failures == []
    assert sum(1 for a in answers if getattr(a, "stored", False)) == 1, "one stored, the others coalesced into it"
    with svc.store.transaction(write=False) as tx:
        assert list(read_progress(tx, [job])) == [job]
