"""red27 R5 (per-request part): ``GET me`` sums one user's GPU-seconds over the last 7 days and over each budget's
period (:meth:`StoreTx.gpu_seconds`). Its statement asked for ``user = ? AND (ended_at IS NULL OR ended_at > ?)``
with only ``ix_usage_user`` to read it by: every usage row the user ever had was read for each sum (usage is never
pruned: a year's flood of instant jobs is millions of rows), 3.3-3.9 s per ``GET me`` at 300,000 rows on
PostgreSQL. Schema 24 indexes usage by (user, ended_at) and (team, ended_at); the sum asks for the rows ended after
the window's start and the open rows as two ranges of those indexes. Same figures as the old statement (kept here
as the baseline) on a mixed store, windows cut mid-row. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.store import JobRecord, Store, latest_version, schema
from jupyter_sched.store.codec import ts
from jupyter_sched.store.quarantine import sound_usage_sql
from jupyter_sched.store.store import HOLDING_STATES, _gpu_seconds_query
from tests.runtime.builders import T0


def _old_statement(sqlite: bool, by_user: bool, by_team: bool) -> sa.Select[Any]:
    """The statement before red27 R5 (main a7627429), the baseline: one ``ended_at IS NULL OR ended_at > lo``."""
    u = schema.usage
    lo, hi = sa.bindparam("lo", type_=sa.String), sa.bindparam("hi", type_=sa.String)
    end = sa.func.coalesce(u.c.ended_at, hi)
    clipped_end = sa.func.min(end, hi) if sqlite else sa.func.least(end, hi)
    clipped_start = sa.func.max(u.c.started_at, lo) if sqlite else sa.func.greatest(u.c.started_at, lo)

    def epoch(text: Any) -> Any:
        if sqlite:
            return sa.func.julianday(text) * 86400.0
        return sa.func.extract("epoch", sa.cast(text, sa.TIMESTAMP(timezone=True)))

    seconds = epoch(clipped_end) - epoch(clipped_start)
    j = schema.jobs
    held = sa.exists().where(j.c.id == u.c.job_id, j.c.state.in_(sorted(HOLDING_STATES)), j.c.attempts <= u.c.attempt)
    billed = sa.and_(sound_usage_sql(u, sqlite=sqlite), sa.or_(u.c.ended_at.is_not(None), held))
    charged = sa.func.coalesce(u.c.billed, u.c.share)  # what a row is charged (schema 30, red40 R1)
    total = sa.func.coalesce(sa.func.sum(sa.case((billed, charged * seconds), else_=0.0)), 0.0)
    query = sa.select(total).where(u.c.started_at < hi, sa.or_(u.c.ended_at.is_(None), u.c.ended_at > lo))
    if by_user:
        query = query.where(u.c.user == sa.bindparam("user"))
    if by_team:
        query = query.where(u.c.team == sa.bindparam("team"))
    return query


def _seed(store: Store) -> None:
    """A mixed store: closed rows of ana and bo in two teams over 10 days (some straddling midnight and every
    window edge below), shares 0.25-1, open rows of a running job and of a finished one (a runaway: billed
    nothing), a row with a malformed end (quarantined: counts nothing)."""
    with store.transaction(now=T0) as tx:
        tx.insert_job(JobRecord(job=Job(id="j-run", spec=JobSpec(name="r", user="ana", command=("true",)),
                                        state=JobState.RUNNING, submitted_at=T0 - timedelta(days=3), attempts=1)))
        tx.insert_job(JobRecord(job=Job(id="j-gone", spec=JobSpec(name="g", user="bo", command=("true",)),
                                        state=JobState.SUCCEEDED, submitted_at=T0 - timedelta(days=2), attempts=1)))
        for i in range(400):
            user, team = (("ana", "vision"), ("ana", "nlp"), ("bo", "vision"), ("bo", "nlp"))[i % 4]
            start = T0 - timedelta(days=10) + timedelta(seconds=i * 2161.7)
            tx.open_usage(job_id=f"j-{i}", attempt=1, user=user, team=team, kind="training",
                          gpus=[(f"GPU-{i % 3}", "A100", (0.25, 0.5, 1.0)[i % 3])], started_at=start)
            tx.close_usage(f"j-{i}", start + timedelta(seconds=600 + (i % 7) * 3000))
        tx.open_usage(job_id="j-run", attempt=1, user="ana", team="vision", kind="training",
                      gpus=[("GPU-9", "A100", 1.0)], started_at=T0 - timedelta(days=2, seconds=77))
        tx.open_usage(job_id="j-gone", attempt=1, user="bo", team="nlp", kind="training",
                      gpus=[("GPU-8", "A100", 0.5)], started_at=T0 - timedelta(hours=30))
        tx.open_usage(job_id="j-bad", attempt=1, user="ana", team="vision", kind="training",
                      gpus=[("GPU-7", "A100", 1.0)], started_at=T0 - timedelta(days=1))
        tx.conn.execute(schema.usage.update().where(schema.usage.c.job_id == "j-bad").values(ended_at="2026-11-2"))


@pytest.mark.parametrize(("user", "team"), [("ana", None), ("bo", None), (None, "vision"), ("ana", "nlp"),
                                            ("bo", "vision"), ("zed", None)])
def test_red27_r5_me_sums_answer_as_the_old_statement(db_url: str, user: str | None, team: str | None) -> None:
    store = Store(db_url)
    try:
        _seed(store)
        sqlite = store.dialect == "sqlite"
        old = _old_statement(sqlite, user is not None, team is not None)
        windows = [(T0 - timedelta(days=7, seconds=13.25), T0), (T0 - timedelta(days=5, hours=7, seconds=0.5), T0),
                   (T0 - timedelta(days=30), T0 - timedelta(days=6)), (T0 - timedelta(hours=31), T0 - timedelta(hours=2)),
                   (datetime(2026, 11, 1, tzinfo=T0.tzinfo), T0), (T0 - timedelta(seconds=1), T0)]
        compared = 0
        with store.transaction(write=False, now=T0) as tx:
            for since, until in windows:
                params = {"lo": ts(since), "hi": ts(until), "user": user, "team": team}
                want = max(0.0, float(tx.conn.execute(old, params).scalar() or 0.0))
                got = tx.gpu_seconds(since=since, until=until, user=user, team=team)
                assert got == pytest.approx(want, rel=1e-12, abs=1e-6), (since, until)
                compared += want > 0
        assert compared >= (0 if user == "zed" else 4)  # the windows cut through rows of theirs
    finally:
        store.close()


def _plan(store: Store, user: str | None, team: str | None) -> str:
    """The database's plan of :meth:`StoreTx.gpu_seconds`'s statement for a 7-day window."""
    sqlite = store.dialect == "sqlite"
    query = _gpu_seconds_query(sqlite, user is not None, team is not None).params(
        lo=ts(T0 - timedelta(days=7)), hi=ts(T0), user=user, team=team)
    text = str(query.compile(dialect=store.engine.dialect, compile_kwargs={"literal_binds": True}))
    with store.engine.connect() as conn:
        if not sqlite:
            conn.exec_driver_sql("SET enable_seqscan = off")  # a few rows: PostgreSQL would scan them all
        rows = conn.exec_driver_sql(("EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN ") + text.replace("%", "%%"))
        return " | ".join(str(row[-1]) for row in rows)


def test_red27_r5_me_sums_read_the_window_by_index_and_a_version_23_store_gets_it(db_url: str) -> None:
    store = Store(db_url)
    _seed(store)
    with store.engine.begin() as conn:  # a store written by the previous release
        conn.execute(sa.text("DROP INDEX ix_usage_user_ended"))
        conn.execute(sa.text("DROP INDEX ix_usage_team_ended"))
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 24"))
    store.close()
    reopened = Store(db_url)
    try:
        assert reopened.schema_version() == latest_version() >= 24
        indexes = {i["name"]: i["column_names"] for i in sa.inspect(reopened.engine).get_indexes("usage")}
        assert indexes["ix_usage_user_ended"] == ["user", "ended_at"]
        assert indexes["ix_usage_team_ended"] == ["team", "ended_at"]
        if reopened.dialect == "sqlite":  # rows of the user (team) ended after the window's start, and open ones
            plan = _plan(reopened, "ana", None)
            assert "USING INDEX ix_usage_user_ended (user=? AND ended_at>?)" in plan, plan
            assert "USING INDEX ix_usage_user_ended (user=? AND ended_at=?)" in plan, plan  # IS NULL
            plan = _plan(reopened, None, "vision")
            assert "USING INDEX ix_usage_team_ended (team=? AND ended_at>?)" in plan, plan
        else:
            plan = _plan(reopened, "ana", None)
            assert "Index Scan using ix_usage_user_ended" in plan and "(ended_at)::text > " in plan, plan
            plan = _plan(reopened, None, "vision")
            assert "Index Scan using ix_usage_team_ended" in plan and "(ended_at)::text > " in plan, plan
    finally:
        reopened.close()
