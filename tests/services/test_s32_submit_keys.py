"""s31-n8's next step: a submit key (``POST jobs?idempotency_key=K``) makes one job per user and key.

The same key with the same request is answered with the job it made (never a second job), across a
restart of the store; with another request it is refused naming ``idempotency_key``; another user's same
key is their own and never finds this user's job; each user keeps their newest keys only. On the real
store, SQLite and PostgreSQL (the migration to schema 28 on both).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from jupyter_sched.admission import Caller
from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import ConflictError, ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, latest_version, schema
from jupyter_sched.store import submit_keys as keys
from tests.runtime.builders import T0

TRAIN = SubmitJobRequest(name="train", gpus=1, command=["python", "train.py"], time_limit="5m")


def _services(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Services:
    clock = ManualClock(T0)
    return Services(store=Store(db_url, now=clock.now), inventory=SimulatedInventory(2, node="vm"),
                    executor=LocalExecutor(tmp_path_factory.mktemp("jobs")), clock=clock)


@pytest.fixture
def services(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    svc = _services(db_url, tmp_path_factory)
    yield svc
    svc.store.close()


def _callers(svc: Services) -> tuple[Caller, Caller]:
    return svc.caller("ana", admin=False), svc.caller("bo", admin=False)


def _jobs_of(svc: Services, user: str) -> list[str]:
    return [r.job.id for r in svc.store.list_jobs() if r.job.spec.user == user]


def test_s32_submit_key_one_job_per_user_and_key_across_a_restart(
        services: Services, db_url: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert services.store.schema_version() == latest_version() >= 28
    ANA, BO = _callers(services)
    first, replayed = services.jobs.submit_keyed(ANA, TRAIN, "k-0001")
    assert not replayed
    again, replayed = services.jobs.submit_keyed(ANA, TRAIN, "k-0001")  # the resend of a lost answer
    assert replayed and again.id == first.id
    services.store.close()
    restarted = _services(db_url, tmp_path_factory)  # a new process on the same store
    try:
        after, replayed = restarted.jobs.submit_keyed(ANA, TRAIN, "k-0001")
        assert replayed and after.id == first.id
        assert _jobs_of(restarted, "ana") == [first.id], "never a second job"
        # another user's same key is theirs: a new job, and nothing of ana's is found or shown
        bos, replayed = restarted.jobs.submit_keyed(BO, TRAIN, "k-0001")
        assert not replayed and bos.id != first.id and bos.user == "bo"
        # the key with another request: refused, naming the field (and the job it made, the caller's own)
        with pytest.raises(ConflictError) as refused:
            restarted.jobs.submit_keyed(ANA, SubmitJobRequest(name="other", gpus=1, command=["python", "x.py"],
                                                              time_limit="5m"), "k-0001")
        assert refused.value.field == "idempotency_key" and first.id in refused.value.message, refused.value
        assert len(_jobs_of(restarted, "ana")) == 1
        with pytest.raises(ValidationError) as bad:
            restarted.jobs.submit_keyed(ANA, TRAIN, "no spaces/or slashes")
        assert bad.value.field == "idempotency_key", bad.value
    finally:
        restarted.store.close()


def test_s32_submit_key_each_user_keeps_their_newest_keys_only(services: Services,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "KEPT_PER_USER", 3)
    ANA, BO = _callers(services)
    made = [services.jobs.submit_keyed(ANA, TRAIN, f"k-{i}")[0].id for i in range(5)]
    services.jobs.submit_keyed(BO, TRAIN, "k-0")
    with services.store.transaction(write=False) as tx:
        rows = tx.conn.execute(sa.select(schema.submit_keys.c.user, schema.submit_keys.c.key)).all()
    assert sorted(rows) == [("ana", "k-2"), ("ana", "k-3"), ("ana", "k-4"), ("bo", "k-0")], rows
    assert services.jobs.submit_keyed(ANA, TRAIN, "k-4") == (services.jobs.get(ANA, made[4]), True)
