"""hubadmin25 B18 (store half): a person's hold and an admin's top are stored with the job (schema version
21: ``jobs.hold``, ``jobs.top_at``), so a held job stays held across a restart; a store written by the previous
release (version 20) gets the columns when a server opens it, its jobs read as neither held nor topped —
SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import sqlalchemy as sa

from jupyter_sched.model.job import Hold
from jupyter_sched.store import JobRecord, Store, latest_version
from tests.runtime.builders import make_job

AT = datetime(2026, 12, 5, 18, 40, tzinfo=timezone.utc)


def test_hubadmin25_b18_a_hold_and_a_top_survive_a_restart(db_url: str) -> None:
    store = Store(db_url)
    held = replace(make_job("j-held"), held=Hold(by="boss", at=AT, admin=True), top_at=AT)
    store.insert_job(JobRecord(job=held))
    store.insert_job(JobRecord(job=make_job("j-plain")))
    store.close()

    reopened = Store(db_url)  # a restart: a new server on the same store
    try:
        by_id = {r.job.id: r.job for r in reopened.live_jobs()}
        assert by_id["j-held"].held == Hold(by="boss", at=AT, admin=True) and by_id["j-held"].top_at == AT
        assert by_id["j-plain"].held is None and by_id["j-plain"].top_at is None
        record = reopened.get_job("j-held")
        with reopened.transaction() as tx:
            tx.update_job(replace(record, job=replace(record.job, held=None, top_at=None)))
        assert reopened.get_job("j-held").job.held is None and reopened.get_job("j-held").job.top_at is None
    finally:
        reopened.close()


def test_hubadmin25_b18_a_version_20_store_gets_the_hold_columns_when_a_server_opens_it(db_url: str) -> None:
    store = Store(db_url)
    store.insert_job(JobRecord(job=make_job("kept")))
    with store.engine.begin() as conn:  # as a store written by the previous release
        conn.execute(sa.text("ALTER TABLE jobs DROP COLUMN hold"))
        conn.execute(sa.text("ALTER TABLE jobs DROP COLUMN top_at"))
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 21"))
    assert not {"hold", "top_at"} & {c["name"] for c in sa.inspect(store.engine).get_columns("jobs")}
    store.close()

    reopened = Store(db_url)
    try:
        assert reopened.schema_version() == latest_version() >= 21
        assert {"hold", "top_at"} <= {c["name"] for c in sa.inspect(reopened.engine).get_columns("jobs")}
        (kept,) = reopened.live_jobs()
        assert kept.job.id == "kept" and kept.job.held is None and kept.job.top_at is None
    finally:
        reopened.close()
