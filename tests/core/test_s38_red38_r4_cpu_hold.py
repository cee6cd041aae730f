"""red38 R4: with ``cpus``/``memory`` per node in the inventory, a 0-GPU job asking for all of a GPU node's CPUs
(or a 1-GPU job with ``cpu: 16`` of 16 on an 8-GPU node) kept every other team's GPU work off the node — guaranteed
work included, uncharged by quota, out of reach of reclaim, and the reason named GPU jobs that were not the blocker.

Now a GPU node's tracked CPUs and host memory are split among its GPUs (:mod:`jupyter_sched.placement.host_share`):
one worker reserves at most its GPUs' part; a 0-GPU job reserves none of a GPU node's host and runs on nodes without
GPUs. So every free GPU keeps its part free, whatever runs beside it, and a job asking for more is refused with a reason
naming ``cpu``/``memory`` and the most it may ask. Through ``run_cycle`` (pure core, real placer and ledger)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Inventory, Quota, ResourceRequest
from jupyter_sched.placement.fgd import FgdScore, typical_from_requests
from jupyter_sched.placement.placer import PlacementConfig
from jupyter_sched.scheduling import SchedulingProfile, apply_result, run_cycle

TEAMS = quotas(Quota(team="teamb", guaranteed=1, borrowing_limit=None),
               Quota(team="teamc", guaranteed=1, borrowing_limit=None))


def _vm(**kw: int) -> object:
    return make_node("vm", gpus=8, cpu_millis=16000, **kw)


def test_red38_r4_cpu_reservation_of_a_cpu_job_does_not_hold_guaranteed_gpus() -> None:
    jobs = [make_job("c-cpuhog", gpus=0, team="teamc", user="r38c", cpu_millis=16000),
            make_job("b-guar", gpus=1, team="teamb", user="r38b", cpu_millis=2000, submitted=0.1)]
    result = run_cycle(snapshot([_vm()], jobs, quota=TEAMS))
    assert [a.job_id for a in result.admits] == ["b-guar"], result
    refused = {r.job_id: r.reason for r in result.rejects}
    reason = refused["c-cpuhog"]
    assert reason.details["field"] == "cpu" and reason.details["max_cpu_millis"] == 0, reason
    assert "a job without GPUs reserves no CPU or host memory on a GPU node" in reason.message, reason.message
    assert "ask for at least 8 GPUs" in reason.unblock, reason.unblock  # its 16 cores are the part of 8 (newuser39 n9)


def test_red38_r4_a_gpu_job_reserves_at_most_its_gpus_part_of_the_node_cpus() -> None:
    jobs = [make_job("c-gpu16", gpus=1, team="teamc", user="r38c", cpu_millis=16000),
            make_job("b-guar2", gpus=1, team="teamb", user="r38b", cpu_millis=1000, submitted=0.1),
            make_job("b-two", gpus=2, team="teamb", user="r38b", cpu_millis=4000, submitted=0.2),
            make_job("c-half", gpus=1, milli=500, team="teamc", user="r38c", cpu_millis=1000, submitted=0.3),
            make_job("c-half-over", gpus=1, milli=500, team="teamc", user="r38c", cpu_millis=1001, submitted=0.4)]
    result = run_cycle(snapshot([_vm()], jobs, quota=TEAMS))
    assert sorted(a.job_id for a in result.admits) == ["b-guar2", "b-two", "c-half"], result
    refused = {r.job_id: r.reason for r in result.rejects}
    assert set(refused) == {"c-gpu16", "c-half-over"}, refused
    one = refused["c-gpu16"]
    assert one.details["field"] == "cpu" and one.details["max_cpu_millis"] == 2000, one
    assert "16 CPU cores, more than its 1 GPU's part" in one.message, one.message
    assert one.unblock == ("ask for at most cpu 2 per worker, or for more GPUs per worker; or an admin "
                           "may add a node without GPUs to the inventory, or set c.SchedApp.gpu_node_host_share = False "
                           "to turn the split off, letting CPU work keep a GPU node's GPUs idle"), one.unblock
    assert refused["c-half-over"].details["max_cpu_millis"] == 1000, refused["c-half-over"]


def test_red38_r4_host_memory_is_split_among_the_gpus_too() -> None:
    node = make_node("vm", gpus=4, cpu_millis=0, host_memory_mib=64000)
    jobs = [make_job("c-mem", gpus=0, team="teamc", user="r38c", memory_mib=1),
            make_job("c-big", gpus=1, team="teamc", user="r38c", memory_mib=16001, submitted=0.1),
            make_job("b-ok", gpus=1, team="teamb", user="r38b", memory_mib=16000, submitted=0.2)]
    result = run_cycle(snapshot([node], jobs, quota=TEAMS))
    assert [a.job_id for a in result.admits] == ["b-ok"], result
    refused = {r.job_id: r.reason for r in result.rejects}
    assert refused["c-mem"].details["field"] == "memory", refused["c-mem"]
    assert refused["c-big"].details == {"field": "memory", "cpu_millis": 0, "memory_mib": 16001, "gpus": 1,
                                        "max_cpu_millis": 0, "max_memory_mib": 16000,
                                        "setting": "c.SchedApp.gpu_node_host_share"}, refused["c-big"]


def test_red38_r4_cpu_work_goes_to_a_node_without_gpus() -> None:
    cpu_node = make_node("cpu1", gpus=0, cpu_millis=32000)
    jobs = [make_job("c-cpuhog", gpus=0, team="teamc", user="r38c", cpu_millis=16000),
            make_job("c-cpu2", gpus=0, team="teamc", user="r38c", cpu_millis=16000, submitted=0.1),
            make_job("c-cpu3", gpus=0, team="teamc", user="r38c", cpu_millis=16000, submitted=0.2)]
    result = run_cycle(snapshot([_vm(), cpu_node], jobs, quota=TEAMS))
    placed = {a.job_id: a.allocation.node for a in result.admits}
    assert placed == {"c-cpuhog": "cpu1", "c-cpu2": "cpu1"}, placed
    waiting = {p.job_id for p in result.pending}
    assert waiting == {"c-cpu3"} and not result.rejects, (waiting, result.rejects)


def test_red38_r4_every_free_gpu_keeps_its_part_whatever_runs_beside_it() -> None:
    """Property: after any mix of admissions and ends, every free GPU of the node has its part of the CPUs and
    memory free, so a 1-GPU job asking for exactly its part is admitted whenever a GPU is free."""
    rng = random.Random(38)
    node = make_node("vm", gpus=8, cpu_millis=16000, host_memory_mib=128000)
    snap = snapshot([node], quota=TEAMS)
    admitted = refused = 0
    for step in range(40):
        gpus = rng.choice([0, 1, 1, 2, 3])
        milli = rng.choice([1000, 1000, 500, 250]) if gpus == 1 else 1000
        share = gpus * milli // 1000
        job = make_job(f"j{step}", gpus=gpus, milli=milli, team=rng.choice(["teamb", "teamc"]), user="u",
                       cpu_millis=rng.randint(0, 2 * share * 2000 + 1000),
                       memory_mib=rng.randint(0, 2 * share * 16000 + 1000), submitted=step / 100)
        snap = replace(snap, jobs=(*snap.jobs, job), now=T0 + timedelta(minutes=step))
        result = run_cycle(snap, SchedulingProfile())
        snap = apply_result(snap, result, stop_at_once=True)
        admitted += sum(1 for a in result.admits if job.spec.resources.cpu_millis and a.job_id == job.id)
        refused += len(result.rejects)
        running = [j for j in snap.jobs if j.allocation is not None]
        if rng.random() < 0.3 and running:  # one ends
            gone = rng.choice(running).id
            snap = replace(snap, jobs=tuple(j for j in snap.jobs if j.id != gone))
        held = [j for j in snap.jobs if j.allocation is not None]
        cpu_used = sum(j.spec.resources.cpu_millis for j in held)
        mem_used = sum(j.spec.resources.memory_mib for j in held)
        whole_free = 8 - len({u for j in held for u in j.allocation.gpu_uuids})
        assert 16000 - cpu_used >= whole_free * 2000, (step, cpu_used, whole_free)
        assert 128000 - mem_used >= whole_free * 16000, (step, mem_used, whole_free)
    held = [j for j in snap.jobs if j.allocation is not None]
    on_gpus = [j for j in held if j.allocation.gpu_uuids]
    assert on_gpus and admitted > 3 and refused > 3, (on_gpus, admitted, refused)
    keep = tuple(j for j in snap.jobs if j.allocation is not None and j is not on_gpus[0])
    probe = make_job("probe", gpus=1, team="teamb", user="p", cpu_millis=2000, memory_mib=16000, submitted=99)
    snap = replace(snap, jobs=(*keep, probe))
    result = run_cycle(snap, SchedulingProfile())
    assert "probe" in {a.job_id for a in result.admits}, result.pending


def test_red38_r4_the_vectorised_placement_splits_the_host_too() -> None:
    history = (ResourceRequest(gpus=1), ResourceRequest(gpus=0, cpu_millis=1000))
    fgd = FgdScore(typical_from_requests(history))
    profile = SchedulingProfile(name="fgd", placement=PlacementConfig(scores={fgd.name: 1.0}, plugins=(fgd,)))
    cpu_node = make_node("cpu1", gpus=0, cpu_millis=32000)
    jobs = [make_job("c-cpuhog", gpus=0, team="teamc", user="r38c", cpu_millis=16000),
            make_job("c-gpu3", gpus=1, team="teamc", user="r38c", cpu_millis=3000, submitted=0.1)]
    assert Inventory(nodes=(_vm(), cpu_node)).nodes[0].cpu_millis == 16000
    result = run_cycle(snapshot([_vm(), cpu_node], jobs, quota=TEAMS), profile)
    placed = {a.job_id: a.allocation.node for a in result.admits}
    assert placed == {"c-cpuhog": "cpu1"}, placed
    assert {r.job_id for r in result.rejects} == {"c-gpu3"}, result.rejects
