"""Queueing quality on the Tiresias 60-job trace (Gu et al., NSDI'19) with the 32-node x 4-GPU spec.

Usage::

    python benchmarks/jct_tiresias.py                 # as published, plus the same trace 16x and 64x denser
    python benchmarks/jct_tiresias.py --speedups 1,4,8,16 --limit-factor 1.5

Policies:

* ``FIFO``: reference scheduler, strict arrival order (the head blocks everything behind it).
* ``SJF (oracle)``: reference scheduler, shortest true duration first among waiting jobs, any job
  that fits starts (knows every duration in advance).
* ``ours``: the production ``run_cycle`` in the discrete-event simulator (fair order, EASY
  backfill on the users' declared time limits = true duration x ``--limit-factor``).

Reference schedulers place like ``ours`` for fairness: a job of up to 4 GPUs on the fullest node
that fits, an 8-GPU job as 2 x 4 GPUs on two whole nodes. Columns: average JCT, average
queueing delay, makespan (s), and for ``ours`` the median absolute error between the ETA given
in a job's first pending reason (at submit) and its actual start, over jobs that had one; and the
same for the first ETA shown at any cycle while the job waited (EASY backfill gives an ETA to the
first blocked job per GPU model only; the others show "unknown" until they reach the head).
"""

from __future__ import annotations

import argparse
import heapq
import statistics
from dataclasses import dataclass, replace

from jupyter_sched.model import ResourceRequest
from jupyter_sched.sim.simulator import SimJob, simulate
from jupyter_sched.sim.traces import TiresiasCluster, TiresiasJob, read_tiresias_cluster, read_tiresias_jobs


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    policy: str
    avg_jct: float
    avg_queue: float
    makespan: float
    eta_err: float | None = None
    eta_jobs: int = 0
    shown_err: float | None = None
    shown_jobs: int = 0


def _place(free: list[int], gpus: int, per_node: int) -> list[tuple[int, int]] | None:
    """Nodes and GPU counts for ``gpus`` on ``free`` GPUs per node, or None (reference placer)."""
    if gpus <= per_node:
        fits = [n for n, f in enumerate(free) if f >= gpus]
        return [(min(fits, key=lambda n: (free[n], n)), gpus)] if fits else None
    whole = [n for n, f in enumerate(free) if f == per_node]
    need = -(-gpus // per_node)
    return [(n, per_node) for n in whole[:need]] if len(whole) >= need else None


def reference(jobs: list[TiresiasJob], cluster: TiresiasCluster, policy: str) -> Row:
    """FIFO (strict) or SJF (oracle, greedy) list scheduling; returns the averages."""
    free = [cluster.gpus_per_node] * cluster.nodes
    events: list[tuple[float, int, int]] = [(j.submit_s, 0, i) for i, j in enumerate(jobs)]  # kind 0 arrive, -1 end
    heapq.heapify(events)
    queue: list[int] = []
    held: dict[int, list[tuple[int, int]]] = {}
    start: dict[int, float] = {}
    end: dict[int, float] = {}
    while events:
        t = events[0][0]
        while events and events[0][0] == t:
            _, kind, i = heapq.heappop(events)
            if kind == 0:
                queue.append(i)
            else:
                for n, g in held.pop(i):
                    free[n] += g
        order = sorted(queue, key=lambda i: (jobs[i].duration_s, jobs[i].submit_s)) if policy == "SJF" else list(queue)
        for i in order:
            spot = _place(free, jobs[i].num_gpu, cluster.gpus_per_node)
            if spot is None:
                if policy == "FIFO":
                    break
                continue
            for n, g in spot:
                free[n] -= g
            held[i] = spot
            queue.remove(i)
            start[i] = t
            end[i] = t + jobs[i].duration_s
            heapq.heappush(events, (end[i], -1, i))
    jct = [end[i] - j.submit_s for i, j in enumerate(jobs)]
    wait = [start[i] - j.submit_s for i, j in enumerate(jobs)]
    return Row(policy, statistics.mean(jct), statistics.mean(wait), max(end.values()) - min(j.submit_s for j in jobs))


def ours(jobs: list[TiresiasJob], cluster: TiresiasCluster, limit_factor: float) -> Row:
    """The production cycle in the simulator."""
    arrivals = []
    for j in jobs:
        per = cluster.gpus_per_node
        req = ResourceRequest(gpus=min(j.num_gpu, per), workers=max(1, -(-j.num_gpu // per)))
        arrivals.append(SimJob(name=f"tiresias-{j.job_id}", user=f"user{j.job_id % 4}", submit_s=j.submit_s,
                               runtime_s=j.duration_s, resources=req, time_limit_s=j.duration_s * limit_factor))
    res = simulate(cluster.inventory(), arrivals)
    s = res.summary
    return Row("ours (run_cycle)", s["avg_jct_s"], s["avg_queue_s"], s["makespan_s"], s["eta_median_abs_err_s"],
               s["eta_jobs"], s["shown_eta_median_abs_err_s"], s["shown_eta_jobs"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", default="n32g4", help="Tiresias cluster spec file name")
    parser.add_argument("--speedups", default="1,16,64", help="arrival-rate multipliers (1 = the trace as is)")
    parser.add_argument("--limit-factor", type=float, default=1.0,
                        help="declared time limit = true duration x this (backfill and ETAs use it)")
    args = parser.parse_args(argv)
    cluster = read_tiresias_cluster(args.cluster)
    base = read_tiresias_jobs()
    for speed in (float(x) for x in args.speedups.split(",")):
        jobs = [replace(j, submit_s=j.submit_s / speed) for j in base]
        rows = [reference(jobs, cluster, "FIFO"), reference(jobs, cluster, "SJF"), ours(jobs, cluster, args.limit_factor)]
        print(f"\nTiresias 60 jobs on {cluster.nodes} nodes x {cluster.gpus_per_node} GPUs, arrivals x{speed:g}, "
              f"declared limits = duration x {args.limit_factor:g}")
        print(f"{'policy':18s} {'avg JCT s':>10s} {'avg queue s':>12s} {'makespan s':>11s} "
              f"{'ETA@submit med err s':>21s} {'first ETA shown med err s':>26s}")
        for r in rows:
            name = "SJF (oracle)" if r.policy == "SJF" else r.policy
            eta = f"{r.eta_err:.1f} (n={r.eta_jobs})" if r.eta_err is not None else \
                ("n/a (none)" if r.policy.startswith("ours") else "-")
            shown = f"{r.shown_err:.1f} (n={r.shown_jobs})" if r.shown_err is not None else \
                ("n/a (none)" if r.policy.startswith("ours") else "-")
            print(f"{name:18s} {r.avg_jct:10.1f} {r.avg_queue:12.1f} {r.makespan:11.1f} {eta:>21s} {shown:>26s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
