"""Telemetry history: the monitor drains every completed minute into the store as rollup rows."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import psutil

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.telemetry import SimulatedCollector

from .conftest import sleeper


def test_completed_minutes_are_persisted_as_one_rollup_row_per_gpu(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    inventory = SimulatedInventory(2, node=f"itest-{uuid.uuid4().hex[:8]}", memory_mib=1024)
    holder = sleeper(tmp_path)
    # The samples below follow each other within milliseconds (a manual clock): wait until the
    # sleeper's interpreter has loaded (a process still in exec has under 1 MiB resident, read as 0)
    process, deadline = psutil.Process(holder.pid), time.monotonic() + 30
    while process.memory_info().rss < 4 * 2**20 and time.monotonic() < deadline:
        time.sleep(0.05)
    first = next(inventory.current().gpus()).uuid
    collector = SimulatedCollector(lambda: inventory.current().gpus(), pids=lambda: {first: [holder.pid]},
                                   scan_env=False)
    clock = ManualClock(datetime(2026, 11, 29, 12, 0, 10, tzinfo=timezone.utc))
    monitor = TelemetryMonitor(collector, clock=clock, interval_s=1.0, retention_s=600,
                               rollup_sink=lambda rows: store.add_rollups(rows, node=inventory.node))
    for step in (0, 20, 20, 20):  # 12:00:10, :30, :50, 12:01:10 (the first minute is complete)
        clock.advance(step)
        monitor.sample()

    rows = store.rollup_rows()
    assert [(r["gpu_uuid"], r["minute"], r["samples"]) for r in rows] == [
        (gpu.uuid, "2026-11-29T12:00:00.000000Z", 3) for gpu in inventory.current().gpus()]
    held, free = rows
    assert held["memory_used_max_mib"] > 0 and free["memory_used_max_mib"] == 0  # the sleeper's resident memory
    assert held["node"] == inventory.node and held["memory_total_mib"] == 1024
    clock.advance(30)
    monitor.sample()
    assert len(store.rollup_rows()) == 2  # the current minute is not complete: nothing new
    store.close()


def test_a_version_3_store_gains_the_validity_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    import sqlalchemy as sa

    from jupyter_sched.store import migrations, schema

    url = sqlite_url(tmp_path / "old.sqlite")
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # a store written by the code before version 4
        migrations._version_table.create(conn)
        for step in migrations.MIGRATIONS[:3]:
            step.upgrade(conn)
            conn.execute(migrations._version_table.insert().values(
                version=step.version, description=step.description, applied_at="2026-11-29T00:00:00.000000Z"))
        conn.execute(sa.text("INSERT INTO gpu_rollups (node, gpu_uuid, minute, samples, utilization_avg) "
                             "VALUES ('n1', 'GPU-old', '2026-11-29T12:00:00.000000Z', 60, 42.0)"))
    engine.dispose()
    store = Store(url)
    assert {c.name for c in schema.gpu_rollups.columns} >= {"valid_samples", "rules", "processes_max"}
    store.add_rollups([{"gpu_uuid": "GPU-new", "minute": "2026-11-29T12:01:00Z", "samples": 60, "valid_samples": 57,
                        "blank_samples": 3, "suspect_samples": 0, "rules": "dcgm_blank", "processes_max": 1,
                        "utilization_avg": 55.0}])
    old, new = store.rollup_rows()
    assert (old["gpu_uuid"], old["utilization_avg"], old["valid_samples"], old["rules"]) == ("GPU-old", 42.0, None, None)
    assert (new["valid_samples"], new["blank_samples"], new["rules"], new["processes_max"]) == (57, 3, "dcgm_blank", 1)
    store.close()


def test_the_waste_report_reads_the_store_and_ranks_idle_allocations_first(tmp_path: Path) -> None:
    from datetime import timedelta

    from jupyter_sched.accounting.store_report import unattributed_for, waste_report_for

    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    t0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
    with store.transaction() as tx:
        tx.open_usage(job_id="j-301", attempt=1, user="dana", team="vision", kind="training",
                      gpus=[("GPU-1111", "H100", 1.0), ("GPU-2222", "H100", 1.0)], started_at=t0)
        tx.open_usage(job_id="j-302", attempt=1, user="eli", team="nlp", kind="training",
                      gpus=[("GPU-3333", "H100", 1.0)], started_at=t0)
    rows = [{"gpu_uuid": gpu, "minute": t0 + timedelta(minutes=m), "samples": 1, "valid_samples": 1,
             "activity_max": util, "utilization_avg": util, "rules": ""}
            for m in range(0, 180, 5) for gpu, util in (("GPU-1111", 0.0), ("GPU-2222", 0.0), ("GPU-3333", 85.0))]
    store.add_rollups(rows)
    report = waste_report_for(store, now=t0 + timedelta(hours=3), max_gap_s=600)
    assert [(r.key, round(r.idle_gpu_hours, 3)) for r in report.jobs] == [("j-301", 6.0), ("j-302", 0.0)]
    assert report.users[0].key == "dana"
    # GPU-4444 was busy for the last hour with nobody allocated it (case 021): unattributed, with its node
    store.add_rollups([{"gpu_uuid": "GPU-4444", "minute": t0 + timedelta(minutes=m), "samples": 1, "valid_samples": 1,
                        "activity_max": 70.0, "utilization_avg": 70.0, "rules": "", "processes_max": 2}
                       for m in range(120, 180)], node="n4")
    (nobody,) = unattributed_for(store, now=t0 + timedelta(hours=3), since=t0)
    assert (nobody.gpu_uuid, nobody.node, nobody.active_gpu_hours, nobody.processes_max) == ("GPU-4444", "n4", 1.0, 2)
    assert unattributed_for(store, now=t0 + timedelta(hours=3), since=t0, until=t0 + timedelta(hours=2)) == ()
    store.close()
