"""Fragmentation-aware placement in production cycles: FGD, FGD-Balanced or FGD-Planned against the live demand.

A profile turns it on with ``PlacementConfig(fragmentation="fgd-planned")`` (the edge sets it
from ``c.SchedApp.placement_policy``). Each cycle then places with a fresh score plugin
(:class:`~.planned.FgdPlannedScore`, :class:`~.balanced.FgdBalancedScore` or
:class:`~.fgd.FgdScore`) whose *target workload* is
the requests of the cycle's live jobs, pending and running, one shape per worker: what the
cluster holds and is asked for now is the best guess of what comes next (FGD, Weng et al.
ATC'23, §4, uses the workload's own shape distribution). One whole-GPU request is always added
as a prior: with few live jobs FGD would otherwise break whole GPUs for the shapes it happens to
see (a 0.3-GPU lease on an empty GPU beside a half-used one), and one whole GPU is what a
notebook asks for most. A fresh plugin per cycle keeps the
decision a pure function of the snapshot, and keeps concurrent cycles (a dry run beside the
engine's cycle) from sharing caches (FGD-Planned's fill plan is a pure function of the share
sizes, solved once per distinct set and cached by :func:`~.fill_plan.solve_fill_plan`).

The vectorised placer needs every node to have at most :data:`~.fgd.MAX_GPUS_PER_NODE` GPUs of
one model and no MIG partitions; if any node of the inventory breaks that, the whole cycle keeps
the profile's own scores (``binpack`` and ``topology`` by default); the engine logs the switch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ..errors import ValidationError
from ..model import Inventory, Job, ResourceRequest
from .balanced import FgdBalancedScore
from .fgd import MAX_GPUS_PER_NODE, FgdScore, TypicalPod, typical_from_requests
from .placer import PlacementConfig
from .planned import FgdPlannedScore
from .scores import VectorScore

__all__ = ["FRAGMENTATION_POLICIES", "PLAN_MIN_SHARES", "WHOLE_GPU_PRIOR", "check_fragmentation", "cycle_placement", "vector_ready"]

_PLUGINS: dict[str, Callable[[Sequence[TypicalPod]], VectorScore]] = {
    "fgd": FgdScore, "fgd-balanced": FgdBalancedScore, "fgd-planned": FgdPlannedScore}
FRAGMENTATION_POLICIES = tuple(_PLUGINS)
"""Values of ``PlacementConfig.fragmentation`` besides ``""`` (off)."""
WHOLE_GPU_PRIOR = ResourceRequest(gpus=1)
"""Added to every cycle's target workload (module docstring)."""
PLAN_MIN_SHARES = 20
"""Live share workers (pending or running) before ``fgd-planned`` trusts a fill plan; with fewer
the cycle scores with FGD-Balanced. The plan is the steady-state packing of a *stream* of shares:
built from a 0.5 and a 0.3 lease it would open a whole GPU for the next 0.3 (three 0.3s fill a GPU
better than 0.5 + 0.3) and a 1-GPU notebook would wait. A judgement, not a measurement: about
twice the distinct share sizes a busy hub shows."""


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
    """The placement config of one cycle: ``config`` itself, or one scoring with a fragmentation-aware plugin.

    Args:
        config: the profile's placement config.
        inventory: the cycle's inventory.
        jobs: the cycle's live jobs (their requests form the target workload).

    Returns:
        ``config`` when ``config.fragmentation`` is ``""`` or the inventory is not
        :func:`vector_ready`; else a copy scoring only with the fragmentation-aware plugin, whose
        target workload is the jobs' requests (CPU-only ones included: they compete for the
        nodes' CPU) plus :data:`WHOLE_GPU_PRIOR`. ``"fgd-planned"`` scores with FGD-Balanced
        while fewer than :data:`PLAN_MIN_SHARES` share workers are live.

    Raises:
        ValidationError: unknown ``config.fragmentation``.
    """
    policy = check_fragmentation(config.fragmentation)
    if not policy or not vector_ready(inventory):
        return config
    requests = [j.spec.resources for j in jobs]
    typical = typical_from_requests([WHOLE_GPU_PRIOR, *requests])
    if policy == "fgd-planned" and sum(r.workers for r in requests if r.gpus and r.fractional) < PLAN_MIN_SHARES:
        policy = "fgd-balanced"
    plugin = _PLUGINS[policy](typical)
    return replace(config, scores={plugin.name: 1.0}, plugins=(plugin,))
