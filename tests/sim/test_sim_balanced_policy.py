"""FGD-Balanced, our best placement policy: FGD plus CPU balance plus node-class scarcity.

Each case is a two-node cluster where FGD alone is indifferent (it would take the first node) and
one added term decides; turning that term's weight to 0 must flip the choice back, so every case
shows the term at work. Units: CPU in millicores, GPUs in milli-GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from jupyter_sched.model import GPU, Inventory, Node
from jupyter_sched.placement.balanced import FgdBalancedScore, class_pressure, cpu_per_gpu_milli
from jupyter_sched.placement.fgd import FgdScore, NodeArrays, PodShape, TypicalPod
from jupyter_sched.placement.placer import Placer
from jupyter_sched.placement.state import ClusterState, Holding
from jupyter_sched.sim.fgd_protocol import policy_profile, request_of


def node(name: str, *, gpus: int = 8, cpu: int = 96_000, model: str = "A100") -> Node:
    return Node(name=name, gpus=tuple(GPU(uuid=f"{name}-g{i}", index=i, node=name, model=model, memory_mib=81920)
                                      for i in range(gpus)), cpu_millis=cpu, memory_mib=1 << 20)


def pod(gpus: int = 1, cpu: int = 4000, milli: int = 1000, models: tuple[str, ...] = ()) -> PodShape:
    return PodShape(cpu_milli=cpu, gpus=gpus, gpu_milli=milli if gpus else 0, models=models)


def workload(*shapes: tuple[PodShape, float]) -> tuple[TypicalPod, ...]:
    return tuple(TypicalPod(s, p) for s, p in shapes)


TWELVE_CORES_PER_GPU = workload((pod(1, cpu=12_000), 1.0))


def first_choice(nodes: tuple[Node, ...], shape: PodShape, plugin: FgdScore) -> str:
    """The node the production placer picks for ``shape`` with a profile naming only ``plugin``."""
    state = ClusterState(Inventory(nodes=nodes))
    placer = Placer(state, policy_profile(plugin).placement)
    req = request_of(shape)
    placed = placer.place("pod", req, placer.flavors(req)[0])
    assert placed is not None
    return nodes[placed.holding.node].name


@dataclass(frozen=True)
class Case:
    id: str
    nodes: tuple[Node, ...]
    typical: tuple[TypicalPod, ...]
    pod: PodShape
    want: str
    term: str                       # the weight that decides: "balance_weight" or "scarcity_weight"


CASES = [
    Case("a CPU-light pod goes to the node whose CPU cannot feed its GPUs",
         (node("cpu-rich", cpu=192_000), node("cpu-poor", cpu=24_000)), TWELVE_CORES_PER_GPU,
         pod(1, cpu=2000), "cpu-poor", "balance_weight"),
    Case("a CPU-heavy pod goes to the node with CPU to spare",
         (node("balanced", cpu=96_000), node("cpu-rich", cpu=192_000)), TWELVE_CORES_PER_GPU,
         pod(1, cpu=40_000), "cpu-rich", "balance_weight"),
    Case("a CPU-only pod leaves the cores that GPUs will need",
         (node("gpu-box", gpus=8, cpu=96_000), node("cpu-box", gpus=2, cpu=104_000)), TWELVE_CORES_PER_GPU,
         pod(0, cpu=16_000), "cpu-box", "balance_weight"),
    Case("a pod that runs anywhere leaves the model others are pinned to",
         (node("t4", model="T4"), node("v100", model="V100")),
         workload((pod(1, models=("T4",)), 0.02), (pod(1), 0.98)),  # FGD's own model term rounds away
         pod(1), "v100", "scarcity_weight"),
    Case("a small pod leaves the only nodes with CPU for 120-core 4-GPU pods",
         (node("128-cores", cpu=128_000), node("96-cores", cpu=96_000)),
         workload((pod(1, cpu=4000), 0.98), (pod(4, cpu=120_000), 0.02)),
         pod(1, cpu=4000), "96-cores", "scarcity_weight"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_balanced_policy_picks_the_node_its_terms_call_for(case: Case) -> None:
    assert first_choice(case.nodes, case.pod, FgdScore(case.typical)) == case.nodes[0].name  # FGD: indifferent
    assert first_choice(case.nodes, case.pod, FgdBalancedScore(case.typical)) == case.want
    off = FgdBalancedScore(case.typical, **{case.term: 0.0})
    assert first_choice(case.nodes, case.pod, off) == case.nodes[0].name


def test_cpu_per_gpu_milli_counts_cpu_only_pods_at_the_given_share() -> None:
    typical = workload((pod(1, cpu=10_000), 0.5), (pod(0, cpu=20_000), 0.5))
    assert cpu_per_gpu_milli(typical) == pytest.approx((5000 + 0.5 * 10_000) / 500)
    assert cpu_per_gpu_milli(typical, cpu_only_share=0.0) == pytest.approx(10.0)
    assert cpu_per_gpu_milli(workload((pod(0, cpu=1000), 1.0))) == 0.0
    with pytest.raises(ValueError, match="cpu_only_share"):
        cpu_per_gpu_milli(typical, cpu_only_share=1.5)


def test_class_pressure_spreads_pinned_demand_over_the_classes_it_fits() -> None:
    arrays = NodeArrays.from_inventory(Inventory(nodes=(node("t4", model="T4"), node("v100", model="V100"))))
    # half the demand may only use T4: 500 milli per pod over 8,000 milli of T4, against 1,000 over 16,000
    pinned = workload((pod(1, models=("T4",)), 0.5), (pod(1), 0.5))
    assert list(class_pressure(pinned, arrays)) == pytest.approx([1.0, 0.0])
    assert list(class_pressure(workload((pod(1), 1.0)), arrays)) == [0.0, 0.0]


@pytest.mark.parametrize("weights", [{"balance_weight": -1.0}, {"balance_weight": float("nan")},
                                     {"scarcity_weight": float("inf")}], ids=["negative", "NaN", "infinite"])
def test_weights_must_be_finite_and_not_negative(weights: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="finite and >= 0"):
        FgdBalancedScore(TWELVE_CORES_PER_GPU, **weights)


SCALAR_CASES = [
    ("costs inside 0..100", (node("cpu-rich", cpu=192_000), node("cpu-poor", cpu=24_000)), pod(1, cpu=2000)),
    ("costs far below 0", (node("a", cpu=100_000), node("b", cpu=140_000)), pod(1, cpu=90_000)),
    ("a node without GPUs for a CPU-only pod", (node("g", cpu=96_000), node("cpu", gpus=0, cpu=96_000)),
     pod(0, cpu=8000)),
]


@pytest.mark.parametrize("case", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_the_scalar_score_protocol_ranks_like_the_vectorised_one(
        case: tuple[str, tuple[Node, ...], PodShape]) -> None:
    _, nodes, shape = case
    plugin = FgdBalancedScore(TWELVE_CORES_PER_GPU)
    state = ClusterState(Inventory(nodes=nodes))
    req = request_of(shape)
    vec = plugin.score_nodes(state.node_arrays(), shape, np.array([0, 1]))
    scalar = [plugin.score(req, state, n, state.node_gpus[n][:1]) for n in (0, 1)]
    assert (vec[0] < vec[1]) == (scalar[0] < scalar[1]) and (vec[0] > vec[1]) == (scalar[0] > scalar[1])
    assert all(0 <= s <= 100 for s in scalar)


def test_the_scalar_score_sees_the_ledger_after_a_take() -> None:
    """score() must not reuse free-GPU counts cached by an earlier score_nodes() call."""
    nodes = (node("cpu-rich", cpu=192_000), node("cpu-poor", cpu=24_000))
    plugin = FgdBalancedScore(TWELVE_CORES_PER_GPU)
    state = ClusterState(Inventory(nodes=nodes))
    plugin.score_nodes(state.node_arrays(), pod(1, cpu=2000), np.array([0, 1]))
    state.take("x", Holding(tuple((g, 1000) for g in state.node_gpus[1][:7]), 1, 2000, 0))
    req = request_of(pod(1, cpu=2000))
    fresh = FgdBalancedScore(TWELVE_CORES_PER_GPU)
    assert [plugin.score(req, state, n, state.node_gpus[n][7:8]) for n in (0, 1)] == \
        [fresh.score(req, state, n, state.node_gpus[n][7:8]) for n in (0, 1)]


def test_a_new_view_of_the_cluster_never_reuses_another_views_results() -> None:
    typical = workload((pod(1, models=("T4",)), 0.02), (pod(1), 0.98))
    plugin = FgdBalancedScore(typical)
    first = NodeArrays.from_inventory(Inventory(nodes=(node("t4", model="T4"), node("v100", model="V100"))))
    before = plugin.score_nodes(first, pod(1), np.array([0, 1]))
    del first  # CPython tends to hand the freed id to the next view: an id-keyed cache would match it
    swapped = NodeArrays.from_inventory(Inventory(nodes=(node("v100", model="V100"), node("t4", model="T4"))))
    assert list(plugin.score_nodes(swapped, pod(1), np.array([0, 1]))) == list(before[::-1])
