"""Choose the inventory source for this server: static file, else NVML, else simulated (case 015)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from ..model import NvmlStatus
from .base import InventorySource
from .nvml import NvmlInventory
from .simulated import DEFAULT_SIMULATED_MODEL, SimulatedInventory
from .static import StaticInventory

__all__ = ["default_inventory_source"]

log = logging.getLogger("jupyter_sched.inventory")


def default_inventory_source(
    *,
    inventory_file: str | Path | None = None,
    simulated_gpus: int = 4,
    simulated_model: str = DEFAULT_SIMULATED_MODEL,
    simulated_memory_mib: int = 81920,
    simulated_nvlink_pairs: Iterable[tuple[int, int]] = (),
    our_pids: Callable[[], Collection[int]] = frozenset,
    nvml: Any = None,
    node: str | None = None,
    logger: logging.Logger | None = None,
) -> tuple[InventorySource, NvmlStatus | None]:
    """Return ``(source, nvml_status)`` for this host.

    1. ``inventory_file`` given → :class:`StaticInventory` (NVML is not touched; status None).
    2. NVML usable (initialises, ≥ 1 device) → :class:`NvmlInventory`.
    3. Otherwise → :class:`SimulatedInventory` of ``simulated_gpus`` GPUs (0 = none, as case 015's
       CPU-only host expects) carrying the NVML status, and exactly one WARNING log line with the
       cause, e.g. ``NVML unavailable (NVML shared library not found (libnvidia-ml.so.1)); using
       4 simulated GPUs``.

    Never raises for NVML problems and never blocks longer than the NVML init timeout (10 s).

    Args:
        our_pids: pids the scheduler started (for foreign-memory detection, case 014).
        nvml: NVML module (default real ``pynvml``); tests pass a fake library.
    """
    logger = logger or log
    if inventory_file:
        return StaticInventory(inventory_file), None
    provider = NvmlInventory(nvml, node=node, our_pids=our_pids)
    status = provider.probe()
    if status.available:
        logger.info("NVML %s: %d GPU(s)", status.driver_version, status.device_count)
        return provider, status
    provider.close()
    what = f"using {simulated_gpus} simulated GPUs" if simulated_gpus else "no GPUs on this server"
    logger.warning("NVML unavailable (%s); %s", status.error, what)
    return SimulatedInventory(simulated_gpus, model=simulated_model, memory_mib=simulated_memory_mib,
                              nvlink_pairs=simulated_nvlink_pairs, node=node, nvml=status), status
