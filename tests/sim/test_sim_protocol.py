"""The FGD evaluation protocol: arrival order, inflation and the invariants of a replay.

Small synthetic clusters keep these fast; the openb slice is the committed fixture
(``tests/fixtures/traces``), the whole-trace counts run where the full traces are present.
"""

from __future__ import annotations

import numpy as np
import pytest

from jupyter_sched.model import GPU, Inventory, Node
from jupyter_sched.placement.fgd import PodShape
from jupyter_sched.sim.fgd_protocol import OUR_POLICY, PAPER_POLICIES, arrival_order, replay
from jupyter_sched.sim.traces import openb_inventory, read_openb_nodes, read_openb_pods
from tests.trace_data import FIXTURES, requires_full_traces


def make_cluster(nodes: int = 6) -> Inventory:
    out = []
    for i in range(nodes):
        model = "T4" if i % 3 == 0 else "G2"
        gpus = 2 if model == "T4" else 8
        out.append(Node(name=f"n{i}", gpus=tuple(GPU(uuid=f"n{i}-g{j}", index=j, node=f"n{i}", model=model,
                                                     memory_mib=0) for j in range(gpus)),
                        cpu_millis=96_000, memory_mib=393_216))
    return Inventory(nodes=tuple(out))


def make_pods() -> list[PodShape]:
    return ([PodShape(cpu_milli=4000, memory_mib=8192, gpus=1, gpu_milli=m) for m in (250, 500, 810, 1000)] * 5
            + [PodShape(cpu_milli=32_000, memory_mib=65536, gpus=8, gpu_milli=1000)] * 2
            + [PodShape(cpu_milli=8000, memory_mib=16384, gpus=1, gpu_milli=1000, models=("T4",))] * 3
            + [PodShape(cpu_milli=12_000, memory_mib=4096)] * 4)


def test_arrivals_are_a_shuffle_then_draws_until_the_demand_target() -> None:
    pods = make_pods()
    cap = 40_000
    order = arrival_order(pods, cap, seed=42, ratio=1.3)
    assert sorted(order[: len(pods)], key=repr) == sorted(pods, key=repr)
    assert order[: len(pods)] != pods
    total = sum(p.total_milli for p in order)
    assert total <= 1.3 * cap
    assert total > 1.3 * cap - max(p.total_milli for p in pods)  # stops at the first draw that would exceed
    assert order == arrival_order(pods, cap, seed=42, ratio=1.3)
    assert order != arrival_order(pods, cap, seed=43, ratio=1.3)


@pytest.mark.parametrize("policy", [*PAPER_POLICIES, OUR_POLICY])
def test_a_replay_never_overcommits_and_records_monotone_curves(policy: str) -> None:
    inv = make_cluster()
    pods = make_pods()
    res = replay(inv, pods, policy, seed=42, keep_records=True)
    arrays = res.arrays
    assert arrays is not None
    assert (arrays.gpu_left >= 0).all() and (arrays.cpu_left >= 0).all() and (arrays.mem_left >= 0).all()
    assert np.all(np.diff(res.alloc) >= -1e-9)
    jump = 100.0 * max(p.total_milli for p in pods) / arrays.capacity_milli()  # one arrival's demand step
    for pct in range(len(res.alloc)):
        assert res.alloc[pct] <= pct + jump + 1e-9
    assert res.alloc[-1] == pytest.approx(100.0 * arrays.allocated_milli() / arrays.capacity_milli())
    by_row = {name: i for i, name in enumerate(arrays.names)}
    for (_, node, gpus, _, _), pod in zip(res.records, arrival_order(pods, arrays.capacity_milli(), seed=42),
                                          strict=True):
        if node < 0:
            continue
        assert len(gpus) == pod.gpus
        if pod.models:
            model = inv.nodes[node].gpus[0].model
            assert model in pod.models
        assert by_row[inv.nodes[node].name] == node
    assert 0 <= res.frag_ratio.min() and res.frag_ratio.max() <= 100.0 + 1e-9


@pytest.mark.parametrize("random_ties", [False, True], ids=["first-node ties", "random ties"])
def test_a_replay_is_reproducible_from_its_seed(random_ties: bool) -> None:
    a = replay(make_cluster(), make_pods(), "FGD", seed=7, keep_records=True, random_ties=random_ties)
    b = replay(make_cluster(), make_pods(), "FGD", seed=7, keep_records=True, random_ties=random_ties)
    assert a.records == b.records


def test_unknown_policy_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="FGD"):
        replay(make_cluster(), make_pods(), "Tetris", seed=1)


@requires_full_traces
def test_openb_readers_parse_fractions_models_and_cpu() -> None:
    nodes = read_openb_nodes()
    assert len(nodes) == 1213 and int(nodes["gpu"].sum()) == 6212
    pods = read_openb_pods("default")
    assert len(pods) == 8152
    shapes = [p.shape for p in pods]
    assert sum(1 for s in shapes if s.shared) == 3078
    assert sum(1 for s in shapes if s.gpus == 0) == 1088
    spec = [p.shape for p in read_openb_pods("gpuspec33") if p.shape.models]
    assert spec and all(all(m for m in s.models) for s in spec)
    assert openb_inventory().gpu_count() == 6212


def test_the_openb_fixture_slice_parses_fractions_cpu_only_pods_and_models() -> None:
    """The committed slice (every 20th GPU node, the first 200 pods) parses as the full lists do."""
    nodes = read_openb_nodes(FIXTURES / "openb" / "openb_node_list_gpu_node.csv")
    assert len(nodes) == 61 and int(nodes["gpu"].sum()) == 314
    assert set(nodes["model"]) == {"G2", "G3", "P100", "T4", "V100M16"}
    shapes = [p.shape for p in read_openb_pods(path=FIXTURES / "openb" / "openb_pod_list_default.csv")]
    assert len(shapes) == 200
    assert sum(1 for s in shapes if s.shared) == 64
    assert sum(1 for s in shapes if s.gpus == 0) == 7 and all(s.gpu_milli == 0 for s in shapes if s.gpus == 0)
    assert openb_inventory(nodes).gpu_count() == 314


def test_an_openb_slice_replays_within_capacity() -> None:
    inv = openb_inventory(read_openb_nodes(FIXTURES / "openb" / "openb_node_list_gpu_node.csv"))  # iloc[::20]
    pods = [p.shape for p in read_openb_pods(path=FIXTURES / "openb" / "openb_pod_list_default.csv")]
    res = replay(inv, pods, "FGD", seed=42)
    assert 0 < res.placed <= res.pods
    assert res.alloc[100] > 50.0
