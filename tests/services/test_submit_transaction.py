"""A submit is one store transaction (issue 17): the quota set it is admitted against, the
submitter's backlog count and the insert were three (a read of the quota counter, a count, the
insert), each paying a transaction's own cost on every submit. The quota set is the one this
process keeps, checked against the store's counter in the insert's transaction: a set another
process replaced meanwhile is read again and the job admitted on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.admission import AdmissionPolicy
from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import BusyError, QuotaError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobState, Quota, QuotaSet
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                   inventory=SimulatedInventory(2, node="n1"), executor=LocalExecutor(tmp_path / "jobs"), clock=clock,
                   policy=AdmissionPolicy(max_unfinished_per_user=3))
    yield svc
    svc.store.close()


def _count_transactions(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    opened: list[bool] = []
    transaction = store.transaction

    @contextmanager
    def counted(*, write: bool = True, now: Any = None) -> Iterator[Any]:
        opened.append(write)
        with transaction(write=write, now=now) as tx:
            yield tx

    monkeypatch.setattr(store, "transaction", counted)
    return opened


def test_a_submit_is_one_write_transaction_and_is_judged_on_the_quota_set_in_force(
        services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ana = services.caller("ana", admin=False)
    work = SubmitJobRequest(gpus=1, command=["true"])
    services.jobs.submit(ana, work)  # the first reads the quota set
    opened = _count_transactions(services.store, monkeypatch)
    services.jobs.submit(ana, work)
    assert opened == [True], opened  # was [False, False, True]: quota counter, backlog count, insert

    other = Store(sqlite_url(tmp_path / "sched.sqlite"))  # another process replaces the quota set
    try:
        with other.transaction() as tx:
            tx.replace_quota_set(QuotaSet(quotas=(Quota(team="default", guaranteed=0, borrowing_limit=0),)))
    finally:
        other.close()
    opened.clear()
    with pytest.raises(QuotaError):  # judged on the new set, not on the one this process kept
        services.jobs.submit(ana, work)
    # the insert's transaction saw the counter move and rolled back; the set was read again; the refusal audited
    assert opened == [True, False, True], opened
    assert services.store.count_jobs(user="ana") == 2


def test_the_backlog_cap_is_counted_in_the_inserting_transaction(services: Services) -> None:
    ana = services.caller("ana", admin=False)
    work = SubmitJobRequest(gpus=1, command=["true"])
    for _ in range(3):
        services.jobs.submit(ana, work)
    with pytest.raises(BusyError) as refused:
        services.jobs.submit(ana, work)
    assert refused.value.field == "max_unfinished_per_user" and refused.value.details["unfinished"] == 3
    assert services.store.count_jobs(user="ana", states=(JobState.PENDING,)) == 3  # nothing inserted
    audit = services.store.list_events(action="refused")
    assert [e.details["field"] for e in audit if e.user == "ana"] == ["max_unfinished_per_user"], audit
    bo = services.caller("bo", admin=False)
    services.jobs.submit(bo, work)  # another user's count is their own
