"""Inventory from Node and Pod objects (pure parsing): device plugin resources, GFD labels and their
quirks, readiness, taints, and GPUs held by pods we did not create."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from jupyter_sched.inventory.kubernetes import gpu_uuid, inventory_from_objects, node_from_dict, pod_gpu_use
from jupyter_sched.model import Taint

from .kube_builders import A100, GPU_TAINT, make_node, make_pod


@dataclass(frozen=True)
class NodeCase:
    node: dict[str, Any]
    want_gpus: int
    want_model: str = A100
    want_memory_mib: int = 81920
    want_healthy: int | None = None
    want_mig: dict[int, tuple[str, ...]] = field(default_factory=dict)  # GPU index -> MIG profiles


NODE_CASES = [
    pytest.param(NodeCase(make_node(gpus=8), want_gpus=8), id="eight whole GPUs with GFD labels"),
    pytest.param(NodeCase(make_node(gpus=8, allocatable_gpus=6), want_gpus=8, want_healthy=6),
                 id="GPUs the device plugin withdrew are unhealthy"),
    pytest.param(NodeCase(make_node(gpus=4, ready=False), want_gpus=4, want_healthy=0),
                 id="a NotReady node's GPUs are unhealthy"),
    pytest.param(NodeCase(make_node(gpus=0, product=None), want_gpus=0, want_model="", want_memory_mib=0),
                 id="a CPU node has no GPUs"),
    pytest.param(NodeCase(make_node(gpus=2, product=None, memory_mib=None), want_gpus=2, want_model="",
                          want_memory_mib=0),
                 id="GPUs without GFD labels have unknown model and memory"),
    pytest.param(NodeCase(make_node(gpus=8, product="Tesla-T4-SHARED", memory_mib=15360, count_label=2,
                                    extra_labels={"nvidia.com/gpu.replicas": "4"}),
                          want_gpus=2, want_model="Tesla-T4", want_memory_mib=15360),
                 id="time-slicing: the SHARED suffix is dropped and replicas are not GPUs"),
    pytest.param(NodeCase(make_node(gpus=2, count_label=4, extra_labels={"nvidia.com/mig.strategy": "mixed",
                                                                         "nvidia.com/mig-3g.40gb.memory": "40192"},
                                    extra_capacity={"nvidia.com/mig-3g.40gb": "4"}),
                          want_gpus=4, want_mig={2: ("3g.40gb", "3g.40gb"), 3: ("3g.40gb", "3g.40gb")}),
                 id="mixed MIG: whole GPUs plus MIG parents holding the MIG devices"),
    pytest.param(NodeCase(make_node(gpus=14, product="NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", memory_mib=4864,
                                    count_label=2, extra_labels={"nvidia.com/mig.strategy": "single"}),
                          want_gpus=2, want_model="NVIDIA-A100-SXM4-40GB", want_memory_mib=40960,
                          want_mig={0: ("1g.5gb",) * 7, 1: ("1g.5gb",) * 7}),
                 id="single MIG: nvidia.com/gpu counts MIG devices of gpu.count physical GPUs"),
]


@pytest.mark.parametrize("case", NODE_CASES)
def test_nodes_become_gpus(case: NodeCase) -> None:
    node = node_from_dict(case.node)
    assert len(node.gpus) == case.want_gpus
    assert [g.uuid for g in node.gpus] == [gpu_uuid(node.name, i) for i in range(case.want_gpus)]
    assert {g.model for g in node.gpus} <= {case.want_model}
    assert {g.memory_mib for g in node.gpus} <= {case.want_memory_mib}
    healthy = sum(g.healthy for g in node.gpus)
    assert healthy == (case.want_gpus if case.want_healthy is None else case.want_healthy)
    migs = {g.index: tuple(m.profile for m in g.mig_devices) for g in node.gpus if g.mig_enabled}
    assert migs == case.want_mig
    uuids = [m.uuid for g in node.gpus for m in g.mig_devices] + [g.uuid for g in node.gpus]
    assert len(set(uuids)) == len(uuids)


def test_parsing_is_stable_across_relists() -> None:
    raw = make_node("g9", gpus=4, extra_capacity={"nvidia.com/mig-1g.10gb": "7"},
                    extra_labels={"nvidia.com/mig.strategy": "mixed"}, count_label=5)
    assert node_from_dict(raw) == node_from_dict(raw)


def test_node_fields_taints_cordon_and_reasons() -> None:
    node = node_from_dict(make_node("g1", gpus=2, ready=False, unschedulable=True, taints=[GPU_TAINT]))
    assert node.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert node.unschedulable and not node.ready and not node.schedulable
    assert node.cpu_millis == 63500
    assert node.memory_mib == 500 * 1024
    assert node.labels["nvidia.com/gpu.product"] == A100
    assert node.gpus[0].health_reason == ("node g1 is not Ready (NodeStatusUnknown: Kubelet stopped posting "
                                          "node status.)")
    withdrawn = node_from_dict(make_node("g2", gpus=4, allocatable_gpus=3)).gpus[3]
    assert withdrawn.health_reason == "device plugin withdrew it (allocatable 3 of 4 nvidia.com/gpu)"


OURS = {"app.kubernetes.io/managed-by": "jupyter-sched"}

POD_CASES = [
    pytest.param(make_pod("p", node="g1", gpus=2), 2, id="a running pod holds its GPU limit"),
    pytest.param(make_pod("p", node=None, gpus=2, phase="Pending"), None, id="an unbound pod holds nothing"),
    pytest.param(make_pod("p", node="g1", gpus=2, phase="Succeeded"), None, id="a finished pod holds nothing"),
    pytest.param(make_pod("p", node="g1", gpus=1, init_gpus=3), 3, id="a larger init container decides"),
    pytest.param(make_pod("p", node="g1", gpus=0), None, id="a CPU pod holds no GPU"),
]


@pytest.mark.parametrize(("pod", "want"), POD_CASES)
def test_pods_hold_gpus(pod: dict[str, Any], want: int | None) -> None:
    use = pod_gpu_use(pod)
    assert (use.gpus if use else None) == want


def test_gpus_of_pods_we_did_not_create_count_as_used() -> None:
    ours = make_pod("ours", node="g1", gpus=2, namespace="team-ml", labels=OURS,
                    annotations={"jupyter-sched/gpu-uuids": "k8s-g1-gpu2,k8s-g1-gpu3"})
    foreign = make_pod("theirs", node="g1", gpus=1)
    foreign_mig = make_pod("theirs-mig", node="g2", mig={"1g.10gb": 2})
    inventory = inventory_from_objects(
        [make_node("g2", gpus=0, count_label=1, extra_capacity={"nvidia.com/mig-1g.10gb": "7"},
                   extra_labels={"nvidia.com/mig.strategy": "mixed"}),
         make_node("g1", gpus=4)],
        [ours, foreign, foreign_mig])
    assert inventory.source == "kubernetes"
    assert [n.name for n in inventory.nodes] == ["g1", "g2"]
    held = {g.uuid: g.foreign_memory_mib for g in inventory.node("g1").gpus}
    # Foreign pods take the highest free index; our own pods' GPUs are never marked foreign.
    assert held == {"k8s-g1-gpu0": 0, "k8s-g1-gpu1": 81920, "k8s-g1-gpu2": 0, "k8s-g1-gpu3": 0}
    (parent,) = inventory.node("g2").gpus
    assert len(parent.mig_devices) == 5
    ignoring = inventory_from_objects([make_node("g1", gpus=4)], [foreign], count_foreign_pods=False)
    assert all(g.foreign_memory_mib == 0 for g in ignoring.gpus())


def test_a_foreign_gpu_without_memory_label_still_reads_as_held() -> None:
    inventory = inventory_from_objects([make_node("g1", gpus=1, product=None, memory_mib=None)],
                                       [make_pod("x", node="g1", gpus=1)])
    assert next(inventory.gpus()).foreign_memory_mib > 0
