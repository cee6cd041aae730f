"""Fragmentation-aware placement in production cycles: FGD or FGD-Balanced against the live demand.

A profile turns it on with ``PlacementConfig(fragmentation="fgd-balanced")`` (the edge sets it
from ``c.SchedApp.placement_policy``). Each cycle then places with a fresh score plugin
(:class:`~.balanced.FgdBalancedScore` or :class:`~.fgd.FgdScore`) whose *target workload* is
the requests of the cycle's live jobs, pending and running, one shape per worker: what the
cluster holds and is asked for now is the best guess of what comes next (FGD, Weng et al.
ATC'23, §4, uses the workload's own shape distribution). One whole-GPU request is always added
as a prior: with few live jobs FGD would otherwise break whole GPUs for the shapes it happens to
see (a 0.3-GPU lease on an empty GPU beside a half-used one), and one whole GPU is what a
notebook asks for most. A fresh plugin per cycle keeps the
decision a pure function of the snapshot, and keeps concurrent cycles (a dry run beside the
engine's cycle) from sharing caches.

The vectorised placer needs every node to have at most :data:`~.fgd.MAX_GPUS_PER_NODE` GPUs of
one model and no MIG partitions; if any node of the inventory breaks that, the whole cycle keeps
the profile's own scores (``binpack`` and ``topology`` by default); the engine logs the switch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..errors import ValidationError
from ..model import Inventory, Job, ResourceRequest
from .balanced import FgdBalancedScore
from .fgd import MAX_GPUS_PER_NODE, FgdScore, typical_from_requests
from .placer import PlacementConfig

__all__ = ["FRAGMENTATION_POLICIES", "WHOLE_GPU_PRIOR", "check_fragmentation", "cycle_placement", "vector_ready"]

FRAGMENTATION_POLICIES = ("fgd", "fgd-balanced")
"""Values of ``PlacementConfig.fragmentation`` besides ``""`` (off)."""
WHOLE_GPU_PRIOR = ResourceRequest(gpus=1)
"""Added to every cycle's target workload (module docstring)."""


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
        ``config`` when ``config.fragmentation`` is ``""`` or the inventory is not
        :func:`vector_ready`; else a copy scoring only with the fragmentation-aware plugin, whose
        target workload is the jobs' requests (CPU-only ones included: they compete for the
        nodes' CPU) plus :data:`WHOLE_GPU_PRIOR`.

    Raises:
        ValidationError: unknown ``config.fragmentation``.
    """
    policy = check_fragmentation(config.fragmentation)
    if not policy or not vector_ready(inventory):
        return config
    typical = typical_from_requests([WHOLE_GPU_PRIOR, *(j.spec.resources for j in jobs)])
    plugin = FgdBalancedScore(typical) if policy == "fgd-balanced" else FgdScore(typical)
    return replace(config, scores={plugin.name: 1.0}, plugins=(plugin,))
