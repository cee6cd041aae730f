"""The engine's runtime feed reads the newest succeeded runs through an index, never by sorting
every finished job.

Issue 17 (``benchmarks/submit_bench.py --history 100000``): the feed's read of the newest 500
succeeded training runs took 666 ms at 100,000 finished jobs — SQLite searched ``ix_jobs_state``
and sorted every succeeded row in a temporary B-tree — and it runs at the engine's first cycle and
again whenever a job succeeded, so a scheduling tick took 0.7-3 s on a loaded machine. Schema
version 10 indexes job rows by state, kind, submit time and id; the read then walks the newest
rows of that index and stops after 500 (3 ms).

Real SQLite store: the test captures the statements :class:`RuntimeFeed` sends and asks SQLite's
own planner how it runs them (PostgreSQL's planner picks a sequential scan for a table this
small whatever the indexes, so its plan would say nothing here).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.runtimes import RuntimeFeed
from jupyter_sched.model import Job, JobKind, JobSpec, JobState, ResourceRequest
from jupyter_sched.store import JobRecord, Store, latest_version, sqlite_url

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
FINISHED = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


def _history(store: Store, count: int) -> None:
    """``count`` finished jobs of 20 users (a third succeeded; every fourth an inference service)."""
    base = NOW - timedelta(minutes=count + 60)
    with store.transaction() as tx:
        for i in range(count):
            at = base + timedelta(minutes=i)
            kind = JobKind.INFERENCE if i % 4 == 3 else JobKind.TRAINING
            spec = JobSpec(name=f"hist-{i}", user=f"user{i % 20}", team="ml", kind=kind,
                           resources=ResourceRequest(gpus=1), command=("python", "train.py"))
            tx.insert_job(JobRecord(job=Job(id=f"hist-{i:05d}", spec=spec, state=FINISHED[i % 3], submitted_at=at,
                                            admitted_at=at, started_at=at, finished_at=at + timedelta(minutes=20),
                                            exit_code=0 if i % 3 == 0 else 1)))


def _plan(store: Store, statement: str, parameters: Any) -> str:
    with store.engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        cursor = raw.cursor()
        cursor.execute("EXPLAIN QUERY PLAN " + statement, parameters)
        return "\n".join(str(row[-1]) for row in cursor.fetchall())


def test_the_runtime_feeds_read_of_the_newest_succeeded_runs_walks_an_index_and_sorts_nothing(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    try:
        _history(store, 2_400)
        captured: list[tuple[str, Any]] = []

        def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
            text = " ".join(statement.split())
            if text.startswith("SELECT") and "FROM jobs" in text and "ORDER BY" in text:
                captured.append((statement, parameters))

        waiting = Job(id="j-waiting", spec=JobSpec(name="next", user="user0", team="ml", resources=ResourceRequest(
            gpus=1), command=("python", "train.py")), submitted_at=NOW)
        feed = RuntimeFeed(store, ManualClock(NOW))
        sa.event.listen(store.engine, "before_cursor_execute", capture)
        try:
            learnt, _, _ = feed.learnt([waiting])
        finally:
            sa.event.remove(store.engine, "before_cursor_execute", capture)

        assert feed.reads == 1
        assert learnt.get("j-waiting") == 1200.0, "user0's job is predicted from the 20-minute runs read"
        window = [(s, p) for s, p in captured if '"user" =' not in s and "user =" not in s]
        # the newest `keep` succeeded training runs of everyone, and the newest `keep` failed ones (those
        # stopped at their limit: new user 17, N15) — each through the index
        assert [p[0] for _, p in window] == ["succeeded", "failed"], captured
        for statement, parameters in window:
            plan = _plan(store, statement, parameters)
            assert "ix_jobs_state_kind_submitted" in plan, plan
            assert "TEMP B-TREE" not in plan, f"every {parameters[0]} row is read and sorted: {plan}"
    finally:
        store.close()


def test_a_version_9_store_gets_the_index_when_a_server_opens_it(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "sched.sqlite")
    store = Store(url)
    with store.engine.begin() as conn:  # as a store written by the previous release
        conn.execute(sa.text("DROP INDEX ix_jobs_state_kind_submitted"))
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 10"))
    store.close()
    assert "ix_jobs_state_kind_submitted" not in {
        ix["name"] for ix in sa.inspect(sa.create_engine(url)).get_indexes("jobs")}

    reopened = Store(url)
    try:
        assert reopened.schema_version() == latest_version()
        assert "ix_jobs_state_kind_submitted" in {ix["name"] for ix in sa.inspect(reopened.engine).get_indexes("jobs")}
    finally:
        reopened.close()
