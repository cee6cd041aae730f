"""s27-perf: the submit note of a job named as its owner's live work (newuser26 N2) read and decoded every live job
of the owner's on every named submit — 45 % of an in-process submit, which took 2.01 ms against 1.04 before the
note (``benchmarks/submit_bench.py``) — in a transaction of its own. The job's name is a column of ``jobs`` (schema
version 23, filled from each row's spec by the migration) indexed by owner, name and state: the note asks the
insert's own transaction for the live rows of that name, decoding none. SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.admission import AdmissionPolicy
from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Job, JobKind, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import JobRecord, Store, latest_version, rowcache
from tests.runtime.builders import T0, make_job
from tests.services.test_submit_transaction import _count_transactions


def _named(job_id: str, name: str, *, user: str = "ana", minutes: int = 0, **fields: Any) -> Job:
    job = make_job(job_id, user=user, gpus=0, submitted_at=T0 + timedelta(minutes=minutes), **fields)
    return replace(job, spec=replace(job.spec, name=name))


@pytest.fixture
def services(db_url: str, tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0 + timedelta(hours=1))
    svc = Services(store=Store(db_url, now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock,
                   policy=AdmissionPolicy(max_unfinished_per_user=2000))
    yield svc
    svc.store.close()


def _decoded_ids(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Ids of the job rows decoded from now on (every decode of a row goes through the row cache)."""
    seen: list[str] = []
    decode = rowcache.record_from_row

    def counted(row: Any) -> JobRecord:
        seen.append(str(row["id"]))
        return decode(row)

    monkeypatch.setattr(rowcache, "record_from_row", counted)
    return seen


def test_s27_perf_same_name_reads_only_that_name(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    store = services.store
    with store.transaction() as tx:
        for i in range(500):  # the owner's live work of other names
            tx.insert_job(JobRecord(job=_named(f"j-other-{i:03d}", f"sweep-{i}", minutes=i % 50)))
        tx.insert_job(JobRecord(job=_named("j-second", "rerun", minutes=5)))
        tx.insert_job(JobRecord(job=_named("j-first", "rerun", minutes=2, state=JobState.RUNNING)))
        tx.insert_job(JobRecord(job=_named("j-done", "rerun", minutes=1, state=JobState.SUCCEEDED)))  # not live
        tx.insert_job(JobRecord(job=_named("j-bob", "rerun", user="bob")))  # another owner's
        tx.insert_job(JobRecord(job=_named("l-lease", "rerun", kind=JobKind.LEASE)))  # a lease is no job
        tx.insert_job(JobRecord(job=_named("j-near", "rerun2")))  # another name
    ana = services.caller("ana", admin=False)
    services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["true"]))  # the quota set read (no name: no note)
    decoded = _decoded_ids(monkeypatch)
    opened = _count_transactions(store, monkeypatch)

    answer = services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["true"], name="rerun"))

    assert [d for d in decoded if d.startswith("j-other-")] == []  # was all 500
    assert opened == [True], opened  # the insert's; the note read all live rows in a second one
    (note,) = [w for w in answer.warnings or [] if "a job named" in w]
    assert note.startswith("a job named 'rerun' is already running (j-first, submitted "), note
    # no one surface's command in a note every surface shows (newuser32 n4)
    assert ", and 1 more of that name): this is another one" in note and note.endswith("cancel the older, j-first")
    with store.transaction(write=False) as tx:  # the store's answer, oldest first, with the state of each
        assert [(i, s) for _, i, s in tx.live_named("ana", "rerun", kinds=[JobKind.TRAINING])] == [
            ("j-first", JobState.RUNNING), ("j-second", JobState.PENDING), (answer.id, JobState.PENDING)]
        assert tx.live_named("ana", "rerun", kinds=[JobKind.LEASE])[0][1] == "l-lease"

    quiet = services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["true"], name="fresh-name"))
    assert not [w for w in quiet.warnings or [] if "a job named" in w]


def test_s27_perf_a_version_22_store_gets_its_job_names_when_a_server_opens_it(db_url: str) -> None:
    store = Store(db_url)
    with store.transaction() as tx:
        tx.insert_job(JobRecord(job=_named("j-live", "rerun")))
        tx.insert_job(JobRecord(job=_named("j-old", "x" * 250)))  # a longer name (none is given so now) is cut
        tx.insert_job(JobRecord(job=_named("j-bad", "broken")))
    with store.engine.begin() as conn:  # as a store written by the previous release, with a row that does not decode
        if store.dialect == "sqlite":
            conn.execute(sa.text("DROP INDEX ix_jobs_user_name_state"))
        conn.execute(sa.text("ALTER TABLE jobs DROP COLUMN name"))
        conn.execute(sa.text("UPDATE jobs SET spec = '{not json' WHERE id = 'j-bad'"))
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 23"))
    store.close()

    reopened = Store(db_url)
    try:
        assert reopened.schema_version() == latest_version() >= 23
        inspector = sa.inspect(reopened.engine)
        assert "name" in {c["name"] for c in inspector.get_columns("jobs")}
        (index,) = [i for i in inspector.get_indexes("jobs") if i["name"] == "ix_jobs_user_name_state"]
        assert index["column_names"] == ["user", "name", "state"]
        with reopened.engine.connect() as conn:
            names = dict(conn.execute(sa.text("SELECT id, name FROM jobs")).all())
        assert names == {"j-live": "rerun", "j-old": "x" * 200, "j-bad": None}
        with reopened.transaction(write=False) as tx:
            assert [i for _, i, _ in tx.live_named("ana", "rerun", kinds=[JobKind.TRAINING])] == ["j-live"]
            assert [i for _, i, _ in tx.live_named("ana", "x" * 250, kinds=[JobKind.TRAINING])] == ["j-old"]
        if reopened.dialect == "sqlite":  # the read is a search of the new index, not of the owner's live rows
            with reopened.engine.connect() as conn:
                plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(
                    "EXPLAIN QUERY PLAN SELECT submitted_at, id, state FROM jobs WHERE user = ? AND name = ? AND "
                    "state IN (?, ?, ?, ?) AND kind IN (?, ?) ORDER BY submitted_at, id",
                    ("ana", "rerun", "pending", "admitted", "running", "preempted", "training", "inference")))
            assert "USING INDEX ix_jobs_user_name_state (user=? AND name=? AND state=?)" in plan, plan
    finally:
        reopened.close()
