"""Session 22 (s21-fix9 "Left", issue 16/20): the ETA projection counted a mixed-model node's GPUs together.

On a node of 2 A100-80GB + 4 H100-80GB the projection's capacity unit was the node: a 2-GPU H100 job
got its ETA when the node's *A100* job (or idle A100 lease) ended — 2 GPUs of the node free — though
no A100 GPU can start it ("ETA 12:02 if l-a100 stays idle"). The projection now has a unit per model
on such a node (:mod:`jupyter_sched.scheduling.eta_units`): a job of one model, a job allowing
several, a gang and a quota-held job each start when GPUs of *their* model free. Nodes of one model
keep one unit per node (or pool), as before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from jupyter_sched.model import Inventory, Job, JobKind, Node, Quota, QuotaSet
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.placement.state import ClusterState
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.eta_units import units_of_inventory
from jupyter_sched.wording import render_reason
from tests.core.core_builders import T0, make_job, make_node, quotas, running, snapshot

A100, H100 = "A100-80GB", "H100-80GB"
MIN = 60.0


def _mixed(name: str) -> Node:
    """GPUs 0-1 A100-80GB, 2-5 H100-80GB on one node (uuids ``GPU-<name>-<i>``)."""
    a100 = make_node(name, gpus=2, model=A100)
    h100 = make_node(name, gpus=4, model=H100)
    gpus = tuple(replace(g, index=i, uuid=f"GPU-{name}-{i}") for i, g in enumerate(a100.gpus + h100.gpus))
    return replace(a100, gpus=gpus)


def _holders(node: str, suffix: str = "") -> list[Job]:
    """On ``node``: an A100 job on both A100s ending in 10 minutes, an H100 job on all four H100s in 30
    (both started an hour ago, their limits their ends)."""
    return [running(make_job(f"a{suffix}", gpus=2, models=(A100,), time_limit_s=70 * MIN), node, [0, 1]),
            running(make_job(f"h{suffix}", gpus=4, models=(H100,), time_limit_s=90 * MIN), node, [2, 3, 4, 5])]


@dataclass(frozen=True)
class Case:
    id: str
    gpus: int
    models: tuple[str, ...]
    workers: int = 1
    quota: QuotaSet | None = None
    want_minutes: float = 0.0
    want_waits: tuple[str, ...] = ()
    want_code: str = ""


CASES = [
    Case("an H100 job starts when the H100 job ends, not when the A100 job does", 2, (H100,),
         want_minutes=30, want_waits=("h",)),
    Case("an A100 job starts when the A100 job ends", 2, (A100,), want_minutes=10, want_waits=("a",)),
    Case("a job allowing either model starts on the first of them to free enough", 2, (A100, H100),
         want_minutes=10, want_waits=("a",)),
    Case("a 3-GPU job of any model fits no A100 unit of 2: it waits for the H100s", 3, (),
         want_minutes=30, want_waits=("h",)),
    Case("a quota-held H100 job waits for H100 GPUs though its team line frees when the A100 job ends", 2, (H100,),
         quota=quotas(Quota(team="default", guaranteed=6, borrowing_limit=0)), want_minutes=30, want_waits=("h",),
         want_code="quota"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_s22_mixed_node_eta_per_model(case: Case) -> None:
    job = make_job("w", gpus=case.gpus, models=case.models, submitted=1, time_limit_s=60 * MIN)
    reason = {p.job_id: p.reason for p in run_cycle(snapshot([_mixed("g1")], [*_holders("g1"), job],
                                                             quota=case.quota)).pending}["w"]
    if case.want_code == "quota":
        assert reason.code in ("ExceedsQuota", "BorrowingLimitReached", "InsufficientQuota"), reason
    assert reason.eta == T0 + timedelta(minutes=case.want_minutes), (reason.eta, reason.details.get("eta_waits_on"))
    assert tuple(reason.details["eta_waits_on"]) == case.want_waits


def test_s22_mixed_node_eta_per_model_gang_takes_h100_units_on_two_nodes() -> None:
    """A 2 x 2 H100 gang on two such nodes: at 10 minutes each node has 2 GPUs free — A100s; at 30 the
    four H100s of a node hold both workers."""
    gang = make_job("w", gpus=2, workers=2, models=(H100,), submitted=1, time_limit_s=60 * MIN)
    jobs = [*_holders("g1", "1"), *_holders("g2", "2"), gang]
    reason = {p.job_id: p.reason for p in run_cycle(snapshot([_mixed("g1"), _mixed("g2")], jobs)).pending}["w"]
    assert reason.eta == T0 + timedelta(minutes=30), (reason.eta, reason.details.get("eta_waits_on"))
    assert list(reason.details["eta_waits_on"]) in (["h1"], ["h2"]), reason.details["eta_waits_on"]


@pytest.mark.parametrize(("model", "want_minutes", "want_waits"), [(H100, 30, ["h"]), (A100, 10, ["x"])])
def test_s22_mixed_node_eta_per_model_a_holding_of_two_models_frees_each_on_its_own(
        model: str, want_minutes: float, want_waits: list[str]) -> None:
    """A job holding one A100 and one H100 of the node (a merged flavor's placement) frees one GPU of
    each model at its end: an H100 job needing 2 still waits for the H100 job; an A100 job starts then."""
    jobs = [running(make_job("x", gpus=2, time_limit_s=70 * MIN), "g1", [1, 2]),
            running(make_job("h", gpus=3, models=(H100,), time_limit_s=90 * MIN), "g1", [3, 4, 5]),
            make_job("w", gpus=2, models=(model,), submitted=1, time_limit_s=60 * MIN)]
    reason = {p.job_id: p.reason for p in run_cycle(snapshot([_mixed("g1")], jobs)).pending}["w"]
    assert reason.eta == T0 + timedelta(minutes=want_minutes), (reason.eta, reason.details.get("eta_waits_on"))
    assert list(reason.details["eta_waits_on"]) == want_waits


def test_s22_mixed_node_eta_per_model_idle_lease_of_another_model_is_not_named() -> None:
    """The repro of s21-fix9: idle A100 lease reclaimed at +2m, idle H100 lease at +5m; a 2-GPU H100 job
    said "ETA 12:02 if l-a100 stays idle". Its ETA is the H100 lease's reclaim, and its words name that
    lease alone — never the A100 lease, which cannot start it."""

    def lease(job_id: str, gpus: int, model: str, indices: list[int]) -> Job:
        job = make_job(job_id, gpus=gpus, models=(model,))
        return running(replace(job, spec=replace(job.spec, kind=JobKind.LEASE, kernel_id=f"k-{job_id}")), "g1", indices)

    jobs = [lease("l-a100", 2, A100, [0, 1]), lease("l-h100", 4, H100, [2, 3, 4, 5]),
            make_job("w", gpus=2, models=(H100,), submitted=1, time_limit_s=300)]
    snap = replace(snapshot([_mixed("g1")], jobs),
                   idle_ends={"l-a100": T0 + timedelta(minutes=2), "l-h100": T0 + timedelta(minutes=5)})
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["w"]
    assert reason.eta == T0 + timedelta(minutes=5), reason
    assert list(reason.details["eta_waits_on"]) == ["l-h100"], reason.details["eta_waits_on"]
    assert [w["id"] for w in reason.details.get("eta_waits_on_own", [])] == ["l-h100"]
    text = render_reason(reason_to_dict(reason) or {}, now=T0, relative=True, mine=True)
    assert "(in 5m)" in text.eta and "l-h100" in text.eta, text.eta
    assert "l-a100" not in text.line and "l-a100" not in text.unblock, text


def test_s22_mixed_node_eta_per_model_layout_splits_only_mixed_nodes() -> None:
    """The units: one per node (pool) of one model, as before; one per model on a node (pool) mixing
    models, sized by that model's GPUs; free GPUs counted per model."""
    state = ClusterState(Inventory(nodes=(make_node("one", gpus=8), _mixed("g1"), _mixed("g2"))))
    by_node = units_of_inventory(state, True)
    assert by_node.count == 5  # 3 nodes + an H100 unit on each mixed node
    assert list(by_node.gpu_unit[:8]) == [0] * 8 and by_node.unit_max[0] == 8  # the one-model node: unchanged
    assert [by_node.on(1, A100), by_node.on(1, H100), by_node.on(0, H100)] == [(1,), (3,), (0,)]
    assert [by_node.unit_max[u] for u in (1, 2, 3, 4)] == [2, 2, 4, 4]
    pools = units_of_inventory(state, False)  # g1 and g2 are one pool: its A100 and its H100 unit
    assert pools.count == 3 and [pools.unit_max[u] for u in range(3)] == [8, 2, 4]
    h100_gpus = [g for g in range(len(state.gpu_model)) if state.gpu_model[g] == H100]
    assert {pools.gpu_unit[g] for g in h100_gpus} == {2}
    state.free_milli[h100_gpus[0]] = 0  # one H100 of g1 taken (as a holding would)
    state.node_free[1] -= 1
    state.pools[1].free_whole -= 1
    assert by_node.free_now(state, True) == [8, 2, 2, 3, 4]
    assert pools.free_now(state, False) == [8, 4, 7]


def test_s22_mixed_node_eta_per_model_one_model_inventory_keeps_node_units() -> None:
    """Nodes of one model (the common case): unit = node (or pool), sizes and free counts as the ledger's."""
    state = ClusterState(Inventory(nodes=(make_node("n1", gpus=8), make_node("n2", gpus=4, model=H100),
                                          make_node("n3", gpus=8))))
    for by_node, homes in ((True, list(state.gpu_node)), (False, [state.node_pool[n] for n in state.gpu_node])):
        units = units_of_inventory(state, by_node)
        assert list(units.gpu_unit) == homes and not units.per_model
        assert units.count == (len(state.nodes) if by_node else len(state.pools))
        assert list(units.unit_max) == (list(state.node_capacity) if by_node else
                                        [p.max_per_node for p in state.pools])
        assert units.free_now(state, by_node) == (list(state.node_free) if by_node else
                                                  [p.free_whole for p in state.pools])


def test_s22_eta_units_of_a_model_follow_the_jobs_filters() -> None:
    """Found beside it: the plan kept a model's units per model alone, so a zone-a job got the units of a
    zone-b job of that model projected before it ("ETA 13:30, after wb" on zone b's node) though
    zone a's node frees in 10 minutes."""
    nodes = [make_node("n1", gpus=4, labels={"zone": "a"}), make_node("n2", gpus=4, labels={"zone": "b"})]
    jobs = [running(make_job("r1", gpus=4, time_limit_s=70 * MIN), "n1"),
            running(make_job("r2", gpus=4, time_limit_s=90 * MIN), "n2"),
            make_job("wb", gpus=4, node_selector={"zone": "b"}, submitted=1, time_limit_s=60 * MIN),
            make_job("wa", gpus=4, node_selector={"zone": "a"}, submitted=2, time_limit_s=60 * MIN)]
    reasons = {p.job_id: p.reason for p in run_cycle(snapshot(nodes, jobs)).pending}
    assert (reasons["wb"].eta, list(reasons["wb"].details["eta_waits_on"])) == (T0 + timedelta(minutes=30), ["r2"])
    assert (reasons["wa"].eta, list(reasons["wa"].details["eta_waits_on"])) == (T0 + timedelta(minutes=10), ["r1"])


@pytest.mark.parametrize(("a100_busy", "want"), [
    (4, "needs 2 A100-80GB or H100-80GB GPUs, 0 free."),  # the same words of both models: said once
    (3, "needs 2 A100-80GB GPUs, 1 free. needs 2 H100-80GB GPUs, 0 free."),  # their numbers differ: each said
])
def test_s22_v12_nit_a_job_of_any_model_behind_full_nodes_says_needs_once(a100_busy: int, want: str) -> None:
    """verify21 V12 nit: a job of any model behind full nodes read "needs 1 A100-80GB GPU, 0 free. needs 1
    H100-80GB GPU, 0 free" — one clause per model in the same words."""
    jobs = [running(make_job("a", gpus=a100_busy, models=(A100,), time_limit_s=70 * MIN), "n1", list(range(a100_busy))),
            running(make_job("h", gpus=4, models=(H100,), time_limit_s=90 * MIN), "n2"),
            make_job("w", gpus=2, submitted=1, time_limit_s=60 * MIN)]
    reason = {p.job_id: p.reason for p in run_cycle(snapshot([make_node("n1", gpus=4), make_node("n2", gpus=4, model=H100)],
                                                             jobs)).pending}["w"]
    assert reason.message == want
    assert [f["flavor"] for f in reason.per_flavor] == [A100, H100]  # the data keeps one entry per model
    assert render_reason(reason_to_dict(reason) or {}, now=T0).summary == want


def test_s22_mixed_node_capacity_of_a_model_counts_its_gpus_only() -> None:
    """A flavor's capacity on a node of 2 A100 + 4 H100 was the node's 6 GPUs for either model: the
    reason's numbers said "capacity 6" of an A100 wait, and the ETA's basis (what "capacity of its GPU
    models fell from … to …" compares) counted the H100s of an A100 job."""
    jobs = [*_holders("g1"), make_job("wa", gpus=2, models=(A100,), submitted=1, time_limit_s=60 * MIN),
            make_job("wh", gpus=2, models=(H100,), submitted=2, time_limit_s=60 * MIN)]
    reasons = {p.job_id: p.reason for p in run_cycle(snapshot([_mixed("g1")], jobs)).pending}
    assert [(reasons[j].details["capacity"], reasons[j].details["eta_basis"]["capacity"]) for j in ("wa", "wh")] \
        == [(2, 2), (4, 4)]
