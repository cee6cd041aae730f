"""A small simulated inventory for machines without NVML (DESIGN.md, embedded mode; case 015).

Every GPU is labelled ``simulated=True`` and the inventory's ``source`` is ``"simulated"``, so
every API response, table and log line can say so. UUIDs are stable across restarts
(``GPU-sim-<node>-<index>``) so that jobs persisted in the store still match after a restart.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable

from ..errors import ValidationError
from ..model import GPU, Inventory, Node, NvmlStatus

__all__ = ["DEFAULT_SIMULATED_MODEL", "SimulatedInventory", "simulated_uuid"]

DEFAULT_SIMULATED_MODEL = "Simulated GPU 80GB"


def simulated_uuid(node: str, index: int) -> str:
    """Stable UUID of simulated GPU ``index`` on ``node``: ``GPU-sim-<node>-<index>``."""
    safe = re.sub(r"[^A-Za-z0-9.-]", "-", node) or "host"
    return f"GPU-sim-{safe}-{index}"


class SimulatedInventory:
    """Inventory source of ``count`` simulated GPUs on one node.

    Args:
        count: GPUs (default 4; 0 gives an empty inventory, as on a CPU-only host).
        model: product name shown for each GPU.
        memory_mib: memory per GPU in MiB (default 81920 = 80 GiB).
        nvlink_pairs: NVLink-connected index pairs, e.g. ``[(0, 1), (2, 3)]`` (default: none).
        node: node name (default: this host's name).
        nvml: the NVML status that made us simulate (shown by the API next to the GPUs).

    Raises:
        ValidationError: negative count or memory, or a pair naming a GPU that does not exist.
    """

    def __init__(self, count: int = 4, *, model: str = DEFAULT_SIMULATED_MODEL, memory_mib: int = 81920,
                 nvlink_pairs: Iterable[tuple[int, int]] = (), node: str | None = None,
                 nvml: NvmlStatus | None = None) -> None:
        if count < 0:
            raise ValidationError(f"simulated_gpus must be >= 0 (got {count})", field="simulated_gpus",
                                  hint="use 0 for no GPUs or a small number such as 4")
        if memory_mib <= 0:
            raise ValidationError(f"simulated GPU memory must be > 0 MiB (got {memory_mib})",
                                  field="simulated_memory_mib", hint="e.g. 81920 for 80 GiB")
        peers: dict[int, set[int]] = {i: set() for i in range(count)}
        for a, b in nvlink_pairs:
            if a not in peers or b not in peers or a == b:
                raise ValidationError(f"simulated NVLink pair ({a}, {b}) names a GPU outside 0..{count - 1}",
                                      field="simulated_nvlink_pairs", hint="pairs of distinct indices below count")
            peers[a].add(b)
            peers[b].add(a)
        self.node = node or socket.gethostname()
        self.nvml = nvml
        self._gpus = tuple(
            GPU(uuid=simulated_uuid(self.node, i), index=i, node=self.node, model=model, memory_mib=memory_mib,
                pci_bus_id=f"00000000:{0x10 + i:02X}:00.0", nvlink_peers=tuple(sorted(peers[i])), simulated=True)
            for i in range(count))

    def current(self) -> Inventory:
        """The simulated node (or no node when ``count == 0``), ``source="simulated"``."""
        nodes = (Node(name=self.node, gpus=self._gpus),) if self._gpus else ()
        return Inventory(nodes=nodes, source="simulated", nvml=self.nvml)
