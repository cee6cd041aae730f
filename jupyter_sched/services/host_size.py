"""An inventory file that declares more host CPU or memory than the host local jobs run on (newuser39 n10).

The local executor runs every job on this host, whatever node the inventory places it on; a ``memory`` ask above
this host's physical memory is refused (its limit would be none), and so is a ``cpu`` ask above this host's cores
(no node the inventory declares can give it more: session 40). A node declaring more than this host has still
places several jobs by numbers this host cannot give them together: said at start, once, and by
``jupyter-sched doctor`` (:func:`inventory_file_over_host`)."""

from __future__ import annotations

import os

from ..model import Inventory

__all__ = ["host_memory_mib", "inventory_file_over_host", "overstated_nodes"]


def host_memory_mib() -> int:
    """This host's physical memory in MiB (0 when the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20
    except (ValueError, OSError):
        return 0


def overstated_nodes(inv: Inventory) -> str | None:
    """The start-up WARNING's sentence naming the nodes whose ``cpus``/``memory`` exceed this host's, or None."""
    cores, memory = os.cpu_count() or 0, host_memory_mib()
    said = []
    for node in inv.nodes:
        over = [f"cpus {node.cpu_millis / 1000:g}" if cores and node.cpu_millis > cores * 1000 else "",
                f"memory {node.memory_mib // 1024} GiB" if memory and node.memory_mib > memory else ""]
        if any(over):
            said.append(f"{node.name} ({', '.join(o for o in over if o)})")
    if not said:
        return None
    shown = ", ".join(said[:5]) + (f" and {len(said) - 5} more" if len(said) > 5 else "")
    return (f"the inventory declares more host CPU or memory than this host has ({cores} cores, "
            f"{memory * 10 // 1024 / 10:g} GiB) on node{'s' if len(said) != 1 else ''} {shown}, but the local "
            "executor runs every job on this host: a cpu or memory ask above this host's is refused, and the jobs it "
            "places together by the inventory's numbers share this host's — declare this host's own cpus and "
            "memory in the inventory file")


def inventory_file_over_host(path: str) -> str | None:
    """:func:`overstated_nodes` of the inventory file at ``path`` (``jupyter-sched doctor``'s check), or None where
    it declares no more than this host or does not read (the server's start-up check says why)."""
    from ..errors import SchedError
    from ..inventory.static import StaticInventory

    try:
        return overstated_nodes(StaticInventory(path).current())
    except (SchedError, OSError, ValueError):
        return None
