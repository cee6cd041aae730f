"""The inventory-source protocol: anything that can say which GPUs exist right now."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..model import Inventory

__all__ = ["InventorySource"]


@runtime_checkable
class InventorySource(Protocol):
    """A provider of the current :class:`~jupyter_sched.model.Inventory`.

    ``current()`` must never raise for one bad GPU (that GPU is marked unhealthy) and never
    hang; it raises :class:`~jupyter_sched.errors.ValidationError` only for a bad static file.
    Implementations: :class:`~jupyter_sched.inventory.nvml.NvmlInventory`,
    :class:`~jupyter_sched.inventory.static.StaticInventory`,
    :class:`~jupyter_sched.inventory.simulated.SimulatedInventory`.
    """

    def current(self) -> Inventory:
        """Return the inventory as of now."""
        ...
