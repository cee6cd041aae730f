"""Each cycle's first read of the live rows (``id, version`` in submit order, before decoding only
the changed ones: ``store/rowcache.read_live``) reads an index alone, and a store written by the
previous release gets that index when a server opens it — SQLite and PostgreSQL (schema version 12).

Issue 17: with ``ix_jobs_state`` only, SQLite read every live row's table page for its version,
38-46 ms per cycle at 25,000 live rows (13-20 ms from the covering index).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from jupyter_sched.store import JobRecord, Store, latest_version, sqlite_url
from tests.runtime.builders import make_job

INDEX = "ix_jobs_state_submitted_version"


def _indexes(store: Store) -> set[str]:
    return {str(ix["name"]) for ix in sa.inspect(store.engine).get_indexes("jobs")}


def test_the_live_rows_versions_are_read_from_a_covering_index(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    try:
        with store.transaction() as tx:
            for i in range(200):
                tx.insert_job(JobRecord(job=make_job(f"j-{i:03d}")), savepoint=False)
        captured: list[tuple[str, Any]] = []

        def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
            if " ".join(statement.split()).startswith("SELECT jobs.id, jobs.version FROM jobs WHERE jobs.state IN"):
                captured.append((statement, parameters))

        sa.event.listen(store.engine, "before_cursor_execute", capture)
        try:
            assert len(store.live_jobs()) == 200
        finally:
            sa.event.remove(store.engine, "before_cursor_execute", capture)
        assert len(captured) == 1, captured
        with store.engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None
            cursor = raw.cursor()
            cursor.execute("EXPLAIN QUERY PLAN " + captured[0][0], captured[0][1])
            plan = "\n".join(str(row[-1]) for row in cursor.fetchall())
        assert f"COVERING INDEX {INDEX}" in plan, plan
    finally:
        store.close()


def test_a_version_11_store_gets_the_index_when_a_server_opens_it(db_url: str) -> None:
    store = Store(db_url)
    store.insert_job(JobRecord(job=make_job("kept")))
    with store.engine.begin() as conn:  # as a store written by the previous release
        conn.execute(sa.text(f"DROP INDEX {INDEX}"))
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 12"))
    assert INDEX not in _indexes(store)
    store.close()

    reopened = Store(db_url)
    try:
        assert reopened.schema_version() == latest_version() >= 12  # every later step ran too (13, 14, …)
        assert INDEX in _indexes(reopened)
        assert [r.job.id for r in reopened.live_jobs()] == ["kept"]
    finally:
        reopened.close()
