"""A job's utilization means the same live, after roll-up and in the usage report (new user 14, N26).

The finding: a busy job that held its GPU for the last 11 s of a minute showed 38 % for that
minute live and 6.3 % once the minute was rolled up (the stored minute averaged every sample of the
GPU, most of them taken before the job started, at 0 %); the report's efficiency was 6.3 %, a fifth
of every live reading; the report did not say its telemetry was not rolled up yet; and REST values
carried float32 noise (38.01000061035156).

Everything is real here but the clock: a ``SchedulerService`` with the local executor, SQLite, and
the simulated collector's ``TelemetryMonitor`` (utilization = the job process's real CPU use; no
GPU needed), on a manual clock so the minute boundaries are ours. The GPU idles for 45 s of minute
12:00, then a busy job holds it from 12:00:48; the report covers its first 24 s (to 12:01:12).
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import GetTelemetryHistoryRequest, GetUsageReportRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.telemetry import SimulatedCollector

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def history(svc: SchedulerService, job: str) -> dict[str, Any]:
    """``GET telemetry/history?job=`` as ana (one-minute steps)."""
    answer = svc.services.telemetry.history(svc.services.caller("ana", admin=False), GetTelemetryHistoryRequest(job=job))
    return {p["t"][:16]: p for p in answer.to_wire()["points"]}


def report(svc: SchedulerService, until: str | None = None) -> dict[str, Any]:
    """``GET usage/report?by=job_id`` as ana: her one row."""
    request = GetUsageReportRequest(by="job_id", until=until)
    (row,) = svc.services.accounting.report(svc.services.caller("ana", admin=False), request).to_wire()
    return dict(row)


def wait_state(svc: SchedulerService, job: str, want: set[str]) -> None:
    deadline = time.monotonic() + 60
    while svc.get_job(job, user="ana")["state"] not in want:
        assert time.monotonic() < deadline, f"the job never reached {want}"
        svc.tick()
        time.sleep(0.03)


def test_n26_a_busy_jobs_minute_is_the_same_live_after_rollup_and_in_the_reports_efficiency(tmp_path: Path) -> None:
    clock = ManualClock(T0 + timedelta(seconds=5))
    store = Store(sqlite_url(tmp_path / "s.sqlite"))
    inventory = SimulatedInventory(1, node="n1")
    monitors: list[TelemetryMonitor] = []
    collector = SimulatedCollector(lambda: inventory.current().gpus(), pids=lambda: monitors[0].holders(),
                                   scan_env=False)
    monitor = TelemetryMonitor(collector, clock=clock, interval_s=5.0, retention_s=600,
                               rollup_sink=lambda rows: store.add_rollups(rows, node="n1"))
    monitors.append(monitor)
    svc = SchedulerService(store=store, inventory=inventory, executor=LocalExecutor(tmp_path / "jobs"), clock=clock,
                           monitor=monitor, cycle_interval_s=0.0, stop_grace_s=5.0)
    gate = tmp_path / "gate"
    try:
        for i in range(9):  # 12:00:05 .. 12:00:45: nobody holds the GPU (0 %)
            clock.advance(5 if i else 0)
            monitor.sample()
        clock.advance(3)  # 12:00:48: a job that keeps a CPU busy
        job = svc.submit({"gpus": 1, "command": [sys.executable, "-c", "import os\n"
                                                 f"while not os.path.exists({str(gate)!r}):\n    pass\n"]},
                         user="ana")["id"]
        wait_state(svc, job, {"running"})
        for _ in range(3):
            svc.tick()  # the monitor learns who holds the GPU
        for step in (2, 5, 5):  # 12:00:50, :55, 12:01:00 — each a real 0.4 s of the job's CPU
            time.sleep(0.4)
            clock.advance(step)
            monitor.sample()
        live = history(svc, job)["2026-11-29T12:00"]
        assert live["validity"] == "valid" and live["utilization_pct"] >= 1.0, live
        assert live["utilization_pct"] == round(live["utilization_pct"], 2)  # no float32 noise
        before = report(svc)
        assert before["telemetry_pending"] is True, before  # minute 12:00 is not in the store yet

        time.sleep(0.4)
        clock.advance(5)  # 12:01:05: minute 12:00 is rolled up into the store
        monitor.sample()
        assert [r["minute"][:16] for r in store.rollup_rows()] == ["2026-11-29T12:00"]
        assert history(svc, job)["2026-11-29T12:00"]["utilization_pct"] == live["utilization_pct"], \
            "the job's minute changed when it was rolled up"

        for _ in range(14):  # to 12:02:15: minute 12:01 is rolled up too
            time.sleep(0.1)
            clock.advance(5)
            monitor.sample()
        points = history(svc, job)
        # the report of the job's first 24 s (12:00:48 .. 12:01:12): both minutes are stored
        got = report(svc, until=(T0 + timedelta(seconds=72)).isoformat())
    finally:
        gate.touch()
        wait_state(svc, job, {"succeeded", "failed"})
        store.close()
    first, second = points["2026-11-29T12:00"], points["2026-11-29T12:01"]
    assert first["utilization_pct"] == live["utilization_pct"]
    assert second["validity"] == "valid", second
    # The report reads the same samples the history shows: every second the job held the GPU was
    # sampled, so coverage is 1, and its efficiency is the time-weighted mean of its two minutes.
    assert got["allocated_gpu_seconds"] == 24.0, got
    want = (12 * first["utilization_pct"] + 12 * second["utilization_pct"]) / 24 / 100
    assert got["telemetry_coverage"] == 1.0, got
    assert abs(got["efficiency"] - want) < 1e-4, (got, want, points)
    assert got["telemetry_pending"] is False, got


def test_a_version_10_store_gains_the_job_minutes_column_and_keeps_its_rows(tmp_path: Path) -> None:
    import sqlalchemy as sa

    url = sqlite_url(tmp_path / "s.sqlite")
    store = Store(url)
    store.add_rollups([{"gpu_uuid": "GPU-old", "minute": "2026-11-29T12:00:00Z", "samples": 60,
                        "utilization_avg": 42.0}])
    with store.engine.begin() as conn:  # as a store written by the previous release
        conn.execute(sa.text("ALTER TABLE gpu_rollups DROP COLUMN job_minutes"))
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 11"))
    store.close()
    reopened = Store(url)
    try:
        reopened.add_rollups([{"gpu_uuid": "GPU-new", "minute": "2026-11-29T12:01:00Z", "samples": 60,
                               "utilization_avg": 40.0, "job_minutes": '{"j-1": {"samples": 11}}'}])
        old, new = reopened.rollup_rows()
    finally:
        reopened.close()
    assert (old["utilization_avg"], old["job_minutes"]) == (42.0, None)  # the GPU's minute stands for its holders
    assert new["job_minutes"] == '{"j-1": {"samples": 11}}'


def minute_row(gpu: str, minute: datetime, percent: float, *, samples: int = 60,
               jobs: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A stored GPU-minute; ``jobs`` its holders' own minutes (``job_minutes``)."""
    import json

    return {"gpu_uuid": gpu, "mig_instance": None, "minute": minute.isoformat(), "samples": samples,
            "valid_samples": samples, "utilization_avg": percent, "activity_max": percent,
            "job_minutes": None if jobs is None else json.dumps(jobs)}


def own(samples: int, percent: float | None, *, valid: int | None = None) -> dict[str, Any]:
    return {"samples": samples, "valid_samples": samples if valid is None else valid, "utilization_avg": percent,
            "activity_max": percent, "memory_used_max_mib": 100.0, "rules": ""}


def test_the_report_integrates_each_jobs_own_minute_and_covers_only_its_valid_share() -> None:
    """Job j held GPU g from 12:00:45 to 12:01:30: 15 s of minute 12:00 at 40 % (the GPU's minute
    says 10 %: it idled before), 30 s of minute 12:01 at 80 % with half its samples blank there."""
    from jupyter_sched.accounting import samples_from_rollups, usage_report
    from jupyter_sched.accounting.usage import UsageInterval

    rows = [minute_row("g", T0, 10.0, jobs={"j": own(15, 40.0)}),
            minute_row("g", T0, 10.0, samples=61),  # the same minute written by a server without holders
            minute_row("g", T0 + timedelta(minutes=1), 50.0, jobs={"j": own(30, 80.0, valid=15)})]
    iv = UsageInterval(job_id="j", attempt=1, user="ana", team="ml", kind="training", gpu_uuid="g",
                       gpu_model="A100", share=1.0, started_at=T0 + timedelta(seconds=45),
                       ended_at=T0 + timedelta(seconds=90))
    (row,) = usage_report([iv], samples_from_rollups(rows), now=T0 + timedelta(hours=1), by=("job_id",),
                          max_sample_gap_s=60, telemetry_until=T0 + timedelta(minutes=2))
    covered = 15 + 30 * 0.5
    assert row["allocated_gpu_seconds"] == 45.0  # accounting totals are the allocation's, unchanged
    assert row["utilized_gpu_seconds"] == round(15 * 0.40 + 15 * 0.80, 3)
    assert row["telemetry_coverage"] == round(covered / 45, 6)
    assert row["efficiency"] == round((15 * 0.40 + 15 * 0.80) / covered, 6)
    assert row["telemetry_pending"] is False


def test_a_minute_that_knows_its_holders_does_not_count_a_job_that_held_no_sample_of_it() -> None:
    from jupyter_sched.accounting import samples_from_rollups, usage_report
    from jupyter_sched.accounting.usage import UsageInterval

    rows = [minute_row("g", T0, 90.0, jobs={"other": own(60, 90.0)})]
    iv = UsageInterval(job_id="j", attempt=1, user="ana", team="ml", kind="training", gpu_uuid="g",
                       gpu_model="A100", share=1.0, started_at=T0 + timedelta(seconds=59), ended_at=T0 + timedelta(seconds=60))
    (row,) = usage_report([iv], samples_from_rollups(rows), now=T0 + timedelta(hours=1), by=("job_id",),
                          max_sample_gap_s=60, telemetry_until=T0)
    assert (row["utilized_gpu_seconds"], row["telemetry_coverage"], row["efficiency"]) == (None, 0.0, None)
    assert row["telemetry_pending"] is True  # its second is after the last minute rolled up


def test_the_waste_report_judges_a_job_by_its_own_samples_of_a_minute() -> None:
    """A job idle (1 %) during the 20 s it held a GPU that was busy (95 %) for its previous holder."""
    from jupyter_sched.accounting.usage import UsageInterval
    from jupyter_sched.accounting.waste import waste_report

    rows = [minute_row("g", T0, 95.0, jobs={"before": own(40, 95.0), "j": own(20, 1.0)})]
    iv = UsageInterval(job_id="j", attempt=1, user="ana", team="ml", kind="training", gpu_uuid="g",
                       gpu_model="A100", share=1.0, started_at=T0 + timedelta(seconds=40),
                       ended_at=T0 + timedelta(seconds=60))
    (job,) = waste_report([iv], rows, now=T0 + timedelta(hours=1), threshold_pct=5.0, max_gap_s=60).jobs
    assert (job.key, round(job.idle_gpu_hours * 3600, 6), job.unknown_gpu_hours) == ("j", 20.0, 0.0)


def test_a_jobs_history_draws_its_own_minutes_and_rounds_to_a_hundredth() -> None:
    from jupyter_sched.telemetry.report import history_answer

    rows = [minute_row("g", T0, 10.0, jobs={"j": own(15, 40.123456)}),
            minute_row("g", T0 + timedelta(minutes=1), 10.0, jobs={"other": own(60, 10.0)})]
    body = history_answer(rows, [], devices=[("g", None)], since=T0, until=T0 + timedelta(minutes=2), job_id="j")
    assert [(p["utilization_pct"], p["validity"]) for p in body["points"]] == [(40.12, "valid"), (None, "missing")]
    gpu = history_answer(rows, [], devices=[("g", None)], since=T0, until=T0 + timedelta(minutes=2))
    assert [p["utilization_pct"] for p in gpu["points"]] == [10.0, 10.0]  # the GPU's own view is unchanged
