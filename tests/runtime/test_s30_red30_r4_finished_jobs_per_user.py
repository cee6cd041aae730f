"""red30 R4 (the bound): finished jobs were kept ``retention_finished_jobs_days`` (400) whatever their number — one
user's loop of instant 0-GPU jobs (120 a minute at the submit rate) grew the store without bound. Now at most
``retention_finished_jobs_per_user`` (default 10,000) finished jobs of each user are kept: the leader's pruner
deletes that user's oldest first (by ``finished_at``), in its bounded batches, with one ``pruned`` audit record per
run naming the users and counts — not one per row. Live work and other users' jobs are untouched; usage intervals
(the accounting) stay. Real parts: the store on SQLite, :func:`prune` and the :class:`Pruner` leader hook.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.retention import Pruner, retention_from_settings
from jupyter_sched.errors import ValidationError
from jupyter_sched.extension.config_runtime import ExecutorConfig
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord, Store, sqlite_url
from jupyter_sched.store.retention import RetentionPolicy, prune
from tests.runtime.builders import make_job

NOW = datetime(2026, 12, 6, 9, 0, tzinfo=timezone.utc)


def _seed(store: Store) -> None:
    with store.transaction(now=NOW) as tx:
        for i in range(8):  # mal's loop: 8 finished, the newest last
            at = NOW - timedelta(minutes=60 - i)
            job = replace(make_job(f"mal-{i}", user="mal", gpus=0, state=JobState.SUCCEEDED, submitted_at=at),
                          started_at=at, finished_at=at)
            tx.insert_job(JobRecord(job=job))
            tx.open_usage(job_id=job.id, attempt=0, user="mal", team="default", kind="training", gpus=[],
                          started_at=at)
            tx.close_usage(job.id, at)
        for i in range(2):
            tx.insert_job(JobRecord(job=make_job(f"mal-live-{i}", user="mal", gpus=0, submitted_at=NOW - timedelta(days=9))))
        for i in range(3):
            at = NOW - timedelta(days=30 + i)
            tx.insert_job(JobRecord(job=replace(make_job(f"ana-{i}", user="ana", state=JobState.FAILED, submitted_at=at),
                                                started_at=at, finished_at=at)))


def test_red30_r4_the_per_user_bound_prunes_a_users_oldest_finished_jobs_first(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    _seed(store)
    usage_before = len(store.usage_rows())
    policy = RetentionPolicy(finished_jobs_days=400, events_days=None, rollups_days=None,
                             finished_jobs_per_user=5, batch=2)
    reports = []
    while True:
        with store.transaction(now=NOW) as tx:
            report = prune(tx.conn, policy, now=NOW)
        reports.append((report.jobs, dict(report.over_user_bound), report.more))
        if not report.more:
            break
    assert reports == [(2, {"mal": 2}, True), (1, {"mal": 1}, False)]  # in batches, the oldest first
    kept = sorted(r.job.id for r in store.list_jobs())
    assert kept == ["ana-0", "ana-1", "ana-2", "mal-3", "mal-4", "mal-5", "mal-6", "mal-7", "mal-live-0", "mal-live-1"]
    assert len(store.usage_rows()) == usage_before  # the accounting keeps every interval
    store.close()


def test_red30_r4_the_pruner_audits_the_bound_once_per_run_naming_the_user(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    _seed(store)
    ticks = [0.0]
    policy = retention_from_settings({"retention_finished_jobs_per_user": 3})
    assert policy.finished_jobs_per_user == 3 and policy.finished_jobs_days == 400
    pruner = Pruner(store, ManualClock(NOW), policy, interval_s=600.0, monotonic=lambda: ticks[0])
    report = pruner()
    assert report is not None and report.over_user_bound == {"mal": 5} and report.jobs == 5
    ticks[0] += 600.0
    again = pruner()
    assert again is not None and again.jobs == 0
    records = [e for e in store.list_events() if e.action == "pruned"]
    assert len(records) == 1, records  # one record for the run, none per row, none for a run that pruned nothing
    assert records[0].details["finished_jobs_over_user_bound"] == {"mal": 5}
    assert "5 of the jobs past 3 finished jobs kept per user: mal 5" in records[0].message
    assert sorted(r.job.id for r in store.list_jobs(user="mal")) == ["mal-5", "mal-6", "mal-7", "mal-live-0",
                                                                      "mal-live-1"]
    store.close()


def test_red30_r4_the_bound_is_a_setting_with_a_sane_default() -> None:
    assert ExecutorConfig.class_traits()["retention_finished_jobs_per_user"].default_value == 10_000
    assert RetentionPolicy().finished_jobs_per_user == 10_000 and not RetentionPolicy().keeps_everything
    assert retention_from_settings({}).finished_jobs_per_user == 10_000
    assert retention_from_settings({"retention_finished_jobs_per_user": 0}).finished_jobs_per_user == 0
    for bad in (-1, "many", 2.5, True):
        with pytest.raises(ValidationError) as refused:
            retention_from_settings({"retention_finished_jobs_per_user": bad})
        assert refused.value.field == "retention_finished_jobs_per_user"
