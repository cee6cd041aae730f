"""GPU models of the inventory with no price in force (hubadmin26 B21).

A node of a new model joins the inventory (a live inventory-file edit, a Kubernetes node) while
``c.HubSchedApp.gpu_prices`` prices only the models there were: every usage report over its use says its cost
is unknown, and nothing said so when it joined. :class:`UnpricedModels` gives the warnings
(:func:`~jupyter_sched.accounting.prices.unpriced_model_warnings`) that the inventory watch logs as a WARNING
at start and at the refresh that adds such a model, and that admins read in ``GET inventory``'s ``warnings``
(``jupyter-sched status``: an ``inventory`` line).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..accounting.prices import price_table, unpriced_model_warnings
from ..engine.clock import Clock
from ..model import Inventory

__all__ = ["UnpricedModels"]


class UnpricedModels:
    """``unpriced(inventory) -> [warning, ...]`` for the configured prices, at the clock's now (a dated price
    comes into force at its date). Without prices: always ``[]``.

    Args:
        prices: ``c.HubSchedApp.gpu_prices`` (None or empty: no prices, no cost anywhere).
        clock: the service's clock.

    Raises:
        ValidationError: ``prices`` malformed (naming ``gpu_prices[MODEL]``; the start checks them first).
    """

    def __init__(self, prices: Mapping[str, Any] | None, clock: Clock) -> None:
        self._table = price_table(prices) if prices else {}
        self._clock = clock
        self._models: tuple[Inventory, dict[str, int]] | None = None
        """The last inventory's GPUs per model (an inventory is a frozen value: counted once each)."""

    def __call__(self, inventory: Inventory) -> list[str]:
        if not self._table:
            return []
        kept = self._models
        if kept is None or kept[0] is not inventory:
            kept = self._models = (inventory, dict(Counter(gpu.model or "unknown" for gpu in inventory.gpus())))
        return unpriced_model_warnings(self._table, kept[1], self._clock.now())
