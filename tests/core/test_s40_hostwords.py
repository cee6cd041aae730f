"""Session 40 (s39-hostask's left-overs, newuser39 n8 / red39 R9): the words of a CPU or host-memory wait, and the
gang counts, on GPU nodes whose host is split among their GPUs (:mod:`jupyter_sched.placement.host_share`).

- A pending reason spoke millicores and MiB ("no node with 1 free GPU has 8000 millicores CPU free") and did not
  name the split: on an inventory of g1 (4 GPUs, 16 cores: 4 per GPU) and g2 (4 GPUs, 64 cores: 16 per GPU) a 1-GPU
  job asking 8 cores waited for g2 with g1 wholly free and was told g1 lacked 8 cores free — it has 16. Now cores
  and GiB, the node's part per GPU, and the unblock: the most to ask there, or the GPUs whose part holds it.
- The gang counts (``_pack``: never-fits and "only N of its M workers fit now") put a worker on any node with the
  cores free, where the placer's filter puts it only where its GPUs' part holds it: a gang the placer can never
  start pended for ever, and a waiting gang was told more of its workers fit than do.

Pure core: ``run_cycle`` with the real placer and ledger."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from core_builders import make_job, make_node, snapshot

from jupyter_sched.model import Job
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.job import WorkerGroup
from jupyter_sched.placement.placer import PlacementConfig
from jupyter_sched.scheduling import SchedulingProfile, apply_result, run_cycle
from jupyter_sched.scheduling.snapshot import CycleResult
from jupyter_sched.wording.reasons import unblock_sentence


def _g1() -> object:
    return make_node("g1", gpus=4, cpu_millis=16000, host_memory_mib=65536)


def _g2() -> object:
    return make_node("g2", gpus=4, cpu_millis=64000, host_memory_mib=262144)


def _gang(job_id: str, *groups: tuple[str, int, int, int]) -> Job:
    """A gang of ``(name, gpus, workers, cpu_millis)`` groups."""
    job = make_job(job_id, gpus=1, submitted=1.0)
    made = tuple(WorkerGroup(name=n, gpus=g, workers=w, cpu_millis=c) for n, g, w, c in groups)
    req = replace(job.spec.resources, groups=made, workers=sum(g.workers for g in made),
                  gpus=max(g.gpus for g in made), cpu_millis=max(g.cpu_millis for g in made))
    return replace(job, spec=replace(job.spec, resources=req))


def _after(nodes: list[object], running: list[Job], waiting: list[Job],
           profile: SchedulingProfile | None = None) -> CycleResult:
    """Start ``running`` in one cycle, then run a cycle with ``waiting`` queued behind them."""
    profile = profile or SchedulingProfile()
    snap = snapshot(nodes, running)
    first = run_cycle(snap, profile)
    assert {a.job_id for a in first.admits} == {j.id for j in running}, first
    snap = apply_result(snap, first, stop_at_once=True)
    return run_cycle(replace(snap, jobs=(*snap.jobs, *waiting)), profile)


@dataclass(frozen=True)
class Wait:
    name: str
    running: tuple[Job, ...]
    waiting: Job
    want_message: tuple[str, ...]
    want_unblock: tuple[str, ...]
    want_field: str | None = None
    split: bool = True


WAITS = [
    Wait("a 1-GPU job asking 8 cores waits for g2 and is told g1's GPUs bring 4 cores each",
         (make_job("full", gpus=4, cpu_millis=32000),), make_job("want8", gpus=1, cpu_millis=8000, submitted=1),
         ("4 A100-80GB GPUs free, but it asks for 8 CPU cores with 1 GPU, and a GPU node's host is split among its "
          "GPUs: g1 gives 4 CPU cores per GPU it hands out (16 CPU cores, 4 GPUs)",),
         ("ask for at most cpu 4 with 1 GPU, or for 2 GPUs, to start on g1 now",
          "or it starts when GPUs free up on a node whose part holds it (see ETA)"), "cpu"),
    Wait("host memory in GiB, with the part per GPU and the value to type",
         (make_job("full", gpus=4, cpu_millis=32000),), make_job("want40g", gpus=1, memory_mib=40960, submitted=1),
         ("it asks for 40 GiB host memory with 1 GPU", "g1 gives 16 GiB host memory per GPU it hands out (64 GiB, "
          "4 GPUs)"), ("ask for at most memory 16GiB with 1 GPU, or for 3 GPUs, to start on g1 now",), "memory"),
    Wait("with the split off, the wait for cores already held speaks cores",
         (make_job("big", gpus=1, cpu_millis=14000),), make_job("b", gpus=1, cpu_millis=4000, submitted=1),
         ("3 A100-80GB GPUs free, but no node with 1 free GPU has 4 CPU cores free",),
         ("starts when running jobs finish (see ETA)",), split=False),
]


@pytest.mark.parametrize("case", WAITS, ids=[c.name for c in WAITS])
def test_s40_hostwords_a_cpu_or_memory_wait_speaks_cores_and_names_the_gpu_nodes_part(case: Wait) -> None:
    profile = SchedulingProfile(placement=PlacementConfig(host_share=case.split))
    nodes = [_g1(), _g2()] if case.split else [_g1()]
    result = _after(nodes, list(case.running), [case.waiting], profile)
    (pend,) = [p for p in result.pending if p.job_id == case.waiting.id]
    reason = pend.reason
    assert reason.code == "WaitingForCapacity", reason
    for said in case.want_message:
        assert said in reason.message, reason.message
    for said in case.want_unblock:
        assert said in reason.unblock, reason.unblock
    assert "millicores" not in reason.message + reason.unblock and " MiB" not in reason.message, reason
    if case.want_field is not None:
        part = reason.details["host_share"]
        assert reason.details["field"] == case.want_field and part["node"] == "g1" and part["gpus"] == 4, reason.details


def test_s40_hostwords_a_cpu_job_waiting_for_the_node_without_gpus_is_told_why_gpu_nodes_do_not_take_it() -> None:
    c1 = make_node("c1", gpus=0, cpu_millis=8000, host_memory_mib=32768)
    result = _after([_g1(), c1], [make_job("c-a", gpus=0, cpu_millis=8000)],
                    [make_job("c-b", gpus=0, cpu_millis=4000, submitted=1)])
    (pend,) = result.pending
    assert pend.reason.message.startswith("no node without GPUs has 4 CPU cores free (a job without GPUs reserves "
                                          "none of a GPU node's host"), pend.reason.message
    assert pend.reason.details["host_share"] is True, pend.reason.details


def test_s40_hostwords_a_gang_the_split_never_holds_is_refused_not_left_pending_for_ever() -> None:
    """Five 1-GPU, 8-core workers: g2's part holds 4 (16 cores per GPU), g1's none (4 per GPU). The count without
    the split put two on g1's 16 free cores and let the gang pend for ever; the placer never starts it."""
    gang = _gang("g5", ("a", 1, 5, 8000), ("b", 1, 1, 0))
    result = run_cycle(snapshot([_g1(), _g2()], [gang]))
    (refused,) = result.rejects
    assert refused.reason.details["max_workers"] == 5 and refused.reason.details["field"] == "groups", refused
    assert "split among the node's GPUs" in refused.reason.message, refused.reason.message
    assert "less CPU or memory per worker" in refused.reason.unblock, refused.reason.unblock
    fits = run_cycle(snapshot([_g1(), _g2()], [_gang("g4", ("a", 1, 4, 8000), ("b", 1, 1, 0))]))
    assert [a.job_id for a in fits.admits] == ["g4"] and not fits.rejects, fits


def test_s40_hostwords_a_waiting_gang_counts_only_workers_whose_gpus_part_holds_them() -> None:
    """g2 has 2 GPUs (32 cores) free, g1 all 4 (16 cores): three 8-core workers fit two (on g2), the 0-core one g1."""
    result = _after([_g1(), _g2()], [make_job("hold2", gpus=2, cpu_millis=32000)],
                    [_gang("g3", ("a", 1, 3, 8000), ("b", 1, 1, 0))])
    (pend,) = result.pending
    assert pend.reason.details["fit_workers"] == 3, pend.reason
    assert "only 3 of its 4 workers fit now" in pend.reason.message, pend.reason.message
    assert "g1 gives 4 CPU cores per GPU it hands out" in pend.reason.message, pend.reason.message
    assert pend.reason.unblock.startswith("ask for at most cpu 4 per worker of 1 GPU (its part of g1), or for more "
                                          "GPUs per worker"), pend.reason.unblock
    assert pend.reason.details["host_share"]["max_cpu_millis"] == 4000, pend.reason.details
    said = unblock_sentence(reason_to_dict(pend.reason), mine=True)  # what REST, the CLI and the panel say
    assert said == "Ask for at most cpu 4 per worker of 1 GPU (its part of g1), or for more GPUs per worker.", said


def test_s40_hostwords_a_gang_pending_sentence_speaks_cores() -> None:
    result = run_cycle(snapshot([_g1(), _g2()], [make_job("gang", gpus=1, cpu_millis=8000, workers=6)]))
    (refused,) = result.rejects
    assert refused.reason.message == ("needs 6 workers of 8 CPU cores each, but the nodes can hold only 4 at once"), \
        refused.reason.message


def test_s40_hostwords_a_share_waiting_for_its_part_is_not_told_no_gpu_has_room() -> None:
    """Half a GPU asking 4 cores waits for g2 (full) with g1's GPUs all free: it was told "no A100-80GB GPU has that
    much free"; g1's GPUs bring 4 cores each, so half of one brings 2."""
    result = _after([_g1(), _g2()], [make_job("full", gpus=4, cpu_millis=32000)],
                    [make_job("half", gpus=1, milli=500, cpu_millis=4000, submitted=1)])
    (pend,) = result.pending
    reason = pend.reason
    assert reason.message.startswith("4 A100-80GB GPUs free, but it asks for 4 CPU cores with 0.5 GPU, and a GPU "
                                     "node's host is split among its GPUs: g1 gives 4 CPU cores per GPU"), reason.message
    assert "no A100-80GB GPU has that much free" not in reason.message, reason.message
    assert reason.unblock.startswith("ask for at most cpu 2 with 0.5 GPU, or for 1 GPU, to start on g1 now"), \
        reason.unblock
