"""A kept ``GET me`` answer is carried over a submit with the pending count added, and only then (issue 17).

Under ``benchmarks/status_bench.py`` the pollers' own user submits five jobs a second; each submit
moved the store's ``jobs`` counter and sent the next ``GET me`` (``jupyter-sched status``'s too) to
a request thread. A commit that wrote nothing but pending jobs changes nothing of that answer but
the owner's pending count, so the kept answer is carried over with the count added
(``Store.pending_inserted``). Anything else between — an update of any row (a reason, a cancel, an
admission), a job inserted holding GPUs, another process's commit, a quota change, a new second —
computes the answer again. Real SQLite stores; the carried answer is compared with a fresh one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import JobRecord, Store, sqlite_url
from tests.leftovers import end_jobs
from tests.runtime.builders import T0, make_job

SECOND = datetime(2026, 12, 4, 17, 0, 0, tzinfo=timezone.utc)
ANA = ("ana", False, None)


@pytest.fixture
def services(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                   executor=LocalExecutor(tmp_path / "jobs"))
    monkeypatch.setattr(svc.accounting, "_second", lambda: SECOND)  # one second: sums never roll over here
    yield svc
    assert end_jobs(svc.executor) == []  # its started jobs end with the test (tests/leftovers.py)
    svc.store.close()


def fresh(services: Services) -> dict[str, object]:
    """The answer computed now from the store (nothing kept)."""
    return dict(services.accounting.me(services.caller("ana", admin=False)).model_dump())


def test_a_submit_carries_the_kept_answer_over_with_one_more_pending(services: Services) -> None:
    ana = services.caller("ana", admin=False)
    first = services.accounting.me_of(ANA)
    assert services.accounting.kept_me(ANA) is first
    for n in (1, 2, 3):
        services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))  # pending: no engine tick here
        carried = services.accounting.kept_me(ANA)
        assert carried is not None, "only a submit since: carried over on the loop"
        assert carried.pending == first.pending + n
        assert carried.model_dump() == fresh(services), "exactly the answer computed from the store"
    assert services.accounting.kept_me(ANA) is carried, "kept at the new counter value"
    services.jobs.submit(services.caller("bo", admin=False), SubmitJobRequest(gpus=1, command=["true"]))
    assert services.accounting.kept_me(ANA).model_dump() == fresh(services), "another user's submit: ana's count stays"


def test_an_update_a_cancel_or_a_new_second_computes_it_again(services: Services,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ana = services.caller("ana", admin=False)
    job = services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))
    services.accounting.me_of(ANA)
    services.jobs.cancel(ana, job.id)  # an update: pending -> cancelled
    assert services.accounting.kept_me(ANA) is None
    assert services.accounting.me_of(ANA).model_dump() == fresh(services)
    services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))
    services.engine.tick()  # the engine decides it (admits it): an update
    assert services.accounting.kept_me(ANA) is None
    services.accounting.me_of(ANA)
    monkeypatch.setattr(services.accounting, "_second", lambda: SECOND.replace(second=1))
    services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))
    assert services.accounting.kept_me(ANA) is None, "a later second: the sums are taken again"


def test_another_process_s_submit_is_never_carried_over(services: Services, tmp_path: Path) -> None:
    services.accounting.me_of(ANA)
    other = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                     executor=LocalExecutor(tmp_path / "jobs2"))
    try:
        other.jobs.submit(other.caller("ana", admin=False), SubmitJobRequest(gpus=1, command=["true"]))
    finally:
        other.store.close()
    assert services.accounting.kept_me(ANA) is None, "another server's commit: computed again"
    assert services.accounting.me_of(ANA).pending == 1


def test_pending_inserted_counts_only_spans_of_this_store_s_pending_inserts(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "span.sqlite")
    store, other = Store(url), Store(url)
    try:
        v0 = store.jobs_version_now()
        assert v0 is not None
        store.insert_job(JobRecord(job=make_job("p-1")))
        with store.transaction() as tx:  # two in one commit, of two owners
            tx.insert_job(JobRecord(job=make_job("p-2")))
            tx.insert_job(JobRecord(job=make_job("p-3", user="bo")))
        v2 = store.jobs_version_now()
        assert v2 == v0 + 2
        assert store.pending_inserted(v0, v2, "ana") == 2 and store.pending_inserted(v0, v2, "bo") == 1
        assert store.pending_inserted(v2, v2, "ana") == 0 and store.pending_inserted(v0, v2, "cy") == 0
        row = store.get_job("p-1")
        with store.transaction() as tx:  # a pending reason: an update, never vouched for here
            tx.update_job(replace(row, job=replace(row.job, message="waiting")))
        v3 = store.jobs_version_now()
        assert v3 is not None and store.pending_inserted(v2, v3, "ana") is None
        assert store.pending_inserted(v0, v3, "ana") is None, "one unknown value spoils the span"
        assert store.holders_unchanged(v2, v3), "(it touched no holder: GET inventory keeps its answer)"
        store.insert_job(JobRecord(job=make_job("h-1", state=JobState.RUNNING,
                                                allocation=Allocation(node="n1", gpu_uuids=("GPU-0",)))))
        v4 = store.jobs_version_now()
        assert v4 is not None and store.pending_inserted(v3, v4, "ana") is None, "inserted holding a GPU"
        other.insert_job(JobRecord(job=make_job("o-1", submitted_at=T0)))
        v5 = store.jobs_version_now()
        assert v5 is not None and store.pending_inserted(v4, v5, "ana") is None, "another process's commit"
        assert other.pending_inserted(v0, v2, "ana") is None, "not that store object's commits"
        with store.transaction() as tx:  # a pending insert and any other job write in one commit
            tx.insert_job(JobRecord(job=make_job("p-4")))
            tx.jobs_changed = True
        v6 = store.jobs_version_now()
        assert v6 is not None and store.pending_inserted(v5, v6, "ana") is None
        assert store.pending_inserted(v6, v5, "ana") is None and store.pending_inserted(-1, v6, "ana") is None
    finally:
        store.close()
        other.close()
