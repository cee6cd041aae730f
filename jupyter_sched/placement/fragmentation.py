"""Fragmentation-aware placement in production cycles: FGD or FGD-Balanced against the live demand.

A profile turns it on with ``PlacementConfig(fragmentation="fgd-balanced")`` (the edge sets it
from ``c.SchedApp.placement_policy``). Each cycle then places with a fresh score plugin
(:class:`~.balanced.FgdBalancedScore` or :class:`~.fgd.FgdScore`) whose *target workload* is
the requests of the cycle's live jobs, pending and running, one shape per worker: what the
cluster holds and is asked for now is the best guess of what comes next (FGD, Weng et al.
ATC'23, §4, uses the workload's own shape distribution). A fresh plugin per cycle keeps the
decision a pure function of the snapshot, and keeps concurrent cycles (a dry run beside the
engine's cycle) from sharing caches.

The vectorised placer needs every node to have at most :data:`~.fgd.MAX_GPUS_PER_NODE` GPUs of
one model and no MIG partitions; on any other inventory, or when no live job asks for a GPU,
the cycle keeps the profile's own scores (``binpack`` and ``topology`` by default).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..errors import ValidationError
from ..model import Inventory, Job
from .balanced import FgdBalancedScore
from .fgd import MAX_GPUS_PER_NODE, FgdScore, typical_from_requests
from .placer import PlacementConfig

__all__ = ["FRAGMENTATION_POLICIES", "check_fragmentation", "cycle_placement", "vector_ready"]

FRAGMENTATION_POLICIES = ("fgd", "fgd-balanced")
"""Values of ``PlacementConfig.fragmentation`` besides ``""`` (off)."""


def check_fragmentation(name: str) -> str:
    """``name`` if it is ``""`` or one of :data:`FRAGMENTATION_POLICIES`.

    Raises:
        ValidationError: any other value (field ``placement_policy``).
    """
    if name and name not in FRAGMENTATION_POLICIES:
        raise ValidationError(f"unknown fragmentation-aware placement {name!r}", field="placement_policy",
                              hint="use binpack (default), " + " or ".join(FRAGMENTATION_POLICIES))
    return name


def vector_ready(inventory: Inventory) -> bool:
    """True when every node fits the vectorised placer: at most 8 GPUs, one model, no MIG."""
    for node in inventory.nodes:
        if len(node.gpus) > MAX_GPUS_PER_NODE or len({g.model for g in node.gpus}) > 1:
            return False
        if any(g.mig_devices for g in node.gpus):
            return False
    return True


def cycle_placement(config: PlacementConfig, inventory: Inventory, jobs: Iterable[Job]) -> PlacementConfig:
    """The placement config of one cycle: ``config`` itself, or one scoring with FGD / FGD-Balanced.

    Args:
        config: the profile's placement config.
        inventory: the cycle's inventory.
        jobs: the cycle's live jobs (their requests form the target workload).

    Returns:
        ``config`` when ``config.fragmentation`` is ``""``, the inventory is not :func:`vector_ready`
        or no job asks for a GPU; else a copy scoring only with the fragmentation-aware plugin.

    Raises:
        ValidationError: unknown ``config.fragmentation``.
    """
    policy = check_fragmentation(config.fragmentation)
    if not policy or not vector_ready(inventory):
        return config
    requests = [j.spec.resources for j in jobs]  # CPU-only jobs count: they compete for the nodes' CPU
    if not any(r.gpus > 0 for r in requests):
        return config
    typical = typical_from_requests(requests)
    plugin = FgdBalancedScore(typical) if policy == "fgd-balanced" else FgdScore(typical)
    return replace(config, scores={plugin.name: 1.0}, plugins=(plugin,))
