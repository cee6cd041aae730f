"""Telemetry overhead: CPU of sampling 8 simulated GPUs at 1 Hz, and ring-buffer memory per GPU-hour.

Usage::

    .venv/bin/python benchmarks/telemetry_bench.py [--seconds 20] [--gpus 8]

1. Starts real child processes holding the simulated GPUs (one duty-cycled busy loop, the rest
   sleepers; each with ``CUDA_VISIBLE_DEVICES=<GPU uuid>``, half also in the pid registry).
2. Baseline: a 1 Hz loop that does everything except collect (same timer, same store calls with
   no samples), for the same duration. Measured: this process's CPU time (``time.process_time``)
   over wall time = % of one core.
3. Collector: :class:`SimulatedCollector` + :class:`SampleStore` at 1 Hz.
4. Memory: a 1-hour, 1 Hz store for the GPUs, filled; array bytes and tracemalloc bytes per GPU.

Targets (issue 5): collector overhead ≤ 1 % of one core; ≤ 1 MiB per GPU-hour at 1 Hz.
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

from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.model.samples import GpuSample, ProcessUsage
from jupyter_sched.telemetry import SampleStore, SimulatedCollector

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
    try:
        time.sleep(1.0)  # let the children start
        store = SampleStore(retention_s=3600, rate_hz=1.0)
        base_cpu, _, base_tick = run_at_1hz(args.seconds, lambda: store.add([]))
        collector = SimulatedCollector(lambda: inventory.current().gpus(), pids=lambda: registry)
        last: list[GpuSample] = []

        def tick() -> None:
            samples = collector.collect(datetime.now(timezone.utc))
            store.add(samples)
            last[:] = samples

        cpu, wall, tick_ms = run_at_1hz(args.seconds, tick)
    finally:
        for child in children:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()

    arrays_mib, traced_mib = memory_per_gpu_hour(args.gpus)
    overhead = cpu - base_cpu
    busy = next(s for s in last if s.gpu_uuid == gpus[0])
    print(f"telemetry_bench: {args.gpus} simulated GPUs at 1 Hz, {wall:.1f} s per phase, os.cpu_count()={os.cpu_count()}")
    print(f"  baseline loop            : {base_cpu:6.3f} % of one core ({base_tick:.3f} ms CPU per tick)")
    print(f"  simulated collector loop : {cpu:6.3f} % of one core ({tick_ms:.3f} ms CPU per tick)")
    print(f"  collector overhead       : {overhead:6.3f} % of one core  (target <= 1 %: {'met' if overhead <= 1 else 'NOT met'})"
          f"; ratio vs baseline {cpu / base_cpu if base_cpu > 0 else float('inf'):.1f}x")
    print(f"  last sample of the busy GPU: utilization {busy.utilization_pct} % (a 10 % duty-cycle CPU loop)")
    print(f"  ring buffer, 1 h at 1 Hz : {arrays_mib:.3f} MiB per GPU-hour in arrays, {traced_mib:.3f} MiB traced "
          f"(target <= 1 MiB: {'met' if traced_mib <= 1 else 'NOT met'})")


if __name__ == "__main__":
    main()
