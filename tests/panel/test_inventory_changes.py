"""The inventory differ behind the server's ``inventory`` events (jupyter_sched/inventory/changes.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jupyter_sched.inventory.changes import InventoryChangePublisher, inventory_changes
from jupyter_sched.model import GPU, Health, Inventory, Node


def gpu(node: str, index: int, **fields: Any) -> GPU:
    return GPU(uuid=f"GPU-{node}-{index}", index=index, node=node, model="A100-80GB", memory_mib=81920, **fields)


def inventory(*nodes: Node) -> Inventory:
    return Inventory(nodes=nodes, source="static")


def node(name: str, count: int = 2, **fields: Any) -> Node:
    return Node(name=name, gpus=tuple(gpu(name, i) for i in range(count)), **fields)


def test_a_gpu_going_unhealthy_is_one_gpu_change_with_the_new_health() -> None:
    before = inventory(node("n1"))
    sick = replace(before.nodes[0].gpus[1], health=Health.UNHEALTHY, health_reason="Xid 79: GPU fell off the bus")
    after = inventory(replace(before.nodes[0], gpus=(before.nodes[0].gpus[0], sick)))
    changes = inventory_changes(before, after)
    assert len(changes) == 1
    change = changes[0]
    assert change["kind"] == "gpu" and change["what"] == "health"
    assert change["gpu"]["uuid"] == "GPU-n1-1"
    assert change["gpu"]["health"] == "unhealthy"
    assert change["gpu"]["health_reason"] == "Xid 79: GPU fell off the bus"


def test_cordon_readiness_and_a_new_node_are_node_changes_without_gpu_lists() -> None:
    before = inventory(node("n1"))
    after = inventory(replace(before.nodes[0], unschedulable=True, ready=False), node("n2", 1))
    changes = inventory_changes(before, after)
    kinds = [(c["kind"], c["what"], c.get("node", {}).get("name") if c["kind"] == "node" else c.get("gpu", {}).get("uuid"))
             for c in changes]
    assert kinds == [("node", "cordoned, not ready", "n1"), ("node", "added", "n2"), ("gpu", "added", "GPU-n2-0")]
    assert "gpus" not in changes[0]["node"]
    assert changes[0]["node"]["unschedulable"] is True and changes[0]["node"]["ready"] is False


def test_removed_nodes_and_gpus_are_named() -> None:
    before = inventory(node("n1"), node("n2"))
    after = inventory(replace(before.nodes[0], gpus=before.nodes[0].gpus[:1]))
    changes = inventory_changes(before, after)
    assert {"kind": "node_removed", "what": "removed", "node": "n2"} in changes
    assert {"kind": "gpu_removed", "what": "removed", "gpu_uuid": "GPU-n1-1", "node": "n1"} in changes
    assert {"kind": "gpu_removed", "what": "removed", "gpu_uuid": "GPU-n2-0", "node": "n2"} in changes


def test_foreign_memory_counts_only_when_it_starts_or_stops() -> None:
    base = inventory(node("n1", 1))
    busy = inventory(replace(base.nodes[0], gpus=(replace(base.nodes[0].gpus[0], foreign_memory_mib=500),)))
    busier = inventory(replace(base.nodes[0], gpus=(replace(base.nodes[0].gpus[0], foreign_memory_mib=900),)))
    assert [c["what"] for c in inventory_changes(base, busy)] == ["in use by others"]
    assert inventory_changes(busy, busier) == []
    assert [c["what"] for c in inventory_changes(busier, base)] == ["in use by others"]


def test_the_publisher_sets_a_baseline_then_publishes_each_difference_once() -> None:
    events: list[dict[str, Any]] = []
    publisher = InventoryChangePublisher(events.append)
    first = inventory(node("n1"))
    assert publisher.observe(first) == []
    assert publisher.observe(first) == []
    cordoned = inventory(replace(first.nodes[0], unschedulable=True))
    assert len(publisher.observe(cordoned)) == 1
    assert publisher.observe(cordoned) == []
    assert len(events) == 1
    assert events[0]["type"] == "inventory"
    assert events[0]["data"]["source"] == "static" and events[0]["data"]["simulated"] is False
    assert events[0]["data"]["changes"][0]["what"] == "cordoned"
