"""hubadmin26 B19: finished jobs were kept 90 days by default, shorter than a quarter — a quarter's
review a week after its end missed the jobs of its first days (names, exit codes, commands). The
default is now 400 days, as the telemetry rollups', in the store's policy and in ``SchedApp``."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.engine.retention import retention_from_settings
from jupyter_sched.extension.config import StorageConfig
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord, Store, sqlite_url
from jupyter_sched.store.retention import RetentionPolicy, prune
from tests.runtime.builders import make_job

NOW = datetime(2027, 1, 8, 12, 0, tzinfo=timezone.utc)  # a week after the quarter Oct 1 to Dec 31 ended


def test_s26_hubadmin26_b19_finished_jobs_are_kept_400_days_by_default() -> None:
    assert RetentionPolicy().finished_jobs_days == 400.0
    assert retention_from_settings({}).finished_jobs_days == 400.0
    assert StorageConfig.class_traits()["retention_finished_jobs_days"].default_value == 400.0


def test_s26_hubadmin26_b19_a_quarter_review_a_week_later_still_finds_the_quarters_first_job(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    first = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)
    with store.transaction(now=NOW) as tx:
        job = make_job("j-oct0001", state=JobState.FAILED, submitted_at=first)
        tx.insert_job(JobRecord(job=replace(job, started_at=first, finished_at=first + timedelta(hours=1))))
    with store.transaction(now=NOW) as tx:
        report = prune(tx.conn, retention_from_settings({}), now=NOW)
    assert report.jobs == 0
    assert [r.job.id for r in store.list_jobs()] == ["j-oct0001"]
    store.close()
