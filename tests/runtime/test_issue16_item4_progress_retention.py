"""Issue 16 item 4: a job's stored progress report is pruned with the job (retention), never before it."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord, Store, sqlite_url
from jupyter_sched.store.progress import read_progress, record_progress
from jupyter_sched.store.retention import RetentionPolicy, prune
from tests.runtime.builders import make_job

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)


def test_issue16_item4_a_pruned_jobs_progress_report_goes_with_it(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    with store.transaction(now=NOW) as tx:
        for job_id, age_days, state in (("old-done", 500, JobState.SUCCEEDED), ("old-running", 600, JobState.RUNNING)):
            submitted = NOW - age_days * DAY
            job = replace(make_job(job_id, state=state, submitted_at=submitted), started_at=submitted)
            if state.terminal:
                job = replace(job, finished_at=submitted + timedelta(hours=1))
            tx.insert_job(JobRecord(job=job))
            record_progress(tx, job_id, run_started_at=submitted, at=submitted + timedelta(minutes=30), done=5,
                            total=10, min_interval_s=10)
    with store.transaction(now=NOW) as tx:
        prune(tx.conn, RetentionPolicy(), now=NOW)
    with store.transaction(write=False) as tx:
        assert sorted(read_progress(tx, ["old-done", "old-running"])) == ["old-running"]  # a running job keeps its
