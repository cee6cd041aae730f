"""What the telemetry says, shaped for the REST API: history with gaps, the inventory's telemetry
and health view, idle candidates. Inputs are gathered by the telemetry service (store rows, the
monitor's samples, the inventory); these functions only combine them (no I/O).

Who may see what (process lists only for GPUs the caller holds, admins see everything) is the
service's rule; the functions take ``processes_for`` to apply it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..accounting.waste import job_minutes_of
from ..model import Inventory, to_iso
from ..model.samples import GpuSample
from ..reclaim import ForeignProcess, IdleCandidate
from .health import health_summary
from .history import history_from_rollups, history_to_dict
from .ring import rollup_minutes
from .views import cluster_utilization, health_text, inventory_state_text, telemetry_state
from .wire import rollup_to_dict

__all__ = ["foreign_processes_of", "history_answer", "idle_candidates_answer", "inventory_telemetry", "job_view"]

DeviceKey = tuple[str, int | None]


def history_answer(stored: Iterable[Mapping[str, Any]], live: Iterable[GpuSample], *, devices: Sequence[DeviceKey],
                   since: datetime, until: datetime, step_s: int = 60, job_id: str | None = None,
                   withheld: Callable[[DeviceKey, datetime, datetime], str | None] | None = None) -> dict[str, Any]:
    """``GET telemetry/history``: points and gap spans of ``devices`` over ``[since, until)``.

    Args:
        stored: persisted one-minute rollup rows (``Store.rollup_rows``), used when ``step_s`` is 60.
        live: the monitor's samples of those devices (full resolution), for the minutes not
            persisted yet or for finer steps — for a job, those taken while it held the device.
        step_s: resolution, seconds (60 = minutes; 1..59 draws from the live samples only).
        job_id: the job or lease asked about: a stored minute is then that job's own
            (:func:`job_view`), the mean over the samples taken while it held the GPU — what the
            live samples gave before roll-up (new user 14, N26).
        withheld: steps the caller may not read (another user's work held the GPU then), as
            :func:`~.history.history_from_rollups` takes it.
    """
    live_rows = [rollup_to_dict(r) for r in rollup_minutes(list(live), bucket_s=step_s)]
    kept: Iterable[Mapping[str, Any]] = stored
    if job_id is not None:
        rows_of = list(stored)
        # a minute written twice (two servers sampling one GPU): the row that knows its holders wins
        known = {(r.get("gpu_uuid"), r.get("mig_instance"), r.get("minute")) for r in rows_of
                 if job_minutes_of(r) is not None}
        kept = [v for r in rows_of
                if job_minutes_of(r) is not None or (r.get("gpu_uuid"), r.get("mig_instance"), r.get("minute")) not in known
                if (v := job_view(r, job_id)) is not None]
    rows = [*(kept if step_s == 60 else ()), *live_rows]
    points, gaps = history_from_rollups(rows, devices=devices, since=since, until=until, step_s=step_s,
                                        withheld=withheld)
    body = history_to_dict(points, gaps)
    body.update(since=to_iso(since), until=to_iso(until), step_s=step_s,
                devices=[{"gpu_uuid": u, "mig_instance": m} for u, m in devices])
    return body


def job_view(row: Mapping[str, Any], job_id: str) -> Mapping[str, Any] | None:
    """A stored GPU-minute as ``job_id`` saw it: the row with the job's own ``job_minutes`` entry
    (samples, valid samples, mean utilization, peak memory, rules of the samples taken while it
    held the GPU); None when the minute was attributed and the job held the GPU at no sample of it.
    Rows without attribution (written before schema version 11, MIG instances) are the GPU's."""
    jobs = job_minutes_of(row)
    if jobs is None:
        return row
    own = jobs.get(job_id)
    if own is None:
        return None
    return {**row, "samples": own.samples, "valid_samples": own.valid_samples,
            "utilization_avg": own.utilization_avg, "activity_max": own.activity_max,
            "memory_used_max_mib": own.memory_used_max_mib if own.memory_used_max_mib is not None
            else row.get("memory_used_max_mib"), "rules": own.rules}


def inventory_telemetry(inventory: Inventory, latest: Mapping[DeviceKey, GpuSample], occupancy: Mapping[str, str], *,
                        foreign: Mapping[str, Sequence[ForeignProcess]] | None = None,
                        processes_for: Callable[[str], bool] = lambda uuid: True,
                        warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The telemetry half of ``GET inventory``: per GPU its state phrase, telemetry state, display
    utilization and health text; per node physical / schedulable counts and warnings; the cluster
    utilization over valid readings (cases 018, 022, 025, 026).

    Args:
        inventory: the current inventory (health evidence already applied).
        latest: the newest sample per device.
        occupancy: ``{gpu uuid: free | allocated | occupied-unmanaged | unhealthy}``.
        foreign: processes on GPUs the scheduler did not start (``NvmlInventory.foreign_processes``).
        processes_for: whether the caller may see the processes of a GPU (the service's rule).
        warnings: cluster-wide telemetry warnings the caller may see (exporter label mismatches, case 021).

    Returns:
        ``{"gpus": {uuid: {"state", "telemetry", "utilization", "validity", "health"}}, "nodes":
        {name: {"physical", "schedulable", "unhealthy", "warnings", "mig_strategy"}},
        "utilization": {"percent", "note"}, "warnings": [...]}``.
    """
    gpus: dict[str, dict[str, Any]] = {}
    for gpu in inventory.gpus():
        sample = latest.get((gpu.uuid, None))
        procs = list((foreign or {}).get(gpu.uuid, ())) if processes_for(gpu.uuid) else []
        gpus[gpu.uuid] = {
            "state": inventory_state_text(occupancy.get(gpu.uuid, "free"), sample, foreign=procs,
                                          health_reason=health_text(gpu)),
            "telemetry": telemetry_state(sample),
            "utilization": None if sample is None else sample.display_utilization(),
            "validity": None if sample is None else sample.label,
            "health": health_text(gpu), "health_hint": gpu.health_hint,
        }
    summary = health_summary(inventory)
    nodes = {n.name: {**summary[n.name], "warnings": list(n.warnings), "mig_strategy": n.mig_strategy}
             for n in inventory.nodes}
    total = cluster_utilization(list(latest.values()))
    return {"gpus": gpus, "nodes": nodes, "utilization": {"percent": round(total.utilization_pct, 2),
                                                          "note": total.note}, "warnings": list(warnings)}


def idle_candidates_answer(candidates: Iterable[IdleCandidate], *, user: str | None) -> list[dict[str, Any]]:
    """``GET idle`` (idle candidates, least time left first): all of them for an admin
    (``user=None``), else the caller's own."""
    return [c.to_dict() for c in candidates if user is None or c.user == user]


def foreign_processes_of(source: Any) -> dict[str, tuple[ForeignProcess, ...]]:
    """``{gpu uuid: processes}`` the scheduler did not start, from an inventory source that knows
    them (``NvmlInventory.foreign_processes``), looking through wrappers (``.source``); empty for
    sources that cannot know (Kubernetes, static, simulated)."""
    seen = 0
    while source is not None and not hasattr(source, "foreign_processes") and seen < 8:
        source, seen = getattr(source, "source", None), seen + 1
    return dict(getattr(source, "foreign_processes", None) or {})
