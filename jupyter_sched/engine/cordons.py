"""Admins' maintenance cordons on the inventory every reader sees (``jupyter-sched nodes cordon|drain``).

A cordon lives in the store (``node_cordons``, schema version 18), so it outlives restarts and every
server sharing the store sees it. :class:`CordonedInventory` wraps the inventory source the engine and
the services read: each ``current()`` answers the source's inventory with each cordoned node marked
``unschedulable`` and carrying its :class:`~jupyter_sched.model.resources.Cordon` — the core then
places nothing new there (the flag is data in the snapshot), pending reasons and ETAs leave its
capacity out, and ``GET inventory``, ``/metrics``, ``status`` and the panel show it with the reason.

The cordons are read from the store at most every ``refresh_s`` seconds (another server's cordon is
seen within that), and at once after this server wrote one (:meth:`CordonBook.invalidate`). The
inventory with cordons applied is kept while neither changed: the same object, so whatever a reader
worked out once per inventory (``Inventory._memo``, a kept ``GET inventory`` answer) stays valid.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..errors import SchedError
from ..model import Inventory
from ..model.resources import Cordon

__all__ = ["CORDON_REFRESH_S", "CordonBook", "CordonedInventory", "apply_cordons"]

log = logging.getLogger(__name__)

CORDON_REFRESH_S = 5.0
"""Seconds a read of the stored cordons is used before the store is asked again."""


def apply_cordons(inventory: Inventory, cordons: Mapping[str, Cordon]) -> Inventory:
    """``inventory`` with each node named in ``cordons`` unschedulable and carrying its cordon
    (``inventory`` itself when no cordon names one of its nodes). A cordon of a node the inventory
    does not list changes nothing (the node may come back; ``GET nodes`` lists it)."""
    if not cordons or not any(node.name in cordons for node in inventory.nodes):
        return inventory
    nodes = tuple(replace(node, unschedulable=True, cordon=cordons[node.name]) if node.name in cordons else node
                  for node in inventory.nodes)
    return replace(inventory, nodes=nodes)


class CordonBook:
    """The stored cordons as this server last read them (module docstring).

    Args:
        read: ``() -> {node: Cordon}`` from the store (:meth:`~jupyter_sched.store.Store.node_cordons`).
        refresh_s: seconds a read is used before the store is asked again.
        monotonic: the refresh's clock (tests pass their own).
    """

    def __init__(self, read: Callable[[], Mapping[str, Cordon]], *, refresh_s: float = CORDON_REFRESH_S,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self.refresh_s = refresh_s
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._cordons: Mapping[str, Cordon] = {}
        self._at: float | None = None
        self._failed = False
        self.version = 0
        """Moves each time the cordons read differ from the ones before."""

    def fresh(self) -> bool:
        """True while the last read is used without asking the store."""
        at = self._at
        return at is not None and self._monotonic() - at < self.refresh_s

    def current(self) -> Mapping[str, Cordon]:
        """The cordons by node, read again when the last read is older than ``refresh_s``; a store
        that cannot answer keeps the last read (one WARNING until it answers again)."""
        return self.versioned()[0]

    def versioned(self) -> tuple[Mapping[str, Cordon], int]:
        """:meth:`current` and the :attr:`version` it is at, read together."""
        with self._lock:
            if self.fresh():
                return self._cordons, self.version
            try:
                cordons = dict(self._read())
            except SchedError as exc:
                if not self._failed:
                    log.warning("node cordons unreadable (%s); the last ones read stay in force", exc)
                self._failed = True
                self._at = self._monotonic()
                return self._cordons, self.version
            self._failed = False
            self._at = self._monotonic()
            if cordons != self._cordons:
                self._cordons = cordons
                self.version += 1
            return self._cordons, self.version

    def kept(self) -> tuple[Mapping[str, Cordon], int] | None:
        """:meth:`versioned` without asking the store; None when a read is due (the event loop may ask)."""
        with self._lock:
            return (self._cordons, self.version) if self.fresh() else None

    def invalidate(self) -> None:
        """Read the store again at the next :meth:`current` (this server just wrote a cordon)."""
        with self._lock:
            self._at = None


class CordonedInventory:
    """An inventory source whose nodes carry the stored cordons (module docstring). Other attributes
    (``warnings``, ``invalidate``, ``source``…) are the wrapped source's.

    Args:
        source: the inventory source (``current()``, optionally ``peek()``).
        book: the cordons.
    """

    def __init__(self, source: Any, book: CordonBook) -> None:
        self.source = source
        self.book = book
        self._kept: tuple[Inventory, int, Inventory] | None = None

    def current(self) -> Inventory:
        """The source's inventory with the cordons applied."""
        inventory: Inventory = self.source.current()
        return self._applied(inventory, *self.book.versioned())

    def peek(self) -> Inventory | None:
        """:meth:`current` without waiting on the source or the store (None when either would be read)."""
        peek = getattr(self.source, "peek", None)
        cordons = self.book.kept()
        inventory = peek() if peek is not None else None
        if inventory is None or cordons is None:
            return None
        return self._applied(inventory, *cordons)

    def _applied(self, inventory: Inventory, cordons: Mapping[str, Cordon], version: int) -> Inventory:
        kept = self._kept
        if kept is not None and kept[0] is inventory and kept[1] == version:
            return kept[2]
        applied = apply_cordons(inventory, cordons)
        self._kept = (inventory, version, applied)  # one assignment: reader threads may race, each right
        return applied

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)
