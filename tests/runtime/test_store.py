"""The store on real SQLite files and a real PostgreSQL server: migrations, jobs, leader lease,
usage, quotas and the integrity check."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jupyter_sched.errors import ConflictError, NotFoundError, NotLeaderError, StoreError
from jupyter_sched.model import Allocation, Budget, JobState, PendingReason, Quota, QuotaSet, TeamPolicy
from jupyter_sched.store import (
    JobRecord,
    SequentialIds,
    SortableIds,
    Store,
    check_integrity,
    current_version,
    latest_version,
    migrate,
    schema,
)
from tests.runtime.builders import T0, make_job


def _clock(start=T0):
    box = {"now": start}

    def now():
        return box["now"]

    def advance(seconds: float) -> None:
        box["now"] = box["now"] + timedelta(seconds=seconds)

    return now, advance


def test_migrations_run_on_a_fresh_database_and_are_idempotent(db_url: str) -> None:
    store = Store(db_url)
    assert store.schema_version() == latest_version()
    assert migrate(store.engine) == []  # second run: nothing to do
    assert Store(db_url).schema_version() == latest_version()  # a second server opening it
    with store.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT version, description FROM schema_version")).all()
    assert [r[0] for r in rows] == list(range(1, latest_version() + 1))


def test_migrated_schema_equals_the_declared_tables(db_url: str) -> None:
    store = Store(db_url)
    inspector = sa.inspect(store.engine)
    for table in schema.metadata.sorted_tables:
        columns = {c["name"] for c in inspector.get_columns(table.name)}
        assert columns == {c.name for c in table.columns}, table.name


def test_a_database_newer_than_the_code_is_refused(sqlite_db: str) -> None:
    store = Store(sqlite_db)
    with store.engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO schema_version VALUES (:v, 'from the future', '2030-01-01T00:00:00.000000Z')"),
                     {"v": latest_version() + 1})
    with pytest.raises(StoreError, match=r"knows only up to"):
        Store(sqlite_db)


def test_sqlite_runs_in_wal_mode(sqlite_db: str) -> None:
    store = Store(sqlite_db)
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_an_unreachable_database_is_a_store_error_naming_the_setting() -> None:
    with pytest.raises(StoreError) as info:
        Store("postgresql+psycopg://nobody:secret@127.0.0.1:1/none")
    assert info.value.field == "db_url"
    assert "secret" not in info.value.message


def test_job_roundtrip_and_filters(db_url: str) -> None:
    store = Store(db_url)
    alloc = Allocation(node="n1", gpu_uuids=("GPU-n1-0",))
    reason = PendingReason(code="WaitingForCapacity", message="needs 2 GPUs, 1 free", details={"requested": 2})
    jobs = [make_job("j-1", user="ana"), replace(make_job("j-2", user="bob", gpus=2), reason=reason),
            make_job("j-3", user="ana", state=JobState.RUNNING, allocation=alloc, submitted_at=T0 + timedelta(1))]
    for job in jobs:
        store.insert_job(JobRecord(job=job))
    assert store.get_job("j-2").job == jobs[1]
    assert store.get_job("j-3").job == jobs[2]
    assert [r.job.id for r in store.list_jobs(user="ana")] == ["j-1", "j-3"]
    assert [r.job.id for r in store.list_jobs(states=[JobState.PENDING])] == ["j-1", "j-2"]
    assert [r.job.id for r in store.list_jobs(newest_first=True, limit=1)] == ["j-3"]
    assert [e.action for e in store.list_events(job_id="j-1")] == ["submit"]
    with pytest.raises(NotFoundError):
        store.get_job("j-404")
    with pytest.raises(ConflictError):
        store.insert_job(JobRecord(job=jobs[0]))


def test_updates_are_compare_and_set_on_the_row_version(db_url: str) -> None:
    store = Store(db_url)
    first = store.insert_job(JobRecord(job=make_job("j-1")))
    with store.transaction() as tx:
        tx.update_job(replace(first, stop_intent="cancel"))
    with store.transaction() as tx, pytest.raises(ConflictError):
        tx.update_job(replace(first, job=replace(first.job, message="stale writer")))
    assert store.get_job("j-1").stop_intent == "cancel"
    assert store.get_job("j-1").version == 2


def test_leader_lease_is_exclusive_until_it_expires_and_takeover_bumps_the_term(db_url: str) -> None:
    now, advance = _clock()
    store = Store(db_url, now=now)
    with store.transaction() as tx:
        a = tx.acquire_leadership("engine-a", ttl_s=10)
    with store.transaction() as tx:
        assert tx.acquire_leadership("engine-b", ttl_s=10) is None
    assert a is not None and a.owner == "engine-a" and a.term == 1
    advance(5)
    with store.transaction() as tx:
        renewed = tx.acquire_leadership("engine-a", ttl_s=10)  # renewal keeps the term
    assert renewed is not None and renewed.term == 1
    advance(11)
    with store.transaction() as tx:
        b = tx.acquire_leadership("engine-b", ttl_s=10)
    assert b is not None and b.owner == "engine-b" and b.term == 2
    with store.transaction() as tx, pytest.raises(NotLeaderError):
        tx.assert_leader("engine-a", 1, ttl_s=10)  # the deposed leader is fenced off
    with store.transaction() as tx:
        tx.assert_leader("engine-b", 2, ttl_s=10)
        tx.release_leadership("engine-b")
    with store.transaction() as tx:
        c = tx.acquire_leadership("engine-a", ttl_s=10)
    assert c is not None and c.term == 3


def test_usage_intervals_open_once_and_close_once(db_url: str) -> None:
    now, _advance = _clock()
    store = Store(db_url, now=now)
    gpus = [("GPU-n1-0", "A100", 1.0), ("GPU-n1-1", "A100", 1.0)]
    with store.transaction() as tx:
        assert tx.open_usage(job_id="j-1", attempt=1, user="ana", team="ml", kind="training", gpus=gpus,
                             started_at=T0) == 2
        # a replayed admission (e.g. after a restart) opens nothing twice
        assert tx.open_usage(job_id="j-1", attempt=1, user="ana", team="ml", kind="training", gpus=gpus,
                             started_at=T0) == 0
    with store.transaction() as tx:
        assert tx.close_usage("j-1", T0 + timedelta(hours=1)) == 2
        assert tx.close_usage("j-1", T0 + timedelta(hours=5)) == 0  # closed intervals are never moved
    rows = store.usage_rows()
    assert {(r.gpu_uuid, r.ended_at) for r in rows} == {("GPU-n1-0", T0 + timedelta(hours=1)),
                                                        ("GPU-n1-1", T0 + timedelta(hours=1))}


def test_quota_set_roundtrip(db_url: str) -> None:
    store = Store(db_url)
    qs = QuotaSet(quotas=(Quota(team="ml", guaranteed=2, borrowing_limit=1), Quota(team="ml", user="ana", guaranteed=1)),
                  budgets=(Budget(team="ml", gpu_hours=100),),
                  teams=(TeamPolicy(team="cv"), TeamPolicy(team="ml", weight=2, allowed_priorities=("high", "normal"),
                                                            members=("ana",), reclaim="lower")),
                  user_teams={"ana": ("ml",)})
    with store.transaction() as tx:
        tx.replace_quota_set(qs)
    assert store.quota_set() == qs


@pytest.mark.parametrize(
    "jobs, want",
    [
        pytest.param([make_job("j-1", state=JobState.RUNNING, allocation=Allocation("n1", ("GPU-n1-0",))),
                      make_job("j-2", state=JobState.RUNNING, allocation=Allocation("n1", ("GPU-n1-0",)))],
                     "GPU GPU-n1-0 is allocated 2000 milli-GPUs", id="one GPU held by two live jobs is found"),
        pytest.param([make_job("j-1", state=JobState.RUNNING, allocation=Allocation("n1", ("GPU-n1-0",), 500)),
                      make_job("j-2", state=JobState.RUNNING, allocation=Allocation("n1", ("GPU-n1-0",), 500))],
                     None, id="two halves of one shared GPU are fine"),
        pytest.param([make_job("j-1", state=JobState.RUNNING)], "without an allocation",
                     id="a running job without an allocation is found"),
        pytest.param([replace(make_job("j-1"), allocation=Allocation("n1", ("GPU-n1-0",)))],
                     "pending but still holds", id="a pending job holding GPUs is found"),
        pytest.param([replace(make_job("j-1"), state=JobState.SUCCEEDED)], "without finished_at",
                     id="a finished job without finished_at is found"),
    ],
)
def test_integrity_check(sqlite_db: str, jobs: list, want: str | None) -> None:
    store = Store(sqlite_db)
    for job in jobs:
        store.insert_job(JobRecord(job=job))
    report = check_integrity(store)
    if want is None:
        assert report.ok, report.problems
    else:
        assert any(want in p for p in report.problems), report.problems


def test_integrity_check_reports_undecodable_rows_and_stray_usage(db_url: str) -> None:
    store = Store(db_url)
    store.insert_job(JobRecord(job=make_job("j-1")))
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE jobs SET spec = '{not json' WHERE id = 'j-1'"))
    with store.transaction() as tx:
        tx.open_usage(job_id="j-9", attempt=1, user="ana", team="ml", kind="training",
                      gpus=[("GPU-n1-0", "A100", 1.0)], started_at=T0)
    report = check_integrity(store)
    assert any("j-1: row does not decode" in p for p in report.problems)
    assert any("usage of job j-9" in p and "open" in p for p in report.problems)
    assert report.jobs_checked == 1


def test_ids_are_unique_and_sortable_by_time() -> None:
    now, advance = _clock()
    ids = SortableIds(now)
    first = [ids("j") for _ in range(1000)]
    advance(0.002)
    later = ids("j")
    assert len(set(first)) == 1000
    assert all(i < later for i in first)
    assert first[0].startswith("j-") and len(first[0]) == len("j-") + 9 + 1 + 6
    seq = SequentialIds()
    assert [seq("l"), seq("j")] == ["l-000001", "j-000002"]


def test_current_version_of_an_empty_database_is_zero(tmp_path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    with engine.connect() as conn:
        assert current_version(conn) == 0


def test_newuser7_finding_5_a_sqlite_store_is_readable_by_its_own_account_only() -> None:
    """New user 7, F5 (IMPORTANT): the store (every job's command line, ``env`` secrets and notebook
    text) was created 0644, with its ``-wal``, so any local account read another user's
    ``--env WANDB_API_KEY=…`` with sqlite3. Now 0600 from the start, and an existing 0644 store (made
    before this fix) is made private when opened. Checked with a real second account."""
    import stat
    import subprocess

    from jupyter_sched.store import sqlite_url
    from tests.accounts import account_python, os_accounts, shared_dir, skip_reason

    why = skip_reason()
    if why:
        pytest.skip(why)
    python = account_python()
    assert python is not None
    with shared_dir() as folder, os_accounts(1) as (mallory,):
        fresh = folder / "fresh.sqlite"
        store = Store(sqlite_url(fresh))
        store.insert_job(JobRecord(job=make_job("j-secret", env={"WANDB_API_KEY": "alice-s3cr3t"})))
        old = folder / "old.sqlite"
        old.write_bytes(b"")
        old.chmod(0o644)  # as a store made before this fix
        Store(sqlite_url(old)).close()
        try:
            for path in (fresh, fresh.with_name("fresh.sqlite-wal"), old):
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, (path, oct(path.stat().st_mode))
            read = subprocess.run(
                [python, "-c", f"import sqlite3; print(sqlite3.connect('file:{fresh}?mode=ro', uri=True)"
                               ".execute('select * from jobs').fetchall())"],
                user=mallory.uid, group=mallory.gid, extra_groups=[], capture_output=True, text=True, timeout=60)
            assert read.returncode != 0 and "alice-s3cr3t" not in read.stdout, (read.stdout, read.stderr)
            assert "unable to open database file" in read.stderr, read.stderr
        finally:
            store.close()
