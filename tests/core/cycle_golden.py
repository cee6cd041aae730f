"""Seeded cycle worlds and a digest of everything a cycle decides and says, for
``test_s28_cycle_golden.py`` (issue 16, session 28: the cycle made faster must decide nothing differently).

Each world is a random cluster (A100 / H100 / L4 nodes of 4 or 8 GPUs, NVLink pairs or none, a few
unhealthy GPUs and cordoned nodes, fractional and whole-GPU work running) and queue (the shapes of
``benchmarks/cycle_bench.py``: fractions, whole GPUs, gangs, GPU-less jobs, with or without models,
limits, NVLink and classes), drawn from one seed, run through two cycles under one profile (the
second after the first's decisions were applied, some work ended and time moved on — so promises,
elections, nominations and moved ETAs are read back). The digest covers admissions (nodes, GPUs,
scores, backfill, predicted starts, limits), preemptions, pending reasons (code, words, details,
ETA), rejections, nominations, audit records, planned preemptions and projected ends.

Run as a script to (re)write the golden file from the tree on ``PYTHONPATH`` — only where a change
is meant to decide or say something differently::

    PYTHONPATH=$PWD .venv/bin/python tests/core/cycle_golden.py --write
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import random
import sys
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core_builders import T0, make_job, make_node, running

from jupyter_sched.model import Inventory, Job, Quota, QuotaSet
from jupyter_sched.placement.placer import PlacementConfig
from jupyter_sched.scheduling import CycleResult, SchedulingProfile, Snapshot, apply_result, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory

GOLDEN = Path(__file__).with_name("cycle_golden.json")
MODELS = ("A100-80GB", "H100-80GB", "L4")
TEAMS = ("a", "b", "c", "d")
# (gpus, milli, workers, weight): the bench's mix
SHAPES = [(1, 1000, 1, 40), (2, 1000, 1, 15), (4, 1000, 1, 10), (8, 1000, 1, 5), (1, 500, 1, 12),
          (1, 250, 1, 8), (4, 1000, 2, 2), (0, 1000, 1, 3), (3, 1000, 1, 5)]
PROFILES: dict[str, SchedulingProfile] = {
    "default": SchedulingProfile(),
    "no-min-runtime": SchedulingProfile(min_runtime_s=0),
    "conservative": SchedulingProfile(backfill_mode="conservative"),
    "team-sharing": SchedulingProfile(gpu_sharing="team", min_runtime_s=0),
    "fifo-newer": SchedulingProfile(queue_sort="fifo", preemption_policy="lower-or-newer-equal"),
    "spread": SchedulingProfile(placement=PlacementConfig(scores={"spread": 2.0, "topology": 1.0})),
    "binpack-only": SchedulingProfile(placement=PlacementConfig(scores={"binpack": 1.0}, max_candidates=2)),
    "short-first": SchedulingProfile(queue_sort="short-first", borrow_within_cohort="normal"),
}
# (seed, nodes, pending jobs, quota kind — "none", "guarantees" or "limits" (borrowing limits too), "-idle": no
# running work, as the bench's cluster —, profile)
WORLDS = [(1, 12, 60, "guarantees", "default"), (2, 30, 200, "none", "default"),
          (3, 40, 300, "limits", "no-min-runtime"), (4, 20, 120, "guarantees", "conservative"),
          (5, 25, 150, "limits", "team-sharing"), (6, 30, 220, "guarantees", "fifo-newer"),
          (7, 30, 200, "none", "spread"), (8, 20, 160, "guarantees", "binpack-only"),
          (9, 30, 250, "limits", "short-first"), (10, 60, 700, "guarantees", "default"),
          (11, 8, 90, "guarantees", "no-min-runtime"), (12, 16, 40, "none", "conservative"),
          (13, 100, 1000, "guarantees-idle", "default")]


def world(seed: int, n_nodes: int, n_jobs: int, quota_kind: str) -> Snapshot:
    """The seeded cluster, running work and queue (module doc)."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        gpus = rng.choice((4, 8, 8))
        nvlink = [((k ^ 1),) for k in range(gpus)] if rng.random() < 0.7 else None
        nodes.append(make_node(f"n{i:03d}", gpus=gpus, model=rng.choice(MODELS), nvlink=nvlink,
                               unhealthy=(rng.randrange(gpus),) if rng.random() < 0.05 else (),
                               unschedulable=rng.random() < 0.03))
    jobs: list[Job] = []
    for node in nodes if not quota_kind.endswith("-idle") else ():  # running work on some GPUs: whole GPUs and shares
        for g in range(len(node.gpus)):
            kind = rng.random()
            if kind < 0.35:
                job = make_job(f"r-{node.name}-{g}", team=rng.choice(TEAMS), user=f"u{rng.randrange(12)}",
                               priority=rng.choice(("high", "normal", "normal", "low")),
                               time_limit_s=rng.choice((None, 1800.0, 7200.0)), checkpointable=rng.random() < 0.2)
                jobs.append(running(job, node.name, [g], started=-rng.choice((2.0, 30.0, 90.0, 300.0))))
            elif kind < 0.42:
                milli = rng.choice((250, 500))
                job = make_job(f"s-{node.name}-{g}", milli=milli, team=rng.choice(TEAMS), user=f"u{rng.randrange(12)}",
                               priority=rng.choice(("normal", "low")), time_limit_s=rng.choice((None, 3600.0)))
                jobs.append(running(job, node.name, [g], milli=milli, started=-rng.choice((1.0, 60.0))))
    weights = [s[3] for s in SHAPES]
    for k in range(n_jobs):
        gpus, milli, workers, _ = rng.choices(SHAPES, weights)[0]
        jobs.append(make_job(f"p{k:04d}", gpus=gpus, milli=milli, workers=workers, team=rng.choice(TEAMS),
                             user=f"u{rng.randrange(12)}", priority=rng.choices(("high", "normal", "low"), (1, 6, 3))[0],
                             models=() if rng.random() < 0.5 else (rng.choice(MODELS),), nvlink=rng.random() < 0.1,
                             submitted=-k / 10, time_limit_s=rng.choice((None, 600.0, 3600.0, 4 * 3600.0))))
    total = sum(len(n.gpus) for n in nodes)
    if quota_kind == "none":
        quota = QuotaSet()
    else:
        limits = quota_kind.startswith("limits")
        quota = QuotaSet(quotas=tuple(
            Quota(team=t, guaranteed=int(total * rng.uniform(0.1, 0.3)),
                  borrowing_limit=rng.choice((None, 4, 16)) if limits else None) for t in TEAMS))
    estimates = {j.id: rng.choice((300.0, 1200.0, 5400.0)) for j in jobs if rng.random() < 0.3}
    usage = UsageHistory(decayed_gpu_seconds_by_user={f"u{i}": rng.uniform(0, 1e5) for i in range(12)})
    return Snapshot(now=T0, inventory=Inventory(nodes=tuple(nodes)), jobs=tuple(jobs), quotas=quota, usage=usage,
                    runtime_estimates=estimates)


def cycles(snap: Snapshot, profile: SchedulingProfile, seed: int) -> list[CycleResult]:
    """Two cycles: the second 20 minutes on, after the first's decisions were applied and a tenth
    of the running work ended."""
    first = run_cycle(snap, profile)
    after = apply_result(snap, first, stop_at_once=True)
    rng = random.Random(seed * 7919)
    ended = {j.id for j in after.jobs if j.state.holds_gpus and rng.random() < 0.1}
    later = replace(after, now=snap.now + timedelta(minutes=20), jobs=tuple(j for j in after.jobs if j.id not in ended))
    return [first, run_cycle(later, profile)]


def canon(value: Any) -> Any:
    """A JSON form of ``value`` that is the same for equal decisions whatever the hash seed: dataclasses
    by field, mappings with sorted keys, sets sorted, floats by repr, instants by ISO form."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__, {f.name: canon(getattr(value, f.name)) for f in dataclasses.fields(value)}]
    if isinstance(value, enum.Enum):
        return canon(value.value)
    if isinstance(value, Mapping):
        return {json.dumps(canon(k)): canon(v) for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return [type(value).__name__, [canon(v) for v in value]]
    if isinstance(value, (list, tuple)):
        return [canon(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((canon(v) for v in value), key=json.dumps)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, bool)):
        return value
    raise TypeError(f"cycle_golden.canon: {type(value).__name__} not handled")


PARTS = ("admits", "preemptions", "pending", "rejects", "nominations", "audit", "eta_failure", "planned", "projected")


def digest(result: CycleResult) -> dict[str, str]:
    """Per part of the result, the sha256 of its canonical JSON (16 hex digits) and its size."""
    out = {}
    for part in PARTS:
        value = getattr(result, part)
        text = json.dumps(canon(value), sort_keys=True)
        size = len(value) if isinstance(value, (tuple, list, Mapping)) else 1
        out[part] = f"{hashlib.sha256(text.encode()).hexdigest()[:16]}/{size}"
    return out


def digests() -> dict[str, list[dict[str, str]]]:
    """Every world's digests, per cycle."""
    out = {}
    for seed, n_nodes, n_jobs, quota_kind, profile in WORLDS:
        name = f"seed{seed}-{n_nodes}n-{n_jobs}j-{quota_kind}-{profile}"
        out[name] = [digest(r) for r in cycles(world(seed, n_nodes, n_jobs, quota_kind), PROFILES[profile], seed)]
    return out


if __name__ == "__main__":
    found = digests()
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN}")
    else:
        print(json.dumps(found, indent=1, sort_keys=True))
