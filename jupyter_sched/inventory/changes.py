"""Inventory changes as events: what differs between two inventory readings, and a publisher.

The engine reads the inventory at every decision cycle (a cached reading, re-read every
``c.SchedApp.inventory_refresh_s``); GPU health, cordons, readiness, taints and new or vanished
nodes and GPUs change there. :func:`inventory_changes` compares two readings
(pure: no I/O, no clock) and :class:`InventoryChangePublisher` publishes one ``inventory`` event
per reading that differs from the one before, so the panel shows a GPU going unhealthy while the
event stream is up instead of only after a reload.

Event shape (``{"type": "inventory", "data": ...}``)::

    {"source": "nvml", "simulated": false,
     "changes": [
        {"kind": "gpu", "what": "health", "gpu": {<codec.gpu_to_dict>}},      # changed or new GPU
        {"kind": "gpu_removed", "what": "removed", "gpu_uuid": "GPU-…", "node": "n1"},
        {"kind": "node", "what": "cordoned", "node": {<node without gpus>}},  # changed or new node
        {"kind": "node_removed", "what": "removed", "node": "n1"}]}

``what`` names the fields that changed (comma-separated: ``health``, ``memory``, ``model``,
``mig``, ``nvlink``, ``in use by others``, ``cordoned``, ``uncordoned``, ``ready``, ``not ready``,
``labels``, ``taints``, ``capacity``, ``added``). Changes of the memory that processes we did
not start hold (``foreign_memory_mib``) count only when it starts or stops being zero: the amount
moves with every sample and would otherwise send an event per cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..model import GPU, Inventory, Node
from ..model.codec import gpu_to_dict, inventory_to_dict

__all__ = ["InventoryChangePublisher", "inventory_changes"]


def _gpu_fields(gpu: GPU) -> dict[str, Any]:
    """The GPU fields whose change is news, grouped by the word ``what`` uses for them."""
    return {
        "health": (gpu.health, gpu.health_reason),
        "memory": gpu.memory_mib,
        "model": gpu.model,
        "mig": (gpu.mig_enabled, gpu.mig_devices),
        "nvlink": gpu.nvlink_peers,
        "in use by others": gpu.foreign_memory_mib > 0,
        "node": gpu.node,
        "index": gpu.index,
    }


def _node_what(old: Node, new: Node) -> list[str]:
    what: list[str] = []
    if old.unschedulable != new.unschedulable:
        what.append("cordoned" if new.unschedulable else "uncordoned")
    if old.ready != new.ready:
        what.append("ready" if new.ready else "not ready")
    if dict(old.labels) != dict(new.labels):
        what.append("labels")
    if old.taints != new.taints:
        what.append("taints")
    if (old.cpu_millis, old.memory_mib) != (new.cpu_millis, new.memory_mib):
        what.append("capacity")
    return what


def _node_body(node_dict: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node_dict.items() if k != "gpus"}


def inventory_changes(previous: Inventory, current: Inventory) -> list[dict[str, Any]]:
    """The changes from ``previous`` to ``current`` as event entries (see the module docstring).

    Order: node removals, node additions and changes, GPU removals, GPU additions and changes,
    each in the inventory's own order, so that applying them in sequence rebuilds ``current``'s
    node and GPU lists. Empty when nothing that matters changed.
    """
    changes: list[dict[str, Any]] = []
    old_nodes = {n.name: n for n in previous.nodes}
    new_nodes = {n.name: n for n in current.nodes}
    current_dict = inventory_to_dict(current)
    node_dicts = {n["name"]: n for n in current_dict["nodes"]}
    for name in old_nodes:
        if name not in new_nodes:
            changes.append({"kind": "node_removed", "what": "removed", "node": name})
    for node in current.nodes:
        before = old_nodes.get(node.name)
        what = ["added"] if before is None else _node_what(before, node)
        if what:
            changes.append({"kind": "node", "what": ", ".join(what), "node": _node_body(node_dicts[node.name])})
    old_gpus = previous.gpu_by_uuid()
    new_gpus = current.gpu_by_uuid()
    for uuid, gpu in old_gpus.items():
        if uuid not in new_gpus:
            changes.append({"kind": "gpu_removed", "what": "removed", "gpu_uuid": uuid, "node": gpu.node})
    for gpu in current.gpus():
        before_gpu = old_gpus.get(gpu.uuid)
        if before_gpu is None:
            what = ["added"]
        else:
            old_fields, new_fields = _gpu_fields(before_gpu), _gpu_fields(gpu)
            what = [key for key in new_fields if old_fields[key] != new_fields[key]]
        if what:
            changes.append({"kind": "gpu", "what": ", ".join(what), "gpu": gpu_to_dict(gpu)})
    return changes


class InventoryChangePublisher:
    """Publish an ``inventory`` event whenever a reading differs from the previous one.

    The first reading only sets the baseline (clients read the inventory when they connect).

    Args:
        publish: called with ``{"type": "inventory", "data": {...}}`` (the engine's publish hook;
            must not block).
    """

    def __init__(self, publish: Callable[[dict[str, Any]], None]) -> None:
        self._publish = publish
        self._last: Inventory | None = None

    def observe(self, inventory: Inventory) -> list[dict[str, Any]]:
        """Compare ``inventory`` with the last reading; publish and return the changes (if any)."""
        previous, self._last = self._last, inventory
        if previous is None or previous == inventory:
            return []
        changes = inventory_changes(previous, inventory)
        if changes:
            self._publish({"type": "inventory", "data": {"source": inventory.source, "simulated": inventory.simulated,
                                                         "changes": changes}})
        return changes
