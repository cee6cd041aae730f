"""Simulated GPUs with real signals: busy and idle child processes, and idle reclamation end to end.

Real subprocesses (a CPU-bound loop, a sleeper, a memory holder) stand in for GPU work; their
CPU time and RSS are what the simulated collector reports for the GPU they hold.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.model import Job, JobKind, JobSpec, JobState
from jupyter_sched.model.job import Allocation
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.reclaim import IdleInput, IdlePolicies, IdlePolicy, LadderState, advance_ladder, evaluate_idle
from jupyter_sched.scheduling.snapshot import IdleAction, Snapshot
from jupyter_sched.telemetry import SampleStore, SimulatedCollector

# The simulated collector finds a GPU's processes by CUDA_VISIBLE_DEVICES among ALL of this host's
# processes, and a simulated GPU's uuid follows from its node's name: a node named after this test
# process keeps another test run on the same host (its GPUs "sim-0"...) out of these GPUs.
NODE = f"sim-{os.getpid()}"
BUSY = "while True: pass"
SLEEP = "import time; time.sleep(120)"
HOLD = "b = bytearray(64 * 2**20); b[::4096] = b'x' * len(b[::4096]); import time; time.sleep(120)"
# Compute is counted in the process's own CPU time, not wall time: on a loaded machine (the browser
# tests run beside these) a wall-clock busy spell could get almost no CPU and read as idle. The
# 1.5 s pause leaves 2.5 s of margin below the 4 s of idleness that warns (window 6 s - warning 2 s).
LOOP_WITH_SLEEPS = ("import time\nwhile True:\n    start = time.process_time()\n"
                    "    while time.process_time() - start < 0.5: pass\n    time.sleep(1.5)\n")


@pytest.fixture
def spawn() -> Iterator[object]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(code: str, gpu: str | None = None, shell: bool = False) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        if gpu:
            env["CUDA_VISIBLE_DEVICES"] = gpu
        argv = ["/bin/sh", "-c", f"{sys.executable} -c '{code}'"] if shell else [sys.executable, "-c", code]
        proc = subprocess.Popen(argv, env=env, start_new_session=True)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        proc.wait()


def now() -> datetime:
    return datetime.now(timezone.utc)


def poll(collector: SimulatedCollector, until: object, timeout_s: float = 15.0) -> dict[str, GpuSample]:
    """Collect every 0.2 s until ``until(samples)`` holds (never a blind sleep)."""
    deadline = time.monotonic() + timeout_s
    while True:
        samples = {s.gpu_uuid: s for s in collector.collect(now())}
        if until(samples) or time.monotonic() > deadline:  # type: ignore[operator]
            return samples
        time.sleep(0.2)


def test_busy_idle_and_memory_signals_come_from_real_processes(spawn: object) -> None:
    inventory = SimulatedInventory(4, node=NODE)
    gpus = [g.uuid for g in inventory.current().gpus()]
    busy = spawn(BUSY, gpus[0])  # type: ignore[operator]
    spawn(SLEEP, gpus[1])  # type: ignore[operator]
    holder = spawn(HOLD)  # type: ignore[operator]
    wrapper = spawn(BUSY.replace("'", ""), shell=True)  # type: ignore[operator]
    collector = SimulatedCollector(lambda: inventory.current().gpus(), scan_interval_s=0.5,
                                   pids=lambda: {gpus[2]: [holder.pid], gpus[3]: [wrapper.pid]})

    def settled(samples: dict[str, GpuSample]) -> bool:
        return (samples[gpus[0]].utilization_pct or 0) > 30 and (samples[gpus[3]].utilization_pct or 0) > 30 \
            and (samples[gpus[2]].memory_used_mib or 0) >= 64 and samples[gpus[1]].utilization_pct == 0.0
    samples = poll(collector, settled)
    assert settled(samples), {u: (s.utilization_pct, s.memory_used_mib) for u, s in samples.items()}
    assert [p.pid for p in samples[gpus[0]].processes] == [busy.pid]
    assert len(samples[gpus[3]].processes) == 2  # the shell and its busy child
    assert all(s.simulated and s.memory_total_mib == 81920 for s in samples.values())


def test_another_servers_job_on_this_host_is_not_use_of_these_gpus() -> None:
    """Every server on a host names its simulated GPUs GPU-sim-<host>-<i>: another server's job, whose
    environment names one of them, is not use of this server's GPU (it restarted an idle lease's
    clock, new-user 5 finding 20); this server's own job counts through the engine's registry."""
    inventory = SimulatedInventory(2, node=NODE)
    gpus = [g.uuid for g in inventory.current().gpus()]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpus[0], "JUPYTER_SCHED_JOB_ID": "j-of-another-server"}
    other = subprocess.Popen([sys.executable, "-c", BUSY], env=env, start_new_session=True)
    ours = subprocess.Popen([sys.executable, "-c", BUSY], env={**env, "CUDA_VISIBLE_DEVICES": gpus[1],
                                                                 "JUPYTER_SCHED_JOB_ID": "j-ours"},
                            start_new_session=True)
    try:
        collector = SimulatedCollector(lambda: inventory.current().gpus(), scan_interval_s=0.2,
                                       pids=lambda: {gpus[1]: [ours.pid]})
        samples = poll(collector, lambda s: (s[gpus[1]].utilization_pct or 0) > 30)
        assert [p.pid for p in samples[gpus[1]].processes] == [ours.pid]
        assert (samples[gpus[0]].utilization_pct, samples[gpus[0]].processes) == (0.0, ())
    finally:
        for proc in (other, ours):
            os.killpg(proc.pid, 9)
            proc.wait()


def test_a_gpu_without_processes_is_idle_with_no_memory(spawn: object) -> None:
    inventory = SimulatedInventory(1, node=NODE)
    (sample,) = SimulatedCollector(lambda: inventory.current().gpus()).collect(now())
    assert (sample.utilization_pct, sample.memory_used_mib, sample.processes) == (0.0, 0.0, ())


def test_idle_lease_is_warned_and_reclaimed_while_a_compute_loop_with_sleeps_is_not(spawn: object) -> None:
    """End to end on real processes with a test-sized policy: window 6 s, warning/grace 2 s."""
    inventory = SimulatedInventory(2, node=NODE)
    lease_gpu, job_gpu = (g.uuid for g in inventory.current().gpus())
    kernel = spawn(SLEEP, lease_gpu)  # type: ignore[operator]
    spawn(LOOP_WITH_SLEEPS, job_gpu)  # type: ignore[operator]
    started = now()
    lease = Job(id="lease-1", spec=JobSpec(name="nb", user="carol", kind=JobKind.LEASE, kernel_id="k1"),
                state=JobState.RUNNING, started_at=started, allocation=Allocation(node=NODE, gpu_uuids=(lease_gpu,)))
    job = Job(id="train-1", spec=JobSpec(name="loop", user="dan"), state=JobState.RUNNING, started_at=started,
              allocation=Allocation(node=NODE, gpu_uuids=(job_gpu,)))
    policy = IdlePolicy(threshold_pct=5, window_s=6, warning_s=2, max_gap_s=2, busy_kernel_window_s=None)
    collector = SimulatedCollector(lambda: inventory.current().gpus(), pids=lambda: {lease_gpu: [kernel.pid]})
    store = SampleStore(retention_s=60, rate_hz=5)
    ladders = {"lease-1": LadderState(), "train-1": LadderState()}
    log: list[tuple[float, IdleAction]] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any(a.stage == "reclaim" for _, a in log):
        t = now()
        store.add(collector.collect(t))
        telemetry = {j.id: IdleInput(samples=store.window((j.allocation.gpu_uuids[0], None), t - timedelta(seconds=30)),  # type: ignore[union-attr]
                                     ladder=ladders[j.id], devices=((j.allocation.gpu_uuids[0], None),))  # type: ignore[union-attr]
                     for j in (lease, job)}
        snapshot = Snapshot(now=t, inventory=inventory.current(), jobs=(lease, job), telemetry=telemetry,
                            kernels={"k1": {"execution_state": "idle", "last_activity": started}})
        for action in evaluate_idle(snapshot, IdlePolicies(default=policy)):
            log.append(((t - started).total_seconds(), action))
            ladders[action.job_id] = advance_ladder(ladders[action.job_id], action, now=t)
        time.sleep(0.2)
    stages = [(a.job_id, a.stage) for _, a in log]
    assert stages == [("lease-1", "warn"), ("lease-1", "reclaim")], log
    (warn_t, _), (reclaim_t, reclaim) = log
    assert reclaim_t - warn_t >= 2 - 0.01
    assert reclaim.reason == "kernel idle and GPU < 5 % for 0.1 min" and reclaim.action == "release"
    # The evidence window is the last 6 s, all inside the idle period.
    assert reclaim.evidence["rule"] == "kernel_and_gpu" and reclaim.evidence["samples"]
    assert all(r["max_activity_pct"] < 5 for r in reclaim.evidence["samples"])
