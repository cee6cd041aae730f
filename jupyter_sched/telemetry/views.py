"""What the telemetry says about a GPU, in the words the inventory, the panel and ``/metrics`` show.

Pure functions over the newest samples (no I/O):

- :func:`telemetry_state`: ``busy`` | ``idle`` | ``unknown`` | ``latch suspected`` for one device.
  Only valid readings are busy or idle; blank ones are unknown (case 009: a GPU whose recent
  samples are all blank is never ``idle`` and never ``busy 100 %``); a confirmed latch is its own
  state (case 026) — telemetry-only, so the GPU stays placeable.
- :func:`inventory_state_text`: one phrase per GPU for the inventory view, e.g. ``free
  (telemetry: utilization latch suspected)`` or ``blocked: unmanaged process pid 4242 (642 MiB,
  0 %, running 48 h)`` (cases 025, 026).
- :func:`cluster_utilization`: the cluster's mean utilization where only valid readings count;
  suspect and blank ones add 0 % and are named in a note (case 026).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..model import GPU, to_iso
from ..model.samples import GpuSample, Validity
from ..reclaim.foreign import ForeignProcess, blocked_text

__all__ = ["ClusterUtilization", "cluster_utilization", "health_text", "inventory_state_text", "telemetry_state"]


def telemetry_state(sample: GpuSample | None, *, threshold_pct: float = 5.0) -> str:
    """``busy`` (valid activity >= threshold), ``idle`` (valid, below), ``latch suspected``
    (confirmed latch) or ``unknown`` (no sample, blank, rejected or unconfirmed reading)."""
    if sample is None:
        return "unknown"
    if sample.validity_rule == "util_latch":
        return "latch suspected"
    state = sample.idle_state(threshold_pct)
    return {"active": "busy", "idle": "idle"}.get(state, "unknown")


def health_text(gpu: GPU) -> str:
    """Why a GPU is unhealthy with its time: ``Xid 94, since 2024-10-25T02:19:08Z`` (case 018);
    ``""`` for a healthy GPU."""
    if gpu.healthy:
        return ""
    reason = gpu.health_reason or "unhealthy"
    return f"{reason}, since {to_iso(gpu.health_since)}" if gpu.health_since is not None else reason


def inventory_state_text(occupancy: str, sample: GpuSample | None, *,
                         foreign: Sequence[ForeignProcess] = (), health_reason: str = "") -> str:
    """One phrase for a GPU in the inventory view.

    Args:
        occupancy: ``free`` | ``allocated`` | ``occupied-unmanaged`` | ``unhealthy``
            (:func:`jupyter_sched.reclaim.gpu_occupancy`).
        sample: its newest sample (None = no telemetry).
        foreign: processes on it the scheduler did not start.
        health_reason: why it is unhealthy, when it is.

    Returns:
        e.g. ``free``, ``free (telemetry: utilization latch suspected)``, ``allocated (telemetry
        unknown: DCGM blank value (no data))``, ``blocked: unmanaged process pid 4242 (642 MiB, 0 %,
        running 48 h)``, ``unhealthy: Xid 94, since 2024-10-25T02:19:08Z``.
    """
    if occupancy == "unhealthy":
        return f"unhealthy: {health_reason}" if health_reason else "unhealthy"
    if occupancy == "occupied-unmanaged" or (foreign and occupancy == "free"):
        util = "unknown %"
        if sample is not None and sample.counts_as_activity and sample.activity_pct is not None:
            util = f"{sample.activity_pct:.0f} %"
        held = sum(p.used_memory_mib or 0.0 for p in foreign) or (sample.memory_used_mib or 0.0 if sample else 0.0)
        return blocked_text(foreign, utilization=util, held_mib=held)
    state = telemetry_state(sample)
    if state == "latch suspected":
        return f"{occupancy} (telemetry: utilization latch suspected)"
    if state == "unknown" and sample is not None:
        return f"{occupancy} (telemetry unknown: {sample.display_utilization()})"
    return occupancy


@dataclass(frozen=True, slots=True)
class ClusterUtilization:
    """Mean utilization over GPUs, counting valid readings only.

    Attributes:
        utilization_pct: sum of valid readings / number of devices, % (0 when there are none).
        devices: devices counted. valid / suspect / blank: how many of each.
        note: which devices added 0 % and why (``""`` when all were valid).
    """

    utilization_pct: float
    devices: int
    valid: int
    suspect: int
    blank: int
    note: str


def cluster_utilization(latest: Iterable[GpuSample] | Mapping[object, GpuSample]) -> ClusterUtilization:
    """The cluster's utilization from each device's newest sample (case 026: suspect readings —
    a latch at 100 % — add 0 %, with a note naming them; so do blank ones)."""
    samples = list(latest.values()) if isinstance(latest, Mapping) else list(latest)
    total = 0.0
    suspect: list[str] = []
    blank: list[str] = []
    for s in samples:
        name = s.gpu_uuid if s.mig_instance is None else f"{s.gpu_uuid}/{s.mig_instance}"
        if s.counts_as_activity and s.activity_pct is not None:
            total += s.activity_pct
        elif s.validity is Validity.SUSPECT:
            suspect.append(f"{name} ({s.validity_rule})")
        else:
            blank.append(name)
    notes = []
    if suspect:
        notes.append(f"{len(suspect)} with suspect readings counted as 0 %: " + ", ".join(suspect))
    if blank:
        notes.append(f"{len(blank)} with unknown readings counted as 0 %: " + ", ".join(blank))
    n = len(samples)
    return ClusterUtilization(utilization_pct=total / n if n else 0.0, devices=n, valid=n - len(suspect) - len(blank),
                              suspect=len(suspect), blank=len(blank), note="; ".join(notes))
