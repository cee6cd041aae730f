"""Resource awareness, live: GPU samples from NVML, dcgm-exporter text, a Prometheus API or, for
simulated GPUs, the CPU activity of their processes — plus the in-memory sample store.

Every collector implements :class:`Collector` (``collect(now) -> list[GpuSample]``).
"""

from ..model.samples import CLOCK_SKEW_LIMIT_S, UNKNOWN_MIG_UTILIZATION, GpuSample, ProcessUsage
from .base import Collector, normalize_timestamp, skew_warnings
from .dcgm import BadLine, DcgmCollector, DcgmScrape, http_text_fetcher, parse_dcgm_text
from .feed import idle_input
from .nvml import NvmlCollector
from .prometheus import PrometheusCollector
from .ring import RingBuffer, RollupRow, SampleStore, rollup_minutes
from .simulated import SimulatedCollector
from .smi_exporter import parse_nvidia_smi_exporter_text
from .wire import foreign_report_to_dict, rollup_to_dict, sample_to_dict

__all__ = [
    "CLOCK_SKEW_LIMIT_S", "UNKNOWN_MIG_UTILIZATION", "BadLine", "Collector", "DcgmCollector", "DcgmScrape",
    "GpuSample", "NvmlCollector", "ProcessUsage", "PrometheusCollector", "RingBuffer", "RollupRow", "SampleStore",
    "SimulatedCollector", "foreign_report_to_dict", "http_text_fetcher", "idle_input", "normalize_timestamp",
    "parse_dcgm_text", "parse_nvidia_smi_exporter_text", "rollup_minutes", "rollup_to_dict", "sample_to_dict",
    "skew_warnings",
]
