"""Benchmark one full scheduling cycle (quota, fair share, placement, reasons, ETAs included).

Prints, for 5,000 nodes x 8 GPUs and 20,000 pending jobs of mixed shapes, the time of one full
``run_cycle`` and placement decisions per second (median of several runs), next to two baselines
measured in the same run on the same input:

* ``naive``: FIFO, for each job a Python scan of every node for the best fit (what a first
  implementation does; measured on a prefix of the jobs because it is O(jobs x nodes));
* ``numpy best-fit``: FIFO, one vectorised ``argmin`` over the nodes' free counts per job
  (the "plain vectorized best-fit" of issue 4) — placement only, no quota, no reasons.

The full cycle is timed as the engine runs it (``engine.decide.default_cycle``: ``run_cycle``
with CPython's cyclic garbage collector paused for the cycle) and, beside it, as a bare
``run_cycle`` call with the collector on.

Also prints the cycle time for 1,000 pending jobs on 100 simulated nodes (issue 2 target:
<= 50 ms). Targets: >= 19,000 decisions/s for the full cycle (issue 16; issue 4 asked 10,000).

Snapshot build (``--snapshot``; ``--snapshot-only`` skips the cycles): the same jobs stored in a
SQLite file beside one running job per node, the engine's snapshot (``Engine.snapshot``, whose
job rows are ``Store.live_jobs``) built first cold, then with nothing changed, then after another
connection changed 1 % of the pending rows (each build: CPU of the building thread, median of
``--runs``). ``--compare TREE`` builds the same store's copy with TREE's jupyter_sched in a child
process, in the same run (e.g. ``/work/main``: before the decoded-row cache of issue 17).

Run: ``.venv/bin/python benchmarks/cycle_bench.py [--runs 3] [--nodes 5000] [--jobs 20000]
[--snapshot | --snapshot-only] [--compare TREE]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from jupyter_sched.engine.decide import default_cycle
from jupyter_sched.model import (
    GPU,
    Allocation,
    Inventory,
    Job,
    JobSpec,
    JobState,
    Node,
    PriorityClass,
    Quota,
    QuotaSet,
    ResourceRequest,
    TeamPolicy,
)
from jupyter_sched.scheduling import Snapshot, run_cycle

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
MODELS = ("A100-80GB", "H100-80GB")
# (gpus, milli, workers, weight): mixed shapes in the spirit of the openb / Philly traces.
SHAPES = [(1, 1000, 1, 40), (2, 1000, 1, 15), (4, 1000, 1, 10), (8, 1000, 1, 5), (1, 500, 1, 12),
          (1, 250, 1, 8), (8, 1000, 2, 2), (0, 1000, 1, 3), (3, 1000, 1, 5)]
TEAMS = [f"team-{i}" for i in range(8)]


def build_inventory(n_nodes: int) -> Inventory:
    nodes = []
    for i in range(n_nodes):
        model = MODELS[i % len(MODELS)]
        name = f"node-{i:05d}"
        gpus = tuple(GPU(uuid=f"GPU-{i}-{k}", index=k, node=name, model=model, memory_mib=81920,
                         nvlink_peers=(k ^ 1,)) for k in range(8))
        nodes.append(Node(name=name, gpus=gpus))
    return Inventory(nodes=tuple(nodes), source="simulated")


def build_jobs(n_jobs: int, seed: int = 7) -> tuple[Job, ...]:
    rng = random.Random(seed)
    weights = [s[3] for s in SHAPES]
    jobs = []
    for i in range(n_jobs):
        gpus, milli, workers, _ = rng.choices(SHAPES, weights)[0]
        models = () if rng.random() < 0.5 else (rng.choice(MODELS),)
        priority = rng.choices(list(PriorityClass), [1, 6, 3])[0]
        spec = JobSpec(name=f"j{i}", user=f"user-{rng.randrange(200)}", team=rng.choice(TEAMS), priority=priority,
                       resources=ResourceRequest(gpus=gpus, gpu_milli=milli, workers=workers, gpu_models=models),
                       time_limit_s=rng.choice([None, 3600.0, 4 * 3600.0, 24 * 3600.0]), command=("python",))
        jobs.append(Job(id=f"job-{i:06d}", spec=spec, submitted_at=NOW - timedelta(seconds=n_jobs - i)))
    return tuple(jobs)


def build_quotas(total_gpus: int) -> QuotaSet:
    per_team = int(total_gpus * 0.6 / len(TEAMS))
    return QuotaSet(quotas=tuple(Quota(team=t, guaranteed=per_team) for t in TEAMS),
                    teams=tuple(TeamPolicy(team=t, weight=1.0 + (i % 3), allowed_priorities=("high", "normal", "low"))
                                for i, t in enumerate(TEAMS)))


def naive_cycle(inv: Inventory, jobs: tuple[Job, ...]) -> int:
    """FIFO; per job, a Python scan of every node for the best fit (whole GPUs only)."""
    free = [len(n.gpus) for n in inv.nodes]
    models = [n.gpus[0].model for n in inv.nodes]
    placed = 0
    for job in sorted(jobs, key=lambda j: (-j.spec.priority.rank, j.submitted_at)):
        need = max(1, job.spec.resources.gpus)
        wanted = job.spec.resources.gpu_models
        best = -1
        for i, f in enumerate(free):
            if f >= need and (not wanted or wanted[0] == models[i]) and (best < 0 or f < free[best]):
                best = i
        if best >= 0:
            free[best] -= need
            placed += 1
    return placed


def numpy_cycle(inv: Inventory, jobs: tuple[Job, ...]) -> int:
    """FIFO; per job, a vectorised best fit over all nodes (placement only)."""
    free = np.array([len(n.gpus) for n in inv.nodes], dtype=np.int32)
    model_ids = {m: k for k, m in enumerate(MODELS)}
    models = np.array([model_ids[n.gpus[0].model] for n in inv.nodes], dtype=np.int32)
    placed = 0
    big = np.int32(1 << 20)
    for job in sorted(jobs, key=lambda j: (-j.spec.priority.rank, j.submitted_at)):
        need = max(1, job.spec.resources.gpus)
        wanted = job.spec.resources.gpu_models
        ok = free >= need
        if wanted:
            ok &= models == model_ids[wanted[0]]
        masked = np.where(ok, free, big)
        best = int(masked.argmin())
        if masked[best] < big:
            free[best] -= need
            placed += 1
    return placed


def _median_time(fn: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    """Median wall time and median CPU time of this process (seconds), and the last result.

    CPU time is reported beside wall time because the development machine is shared: with a load
    average above its core count, wall time mostly measures the wait for a core.

    What is timed is one whole call of ``fn``, the cyclic collector's own work inside it included:
    ``default_cycle`` pauses the collector and switches it back on as it returns, and the one
    young-generation collection of the cycle's garbage that follows (checked with ``gc.callbacks``:
    one per run, ~0.6 ms of a ~43 ms 100-node cycle, session 20) falls in the timed call, as it
    follows every cycle of the engine. The ``gc.collect()`` before each run is outside the timing:
    it frees the previous run's garbage, so no run pays for another's. It walks whatever the process
    holds — so the 100-node cycle is timed first, before the 5,000-node snapshot exists (session 19:
    collected behind it, the small cycle started cache-cold, ~5 ms of 50); since then, collecting
    before each run or once before all of them gives the same small-cycle medians (42.7 / 44.8 /
    42.4 against 44.8 / 43.0 / 41.7 ms cpu over 15 runs, load average ~7, session 20).
    """
    walls, cpus = [], []
    out = None
    for _ in range(runs):
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
    return statistics.median(walls), statistics.median(cpus), out


def seed_store(path: Path, n_nodes: int, n_jobs: int, n_finished: int = 3600) -> None:
    """A SQLite store holding ``n_jobs`` pending jobs (the mixed shapes above), one running 1-GPU
    job per node (allocated, started: what a busy cluster's live rows look like) and ``n_finished``
    succeeded runs of the same users and shapes (the engine learns live jobs' runtimes from them)."""
    from jupyter_sched.store import JobRecord, Store, sqlite_url

    store = Store(sqlite_url(path))
    with store.transaction(now=NOW) as tx:
        tx.replace_quota_set(build_quotas(n_nodes * 8))
        for job in build_jobs(n_jobs):
            tx.insert_job(JobRecord(job=job), savepoint=False)
        for i in range(n_nodes):
            at = NOW - timedelta(hours=1, seconds=i)
            spec = JobSpec(name=f"r{i}", user=f"user-{i % 200}", team=TEAMS[i % len(TEAMS)],
                           resources=ResourceRequest(gpus=1), command=("python",))
            job = Job(id=f"run-{i:06d}", spec=spec, state=JobState.RUNNING, submitted_at=at, admitted_at=at,
                      started_at=at, attempts=1, allocation=Allocation(node=f"node-{i:05d}", gpu_uuids=(f"GPU-{i}-0",)))
            tx.insert_job(JobRecord(job=job, executor="local", handle={"pid": 1, "create_time": 0.0}), savepoint=False)
        for i in range(n_finished):  # every user's runs of each shape
            gpus, milli, workers, _ = SHAPES[(n_finished - 1 - i) // 400 % len(SHAPES)]  # 2 a user, commonest newest
            at = NOW - timedelta(days=2) + timedelta(seconds=10 * i)
            spec = JobSpec(name=f"f{i}", user=f"user-{i % 200}", team=TEAMS[i % len(TEAMS)], time_limit_s=3600.0,
                           resources=ResourceRequest(gpus=gpus, gpu_milli=milli, workers=workers), command=("python",))
            job = Job(id=f"done-{i:06d}", spec=spec, state=JobState.SUCCEEDED, submitted_at=at, admitted_at=at,
                      started_at=at, finished_at=at + timedelta(seconds=300 + 37 * (i % 50)), attempts=1)
            tx.insert_job(JobRecord(job=job), savepoint=False)
    store.close()


def snapshot_child(url: str, runs: int) -> dict[str, float]:
    """Build the engine's snapshot of the store at ``url`` cold, unchanged and after 1 % of the pending
    rows changed from another connection; CPU ms of this thread (medians), for :func:`snapshot_section`."""
    from jupyter_sched.engine import Engine
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.store import Store

    store, writer = Store(url), Store(url)
    engine = Engine(store, SimulatedInventory(8), LocalExecutor(Path(tempfile.mkdtemp()) / "jobs"))

    def build() -> float:
        gc.collect()
        t0 = time.thread_time()
        engine.snapshot()
        return (time.thread_time() - t0) * 1000

    def live() -> float:
        t0 = time.thread_time()
        store.live_jobs()
        return (time.thread_time() - t0) * 1000

    out = {"cold": build()}
    out["unchanged"] = statistics.median(build() for _ in range(runs))
    out["live_jobs_unchanged"] = statistics.median(live() for _ in range(runs))
    pending = [r for r in store.live_jobs() if r.job.state is JobState.PENDING]
    rng, changed = random.Random(5), []
    for k in range(runs):
        with writer.transaction() as tx:
            for record in tx.get_jobs([r.job.id for r in rng.sample(pending, len(pending) // 100)]).values():
                tx.update_job(replace(record, job=replace(record.job, message=f"changed {k}")))
        changed.append(build())
    out["changed_1pct"] = statistics.median(changed)
    store.close()
    writer.close()
    return out


def snapshot_section(args: argparse.Namespace) -> None:
    """Print the snapshot build figures of this tree (A) and, with ``--compare``, of TREE (B)."""
    tmp = Path(tempfile.mkdtemp(prefix="cycle_bench_"))
    try:
        seed_store(tmp / "a.sqlite", args.nodes, args.jobs)
        sides = [("A (this tree)", Path(__file__).resolve().parents[1], tmp / "a.sqlite")]
        if args.compare:
            shutil.copyfile(tmp / "a.sqlite", tmp / "b.sqlite")
            sides.append((f"B ({args.compare})", Path(args.compare).resolve(), tmp / "b.sqlite"))
        figures = {}
        loads = [os.getloadavg()[0]]
        for name, tree, db in sides:  # one child per side: each imports its own tree's jupyter_sched
            env = {**os.environ, "PYTHONPATH": str(tree)}
            child = subprocess.run([sys.executable, __file__, "--snapshot-child", f"sqlite:///{db}",
                                    "--runs", str(args.runs)], env=env, check=True, capture_output=True, text=True)
            figures[name] = json.loads(child.stdout.strip().splitlines()[-1])
            loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"snapshot build: {args.jobs} pending + {args.nodes} running rows (SQLite), CPU ms of the building "
          f"thread, median of {args.runs}; load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    print(f"{'':22}{'cold':>10}{'unchanged':>12}{'1% changed':>12}{'live_jobs':>12}")
    for name, f in figures.items():
        print(f"{name[:22]:22}{f['cold']:10.0f}{f['unchanged']:12.0f}{f['changed_1pct']:12.0f}"
              f"{f['live_jobs_unchanged']:12.0f}")
    if len(figures) == 2:
        a, b = figures.values()
        print("B/A: " + ", ".join(f"{key} {b[key] / a[key]:.1f}x" for key in
                                 ("cold", "unchanged", "changed_1pct", "live_jobs_unchanged")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--naive-jobs", type=int, default=1000, help="prefix of jobs for the O(jobs x nodes) baseline")
    parser.add_argument("--snapshot", action="store_true", help="also time the engine's snapshot build from a store")
    parser.add_argument("--snapshot-only", action="store_true", help="time only the snapshot build")
    parser.add_argument("--compare", metavar="TREE", default=None,
                        help="snapshot build: also with TREE's jupyter_sched (e.g. /work/main), same run")
    parser.add_argument("--snapshot-child", metavar="URL", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.snapshot_child:
        print(json.dumps(snapshot_child(args.snapshot_child, args.runs)))
        return
    if args.snapshot_only:
        snapshot_section(args)
        return

    # The small cluster first, in a process that holds nothing else: measured after the big one, each
    # run's gc.collect() walked the 5,000-node snapshot still alive and the cycle started with a cold
    # CPU cache (~5 ms of 50 on this machine, session 19) — a cost no 100-node server has.
    small = Snapshot(now=NOW, inventory=build_inventory(100), jobs=build_jobs(1000, seed=3), quotas=build_quotas(800))
    t_small, c_small, _ = _median_time(lambda: default_cycle(small), max(5, args.runs))

    inv = build_inventory(args.nodes)
    jobs = build_jobs(args.jobs)
    snap = Snapshot(now=NOW, inventory=inv, jobs=jobs, quotas=build_quotas(args.nodes * 8))

    load = os.getloadavg()[0]
    cold = replace(snap, inventory=build_inventory(args.nodes))  # a new inventory object: index built from scratch
    t_cold, c_cold, _ = _median_time(lambda: default_cycle(cold), 1)
    t_full, c_full, result = _median_time(lambda: default_cycle(snap), args.runs)
    t_gc, c_gc, _ = _median_time(lambda: run_cycle(snap), args.runs)
    decided = len(result.admits) + len(result.pending) + len(result.rejects)
    t_np, c_np, placed_np = _median_time(lambda: numpy_cycle(inv, jobs), max(1, args.runs))
    naive_jobs = jobs[: args.naive_jobs]
    t_naive, c_naive, _ = _median_time(lambda: naive_cycle(inv, naive_jobs), 1)

    print(f"cluster: {args.nodes} nodes x 8 GPUs ({args.nodes * 8} GPUs), {args.jobs} pending jobs; "
          f"median of {args.runs} runs; load average {load:.1f} on {os.cpu_count()} cores")
    print(f"{'':26}{'wall ms':>10}{'cpu ms':>10}{'decisions/s (wall)':>20}{'(cpu)':>10}")

    def row(name: str, wall: float, cpu: float, n: int, note: str = "") -> None:
        print(f"{name:26}{wall * 1000:10.1f}{cpu * 1000:10.1f}{n / wall:20.0f}{n / cpu:10.0f}  {note}")

    row("full cycle (engine's way)", t_full, c_full, decided,
        f"admitted {len(result.admits)}, pending {len(result.pending)}, rejected {len(result.rejects)}")
    row("  bare run_cycle, GC on", t_gc, c_gc, decided, "the same cycle with the cyclic collector running")
    row("  first cycle, cold index", t_cold, c_cold, decided, "new inventory object: ledger index built from scratch")
    row("numpy best-fit baseline", t_np, c_np, args.jobs, f"placed {placed_np}; placement only, no quota/reasons")
    scale = args.jobs / len(naive_jobs)
    row("naive scan baseline*", t_naive * scale, c_naive * scale, args.jobs,
        f"*extrapolated from {len(naive_jobs)} jobs (O(jobs x nodes))")
    rate_wall, rate_cpu = decided / t_full, decided / c_full
    print(f"target >= 19,000 decisions/s: wall {'OK' if rate_wall >= 19000 else 'MISSED'}, "
          f"cpu {'OK' if rate_cpu >= 19000 else 'MISSED'}; full cycle vs numpy best-fit: "
          f"{(decided / c_full) / (args.jobs / c_np):.2f}x its throughput (cpu); vs naive: "
          f"{(decided / c_full) / (len(naive_jobs) / c_naive):.1f}x (cpu)")
    print(f"1,000 pending jobs on 100 nodes: {t_small * 1000:.1f} ms wall, {c_small * 1000:.1f} ms cpu per cycle "
          f"(target <= 50 ms: wall {'OK' if t_small <= 0.05 else 'MISSED'}, cpu {'OK' if c_small <= 0.05 else 'MISSED'})")
    if args.snapshot or args.compare:
        snapshot_section(args)

if __name__ == "__main__":
    main()
