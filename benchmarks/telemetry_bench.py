"""Telemetry overhead with validity checks: CPU of sampling 8 GPUs at 1 Hz through the engine's
telemetry monitor, and ring-buffer memory per GPU-hour.

Usage::

    .venv/bin/python benchmarks/telemetry_bench.py [--seconds 20] [--gpus 8]

1. Starts real child processes holding the simulated GPUs (one duty-cycled busy loop, the rest
   sleepers; each with ``CUDA_VISIBLE_DEVICES=<GPU uuid>``, half also in the pid registry).
2. Baseline: a 1 Hz loop that does everything except collect (same timer, same store calls with
   no samples), for the same duration. Measured: this process's CPU time (``time.process_time``)
   over wall time = % of one core.
3. Simulated: :class:`SimulatedCollector` through :class:`~jupyter_sched.engine.telemetry.TelemetryMonitor`
   (validity rules incl. the latch, health evidence, exporter label check, ring buffer, rollups,
   and who used each GPU: half of the GPUs are time-sliced between two jobs, split per job from
   the processes each minute, the others held by one job).
4. dcgm-exporter: the real T4 capture (``shared/data/telemetry``) replicated for every GPU, with
   one GPU latched (100 %, 0 MiB) and one answering DCGM blank sentinels, parsed and fed through the
   same monitor — the path a cluster takes. The validity step alone is timed as well.
5. Memory: a 1-hour, 1 Hz store for the GPUs, filled; array bytes and tracemalloc bytes per GPU.

Targets (issue 18, after issue 5): overhead with validity checks ≤ 1 % of one core for 8 GPUs at
1 Hz; ≤ 1 MiB per GPU-hour at 1 Hz. Figures are ratios against the baseline of the same run: say
the machine's load when quoting them.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.model.samples import GpuSample, ProcessUsage
from jupyter_sched.telemetry import DcgmCollector, SampleStore, SimulatedCollector

CAPTURE = (Path(__file__).resolve().parents[1].parent / "shared" / "data" / "telemetry" / "dcgm-exporter" / "samples"
           / "t4-load__590.48.01.prom")
T4_UUID = "GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a"

BUSY = ("import time\nwhile True:\n    end = time.monotonic() + 0.05\n"
        "    while time.monotonic() < end: pass\n    time.sleep(0.45)\n")
SLEEP = "import time; time.sleep(3600)"


def run_at_1hz(seconds: float, tick: Callable[[], None]) -> tuple[float, float, float]:
    """Call ``tick`` once a second for ``seconds``; return (cpu % of one core, wall s, mean tick ms)."""
    cpu0, wall0 = time.process_time(), time.monotonic()
    ticks = 0
    tick_cpu = 0.0
    next_at = wall0
    while time.monotonic() - wall0 < seconds:
        t = time.process_time()
        tick()
        tick_cpu += time.process_time() - t
        ticks += 1
        next_at += 1.0
        time.sleep(max(0.0, next_at - time.monotonic()))
    wall = time.monotonic() - wall0
    return 100.0 * (time.process_time() - cpu0) / wall, wall, 1000.0 * tick_cpu / max(ticks, 1)


def memory_per_gpu_hour(gpus: int) -> tuple[float, float]:
    """(array MiB per GPU-hour, tracemalloc MiB per GPU-hour) for a full 1-hour, 1 Hz store."""
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    store = SampleStore(retention_s=3600, rate_hz=1.0)
    for s in range(3600):
        store.add([GpuSample(gpu_uuid=f"GPU-sim-bench-{g}", mig_instance=None, timestamp=t0 + timedelta(seconds=s),
                             utilization_pct=50.0, memory_used_mib=1000.0, memory_total_mib=81920.0,
                             processes=(ProcessUsage(pid=1000 + g, used_memory_mib=1000),), simulated=True)
                   for g in range(gpus)])
    after = tracemalloc.take_snapshot()
    traced = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    tracemalloc.stop()
    return store.nbytes() / gpus / 2**20, traced / gpus / 2**20


def dcgm_text(gpus: int) -> str:
    """The T4 capture as ``gpus`` GPUs: GPU 1 latched (100 %, 0 MiB), GPU 2 blank, the rest as captured."""
    if not CAPTURE.exists():
        return ""
    lines = [line for line in CAPTURE.read_text().splitlines() if line and not line.startswith("#")]
    out = []
    for g in range(gpus):
        for line in lines:
            line = line.replace(T4_UUID, f"GPU-bench-{g:04d}").replace('gpu="0"', f'gpu="{g}"')
            name = line.split("{", 1)[0]
            if g == 1 and name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"):
                line = line.rsplit(" ", 1)[0] + (" 100" if name == "DCGM_FI_DEV_GPU_UTIL" else " 0")
            if g == 2 and name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"):
                line = line.rsplit(" ", 1)[0] + " 9223372036854775792"
            out.append(line)
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="measurement length per phase, s (default 20)")
    parser.add_argument("--gpus", type=int, default=8, help="simulated GPUs (default 8)")
    args = parser.parse_args()

    inventory = SimulatedInventory(args.gpus, node="bench")
    gpus = [g.uuid for g in inventory.current().gpus()]
    children = []
    for i, uuid in enumerate(gpus):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=uuid)
        children.append(subprocess.Popen([sys.executable, "-c", BUSY if i == 0 else SLEEP], env=env,
                                         start_new_session=True))
    registry = {uuid: [children[i].pid] for i, uuid in enumerate(gpus) if i % 2 == 0}
    text = dcgm_text(args.gpus)
    try:
        time.sleep(1.0)  # let the children start
        store = SampleStore(retention_s=3600, rate_hz=1.0)
        base_cpu, _, base_tick = run_at_1hz(args.seconds, lambda: store.add([]))
        collector = SimulatedCollector(lambda: inventory.current().gpus(), pids=lambda: registry)
        monitor = TelemetryMonitor(collector, retention_s=3600, rollup_sink=lambda rows: None)
        monitor.set_allocations({uuid: f"job-{i}" for i, uuid in enumerate(gpus)})
        monitor.set_jobs({f"job-{i}": [children[i].pid] for i in range(len(gpus))},
                         {uuid: ({f"job-{i}": 0.5, f"job-{i}b": 0.5} if i < len(gpus) // 2 else {f"job-{i}": 1.0})
                          for i, uuid in enumerate(gpus)})
        last: list[GpuSample] = []

        def tick() -> None:
            last[:] = monitor.sample()

        cpu, wall, tick_ms = run_at_1hz(args.seconds, tick)
        dcgm_cpu = dcgm_tick = check_ms = float("nan")
        if text:
            dcgm = TelemetryMonitor(DcgmCollector(lambda: text), source="dcgm", retention_s=3600,
                                    rollup_sink=lambda rows: None)
            dcgm_cpu, _, dcgm_tick = run_at_1hz(args.seconds, dcgm.sample)
            samples = DcgmCollector(lambda: text).collect(datetime.now(timezone.utc))
            t = time.process_time()
            for _ in range(200):
                dcgm.validator.check(samples)
                dcgm.health.observe(samples)
            check_ms = 1000.0 * (time.process_time() - t) / 200
    finally:
        for child in children:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()

    arrays_mib, traced_mib = memory_per_gpu_hour(args.gpus)
    overhead = cpu - base_cpu
    busy = next(s for s in last if s.gpu_uuid == gpus[0])
    load = os.getloadavg()[0]
    print(f"telemetry_bench: {args.gpus} GPUs at 1 Hz, {wall:.1f} s per phase, os.cpu_count()={os.cpu_count()}, "
          f"load average {load:.1f} (figures are noisy under load; compare to the baseline)")
    print(f"  baseline loop                 : {base_cpu:6.3f} % of one core ({base_tick:.3f} ms CPU per tick)")
    print(f"  simulated collector + monitor : {cpu:6.3f} % of one core ({tick_ms:.3f} ms CPU per tick)")
    print(f"    overhead                    : {overhead:6.3f} % of one core  (target <= 1 %: "
          f"{'met' if overhead <= 1 else 'NOT met'}); ratio vs baseline "
          f"{cpu / base_cpu if base_cpu > 0 else float('inf'):.1f}x")
    if text:
        dcgm_overhead = dcgm_cpu - base_cpu
        print(f"  dcgm-exporter text + monitor  : {dcgm_cpu:6.3f} % of one core ({dcgm_tick:.3f} ms CPU per tick)")
        print(f"    overhead                    : {dcgm_overhead:6.3f} % of one core  (target <= 1 %: "
              f"{'met' if dcgm_overhead <= 1 else 'NOT met'})")
        print(f"    validity + health step alone: {check_ms:.3f} ms CPU per tick = {check_ms / 10:.4f} % of one core")
    else:
        print(f"  dcgm-exporter phase skipped: {CAPTURE} not found (shared data absent)")
    print(f"  last sample of the busy GPU: utilization {busy.utilization_pct} % (a 10 % duty-cycle CPU loop), "
          f"{busy.label}")
    print(f"  ring buffer, 1 h at 1 Hz : {arrays_mib:.3f} MiB per GPU-hour in arrays, {traced_mib:.3f} MiB traced "
          f"(target <= 1 MiB: {'met' if traced_mib <= 1 else 'NOT met'})")


if __name__ == "__main__":
    main()
