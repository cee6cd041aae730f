"""hubadmin22 H11: a service restart started every idle period again. The idle start came from the
monitor's in-memory samples, empty after a restart, so a lease idle since 05:56 read "idle since
06:03" after a restart at 06:03 (its reclaim, and its waiters' ETA, postponed by the restart; a
service restarted more often than the window never reclaimed). Only an already-warned period
survived (its ladder is in the audit). Now the start seeds the monitor from the minutes already
stored (``services.idle.seed_monitor``, what ``build_services`` runs), never writing them again.

Real parts: SQLite store, the engine, the local executor, the NVML collector over the fake library,
the monitor's rollups persisted to the store and read back by the next server; a manual clock.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.reclaim import IdlePolicies, IdlePolicy
from jupyter_sched.services import Services
from jupyter_sched.services.idle import seed_monitor
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.telemetry import NvmlCollector
from tests.hardware.fake_nvml import FakeDevice, FakeNvml
from tests.runtime.builders import T0

POLICY = IdlePolicies(default=IdlePolicy(window_s=600.0, warning_s=60.0, grace_s=0.0, max_gap_s=300.0))
"""Idle 10 min → reclaimed (warned 1 min before), as hubadmin22's; a gap over 5 min restarts a period."""


class Server:
    """One server start on the store at ``tmp_path``: its own clock, monitor and engine (a restart is a new one)."""

    def __init__(self, tmp_path: Path, clock: ManualClock) -> None:
        self.clock = clock
        self.nvml = FakeNvml([FakeDevice(uuid=f"GPU-sim-vm-{i}", name="NVIDIA H200", bus_id=f"00000000:1{i}:00.0",
                                         total_mib=143771.0, used_mib=0.0, util_gpu=0.0) for i in range(2)])
        self.monitor = TelemetryMonitor(NvmlCollector(self.nvml, node="vm"), source="nvml", clock=clock,
                                        retention_s=POLICY.default.window_s + 180.0)
        self.store = Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now)
        self.monitor.rollup_sink = lambda rows: self.store.add_rollups(rows, node="vm")
        self.seeded = seed_monitor(self.monitor, self.store, clock.now())
        self.services = Services(store=self.store, inventory=SimulatedInventory(2, node="vm"),
                                 executor=LocalExecutor(tmp_path / "jobs"), clock=clock, monitor=self.monitor,
                                 idle_policies=POLICY)

    def step(self, seconds: float = 10.0) -> None:
        """Time passes, the monitor samples (its thread's work), the engine ticks."""
        self.clock.advance(seconds)
        self.monitor.sample()
        self.services.engine.tick()

    def idle_since(self) -> dict[str, str]:
        boss = self.services.caller("boss", admin=True)
        return {c.job_id: c.idle_since for c in self.services.telemetry.idle(boss).root}


@pytest.fixture
def first(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path, ManualClock(T0))
    yield server
    server.store.close()


def test_s22_hubadmin22_h11_a_restart_mid_window_keeps_the_idle_start_of_a_lease_and_a_job(
        tmp_path: Path, first: Server) -> None:
    """Failed before: after the restart both read idle since the restart (the lease's reclaim at
    restart + 10 min); now both keep the first server's start, and no stored minute is written twice."""
    ana = first.services.caller("ana", admin=False)
    lease = first.services.leases.request(ana, SubmitJobRequest(gpus=1, kernel_id="k-ana")).id
    job = first.services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["sleep", "600"])).id
    for _ in range(30):  # 5 minutes idle, half the window
        first.step()
    before = first.idle_since()
    assert set(before) == {lease, job}, before
    stored = first.store.rollup_rows()
    assert stored, "the first server persisted its minutes"
    first.store.close()

    second = Server(tmp_path, ManualClock(first.clock.now() + timedelta(seconds=40)))  # down 40 s
    try:
        assert second.seeded == len(stored)
        second.step(1.0)
        after = second.idle_since()
        assert after == before, f"before the restart {before}, after {after}"
        for _ in range(12):  # two more minutes: the stored minutes are not written again
            second.step()
        minutes = [(r["gpu_uuid"], r["minute"]) for r in second.store.rollup_rows()]
        assert len(minutes) == len(set(minutes)), "a stored minute was written twice"
    finally:  # the job's process outlived the first server, as on a real restart: end it now
        owner = second.services.caller("ana", admin=False)
        second.services.jobs.cancel(owner, job)
        for _ in range(30):
            second.step()
            if second.services.jobs.get(owner, job).state not in ("running", "stopping"):
                break
        second.store.close()


def test_s22_hubadmin22_h11_stored_minutes_read_back_as_the_live_minutes_did() -> None:
    """A stored minute comes back as ``minute_maxima`` made it: valid → its max activity; a confirmed
    latch → idle evidence; none valid → unknown (pauses the clock); an unreadable minute → left out."""
    from jupyter_sched.model.samples import Validity
    from jupyter_sched.telemetry.seed import samples_from_rollups

    base = {"gpu_uuid": "GPU-a", "mig_instance": None, "memory_used_max_mib": 0.0, "memory_total_mib": 80.0,
            "processes_max": 0}
    got = samples_from_rollups([
        {**base, "minute": "2026-12-05T06:02:00Z", "valid_samples": 0, "rules": "dcgm_blank"},
        {**base, "minute": "2026-12-05T06:00:00Z", "valid_samples": 60, "rules": "", "activity_max": 3.0},
        {**base, "minute": "2026-12-05T06:01:00Z", "valid_samples": 0, "rules": "util_latch"},
        {**base, "minute": "yesterday", "valid_samples": 60, "activity_max": 90.0},
    ])
    samples = got[("GPU-a", None)]
    assert [(s.timestamp.minute, s.validity, s.validity_rule, s.utilization_pct) for s in samples] == [
        (0, Validity.VALID, "", 3.0), (1, Validity.SUSPECT, "util_latch", None), (2, Validity.BLANK, "dcgm_blank", None)]
    assert [s.idle_state(5.0) for s in samples] == ["idle", "idle", "unknown"]
    assert samples[0].process_count == 0
