"""FGD and the paper's baseline policies as vectorised placement score plugins.

The fragmentation model is checked against the paper's definition written out naively; the
policies are checked on small hand-built clusters where the right node is obvious.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from jupyter_sched.model import GPU, Inventory, Node, ResourceRequest
from jupyter_sched.placement.fgd import (
    FgdScore,
    FragModel,
    NodeArrays,
    PodShape,
    TypicalPod,
    model_allowed,
    typical_pods,
)
from jupyter_sched.placement.paper_policies import (
    BestFitScore,
    DotProductScore,
    GpuClusteringScore,
    GpuPackingScore,
    RandomScore,
)
from jupyter_sched.placement.placer import Placer
from jupyter_sched.placement.scores import VectorScore
from jupyter_sched.placement.state import ClusterState, Holding
from jupyter_sched.sim.fgd_protocol import policy_profile, request_of


def make_node(name: str, gpus: int = 8, *, model: str = "A100", cpu: int = 96_000, mem: int = 393_216) -> Node:
    return Node(name=name, gpus=tuple(GPU(uuid=f"{name}-g{i}", index=i, node=name, model=model, memory_mib=81920)
                                      for i in range(gpus)), cpu_millis=cpu, memory_mib=mem)


def make_arrays(*nodes: Node) -> NodeArrays:
    return NodeArrays.from_inventory(Inventory(nodes=tuple(nodes)))


def make_state(*nodes: Node) -> ClusterState:
    return ClusterState(Inventory(nodes=tuple(nodes)))


def hold(state: ClusterState, node: int, cols: tuple[int, ...], pod: PodShape) -> None:
    """Builder: ``pod`` already runs on GPU columns ``cols`` of ``node``."""
    base = state.node_gpus[node][0]
    state.take(f"held-{len(state.holdings)}", Holding(tuple((base + c, pod.gpu_milli) for c in cols), node,
                                                      pod.cpu_milli, pod.memory_mib))


def place_one(state: ClusterState, pod: PodShape, plugin: VectorScore,
              rng: np.random.Generator | None = None) -> tuple[int, tuple[int, ...]] | None:
    """Place ``pod`` through the production placer with a profile naming ``plugin``, and take it."""
    placer = Placer(state, policy_profile(plugin, rng).placement)
    req = request_of(pod)
    flavors = placer.flavors(req)
    placed = placer.place("pod", req, flavors[0]) if flavors else None
    if placed is None:
        return None
    state.take(f"pod-{len(state.holdings)}", placed.holding)
    node = placed.holding.node
    return node, tuple(g - state.node_gpus[node][0] for g, _ in placed.holding.gpus)


def shape(gpus: int = 1, milli: int = 1000, cpu: int = 4000, mem: int = 0, models: tuple[str, ...] = ()) -> PodShape:
    return PodShape(cpu_milli=cpu, memory_mib=mem, gpus=gpus, gpu_milli=milli if gpus else 0, models=models)


def naive_frag(model: str, cpu_left: int, left: list[int], typical: tuple[TypicalPod, ...]) -> float:
    """The paper's definition, written out: unusable idle GPU-milli per target pod, weighted."""
    total = sum(left)
    frag = 0.0
    for t in typical:
        s = t.shape
        fits = (s.gpus > 0 and model_allowed(s.models, model) and cpu_left >= s.cpu_milli
                and sum(1 for x in left if x >= s.gpu_milli) >= s.gpus)
        frag += t.popularity * (sum(x for x in left if x < s.gpu_milli) if fits else total)
    return frag


TYPICAL = (
    TypicalPod(shape(1, 500, cpu=2000), 0.4),
    TypicalPod(shape(1, 1000, cpu=8000), 0.3),
    TypicalPod(shape(8, 1000, cpu=32000), 0.1),
    TypicalPod(shape(2, 1000, cpu=4000, models=("V100",)), 0.1),
    TypicalPod(shape(0, 0, cpu=6000), 0.1),
)


@dataclass(frozen=True)
class FragCase:
    id: str
    model: str
    cpu_left: int
    left: tuple[int, ...]


FRAG_CASES = [
    FragCase("an empty node fragments only for CPU pods and pods of other models", "A100", 96_000, (1000,) * 8),
    FragCase("a node with 7 free GPUs cannot take the 8-GPU pod", "A100", 96_000, (1000,) * 7 + (0,)),
    FragCase("GPU slivers below every share are pure fragment", "A100", 96_000, (300, 200, 0, 0)),
    FragCase("too little CPU fragments the whole node", "A100", 1_000, (1000, 1000, 500, 0)),
    FragCase("a V100 node serves the V100-only shape", "V100", 96_000, (1000, 1000, 700, 400)),
]


@pytest.mark.parametrize("case", FRAG_CASES, ids=[c.id for c in FRAG_CASES])
def test_fragmentation_matches_the_papers_definition(case: FragCase) -> None:
    models = ("A100", "V100")
    fm = FragModel(TYPICAL, models)
    left = np.zeros((1, 8), dtype=np.int64)
    left[0, : len(case.left)] = case.left
    cnt, small = fm.counts(left)
    got = fm.frag(np.array([models.index(case.model)]), np.array([case.cpu_left]), left.sum(axis=1), cnt, small)
    assert got[0] == pytest.approx(naive_frag(case.model, case.cpu_left, list(case.left), TYPICAL))


def test_fgd_puts_a_share_where_the_remainder_stays_usable() -> None:
    arrays = make_arrays(make_node("n0", 2))
    arrays.gpu_left[0] = [500, 300, 0, 0, 0, 0, 0, 0]   # two partly used GPUs
    arrays.gen[0] += 1
    fgd = FgdScore((TypicalPod(shape(1, 500, cpu=0), 1.0),))
    nodes = np.array([0])
    fgd.score_nodes(arrays, shape(1, 300, cpu=0), nodes)
    # 0.3 on the 300-GPU leaves the 500 usable; on the 500-GPU it would leave 200 + 300 of slivers
    assert fgd.pick_gpus(arrays, shape(1, 300, cpu=0), nodes, 0) == (1,)


def test_fgd_keeps_whole_nodes_for_eight_gpu_pods() -> None:
    state = make_state(make_node("busy"), make_node("empty"))
    hold(state, 0, (0, 1), shape(2))
    typical = typical_pods([shape(1)] * 90 + [shape(8, cpu=32000)] * 10)
    assert place_one(state, shape(1), FgdScore(typical)) == (0, (2,))


def test_the_scalar_score_protocol_agrees_with_the_vectorised_one() -> None:
    inv = Inventory(nodes=(make_node("a", 4), make_node("b", 8, model="V100")))
    fgd = FgdScore(TYPICAL)
    arrays = NodeArrays.from_inventory(inv)
    state = ClusterState(inv)
    req = ResourceRequest(gpus=1, gpu_milli=500, cpu_millis=2000)
    vec = fgd.score_nodes(arrays, PodShape.from_request(req), np.array([0, 1]))
    scalar = [fgd.score(req, state, n, [state.node_gpus[n][0]]) for n in (0, 1)]
    assert list(vec) == scalar


@dataclass(frozen=True)
class PolicyCase:
    id: str
    policy: str
    pod: PodShape
    want_nodes: tuple[int, ...]


def _policy_cluster() -> ClusterState:
    state = make_state(make_node("empty"), make_node("shared"), make_node("whole"), make_node("v100", model="V100"))
    hold(state, 1, (0,), shape(1, 600))           # a shared GPU with 400 left
    hold(state, 2, (0, 1, 2, 3, 4, 5), shape(6))  # 2 whole GPUs left
    return state


POLICY_CASES = [
    PolicyCase("best fit takes the node left fullest", "BestFit", shape(2), (2,)),
    PolicyCase("GPU packing shares a used GPU first", "GpuPacking", shape(1, 300), (1,)),
    PolicyCase("GPU packing uses free GPUs of a used node before an empty node", "GpuPacking", shape(1), (1, 2)),
    PolicyCase("GPU clustering joins pods of the same class", "GpuClustering", shape(1, 200), (1,)),
    PolicyCase("dot product takes the node least aligned with the request", "DotProduct", shape(2), (2,)),
    PolicyCase("a model constraint excludes every other node", "BestFit", shape(1, models=("V100",)), (3,)),
]


@pytest.mark.parametrize("case", POLICY_CASES, ids=[c.id for c in POLICY_CASES])
def test_paper_policies_pick_the_obvious_node(case: PolicyCase) -> None:
    plugins = {"BestFit": BestFitScore(), "GpuPacking": GpuPackingScore(), "GpuClustering": GpuClusteringScore(),
               "DotProduct": DotProductScore()}
    placed = place_one(_policy_cluster(), case.pod, plugins[case.policy])
    assert placed is not None and placed[0] in case.want_nodes


def test_random_policy_is_reproducible_from_its_seed() -> None:
    picks = []
    for _ in range(2):
        state = make_state(*(make_node(f"n{i}") for i in range(6)))
        rng = np.random.default_rng(7)
        picks.append([place_one(state, shape(1, 500), RandomScore(rng), rng) for _ in range(10)])
    assert picks[0] == picks[1]


@dataclass(frozen=True)
class FeasibleCase:
    id: str
    pod: PodShape
    want: list[bool]


FEASIBLE_CASES = [
    FeasibleCase("a GPU pod needs GPUs with room", shape(1, 1000, cpu=0), [True, False, True]),
    FeasibleCase("too little CPU rules a node out", shape(1, 100, cpu=50_000), [True, False, True]),
    FeasibleCase("too little memory rules a node out", shape(0, 0, cpu=0, mem=300_000), [True, True, False]),
    FeasibleCase("a model list allows only those models", shape(1, 100, cpu=0, models=("T4",)), [False, False, True]),
    FeasibleCase("a CPU-only pod fits a full GPU node", shape(0, 0, cpu=1000), [True, True, True]),
]


@pytest.mark.parametrize("case", FEASIBLE_CASES, ids=[c.id for c in FEASIBLE_CASES])
def test_feasibility_checks_cpu_memory_model_and_gpu_room(case: FeasibleCase) -> None:
    arrays = make_arrays(make_node("a", 2), make_node("b", 1, cpu=60_000), make_node("c", 2, model="T4", mem=200_000))
    arrays.allocate(1, (0,), shape(1, 950, cpu=20_000))
    assert list(arrays.feasible(case.pod)) == case.want


def test_typical_pods_cover_the_workload_and_weight_by_gpus() -> None:
    pods = [shape(1, 500)] * 6 + [shape(8)] * 3 + [shape(0, 0)]
    by_count = {t.shape: t.popularity for t in typical_pods(pods)}
    assert by_count[shape(1, 500)] == pytest.approx(0.6)
    weighted = {t.shape: t.popularity for t in typical_pods(pods, gpu_weight=1.0)}
    assert weighted[shape(8)] > by_count[shape(8)]
    assert len(typical_pods(pods, coverage=0.5)) == 1
    with pytest.raises(ValueError, match="coverage"):
        typical_pods(pods, coverage=0)
