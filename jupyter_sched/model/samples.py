"""One GPU telemetry sample: the shape every collector produces and idle detection reads (pure).

Collectors (``jupyter_sched.telemetry``, edge) build :class:`GpuSample`; the idle detector
(``jupyter_sched.reclaim``, pure) consumes them. The type lives in ``model`` so that both sides
share it without the pure core importing the edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["CLOCK_SKEW_LIMIT_S", "GpuSample", "ProcessUsage", "UNKNOWN_MIG_UTILIZATION"]

CLOCK_SKEW_LIMIT_S = 60.0
"""Seconds of difference between a sample's own timestamp and its arrival above which the
sample is flagged as skewed (case 010, telemetry line)."""

UNKNOWN_MIG_UTILIZATION = "no utilization signal for MIG device (profiling metrics unavailable)"
"""What the UI shows instead of 0 % for a MIG device without DCGM profiling metrics (case 008)."""


@dataclass(frozen=True, slots=True)
class ProcessUsage:
    """A process holding GPU memory.

    Attributes:
        pid: host process id.
        used_memory_mib: GPU memory it holds, MiB (None when the driver does not say, e.g. in
            some containers or on MIG without permissions).
        sm_util_pct: its share of SM time in %, where NVML reports per-process utilization.
        name: process name when known.
    """

    pid: int
    used_memory_mib: int | None = None
    sm_util_pct: float | None = None
    name: str = ""


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One observation of one GPU or one MIG instance.

    Attributes:
        gpu_uuid: the *physical* GPU's ``GPU-...`` UUID (for a MIG instance, its parent's).
        mig_instance: MIG GPU instance id (dcgm-exporter ``GPU_I_ID``), None for a whole GPU.
        timestamp: when it was measured (aware UTC; clamped to arrival time when in the future).
        utilization_pct: GPU utilization 0..100 %, None when unknown (e.g. MIG without
            profiling metrics — never reported as 0, case 008).
        gr_engine_active: graphics-engine activity fraction 0..1 (``DCGM_FI_PROF_GR_ENGINE_ACTIVE``)
            when known.
        memory_used_mib: memory in use, MiB (None when unknown).
        memory_total_mib: total memory, MiB (None when unknown).
        power_w: power draw in W (device-level; repeated on MIG instances).
        temperature_c: GPU temperature in °C.
        processes: processes holding memory on it.
        mig_uuid: ``MIG-...`` UUID when known.
        mig_profile: MIG profile, e.g. ``"3g.40gb"``.
        node: host name the sample came from.
        pod / namespace / container: Kubernetes owner labels (empty when none).
        note: one sentence explaining a missing value (e.g. :data:`UNKNOWN_MIG_UTILIZATION`).
        skew_s: sample timestamp minus arrival time in seconds before clamping (positive =
            from the future).
        simulated: the GPU is simulated; the numbers come from CPU activity of its processes.
    """

    gpu_uuid: str
    mig_instance: int | None
    timestamp: datetime
    utilization_pct: float | None
    gr_engine_active: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    power_w: float | None = None
    temperature_c: float | None = None
    processes: tuple[ProcessUsage, ...] = ()
    mig_uuid: str | None = None
    mig_profile: str | None = None
    node: str = ""
    pod: str = ""
    namespace: str = ""
    container: str = ""
    note: str = ""
    skew_s: float = 0.0
    simulated: bool = False

    @property
    def key(self) -> tuple[str, int | None]:
        """Device key ``(gpu_uuid, mig_instance)``: MIG instances of one GPU stay apart (case 008)."""
        return (self.gpu_uuid, self.mig_instance)

    @property
    def activity_pct(self) -> float | None:
        """The activity signal idle detection uses, in %: ``GR_ENGINE_ACTIVE x 100`` when known,
        else ``utilization_pct``; None when neither is known (DESIGN.md, idle reclamation)."""
        if self.gr_engine_active is not None:
            return self.gr_engine_active * 100.0
        return self.utilization_pct

    @property
    def skewed(self) -> bool:
        """True when the sample's clock differs from arrival by more than :data:`CLOCK_SKEW_LIMIT_S`."""
        return abs(self.skew_s) > CLOCK_SKEW_LIMIT_S
