"""The sample store: ring buffers with a fixed memory bound, and 1-minute rollups."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.model.samples import GpuSample, ProcessUsage
from jupyter_sched.telemetry import RingBuffer, SampleStore, rollup_minutes
from jupyter_sched.telemetry.ring import BYTES_PER_SAMPLE

T0 = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)


def sample(second: float, util: float | None, *, uuid: str = "GPU-a", mig: int | None = None,
           gr: float | None = None) -> GpuSample:
    return GpuSample(gpu_uuid=uuid, mig_instance=mig, timestamp=T0 + timedelta(seconds=second), utilization_pct=util,
                     gr_engine_active=gr, memory_used_mib=100.0 + second, memory_total_mib=81920.0, power_w=300.0,
                     temperature_c=50.0, processes=(ProcessUsage(pid=7, used_memory_mib=100),))


def test_memory_bound_is_fixed_and_under_one_mib_per_gpu_hour() -> None:
    store = SampleStore(retention_s=3600, rate_hz=1.0)
    for s in range(2 * 3600):
        store.add([sample(s, 50.0)])
    assert BYTES_PER_SAMPLE == 40  # timestamp + 8 float32 columns (validity rule and process count included)
    assert store.nbytes() == 3600 * 40 == store.history_bound_bytes(1)
    assert store.nbytes() / 2**20 < 1.0


def test_ring_keeps_the_newest_samples_in_time_order_after_wrapping() -> None:
    ring = RingBuffer(("GPU-a", None), capacity=5)
    for s in range(12):
        ring.append(sample(s, float(s)))
    assert len(ring) == 5
    assert [x.utilization_pct for x in ring.samples()] == [7.0, 8.0, 9.0, 10.0, 11.0]
    assert ring.latest is not None and ring.latest.processes[0].pid == 7


def test_window_and_latest_per_device() -> None:
    store = SampleStore(retention_s=600)
    store.add([sample(s, 10.0) for s in range(60)] + [sample(s, None, uuid="GPU-a", mig=3) for s in range(60)])
    assert sorted(store.devices(), key=str) == [("GPU-a", 3), ("GPU-a", None)]
    window = store.window(("GPU-a", None), T0 + timedelta(seconds=50))
    assert [round((w.timestamp - T0).total_seconds()) for w in window] == list(range(50, 60))
    assert store.window(("GPU-a", 3), T0)[0].utilization_pct is None
    assert store.latest()[("GPU-a", 3)].timestamp == T0 + timedelta(seconds=59)
    store.forget(("GPU-a", 3))
    assert store.devices() == [("GPU-a", None)]


def test_rollups_summarise_each_completed_minute_once() -> None:
    store = SampleStore(retention_s=3600)
    store.add([sample(s, float(s % 60), gr=0.25 if s >= 60 else None) for s in range(150)])
    first = store.drain_rollups(T0 + timedelta(seconds=150))
    assert [r.minute for r in first] == [T0, T0 + timedelta(minutes=1)]
    m0, m1 = first
    assert (m0.samples, m0.utilization_max) == (60, 59.0)
    assert m0.utilization_avg == pytest.approx(29.5)
    assert (m0.activity_max, m1.activity_avg) == (59.0, 25.0)
    assert (m1.memory_used_max_mib, m1.power_avg_w, m1.temperature_max_c) == (219.0, 300.0, 50.0)
    assert store.drain_rollups(T0 + timedelta(seconds=170)) == []
    (m2,) = store.drain_rollups(T0 + timedelta(seconds=180))
    assert m2.minute == T0 + timedelta(minutes=2) and m2.samples == 30


def test_rollup_of_unknown_utilization_stays_unknown() -> None:
    (row,) = rollup_minutes([sample(s, None) for s in range(10)])
    assert row.utilization_avg is None and row.activity_max is None and row.samples == 10


def test_minute_maxima_keep_the_busiest_moment_of_each_minute() -> None:
    store = SampleStore(retention_s=3600)
    store.add([sample(s, 90.0 if s == 75 else 1.0) for s in range(150)])
    rows = store.minute_maxima(("GPU-a", None), T0)
    assert [(r.timestamp, r.utilization_pct) for r in rows] == [
        (T0, 1.0), (T0 + timedelta(minutes=1), 90.0), (T0 + timedelta(minutes=2), 1.0)]
    assert rows[1].memory_used_mib == 219.0
    assert store.minute_maxima(("GPU-zzz", None), T0) == []


def test_wire_shapes_are_json_and_keep_unknown_as_null() -> None:
    import json

    from jupyter_sched.telemetry import rollup_to_dict, sample_to_dict

    body = sample_to_dict(replace(sample(0, None), note="no utilization signal for MIG device (profiling metrics unavailable)"))
    assert json.loads(json.dumps(body))["utilization_pct"] is None
    assert body["timestamp"] == "2026-05-01T10:00:00Z" and body["processes"][0]["pid"] == 7
    (row,) = rollup_minutes([sample(s, 3.0) for s in range(5)])
    assert json.loads(json.dumps(rollup_to_dict(row)))["minute"] == "2026-05-01T10:00:00Z"
