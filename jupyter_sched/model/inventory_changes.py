"""What changed between two inventories, one sentence a change (hubadmin26 B9).

A node appended to the inventory file, one removed, GPUs added to or removed from a node: the service
used to log nothing (a removed node only when work ran on it), and three months on "when did node-c join,
node-b leave" had no answer. :func:`inventory_changes` compares two snapshots (pure: no I/O, no clock);
the edge (:mod:`jupyter_sched.services.inventory_watch`) writes each as an ``inventory_changed`` audit row,
which the service log shows as one INFO line (``jupyter_sched audit: inventory_changed by scheduler: node
node-c added (4 x H100-80GB)``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .job import Job
from .resources import GPU, Inventory

__all__ = ["InventoryChange", "inventory_changes"]


@dataclass(frozen=True, slots=True)
class InventoryChange:
    """One change: ``node`` ``kind`` (``node_added``, ``node_removed``, ``gpus_added``, ``gpus_removed``),
    the ``gpus`` (UUIDs) added or removed, their ``models`` (``{model: count}``), the ``jobs`` (ids) still
    holding a removed GPU, and ``text``, the sentence said."""

    node: str
    kind: str
    gpus: tuple[str, ...]
    models: dict[str, int]
    jobs: tuple[str, ...]
    text: str

    def details(self) -> dict[str, Any]:
        """The audit row's details: ``{"node", "change", "gpus", "models", "jobs"}``."""
        return {"node": self.node, "change": self.kind, "gpus": list(self.gpus), "models": dict(self.models),
                "jobs": list(self.jobs)}


def _models(gpus: Iterable[GPU]) -> dict[str, int]:
    return dict(sorted(Counter(gpu.model or "unknown model" for gpu in gpus).items()))


def _said(models: dict[str, int]) -> str:
    return ", ".join(f"{n} x {model}" for model, n in models.items())


def _on(gone: set[str], jobs: Sequence[Job]) -> tuple[tuple[str, ...], str]:
    """The live jobs holding one of ``gone`` and a clause naming them (``""`` when none)."""
    held = [(job.id, uuid) for job in jobs if job.allocation is not None and job.state.holds_gpus
            for uuid in job.allocation.all_gpu_uuids() if uuid in gone]
    ids = tuple(dict.fromkeys(job_id for job_id, _ in held))
    if not ids:
        return (), ""
    where = ", ".join(sorted({uuid for _, uuid in held}))
    noun = "job" if len(ids) == 1 else "jobs"
    return ids, f"; {len(ids)} {noun} still on {where}: {', '.join(ids)}"


def inventory_changes(before: Inventory, after: Inventory, jobs: Sequence[Job] = ()) -> list[InventoryChange]:
    """The changes from ``before`` to ``after``, nodes in name order: a node added or removed (its GPUs
    by model), GPUs added to or removed from a node both list. ``jobs``: the live jobs, to name those
    still on GPUs that went away. Health and labels are no inventory change (said elsewhere).

    Returns:
        one :class:`InventoryChange` per node and kind; ``[]`` when the nodes and GPUs are the same.
    """
    old = {node.name: node for node in before.nodes}
    new = {node.name: node for node in after.nodes}
    out: list[InventoryChange] = []
    for name in sorted(old.keys() | new.keys()):
        if name not in old:
            gpus = new[name].gpus
            models = _models(gpus)
            out.append(InventoryChange(name, "node_added", tuple(g.uuid for g in gpus), models, (),
                                       f"node {name} added ({_said(models) or 'no GPUs'})"))
            continue
        if name not in new:
            gpus = old[name].gpus
            models = _models(gpus)
            ids, clause = _on({g.uuid for g in gpus}, jobs)
            out.append(InventoryChange(name, "node_removed", tuple(g.uuid for g in gpus), models, ids,
                                       f"node {name} removed ({_said(models) or 'no GPUs'}{clause})"))
            continue
        was = {g.uuid: g for g in old[name].gpus}
        now = {g.uuid: g for g in new[name].gpus}
        added = [g for uuid, g in now.items() if uuid not in was]
        removed = [g for uuid, g in was.items() if uuid not in now]
        if added:
            models = _models(added)
            out.append(InventoryChange(name, "gpus_added", tuple(g.uuid for g in added), models, (),
                                       f"node {name}: {len(added)} GPU{'s' if len(added) != 1 else ''} added "
                                       f"({_said(models)}; {len(now)} in all)"))
        if removed:
            models = _models(removed)
            ids, clause = _on({g.uuid for g in removed}, jobs)
            out.append(InventoryChange(name, "gpus_removed", tuple(g.uuid for g in removed), models, ids,
                                       f"node {name}: {len(removed)} GPU{'s' if len(removed) != 1 else ''} removed "
                                       f"({_said(models)}; {len(now)} left{clause})"))
    return out
