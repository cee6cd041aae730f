"""Issue 16, session 28: what the faster cycle no longer does, counted (its speed lives in
``benchmarks/cycle_bench.py``: no timed assertions), and the shortcuts checked against the longer forms.
That it decides and says exactly what it did is ``test_s28_cycle_golden.py``.

* The placer works out a candidate node's GPUs and topology score once per node *layout* (GPU count,
  NVML indices, NVLink peers relative to the node's first GPU) and set of wholly free GPUs, kept with the
  inventory (``ClusterState.inventory_memo``): a cluster of identical nodes works out a handful, and a
  second cycle on the same inventory none (it worked each candidate out afresh, a node with every GPU
  free once per cycle).
* ``ClusterState.node_mask`` — the wholly free, placeable GPUs of each node as bits — follows every take,
  release and undone trial.
* A job's hold is asked once per visit (it was asked twice: before the quota ceilings, then by ``gate``).
* The EASY reservation walks the running jobs by end then id, grouped by end (``backfill.easy.walk_ends``):
  the same walk as sorting every job by (end, id).
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, pairs, snapshot

from jupyter_sched.backfill.easy import Ending, find_reservation, walk_ends
from jupyter_sched.model import GPU_MILLI, Quota, QuotaSet, TeamPolicy
from jupyter_sched.placement import placer as placer_module
from jupyter_sched.placement.placer import Placer
from jupyter_sched.placement.state import ClusterState, Holding
from jupyter_sched.scheduling import cycle as cycle_module
from jupyter_sched.scheduling import gates, run_cycle


def _identical_cluster(n_nodes: int = 40, n_jobs: int = 160):  # type: ignore[no-untyped-def]
    nodes = [make_node(f"n{i:02d}", gpus=8, nvlink=pairs(8)) for i in range(n_nodes)]
    rng = random.Random(3)
    jobs = [make_job(f"j{k:03d}", gpus=rng.choice((1, 1, 2, 4)), team="a", user=f"u{k % 5}", submitted=k / 10)
            for k in range(n_jobs)]
    return snapshot(nodes, jobs)


def test_s28_placer_works_out_each_layouts_choice_once_and_keeps_it_with_the_inventory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    choose = Placer._choose

    def counted(self: Placer, free: list[int], count: int, node: int, nvlink: bool):  # type: ignore[no-untyped-def]
        calls.append((tuple(g - self.state.node_gpus[node][0] for g in free), count, nvlink))
        return choose(self, free, count, node, nvlink)

    monkeypatch.setattr(Placer, "_choose", counted)
    snap = _identical_cluster()
    first = run_cycle(snap)
    assert len(first.admits) > 100
    assert len(calls) == len(set(calls)) <= 40  # once per (free GPUs, count) of the one layout: never per node
    calls.clear()
    second = run_cycle(snap)  # the same inventory object: its layouts' choices are known
    assert calls == []
    assert second.admits == first.admits


def test_s28_node_mask_follows_takes_releases_and_undone_trials() -> None:
    rng = random.Random(11)
    nodes = [make_node(f"n{i}", gpus=rng.choice((4, 8)), nvlink=pairs(8), unhealthy=(1,) if i == 2 else ())
             for i in range(6)]
    state = ClusterState(snapshot(nodes).inventory)

    def expected() -> list[int]:
        return [sum(1 << j for j, g in enumerate(ids) if state.placeable[g] and state.free_milli[g] == GPU_MILLI)
                for ids in state.node_gpus]

    assert state.node_mask == expected()
    held: list[str] = []
    for step in range(300):
        if held and rng.random() < 0.4:
            state.release(held.pop(rng.randrange(len(held))))
        else:
            node = rng.randrange(len(nodes))
            free = [g for g in state.node_gpus[node] if state.placeable[g] and state.free_milli[g] > 0]
            if not free:
                continue
            picked = rng.sample(free, rng.randint(1, len(free)))
            milli = rng.choice((250, 500, GPU_MILLI))
            gpus = tuple((g, min(milli, state.free_milli[g])) for g in picked)
            if rng.random() < 0.3:
                with state.what_if():
                    state.take(f"t{step}", Holding(gpus=gpus, node=node))
                    assert state.node_mask == expected()
            else:
                state.take(f"h{step}", Holding(gpus=gpus, node=node))
                held.append(f"h{step}")
        assert state.node_mask == expected()


def test_s28_a_jobs_hold_is_asked_once_per_visit(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    held_gate = gates.held_gate

    def counted(ctx, job):  # type: ignore[no-untyped-def]
        asked.append(job.id)
        return held_gate(ctx, job)

    monkeypatch.setattr(gates, "held_gate", counted)
    monkeypatch.setattr(cycle_module, "held_gate", counted)
    nodes = [make_node("n1", gpus=4)]
    jobs = [make_job(f"j{k}", team="a", submitted=k) for k in range(8)]
    snap = snapshot(nodes, jobs, quota=QuotaSet(quotas=(Quota(team="a", guaranteed=4),),
                                                teams=(TeamPolicy(team="a", allowed_priorities=("normal",)),)))
    result = run_cycle(snap)
    assert len(result.admits) == 4 and len(result.pending) == 4
    assert sorted(asked) == sorted(j.id for j in jobs)  # gated world: every job asked, each once


@pytest.mark.parametrize("seed", range(20))
def test_s28_walk_by_end_groups_walks_as_every_job_sorted_by_end_then_id(seed: int) -> None:
    rng = random.Random(seed)
    ends = [T0 + timedelta(minutes=m) for m in (5, 5, 30, 60)] + [None]
    endings = [Ending(f"j{rng.randrange(1000):03d}-{k}", rng.choice(ends)) for k in range(rng.randint(0, 40))]
    fits_after = rng.randint(1, len(endings) + 2)

    def run(walk):  # type: ignore[no-untyped-def]
        released: list[str] = []

        def try_fit() -> frozenset[int] | None:
            return frozenset({len(released)}) if len(released) >= fits_after else None

        return walk(released.append, try_fit), released

    reference = sorted((e for e in endings if e.end is not None), key=lambda e: (e.end, e.job_id))
    got, released = run(lambda release, try_fit: find_reservation(endings, release, try_fit, T0))
    assert released == [e.job_id for e in reference][:len(released)]
    by_end: dict = {}
    for e in endings:
        if e.end is not None:
            by_end.setdefault(e.end, []).append((e.job_id, e.end))
    unknown = [e.job_id for e in endings if e.end is None]
    assert run(lambda release, try_fit: walk_ends(by_end, unknown, release, try_fit, T0)) == (got, released)
    if len(reference) >= fits_after:
        assert got[0] == reference[fits_after - 1].end


def test_s28_layout_choices_stay_bounded_and_decide_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layouts' memo starts again past its bound (16-GPU nodes have 2 ** 16 free masks): nothing
    decided changes."""
    snap = _identical_cluster()
    unbounded = run_cycle(snap)
    monkeypatch.setattr(placer_module, "_LAYOUT_CHOICES_MAX", 3)
    small = snapshot(list(snap.inventory.nodes), list(snap.jobs))  # a new inventory object: a fresh memo
    bounded = run_cycle(small)
    layouts = ClusterState(small.inventory).inventory_memo[placer_module._LAYOUTS]
    assert 0 < len(layouts.choices) <= 3
    assert bounded.admits == unbounded.admits and bounded.pending == unbounded.pending
