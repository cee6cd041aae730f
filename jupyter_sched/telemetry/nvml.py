"""NVML collector: device- and MIG-level samples with per-process memory and utilization.

The NVML module is a constructor parameter (default ``pynvml``) so tests inject a fake library
that obeys NVML semantics. Per NVML's rules: ``nvmlDeviceGetUtilizationRates`` is not supported
on a GPU in MIG mode or on a MIG device (→ utilization unknown, never 0 %); memory is in bytes;
power in mW; per-process SM utilization comes from ``nvmlDeviceGetProcessUtilization`` since a
timestamp in µs, which raises ``NVMLError_NotFound`` when no process ran in that span.

A failure on one GPU drops that GPU's sample and is reported in :attr:`NvmlCollector.errors`
(the inventory marks it unhealthy); the collector itself fails only when NVML does.

Validity: a utilization NVML does not give (MIG parent, unsupported) is ``blank`` / ``no_signal``;
one outside 0..100 % is ``suspect`` / ``out_of_range``; ``process_count`` is the number of compute
processes NVML lists, so the latch rule (case 026) and "no process" idle reasons (case 025) can
be told. ``nvmlDeviceGetRemappedRows`` reporting a failed remap becomes the health flag
``row remap failure``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..errors import TelemetryError
from ..model.samples import UNKNOWN_MIG_UTILIZATION, GpuSample, ProcessUsage, Validity, classify_utilization
from .base import normalize_timestamp

__all__ = ["NvmlCollector"]

_MIB = 1024 * 1024
_NOT_FOUND = 6
_MIG_PROFILE = re.compile(r"MIG (\S+)\s*$")


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _checked(util: float | None, note: str) -> dict[str, Any]:
    """GpuSample keyword arguments for one utilization reading (validity, rule, raw value, note)."""
    value, validity, rule = classify_utilization(util)
    return {"utilization_pct": value, "validity": validity, "validity_rule": rule,
            "raw_utilization_pct": util if validity is Validity.SUSPECT else None,
            "note": note if validity is Validity.BLANK else ""}


class NvmlCollector:
    """Collector over NVML.

    Args:
        nvml: NVML module (default: real ``pynvml``, imported on first use).
        node: node name put on the samples.

    Attributes:
        errors: ``{gpu index: message}`` for GPUs whose last sampling failed.
    """

    def __init__(self, nvml: Any = None, *, node: str = "") -> None:
        self._nvml = nvml
        self._node = node
        self._initialised = False
        self._last_seen_us: dict[int, int] = {}
        self.errors: dict[int, str] = {}

    def _ensure(self) -> Any:
        if self._nvml is None:
            import pynvml

            self._nvml = pynvml
        nvml = self._nvml
        if not self._initialised:
            try:
                nvml.nvmlInit()
            except nvml.NVMLError as exc:
                from ..inventory.nvml import describe_nvml_error

                raise TelemetryError(f"NVML unavailable: {describe_nvml_error(exc)}",
                                     hint="use the simulated or dcgm-exporter collector on this host") from None
            self._initialised = True
        return nvml

    def close(self) -> None:
        """Shut NVML down if this collector initialised it."""
        if self._initialised:
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError:
                pass
            self._initialised = False

    def collect(self, now: datetime) -> list[GpuSample]:
        """Sample every GPU and every MIG instance.

        Raises:
            TelemetryError: NVML cannot be initialised or cannot count devices.
        """
        nvml = self._ensure()
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except nvml.NVMLError as exc:
            raise TelemetryError(f"NVML cannot count devices: {exc}") from None
        when, _ = normalize_timestamp(None, now)
        samples: list[GpuSample] = []
        errors: dict[int, str] = {}
        for index in range(count):
            try:
                samples.extend(self._device(index, when))
            except nvml.NVMLError as exc:
                errors[index] = f"NVML error on GPU {index}: {exc}"
        self.errors = errors
        return samples

    def _device(self, index: int, when: datetime) -> list[GpuSample]:
        nvml = self._nvml
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        uuid = _text(nvml.nvmlDeviceGetUUID(handle))
        memory = nvml.nvmlDeviceGetMemoryInfo(handle)
        power = self._optional(lambda: nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0)
        temp = self._optional(lambda: float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)))
        mig_on = bool(self._optional(lambda: nvml.nvmlDeviceGetMigMode(handle)[0] == 1))
        util = None if mig_on else self._optional(lambda: float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu))
        sm = {} if mig_on else self._process_utilization(index, handle)
        raw = list(nvml.nvmlDeviceGetComputeRunningProcesses(handle))
        processes = tuple(
            ProcessUsage(pid=int(p.pid), used_memory_mib=None if p.usedGpuMemory is None else int(p.usedGpuMemory // _MIB),
                         sm_util_pct=sm.get(int(p.pid)))
            for p in raw)
        # NVML's v3 process info says which GPU instance a process runs in (MIG).
        gi_of_pid = {int(p.pid): getattr(p, "gpuInstanceId", None) for p in raw}
        flags = ("row remap failure",) if self._remap_failed(handle) else ()
        note = "MIG mode: utilization is per MIG instance" if mig_on else "no utilization reported"
        out = [GpuSample(gpu_uuid=uuid, mig_instance=None, timestamp=when, **_checked(util, note),
                         memory_used_mib=memory.used / _MIB, memory_total_mib=memory.total / _MIB, power_w=power,
                         temperature_c=temp, processes=processes, node=self._node, process_count=len(processes),
                         health_flags=flags)]
        if mig_on:
            out.extend(self._migs(handle, uuid, when, power, temp, processes, gi_of_pid))
        return out

    def _migs(self, handle: Any, uuid: str, when: datetime, power: float | None, temp: float | None,
              processes: tuple[ProcessUsage, ...], gi_of_pid: dict[int, Any]) -> list[GpuSample]:
        nvml = self._nvml
        out = []
        for k in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
            try:
                mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, k)
            except nvml.NVMLError as exc:
                if getattr(exc, "value", None) == _NOT_FOUND:
                    continue
                raise
            gi = int(nvml.nvmlDeviceGetGpuInstanceId(mig))
            memory = nvml.nvmlDeviceGetMemoryInfo(mig)
            profile = _MIG_PROFILE.search(_text(nvml.nvmlDeviceGetName(mig)))
            util = self._optional(lambda mig=mig: float(nvml.nvmlDeviceGetUtilizationRates(mig).gpu))
            mine = tuple(p for p in processes if gi_of_pid.get(p.pid) == gi)
            out.append(GpuSample(
                gpu_uuid=uuid, mig_instance=gi, timestamp=when, **_checked(util, UNKNOWN_MIG_UTILIZATION),
                memory_used_mib=memory.used / _MIB, memory_total_mib=memory.total / _MIB, power_w=power,
                temperature_c=temp, mig_uuid=_text(nvml.nvmlDeviceGetUUID(mig)),
                mig_profile=profile.group(1) if profile else None, node=self._node,
                processes=mine, process_count=len(mine)))
        return out

    def _remap_failed(self, handle: Any) -> bool:
        """True when NVML says a row remap failed (the GPU needs attention); False when unknown."""
        read = getattr(self._nvml, "nvmlDeviceGetRemappedRows", None)
        if read is None:
            return False
        rows = self._optional(lambda: read(handle))
        return bool(rows is not None and len(rows) >= 4 and rows[3])

    def _process_utilization(self, index: int, handle: Any) -> dict[int, float]:
        nvml = self._nvml
        since = self._last_seen_us.get(index, 0)
        try:
            samples = nvml.nvmlDeviceGetProcessUtilization(handle, since)
        except nvml.NVMLError:  # NotFound: no process ran since `since`; NotSupported: old GPU
            return {}
        out: dict[int, float] = {}
        for s in samples:
            out[int(s.pid)] = float(s.smUtil)
            self._last_seen_us[index] = max(self._last_seen_us.get(index, 0), int(s.timeStamp))
        return out

    def _optional(self, read: Any) -> Any:
        """Run ``read``; NVML "not supported"-style errors mean the value is unknown (None)."""
        try:
            return read()
        except self._nvml.NVMLError:
            return None
