"""utkuozdemir/nvidia_gpu_exporter ``/metrics`` text → :class:`GpuSample` (for sites that run it
instead of dcgm-exporter). Its ``uuid`` label lacks the ``GPU-`` prefix; ratios are 0..1; memory
is in bytes."""

from __future__ import annotations

import math
from datetime import datetime

from prometheus_client.parser import text_string_to_metric_families

from ..errors import TelemetryError
from ..model.samples import GpuSample, ProcessUsage, Validity, classify_utilization
from .base import normalize_timestamp

__all__ = ["parse_nvidia_smi_exporter_text"]

_MIB = 1024 * 1024


def parse_nvidia_smi_exporter_text(text: str, *, received_at: datetime) -> list[GpuSample]:
    """Parse nvidia_gpu_exporter exposition text into one sample per GPU.

    Raises:
        TelemetryError: text that is not Prometheus exposition, or no ``nvidia_smi_*`` GPU series.
    """
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as exc:
        raise TelemetryError(f"nvidia_gpu_exporter text is not Prometheus exposition: {exc}",
                             hint="point the collector at nvidia_gpu_exporter's /metrics (port 9835)") from None
    values: dict[str, dict[str, float]] = {}
    names: dict[str, dict[str, str]] = {}
    processes: dict[str, list[ProcessUsage]] = {}
    for family in families:
        for s in family.samples:
            uuid = s.labels.get("uuid")
            if not uuid:
                continue
            uuid = uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
            if s.name == "nvidia_smi_compute_app_used_memory_bytes":
                processes.setdefault(uuid, []).append(ProcessUsage(
                    pid=int(s.labels["pid"]), used_memory_mib=int(s.value // _MIB), name=s.labels.get("process_name", "")))
            elif s.name == "nvidia_smi_gpu_info":
                names[uuid] = dict(s.labels)
            elif not math.isnan(s.value):
                values.setdefault(uuid, {})[s.name] = float(s.value)
    if not values:
        raise TelemetryError("no nvidia_smi_* GPU series in the text", hint="is this nvidia_gpu_exporter output?")
    when, skew = normalize_timestamp(None, received_at)
    out = []
    for uuid, v in values.items():
        ratio = v.get("nvidia_smi_utilization_gpu_ratio")
        raw = None if ratio is None else ratio * 100.0
        util, validity, rule = classify_utilization(raw)
        used = v.get("nvidia_smi_memory_used_bytes")
        total = v.get("nvidia_smi_memory_total_bytes")
        procs = tuple(processes.get(uuid, ()))
        out.append(GpuSample(
            gpu_uuid=uuid, mig_instance=None, timestamp=when, utilization_pct=util,
            memory_used_mib=None if used is None else used / _MIB, memory_total_mib=None if total is None else total / _MIB,
            power_w=v.get("nvidia_smi_power_draw_watts"), temperature_c=v.get("nvidia_smi_temperature_gpu"),
            processes=procs, process_count=len(procs) if procs else None, skew_s=skew, validity=validity, validity_rule=rule,
            raw_utilization_pct=raw if validity is Validity.SUSPECT else None))
    return out
