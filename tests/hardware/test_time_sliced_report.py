"""Issue 18 item 2 through the store: who used a shared GPU, and who used an unallocated one.

The telemetry monitor (a scripted collector speaking ``GpuSample``, since no GPU is here) sees a
time-sliced GPU ``GPU-s`` held by jobs a and b (0.5 GPU each) and a GPU ``GPU-u`` nobody holds.
The processes are real: job a's root is a shell whose *child* holds the GPU (found through the
process tree), job b's root holds it itself, and a third process (nobody's job) uses GPU-u. The
rollups go through the real store (SQLite, migration 7) into ``usage_report_for`` (what
``GET usage/report`` serves) and ``unattributed_for`` (``GET usage/waste``'s ``unattributed``).

Known answer, minute M (three valid samples, 20 s apart):

=====  ===========  =========================  ==========================
at     GPU-s util   processes (SM %)           split a / b
=====  ===========  =========================  ==========================
+0 s   80 %         a's child 60, b 20         0.75 / 0.25 (SM)
+20 s  40 %         none reported              0.5 / 0.5 (allocation)
+40 s  80 %         a's child 60, b 20         0.75 / 0.25
=====  ===========  =========================  ==========================

a's part = (80*0.75 + 40*0.5 + 80*0.75) / (80 + 40 + 80) = 0.7, b's 0.3. The minute's mean is
66.67 %, so over the minute a used 0.7 * 0.6667 * 60 = 28 GPU-s and b 12 (by share alone each
would get 20): efficiency a 28/30, b 12/30.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest

from jupyter_sched.accounting import UsageInterval
from jupyter_sched.accounting.store_report import unattributed_for, usage_report_for
from jupyter_sched.accounting.waste import waste_report
from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.model import to_iso
from jupyter_sched.model.samples import GpuSample, ProcessUsage
from jupyter_sched.store import Store, sqlite_url

START = datetime.now(timezone.utc).replace(second=0, microsecond=0) + timedelta(minutes=2)
"""Minute M, a little ahead of the real clock so the processes' ages (real start times) are positive."""


@pytest.fixture
def processes() -> Iterator[dict[str, int]]:
    """Real processes: a's root (a shell) and its child, b's root, and a stranger's."""
    started = [subprocess.Popen(["sh", "-c", "sleep 120 & wait"]), subprocess.Popen(["sleep", "120"]),
               subprocess.Popen(["sleep", "120"])]
    try:
        a_root = started[0].pid
        deadline = time.monotonic() + 10
        while not psutil.Process(a_root).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        (a_child,) = psutil.Process(a_root).children()
        yield {"a_root": a_root, "a_child": a_child.pid, "b": started[1].pid, "stranger": started[2].pid}
    finally:
        for p in started:
            for child in psutil.Process(p.pid).children(recursive=True) if p.poll() is None else ():
                child.kill()
            p.kill()
            p.wait()


class Scripted:
    """A collector that returns, at each time, the samples the test prepared for it."""

    def __init__(self, script: dict[datetime, list[GpuSample]]) -> None:
        self.script = script

    def collect(self, now: datetime) -> list[GpuSample]:
        return self.script.get(now, [])


def sample(gpu: str, at: datetime, util: float, *procs: ProcessUsage) -> GpuSample:
    return GpuSample(gpu_uuid=gpu, mig_instance=None, timestamp=at, utilization_pct=util, memory_used_mib=4000.0,
                     memory_total_mib=81920.0, processes=procs, process_count=len(procs), node="n1")


def monitor_rows(pids: dict[str, int]) -> list[dict[str, Any]]:
    """The rollup rows the monitor writes for minute M."""
    at = [START + timedelta(seconds=s) for s in (0, 20, 40, 60)]
    sm = (ProcessUsage(pid=pids["a_child"], used_memory_mib=2000, sm_util_pct=60.0),
          ProcessUsage(pid=pids["b"], used_memory_mib=2000, sm_util_pct=20.0))
    stranger = ProcessUsage(pid=pids["stranger"], used_memory_mib=3000)
    script = {at[0]: [sample("GPU-s", at[0], 80, *sm), sample("GPU-u", at[0], 50, stranger)],
              at[1]: [sample("GPU-s", at[1], 40), sample("GPU-u", at[1], 50, stranger)],
              at[2]: [sample("GPU-s", at[2], 80, *sm), sample("GPU-u", at[2], 50, stranger)],
              at[3]: [sample("GPU-s", at[3], 80, *sm)]}
    clock = ManualClock(at[0])
    rows: list[dict[str, Any]] = []
    monitor = TelemetryMonitor(Scripted(script), clock=clock, rollup_sink=rows.extend)
    monitor.set_jobs({"a": [pids["a_root"]], "b": [pids["b"]]}, {"GPU-s": {"a": 0.5, "b": 0.5}})
    for when in at:
        clock.set(when)
        monitor.sample()
    return rows


def test_a_time_sliced_gpu_is_split_per_job_by_process_data_in_the_usage_report(
        processes: dict[str, int], tmp_path: Path) -> None:
    rows = monitor_rows(processes)
    by_gpu = {r["gpu_uuid"]: r for r in rows}
    assert set(by_gpu) == {"GPU-s", "GPU-u"} and {r["minute"] for r in rows} == {to_iso(START)}
    assert json.loads(by_gpu["GPU-s"]["job_shares"]) == {"a": 0.7, "b": 0.3}
    assert by_gpu["GPU-s"]["processes"] is None and by_gpu["GPU-u"]["job_shares"] is None

    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    try:
        store.add_rollups(rows, node="n1")
        with store.transaction(now=START) as tx:  # both held GPU-s for the minute (as the engine writes it: both
            for job, user in (("a", "ana"), ("b", "ben")):  # open, then both closed — each charged its half, red40 R1)
                tx.open_usage(job_id=job, attempt=1, user=user, team="ml", kind="training",
                              gpus=[("GPU-s", "A100", 0.5)], started_at=START)
            for job in ("a", "b"):
                tx.close_usage(job, START + timedelta(minutes=1))
        service = SimpleNamespace(store=store, clock=ManualClock(START + timedelta(minutes=5)))
        report = {r["job_id"]: r for r in usage_report_for(service, user=None, by=("job_id",))}
        assert (report["a"]["utilized_gpu_seconds"], report["b"]["utilized_gpu_seconds"]) == (28.0, 12.0)
        assert (report["a"]["efficiency"], report["b"]["efficiency"]) == (round(28 / 30, 6), 0.4)
        assert report["a"]["allocated_gpu_seconds"] == report["b"]["allocated_gpu_seconds"] == 30.0

        (unattributed,) = unattributed_for(store, now=START + timedelta(minutes=5), max_gap_s=60)
        assert unattributed.gpu_uuid == "GPU-u"
        ((pid, user, age),) = unattributed.processes
        stranger = psutil.Process(processes["stranger"])
        assert (pid, user) == (processes["stranger"], stranger.username())
        started = datetime.fromtimestamp(stranger.create_time(), tz=timezone.utc)
        assert age == round((START + timedelta(seconds=40) - started).total_seconds(), 1)
        assert unattributed.to_dict()["processes"] == [{"pid": pid, "user": user, "age_s": age}]
    finally:
        store.close()


def test_without_per_process_data_a_shared_minute_keeps_the_allocation_split(processes: dict[str, int]) -> None:
    clock = ManualClock(START)
    at = [START + timedelta(seconds=s) for s in (0, 30, 60)]
    script = {t: [sample("GPU-s", t, 60)] for t in at}
    rows: list[dict[str, Any]] = []
    monitor = TelemetryMonitor(Scripted(script), clock=clock, rollup_sink=rows.extend)
    monitor.set_jobs({"a": [processes["a_root"]], "b": [processes["b"]]}, {"GPU-s": {"a": 0.5, "b": 0.5}})
    for when in at:
        clock.set(when)
        monitor.sample()
    (row,) = rows
    assert row["job_shares"] is None and row["utilization_avg"] == 60.0


def test_the_waste_report_judges_each_job_on_a_shared_gpu_by_its_own_processes() -> None:
    """Ten minutes at 80 % on GPU-s, all of it a's processes (b's did nothing): b's half of the GPU
    is 10 minutes idle (0.5 x 10/60 = 0.0833 GPU-hours), a's none. Without per-process data the
    GPU was busy, so neither job would be idle."""
    minutes = [{"gpu_uuid": "GPU-s", "mig_instance": None, "minute": to_iso(START + timedelta(minutes=m)),
                "samples": 3, "valid_samples": 3, "activity_max": 80.0, "utilization_avg": 80.0,
                "job_shares": json.dumps({"a": 1.0, "b": 0.0})} for m in range(10)]
    held = [UsageInterval(job, 1, user, "ml", "training", "GPU-s", "A100", 0.5, START, START + timedelta(minutes=10))
            for job, user in (("a", "ana"), ("b", "ben"))]
    report = waste_report(held, minutes, now=START + timedelta(minutes=10), max_gap_s=60)
    idle = {row.key: round(row.idle_gpu_hours, 4) for row in report.jobs}
    assert idle == {"a": 0.0, "b": round(0.5 * 10 / 60, 4)}
    plain = [{k: v for k, v in row.items() if k != "job_shares"} for row in minutes]
    assert {r.key: r.idle_gpu_hours for r in waste_report(held, plain, now=START + timedelta(minutes=10),
                                                          max_gap_s=60).jobs} == {"a": 0.0, "b": 0.0}
