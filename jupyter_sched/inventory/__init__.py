"""Resource awareness: which GPUs exist (NVML, static YAML file, simulated) and how they connect.

Sources implement :class:`InventorySource` (``current() -> Inventory``);
:func:`default_inventory_source` picks one for this host. Parsers for ``nvidia-smi`` output
(:mod:`.smi`, :mod:`.topology`) serve hosts and tests without NVML.
"""

from .base import InventorySource
from .factory import default_inventory_source
from .nvml import NvmlInventory, describe_nvml_error
from .simulated import SimulatedInventory, simulated_uuid
from .smi import (
    DEFAULT_FOREIGN_THRESHOLD_MIB,
    foreign_memory_mib,
    gpus_from_smi,
    parse_compute_apps_csv,
    parse_gpu_list,
    parse_query_gpu_csv,
)
from .static import StaticInventory, inventory_from_mapping
from .topology import Topology, parse_topology

__all__ = [
    "DEFAULT_FOREIGN_THRESHOLD_MIB", "InventorySource", "NvmlInventory", "SimulatedInventory", "StaticInventory",
    "Topology", "default_inventory_source", "describe_nvml_error", "foreign_memory_mib", "gpus_from_smi",
    "inventory_from_mapping", "parse_compute_apps_csv", "parse_gpu_list", "parse_query_gpu_csv", "parse_topology",
    "simulated_uuid",
]
