"""JSON shapes of telemetry for the REST API (``GET telemetry``), the event stream and the panel."""

from __future__ import annotations

from typing import Any

from ..model import to_iso
from ..model.samples import GpuSample
from ..reclaim import ForeignGpuReport
from .ring import RollupRow

__all__ = ["foreign_report_to_dict", "job_minute_to_dict", "rollup_to_dict", "rounded", "sample_to_dict"]


def rounded(value: float | None, digits: int = 2) -> float | None:
    """``value`` rounded for the wire (percent, MiB, W, °C to 0.01): samples are stored as float32,
    and ``38.01000061035156`` is noise, not precision (new user 14, N26). None stays None."""
    return None if value is None else round(float(value), digits)


def sample_to_dict(s: GpuSample) -> dict[str, Any]:
    """GpuSample → JSON dict. ``utilization_pct`` is ``null`` when unknown and ``note`` says why
    (e.g. ``no utilization signal for MIG device (profiling metrics unavailable)``); UIs show the
    note instead of 0 %. ``activity_pct`` is what idle detection uses. ``validity`` (``valid`` |
    ``blank`` | ``suspect``) and ``validity_rule`` say how far to believe it, and ``display`` is the
    text to show (``100 % (suspect: no process, 0 MiB)``); a rejected reading (e.g. 101 %) is
    never sent as ``utilization_pct`` (case 009)."""
    return {
        "gpu_uuid": s.gpu_uuid, "mig_instance": s.mig_instance, "mig_uuid": s.mig_uuid, "mig_profile": s.mig_profile,
        "timestamp": to_iso(s.timestamp), "utilization_pct": rounded(s.utilization_pct),
        "gr_engine_active": rounded(s.gr_engine_active, 4), "activity_pct": rounded(s.activity_pct),
        "memory_used_mib": rounded(s.memory_used_mib), "memory_total_mib": rounded(s.memory_total_mib),
        "power_w": rounded(s.power_w), "temperature_c": rounded(s.temperature_c),
        "processes": [{"pid": p.pid, "used_memory_mib": p.used_memory_mib, "sm_util_pct": p.sm_util_pct, "name": p.name}
                      for p in s.processes],
        "node": s.node, "pod": s.pod, "namespace": s.namespace, "container": s.container, "note": s.note,
        "skew_s": s.skew_s, "skewed": s.skewed, "simulated": s.simulated,
        "validity": s.validity.value, "validity_rule": s.validity_rule, "display": s.display_utilization(),
        "process_count": s.known_process_count, "xid": s.xid, "health_flags": list(s.health_flags),
    }


def rollup_to_dict(r: RollupRow) -> dict[str, Any]:
    """RollupRow → JSON dict (one device-minute; the runtime persists these). Utilization and
    activity are over valid samples only; the counts and ``rules`` say what was left out."""
    return {
        "gpu_uuid": r.gpu_uuid, "mig_instance": r.mig_instance, "minute": to_iso(r.minute), "samples": r.samples,
        "utilization_avg": r.utilization_avg, "utilization_max": r.utilization_max, "activity_avg": r.activity_avg,
        "activity_max": r.activity_max, "memory_used_max_mib": r.memory_used_max_mib,
        "memory_total_mib": r.memory_total_mib, "power_avg_w": r.power_avg_w, "temperature_max_c": r.temperature_max_c,
        "valid_samples": r.valid_samples, "blank_samples": r.blank_samples, "suspect_samples": r.suspect_samples,
        "rules": r.rules, "processes_max": r.processes_max,
    }


def job_minute_to_dict(r: RollupRow) -> dict[str, Any]:
    """One job's minute on a GPU (a :class:`RollupRow` over the samples taken while it held the
    GPU) → the entry stored under its id in a rollup's ``job_minutes`` (unrounded, as the row's own
    numbers: accounting integrates them; the wire rounds)."""
    return {"samples": r.samples, "valid_samples": r.valid_samples, "utilization_avg": r.utilization_avg,
            "activity_max": r.activity_max, "memory_used_max_mib": r.memory_used_max_mib, "rules": r.rules}


def foreign_report_to_dict(r: ForeignGpuReport) -> dict[str, Any]:
    """ForeignGpuReport → JSON dict (admin alert, case 014)."""
    return {"gpu_uuid": r.gpu_uuid, "node": r.node, "index": r.index, "held_mib": r.held_mib, "pids": list(r.pids),
            "allocated_to": list(r.allocated_to), "message": r.message, "releasable": r.releasable,
            "state": r.state, "action": r.action,
            "processes": [{"pid": p.pid, "used_memory_mib": p.used_memory_mib, "age_s": p.age_s, "user": p.user}
                          for p in r.processes]}
