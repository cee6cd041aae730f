"""Gangs: per-node fit at admission (case 024) and heterogeneous worker groups (issue 16 §3)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Job, Quota, ResourceRequest, WorkerGroup, spec_from_request
from jupyter_sched.model.codec import job_from_dict, job_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.ledger import CycleLedger


def grouped(job_id: str, *groups: tuple[str, int, int], **kw: object) -> Job:
    """A job with worker groups ``(name, gpus per worker, workers)``."""
    job = make_job(job_id, **kw)  # type: ignore[arg-type]
    req = ResourceRequest.of_groups(tuple(WorkerGroup(name=n, gpus=g, workers=w) for n, g, w in groups))
    return replace(job, spec=replace(job.spec, resources=req))


# ---------------------------------------------------------------------------------- case 024
def test_case_024_a_gang_that_fits_in_total_but_not_per_node_pends_holding_nothing() -> None:
    nodes = [make_node(f"n{i}", gpus=8) for i in range(1, 6)]
    busy = [running(make_job(f"u{i}", gpus=2, team="t"), f"n{i}", [0, 1]) for i in range(1, 6)]
    gang = make_job("g-train", gpus=4, workers=6, team="t", submitted=0)
    small = make_job("small", gpus=2, team="t", submitted=1)
    q = quotas(Quota(team="t", guaranteed=40))
    result = run_cycle(snapshot(nodes, [*busy, gang, small], quota=q))
    assert [a.job_id for a in result.admits] == ["small"]  # not stuck behind the unplaceable gang
    assert result.nominations == {} and result.preemptions == ()  # nothing bound, no GPUs held
    reason = next(p.reason for p in result.pending if p.job_id == "g-train")
    assert reason.code == "Fragmented"
    assert reason.message.startswith("gang needs 6 x 4 A100-80GB GPUs on separate placements; only 5 of its 6 "
                                     "workers fit now (n1:6, n2:6, n3:6, n4:6, n5:6)")
    assert reason.details["fit_workers"] == 5 and reason.details["per_node"] == {f"n{i}": 6 for i in range(1, 6)}


@pytest.mark.parametrize("order", [("x", "y"), ("y", "x")], ids=["members listed x, y", "members listed y, x"])
def test_case_024_b_mixed_members_are_placed_largest_first_every_time(order: tuple[str, str]) -> None:
    sizes = {"x": 3, "y": 5}
    nodes = [make_node("a", gpus=8), make_node("b", gpus=8)]
    busy = [running(make_job("ua", gpus=3), "a", [0, 1, 2]), running(make_job("ub", gpus=5), "b", range(5))]
    for _ in range(100):
        job = grouped("g-mixed", *((name, sizes[name], 1) for name in order))
        (admit,) = run_cycle(snapshot(nodes, [*busy, job])).admits
        placed = dict(zip(job.spec.resources.worker_groups(), admit.allocation.workers, strict=True))
        assert (placed["y"][0], len(placed["y"][1]), placed["x"][0], len(placed["x"][1])) == ("a", 5, "b", 3)


def test_a_homogeneous_gang_that_never_packs_is_rejected_naming_workers() -> None:
    nodes = [make_node("a", gpus=8), make_node("b", gpus=8)]
    result = run_cycle(snapshot(nodes, [make_job("g", gpus=5, workers=3)]))
    (reject,) = result.rejects
    assert reject.reason.code == "Unschedulable" and reject.reason.details["field"] == "workers"
    assert "the nodes hold at most 2 of its 3 workers at once, even empty" in reject.reason.message


# ---------------------------------------------------------------------------------- heterogeneous
def test_a_launcher_and_four_8_gpu_workers_are_admitted_all_or_nothing_as_one_job() -> None:
    nodes = [make_node(f"n{i}", gpus=8) for i in range(5)]
    job = grouped("llm", ("launcher", 1, 1), ("trainer", 8, 4), team="t")
    q = quotas(Quota(team="t", guaranteed=40))
    result = run_cycle(snapshot(nodes, [job], quota=q))
    (admit,) = result.admits
    groups = job.spec.resources.worker_groups()
    assert groups == ("launcher", "trainer", "trainer", "trainer", "trainer")
    assert [len(uuids) for _, uuids in admit.allocation.workers] == [1, 8, 8, 8, 8]
    trainer_nodes = {node for (node, _), g in zip(admit.allocation.workers, groups, strict=True) if g == "trainer"}
    assert len(trainer_nodes) == 4  # each 8-GPU worker on its own node; the launcher beside one of them
    assert admit.borrowed == 0 and job.spec.resources.total_milli == 33_000  # charged as one job of 33 GPUs
    ledger = CycleLedger(snapshot(nodes, [replace(job, state=running(job).state, allocation=admit.allocation)], quota=q))
    assert ledger.quota.usage[("t", None, "*")] == 33_000 and sum(ledger.state.node_free) == 40 - 33


def test_a_heterogeneous_gang_waits_whole_when_one_group_does_not_fit() -> None:
    nodes = [make_node("a", gpus=8), make_node("b", gpus=8), make_node("c", gpus=8)]
    busy = [running(make_job("u", gpus=4), "b", range(4), started=0),
            running(make_job("v", gpus=8, time_limit_s=600), "c", range(8), started=0)]
    job = grouped("mixed", ("launcher", 1, 1), ("trainer", 8, 2))
    result = run_cycle(snapshot(nodes, [*busy, job]))
    assert result.admits == ()
    reason = result.pending[0].reason
    assert "gang needs 1 x 1 + 2 x 8 A100-80GB GPUs" in reason.message and reason.details["fit_workers"] == 2
    assert reason.eta is not None and reason.details["eta_waits_on"] == ["v"]  # it starts when v ends


def test_groups_travel_through_the_codec() -> None:
    job = grouped("llm", ("launcher", 0, 1), ("trainer", 8, 4))
    back = job_from_dict(job_to_dict(job))
    assert back.spec.resources == job.spec.resources and back.spec.resources.worker_groups()[0] == "launcher"


def test_a_gang_of_groups_is_shown_as_one_job_group_by_group() -> None:
    from jupyter_sched.wording import gpus_text

    assert gpus_text(job_to_dict(grouped("llm", ("launcher", 1, 1), ("trainer", 8, 4)))) == "1 x 1 + 4 x 8 GPUs"
    gang = make_job("g", gpus=4)
    gang = replace(gang, spec=replace(gang.spec, resources=replace(gang.spec.resources, workers=2)))
    assert gpus_text(job_to_dict(gang)) == "2 x 4 GPUs" and gpus_text(job_to_dict(make_job("one"))) == "1 GPU"


@pytest.mark.parametrize(("body", "field"), [
    pytest.param({"groups": []}, "groups", id="an empty group list"),
    pytest.param({"groups": [{"name": "a", "gpus": 1}, {"name": "a", "gpus": 2}]}, "groups[1].name",
                 id="a group name used twice"),
    pytest.param({"groups": [{"name": "Launcher", "gpus": 1}]}, "groups[0].name", id="a name that is not a DNS label"),
    pytest.param({"groups": [{"name": "a", "gpus": 0.5}]}, "groups[0].gpus", id="a share of a GPU in a group"),
    pytest.param({"groups": [{"name": "a", "gpus": 1, "workers": 0}]}, "groups[0].workers", id="zero workers"),
    pytest.param({"groups": [{"name": "a", "gpus": 1, "colour": "red"}]}, "groups[0].colour", id="an unknown key"),
    pytest.param({"gpus": 2, "groups": [{"name": "a", "gpus": 1}]}, "gpus", id="gpus beside groups"),
    pytest.param({"groups": [{"name": "a", "gpus": 0}]}, "groups", id="no GPU in any group"),
])
def test_bad_groups_are_refused_naming_the_field(body: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        spec_from_request({"command": ["python", "x.py"], **body}, user="alice")
    assert info.value.field == field and info.value.hint


def test_a_grouped_request_whose_summary_disagrees_is_refused() -> None:
    with pytest.raises(ValidationError) as info:
        ResourceRequest(gpus=1, workers=2, groups=(WorkerGroup("a", 8, 2),))
    assert info.value.field == "groups"


def test_a_gang_waiting_on_a_preemption_names_the_node_of_its_gpus_not_its_launcher_s() -> None:
    # found while diagnosing the property's counterexample (session 7): "preempting lo to free n0"
    # named the GPU-less launcher's node while lo's GPUs, freed for the workers, are on n1
    lo = running(make_job("lo", gpus=2, priority="low"), node="n1")
    hi = make_job("hi", priority="high", submitted=1)
    hi = replace(hi, spec=replace(hi.spec, resources=ResourceRequest.of_groups(
        (WorkerGroup("launcher", 0), WorkerGroup("worker", 2, 1)))))
    result = run_cycle(snapshot([make_node("n0", gpus=1), make_node("n1", gpus=2)], [lo, hi]))
    assert [p.job_id for p in result.preemptions] == ["lo"]
    reason = next(p.reason for p in result.pending if p.job_id == "hi")
    assert reason.message == "preempting alice's job lo to free GPUs on n1; the GPUs are held for this job"
    assert reason.details["nodes"] == ["n1"]
