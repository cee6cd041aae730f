"""FGD-Planned, our best placement policy: FGD-Balanced plus a fill plan for shared GPUs.

Each case is a cluster of one-GPU nodes, one share already on each, where FGD-Balanced puts the
arriving share into the gap that the plan keeps for another size; FGD-Planned follows the plan,
and with ``plan_weight=0`` it must choose as FGD-Balanced does. The target workload: 470-milli
shares (40 %), 650, 320 and 230 (20 % each). Its plan: 470 + 470, 650 + 320, 470 + 230 + 230 and
320 x 3 fills (prices 1/2, 2/3, 1/3, 1/4 of a GPU). Units: milli-GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from jupyter_sched.model import GPU, Inventory, Node
from jupyter_sched.placement.balanced import FgdBalancedScore
from jupyter_sched.placement.fgd import FgdScore, PodShape, TypicalPod
from jupyter_sched.placement.placer import Placer
from jupyter_sched.placement.planned import FgdPlannedScore, share_demand
from jupyter_sched.placement.state import ClusterState, Holding
from jupyter_sched.sim.fgd_protocol import make_policy, policy_profile, request_of


def share(milli: int) -> PodShape:
    return PodShape(cpu_milli=1000, gpus=1, gpu_milli=milli)


TYPICAL = tuple(TypicalPod(share(m), p) for m, p in ((470, 0.4), (650, 0.2), (320, 0.2), (230, 0.2)))


def one_gpu_node(name: str) -> Node:
    return Node(name=name, gpus=(GPU(uuid=f"{name}-g0", index=0, node=name, model="A100", memory_mib=81920),),
                cpu_millis=96_000, memory_mib=1 << 20)


def choice(used: tuple[int, ...], arriving: int, plugin: FgdScore) -> int:
    """The share already on the node the production placer picks (0: an empty GPU)."""
    state = ClusterState(Inventory(nodes=tuple(one_gpu_node(f"n{i}") for i in range(len(used)))))
    for i, milli in enumerate(used):
        if milli:
            state.take(f"old-{i}", Holding(((state.node_gpus[i][0], milli),), 1, 1000, 0))
    placer = Placer(state, policy_profile(plugin).placement)
    req = request_of(share(arriving))
    placed = placer.place("pod", req, placer.flavors(req)[0])
    assert placed is not None
    return used[placed.holding.node]


@dataclass(frozen=True)
class Case:
    id: str
    used: tuple[int, int]      # the share on each node's GPU
    arriving: int
    want: int                  # the share beside which FGD-Planned puts it


CASES = [
    Case("a 230 leaves the 350 gap beside a 650 to a 320", (650, 470), 230, 470),
    Case("a 230 opens an empty GPU rather than end a 650's GPU at 120", (650, 0), 230, 0),
    Case("a 320 joins another 320 instead of spoiling a 470's gap", (470, 320), 320, 320),
    Case("a 470 joins a 230 (470 + 230 + 230) rather than leave 210 beside a 320", (320, 230), 470, 230),
    Case("a 650 opens an empty GPU rather than take a 230's", (0, 230), 650, 0),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_planned_policy_follows_its_fill_plan_where_fgd_balanced_does_not(case: Case) -> None:
    other = next(u for u in case.used if u != case.want)
    assert choice(case.used, case.arriving, FgdBalancedScore(TYPICAL)) == other
    assert choice(case.used, case.arriving, FgdPlannedScore(TYPICAL)) == case.want
    assert choice(case.used, case.arriving, FgdPlannedScore(TYPICAL, plan_weight=0.0)) == other


def test_the_plan_is_the_cutting_stock_lp_of_the_share_sizes() -> None:
    plugin = FgdPlannedScore(TYPICAL)
    assert share_demand(TYPICAL) == pytest.approx({470: 0.4, 650: 0.2, 320: 0.2, 230: 0.2})
    assert dict(zip(plugin.plan.sizes, plugin.plan.prices, strict=True)) == pytest.approx(
        {230: 0.25, 320: 1 / 3, 470: 0.5, 650: 2 / 3})
    # whole-GPU and CPU-only shapes are not shares: they take no part in the plan
    mixed = (*TYPICAL, TypicalPod(PodShape(cpu_milli=4000, gpus=2, gpu_milli=1000), 0.5),
             TypicalPod(PodShape(cpu_milli=4000), 0.5))
    assert share_demand(mixed) == share_demand(TYPICAL)


def test_whole_gpu_pods_score_as_in_fgd_balanced() -> None:
    state = ClusterState(Inventory(nodes=(one_gpu_node("a"), one_gpu_node("b"))))
    whole = PodShape(cpu_milli=1000, gpus=1, gpu_milli=1000)
    nodes = np.array([0, 1])
    assert list(FgdPlannedScore(TYPICAL).score_nodes(state.node_arrays(), whole, nodes)) == \
        list(FgdBalancedScore(TYPICAL).score_nodes(state.node_arrays(), whole, nodes))


def test_the_scalar_score_protocol_ranks_like_the_vectorised_one() -> None:
    state = ClusterState(Inventory(nodes=(one_gpu_node("n0"), one_gpu_node("n1"))))
    for i, milli in enumerate((650, 470)):
        state.take(f"old-{i}", Holding(((state.node_gpus[i][0], milli),), 1, 1000, 0))
    plugin = FgdPlannedScore(TYPICAL)
    shape = share(230)
    vec = plugin.score_nodes(state.node_arrays(), shape, np.array([0, 1]))
    scalar = [plugin.score(request_of(shape), state, n, state.node_gpus[n][:1]) for n in (0, 1)]
    assert vec[0] < vec[1] and scalar[0] < scalar[1]


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf")], ids=["negative", "NaN", "infinite"])
def test_plan_weight_must_be_finite_and_not_negative(weight: float) -> None:
    with pytest.raises(ValueError, match="plan_weight must be finite and >= 0"):
        FgdPlannedScore(TYPICAL, plan_weight=weight)


def test_the_protocol_names_it_our_best_policy() -> None:
    plugin = make_policy("FGD-Planned", [share(470), share(320)], np.random.default_rng(0))
    assert isinstance(plugin, FgdPlannedScore) and plugin.plan.sizes == (320, 470)


@pytest.mark.parametrize("plugin_class", [FgdScore, FgdBalancedScore, FgdPlannedScore])
def test_rows_left_out_of_one_call_are_scored_on_their_current_state_later(plugin_class: type[FgdScore]) -> None:
    """score_nodes refreshes only the nodes it is asked about; a node skipped while it changed
    must not keep an old score when it is asked about again."""
    nodes = tuple(one_gpu_node(f"n{i}") for i in range(3))
    arrays = ClusterState(Inventory(nodes=nodes)).node_arrays()
    plugin = plugin_class(TYPICAL)
    all_nodes = np.array([0, 1, 2])
    plugin.score_nodes(arrays, share(230), all_nodes)
    arrays.allocate(2, (0,), share(650))                      # n2 changes while it is not asked about
    plugin.score_nodes(arrays, share(230), np.array([0, 1]))
    plugin.score_nodes(arrays, share(470), np.array([0]))
    arrays.allocate(1, (0,), share(470))
    later = plugin.score_nodes(arrays, share(230), all_nodes)
    # ground truth: a new plugin per node, asked about that node alone
    fresh = [plugin_class(TYPICAL).score_nodes(arrays, share(230), np.array([i]))[0] for i in range(3)]
    assert list(later) == fresh and len(set(fresh)) > 1   # the three states score differently
    assert plugin.cluster_frag(arrays) == plugin_class(TYPICAL).cluster_frag(arrays)
