"""The store queries the services page and sum with, against the arithmetic they replace, on
SQLite and on a real PostgreSQL server (tests/pg.py): keyset pages of jobs, and GPU-seconds summed
in the database (``GET me`` no longer loads everyone's usage rows)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jupyter_sched.accounting import gpu_seconds
from jupyter_sched.model import Job, JobSpec, JobState, PriorityClass
from jupyter_sched.store import JobRecord, Store, sqlite_url

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)

# (job, user, team, share, start offset s, end offset s or None = still open)
INTERVALS = [
    ("j1", "ana", "ml", 1.0, 0, 3600),
    ("j2", "ana", "ml", 0.5, 1800, None),
    ("j3", "bo", "ml", 1.0, -7200, -3600),   # ended before the window
    ("j4", "bo", "cv", 2.0, -600, 600),      # straddles the window's start
    ("j5", "cy", "cv", 1.0, 7000, 9000),     # straddles the window's end
    ("j6", "ana", "ml", 1.0, 9000, 9500),    # starts after the window
]
WINDOW = (T0, T0 + timedelta(seconds=7200))


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = sqlite_url(tmp_path / "s.sqlite") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    opened = Store(url)
    with opened.transaction(now=T0) as tx:
        for job, user, team, share, start, end in INTERVALS:
            tx.open_usage(job_id=job, attempt=0, user=user, team=team, kind="training",
                          gpus=[(f"GPU-{job}", "A100", share)], started_at=T0 + timedelta(seconds=start))
            if end is not None:
                tx.close_usage(job, T0 + timedelta(seconds=end))
    yield opened
    opened.close()


@pytest.mark.parametrize(("user", "team"), [(None, None), ("ana", None), (None, "cv"), ("bo", "cv"), ("zed", None)],
                         ids=["everyone", "one user", "one team", "a user in a team", "nobody's"])
def test_gpu_seconds_summed_in_the_database_equal_the_accounting_arithmetic(
        store: Store, user: str | None, team: str | None) -> None:
    since, until = WINDOW
    # what is billed: an open row of a job not running (here: no job row) counts nothing (hubadmin26 B15)
    rows = [iv for iv in store.billed_usage()[0] if (user is None or iv.user == user) and (team is None or iv.team == team)]
    want = sum(gpu_seconds(iv, now=until, since=since, until=until) for iv in rows)
    assert store.gpu_seconds(since=since, until=until, user=user, team=team) == pytest.approx(want, abs=1e-3)


def test_keyset_pages_cover_every_job_once_newest_first(store: Store) -> None:
    with store.transaction(now=T0) as tx:
        for i in range(7):  # two jobs share each submit time, so ties break on the id
            tx.insert_job(JobRecord(job=Job(id=f"j-{i:02d}", spec=JobSpec(name="p", user="ana", command=("true",)),
                                            submitted_at=T0 + timedelta(seconds=i // 2))))
    seen: list[str] = []
    after = None
    while True:
        page = store.list_jobs(user="ana", newest_first=True, limit=3, after=after)
        seen += [r.job.id for r in page]
        if len(page) < 3:
            break
        last = page[-1].job
        assert last.submitted_at is not None
        after = (last.submitted_at, last.id)
    assert seen == [f"j-{i:02d}" for i in reversed(range(7))]


def test_queue_pages_in_the_database_equal_the_queue_order_on_every_database(store: Store) -> None:
    """``StoreTx.queue_page`` orders and cuts in SQL what ``GET queue`` sorted in Python: priority
    class, submit time, id; keyset pages with true positions; the head plus one user's own."""
    priorities = [PriorityClass.LOW, PriorityClass.NORMAL, PriorityClass.HIGH]
    jobs = [Job(id=f"q-{i:02d}", spec=JobSpec(name="q", user="ana" if i % 3 else "bo", command=("true",),
                                             priority=priorities[i % 3]),
                submitted_at=T0 + timedelta(seconds=i // 2)) for i in range(12)]
    with store.transaction(now=T0) as tx:
        for job in jobs:
            tx.insert_job(JobRecord(job=job))
        tx.insert_job(JobRecord(job=Job(id="running", spec=JobSpec(name="r", user="bo", command=("true",)),
                                        state=JobState.RUNNING, submitted_at=T0)))
    want = [j.id for j in sorted(jobs, key=lambda j: (-j.spec.priority.rank, j.submitted_at, j.id))]
    seen: list[tuple[int, str]] = []
    after = None
    while True:
        with store.transaction(write=False) as tx:
            page = tx.queue_page(limit=5, after=after)
        seen += [(position, record.job.id) for position, _, record in page]
        if len(page) < 5:
            break
        after = page[-1][1]
    assert seen == list(enumerate(want, 1)), "every waiting job once, in queue order, positions continuing"
    with store.transaction(write=False) as tx:
        head = tx.queue_page(head=3, also_user="bo")
        everything = tx.queue_page()
    bo = [(n, j) for n, j in enumerate(want, 1) if n > 3 and j in {x.id for x in jobs if x.spec.user == "bo"}]
    assert [(p, r.job.id) for p, _, r in head] == list(enumerate(want[:3], 1)) + bo
    assert [r.job.id for _, _, r in everything] == want
