"""Say at start and at each inventory refresh what the inventory's change left behind (hubadmin 22, H3).

:class:`~jupyter_sched.services.config.CachedInventory` calls an :class:`InventoryWatch` with each
inventory it reads afresh (a Kubernetes inventory, which is not wrapped, with each change its watches see). When the inventory's GPUs or nodes differ from the last one looked at (the
first read at start counts), the watch reads the live jobs and logs, each once while it holds:

- one WARNING naming the work that holds GPUs the inventory no longer lists
  (:func:`~jupyter_sched.model.off_inventory.off_inventory_warning`: owner, GPU UUIDs, what happens to
  it and the fix) — a restart with fewer simulated GPUs, a node deleted from the inventory file, an
  NVML inventory that shrank;
- one WARNING per GPU marked unhealthy under work that holds it
  (:func:`~jupyter_sched.model.off_inventory.unhealthy_under_work`; hubadmin24 B14: an admin's
  ``healthy: false`` for an RMA was said only in ``GET inventory``);
- the quota set's capacity warning (the one ``GET quotas`` answers: teams guaranteed more GPUs than
  exist), which was in no log;
- each GPU model with no price in force while ``gpu_prices`` are set (:mod:`.unpriced`; hubadmin26 B21: a
  node of a new model joined and every report's cost of its use was unknown, said nowhere);
- from the second inventory on, each node added or removed and GPUs added to or removed from a node
  (:func:`~jupyter_sched.model.inventory_changes.inventory_changes`; hubadmin26 B9): one
  ``inventory_changed`` audit row each, which the service log shows as one INFO line.

The difference is computed by the pure core from the snapshot and the jobs; this edge only reads the
store and logs. Best effort: a store that cannot be read now says nothing (the next change tries again).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from ..model import Inventory, Job
from ..model.inventory_changes import InventoryChange, inventory_changes
from ..model.off_inventory import allocated_gpus, off_inventory, off_inventory_warning, unhealthy_under_work

__all__ = ["INVENTORY_CHANGED", "InventoryWatch"]

INVENTORY_CHANGED = "inventory_changed"
"""The audit action of a node or GPUs added to or removed from the inventory (hubadmin26 B9)."""


class InventoryWatch:
    """Called with each inventory read afresh (see module docstring).

    Args:
        jobs: the live jobs (a store read; called only when the inventory changed).
        capacity: the quota set's capacity warnings for an inventory (``QuotasService.capacity_warnings``).
        logger: where the WARNINGs go (the server's log).
        record: writes one ``inventory_changed`` audit row per change (None: logged at INFO instead).
        unpriced: the warnings of an inventory's GPU models with no price (None: none said).
    """

    def __init__(self, jobs: Callable[[], Sequence[Job]], capacity: Callable[[Inventory], list[str]],
                 logger: logging.Logger, record: Callable[[InventoryChange], None] | None = None, *,
                 unpriced: Callable[[Inventory], list[str]] | None = None) -> None:
        self._jobs = jobs
        self._capacity = capacity
        self._unpriced = unpriced
        self._log = logger
        self._record = record
        self._last: Inventory | None = None
        self._shape: tuple[frozenset[str], frozenset[str], frozenset[str]] | None = None
        self._said: set[str] = set()
        self._busy = False
        # a Kubernetes inventory calls from its two watch threads (nodes, pods): one at a time, so a
        # change is compared once and said once; re-entrant for the same thread (see _busy)
        self._lock = threading.RLock()

    def __call__(self, inventory: Inventory) -> None:
        with self._lock:
            self._compare(inventory)

    def _compare(self, inventory: Inventory) -> None:
        shape = (inventory.device_uuids(), frozenset(node.name for node in inventory.nodes),
                 frozenset(gpu.uuid for gpu in inventory.gpus() if not gpu.healthy))
        if shape == self._shape or self._busy:
            return
        self._busy = True  # a reader inside (the capacity check reads the inventory) never re-enters
        try:
            jobs = list(self._jobs())
            found = off_inventory(inventory, jobs)
            lines = [off_inventory_warning(found, allocated=allocated_gpus(jobs), in_inventory=inventory.gpu_count())] \
                if found else []
            lines += unhealthy_under_work(inventory, jobs)
            lines += self._capacity(inventory)
            lines += self._unpriced(inventory) if self._unpriced is not None else []
            changes = inventory_changes(self._last, inventory, jobs) if self._last is not None else []
        except Exception:  # the store cannot be read now: try again at the next change
            self._log.debug("jupyter_sched: could not compare the inventory with the running work", exc_info=True)
            return
        finally:
            self._busy = False
        self._shape = shape
        self._last = inventory
        for change in changes:
            self._said_change(change)
        for line in lines:
            if line not in self._said:
                self._log.warning("jupyter_sched: %s", line)
        self._said = set(lines)

    def _said_change(self, change: InventoryChange) -> None:
        """One audit row (and so one INFO line) for ``change``; a store that cannot be written: INFO here."""
        if self._record is not None:
            try:
                self._record(change)
                return
            except Exception:
                self._log.debug("jupyter_sched: could not audit an inventory change", exc_info=True)
        self._log.info("jupyter_sched: inventory: %s", change.text)
