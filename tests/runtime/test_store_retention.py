"""Retention (issue 17, a free web loop): old finished jobs, audit events and telemetry rollups are
pruned in bounded batches by the leading engine; usage intervals are kept, so no accounting total
changes. Real SQLite store; the server test builds the service from the extension's settings as
``SchedApp`` does and lets its real engine tick."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import sqlalchemy as sa

from jupyter_sched.engine import SchedulerService
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.retention import Pruner
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord, Store, schema, sqlite_url
from jupyter_sched.store.quarantine import Quarantined
from jupyter_sched.store.retention import RetentionPolicy, prune
from tests.runtime.builders import make_job

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)


def seed(store: Store, now: datetime) -> None:
    """Per kind: rows well past and well inside the default retention, plus an ancient job that
    is still running (never pruned, whatever its age)."""
    with store.transaction(now=now) as tx:
        for job_id, age_days, state in (("old-done", 500, JobState.SUCCEEDED), ("old-failed", 520, JobState.FAILED),
                                        ("new-done", 10, JobState.SUCCEEDED), ("old-running", 600, JobState.RUNNING)):
            submitted = now - age_days * DAY
            job = make_job(job_id, state=state, submitted_at=submitted)
            if state.terminal:
                job = replace(job, started_at=submitted, finished_at=submitted + timedelta(hours=1))
            tx.insert_job(JobRecord(job=job))
            tx.open_usage(job_id=job_id, attempt=0, user="ana", team="ml", kind="training",
                          gpus=[(f"GPU-{job_id}", "A100", 1.0)], started_at=submitted)
            if state.terminal:
                tx.close_usage(job_id, submitted + timedelta(hours=1))
        for age_days in (400, 380, 30):
            tx.add_event(actor="ana", action="submitted", message="x", at=now - age_days * DAY)
    store.add_rollups([{"gpu_uuid": "GPU-old-done", "minute": now - days * DAY, "samples": 60,
                        "utilization_avg": 50.0} for days in (500, 450, 5)])


def test_prune_deletes_only_what_retention_no_longer_keeps_and_no_usage_total_changes(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    seed(store, NOW)
    with store.transaction(now=NOW) as tx:  # the doctor's note of a row that is about to be pruned
        tx.note_quarantined([Quarantined(table="jobs", key="old-failed", error="does not decode", attributes={})])
    usage_before = store.gpu_seconds(since=NOW - 700 * DAY, until=NOW)
    with store.transaction(now=NOW) as tx:
        report = prune(tx.conn, RetentionPolicy(), now=NOW)
    assert (report.jobs, report.events, report.rollups, report.more) == (2, 2, 2, False)
    assert sorted(r.job.id for r in store.list_jobs()) == ["new-done", "old-running"]
    assert [e.at for e in store.list_events()] == [NOW - 30 * DAY]
    assert [r["minute"] for r in store.rollup_rows()] == ["2026-11-26T12:00:00.000000Z"]
    assert store.quarantined() == []  # no note names a row that is gone
    # the accounting is untouched: every usage interval, so every total, is still there
    assert len(store.usage_rows()) == 4 and store.gpu_seconds(since=NOW - 700 * DAY, until=NOW) == usage_before
    store.close()


def test_a_backlog_is_pruned_in_bounded_batches_and_zero_days_keeps_forever(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    with store.transaction(now=NOW) as tx:
        for i in range(5):
            tx.add_event(actor="ana", action="submitted", message=str(i), at=NOW - (500 + i) * DAY)
    policy = RetentionPolicy(finished_jobs_days=0, events_days=365, rollups_days=None, batch=2)
    sizes = []
    while True:
        with store.transaction(now=NOW) as tx:
            report = prune(tx.conn, policy, now=NOW)
        sizes.append((report.events, report.more))
        if not report.more:
            break
    assert sizes == [(2, True), (2, True), (1, False)] and store.list_events() == []
    assert RetentionPolicy(finished_jobs_days=0, events_days=None, rollups_days=-1,
                           finished_jobs_per_user=0).keeps_everything  # the per-user bound (red30 R4) too
    store.close()


def test_the_pruner_runs_at_its_interval_catches_up_a_backlog_and_audits_what_it_did(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: NOW)
    seed(store, NOW)
    ticks = [0.0]
    pruner = Pruner(store, ManualClock(NOW), RetentionPolicy(batch=1), interval_s=600.0, catch_up_s=5.0,
                    monotonic=lambda: ticks[0])
    first = pruner()
    assert first is not None and first.total == 3 and first.more  # one of each kind, more waiting
    assert pruner() is None  # not due yet
    ticks[0] += 5.0
    second = pruner()
    assert second is not None and second.total == 3
    ticks[0] += 5.0
    third = pruner()
    assert third is not None and third.total == 0 and not third.more
    ticks[0] += 5.0
    assert pruner() is None  # no backlog: back to the interval
    audit = [e for e in store.list_events() if e.action == "pruned"]
    assert len(audit) == 2 and audit[0].actor == "retention" and set(audit[0].details) >= {"jobs", "cutoffs"}
    store.close()


def test_the_server_prunes_on_its_leading_ticks_with_the_configured_retention(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "s.sqlite")
    now = datetime.now(timezone.utc)
    seed(Store(url), now)
    svc = SchedulerService.from_config({"db_url": url, "log_dir": str(tmp_path / "logs"),
                                        "inventory_source": "simulated", "simulated_gpus": 1,
                                        "retention_finished_jobs_days": 0, "retention_events_days": 100})
    try:
        svc.tick()
        assert sorted(r.job.id for r in svc.store.list_jobs()) == ["new-done", "old-done", "old-failed",
                                                                     "old-running"]  # 0 = jobs kept forever
        with svc.store.transaction(write=False) as tx:
            events = tx.conn.execute(sa.select(schema.events.c.action)).scalars().all()
            rollups = tx.conn.execute(sa.select(sa.func.count()).select_from(schema.gpu_rollups)).scalar()
        assert "pruned" in events and events.count("submitted") == 1 and rollups == 1
    finally:
        svc.services.store.close()
