"""hubadmin22 H11, the part left in session 22: a restart lost the samples after the monitor's last drain
(only whole minutes were stored, drained about once a minute: up to two minutes), so an idle period that
began in them read as beginning after the restart — the reclaim (and its waiters' ETA) postponed by a
minute or two on every restart. Now the service's stop writes the minute under way too
(``TelemetryMonitor.flush``, from ``stop``), and the next start seeds it: a restart postpones nothing by
more than the sampling interval.

Real parts: SQLite store file, the engine, the NVML collector over the fake library, the monitor's
rollups persisted and read back by the next server (``seed_monitor``), the stop the service does
(``Services.stop``); a manual clock.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from jupyter_sched.engine import ManualClock
from jupyter_sched.model import parse_utc, to_iso
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.telemetry import SampleStore
from jupyter_sched.telemetry.seed import samples_from_rollups
from tests.runtime.builders import T0

from .test_s22_hubadmin22_h11_idle_restart import Server

INTERVAL_S = 10.0
"""The monitor's sampling interval in these tests (each ``Server.step``)."""


def _set_util(server: Server, percent: float) -> None:
    for device in server.nvml.devices:
        device.util_gpu = percent


def test_s23_acct_h11_an_idle_period_begun_after_the_last_drain_keeps_its_start_across_a_restart(
        tmp_path: Path) -> None:
    """Failed before: idle since T0+4m before the stop, T0+5m after it (the minute after the last drain,
    idle, was never stored; the next evidence was the first minute after the restart)."""
    first = Server(tmp_path, ManualClock(T0))
    ana = first.services.caller("ana", admin=False)
    lease = first.services.leases.request(ana, SubmitJobRequest(gpus=1, kernel_id="k-ana")).id
    _set_util(first, 80.0)
    for _ in range(19):  # busy until T0+3m10s
        first.step(INTERVAL_S)
    _set_util(first, 0.0)
    for _ in range(10):  # idle from T0+3m20s; the last drain (T0+4m10s) stored minutes up to T0+3m
        first.step(INTERVAL_S)
    before = first.idle_since()[lease]
    assert before == to_iso(T0 + timedelta(minutes=4)), f"the busy minute 3 ends the run: idle since minute 4 ({before})"
    stored = {r["minute"] for r in first.store.rollup_rows()}
    assert max(parse_utc(m, field="minute") for m in stored) < parse_utc(before, field="since"), \
        "the idle minute under way is not drained yet when the service stops"
    stopped_at = first.clock.now()
    asyncio.run(first.services.stop())  # what the server does at SIGTERM; it closes the store

    second = Server(tmp_path, ManualClock(stopped_at + timedelta(seconds=40)))  # down 40 s
    try:
        _set_util(second, 0.0)
        second.step(1.0)
        after = second.idle_since()[lease]
        assert after == before, f"idle since {before} before the restart, {after} after it"
        for _ in range(12):  # later drains never write the flushed minute again
            second.step(INTERVAL_S)
        minutes = [(r["gpu_uuid"], r["minute"]) for r in second.store.rollup_rows()]
        assert len(minutes) == len(set(minutes)), "a stored minute was written twice"
    finally:
        second.store.close()


def test_s23_acct_h11_the_open_minute_is_drained_once_with_its_samples_so_far() -> None:
    """``drain_rollups(open_minute=True)`` rolls the minute under way up to ``now`` and marks it drained:
    a later regular drain neither repeats it nor loses the minute after it."""
    store = SampleStore(retention_s=600, rate_hz=0.1)
    t0 = T0

    def sample(at_s: float, util: float) -> GpuSample:
        return GpuSample(gpu_uuid="GPU-a", mig_instance=None, timestamp=t0 + timedelta(seconds=at_s), utilization_pct=util,
                         memory_used_mib=0.0, memory_total_mib=80.0, process_count=0)

    store.add([sample(s, 90.0 if s < 60 else 0.0) for s in range(0, 100, 10)])
    rows = store.drain_rollups(t0 + timedelta(seconds=95), open_minute=True)
    assert [(r.minute - t0, r.samples) for r in rows] == [(timedelta(0), 6), (timedelta(minutes=1), 4)], rows
    store.add([sample(s, 0.0) for s in range(100, 200, 10)])
    later = store.drain_rollups(t0 + timedelta(seconds=185))
    assert [r.minute - t0 for r in later] == [timedelta(minutes=2)], later  # minute 1 not again
    seeded = samples_from_rollups([{"gpu_uuid": "GPU-a", "mig_instance": None, "minute": rows[1].minute,
                                    "valid_samples": rows[1].valid_samples, "activity_max": rows[1].activity_max}])
    assert seeded[("GPU-a", None)][0].idle_state(5.0) == "idle"  # the flushed part-minute is idle evidence
