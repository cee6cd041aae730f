"""JSON wire shapes of the model, shared by the store, the REST API, the client and the panel.

One place turns model objects into plain JSON-able dicts and back, so every surface shows
the same fields. Timestamps are ISO 8601 UTC with ``Z`` (case 010).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .job import (
    Allocation,
    Hold,
    Job,
    JobKind,
    JobSpec,
    JobState,
    PendingReason,
    PriorityClass,
    ResourceRequest,
    WorkerGroup,
)
from .quota import Budget, Quota, TeamPolicy
from .resources import GPU, Cordon, Health, Inventory, MigDevice, Node, NvmlStatus, Taint
from .units import parse_utc, to_iso

__all__ = [
    "allocation_from_dict", "allocation_to_dict", "budget_from_dict", "budget_to_dict", "hold_from_dict", "hold_to_dict",
    "cordon_from_dict", "cordon_to_dict", "gpu_to_dict", "inventory_from_dict", "inventory_to_dict", "job_from_dict", "job_to_dict",
    "quota_from_dict", "quota_to_dict", "reason_from_dict", "reason_to_dict", "spec_from_dict",
    "spec_to_dict", "team_policy_from_dict", "team_policy_to_dict",
]


def _ts(value: datetime | None) -> str | None:
    return to_iso(value)


def _parse_ts(value: Any, field: str) -> datetime | None:
    return None if value is None else parse_utc(value, field=field)


def resources_to_dict(r: ResourceRequest) -> dict[str, Any]:
    """ResourceRequest → JSON dict (GPUs, milli-GPUs, MiB, millicores). ``total_gpus``: the GPUs of
    all its workers together (3 for a 1-GPU launcher + 2-GPU trainer, 0.5 for half a GPU) — for a
    heterogeneous gang ``gpus`` is the largest group's per-worker count and ``workers`` all its
    workers, so gpus x workers is no total (new user 18, N8: 2 x 2 = 4 for a 3-GPU job)."""
    milli = r.total_milli
    return {
        "gpus": r.gpus, "gpu_milli": r.gpu_milli, "gpu_models": list(r.gpu_models),
        "min_memory_mib": r.min_memory_mib, "mig_profile": r.mig_profile, "nvlink": r.nvlink,
        "cpu_millis": r.cpu_millis, "memory_mib": r.memory_mib, "workers": r.workers,
        "node_selector": dict(r.node_selector), "tolerations": list(r.tolerations),
        "groups": [{"name": g.name, "gpus": g.gpus, "workers": g.workers, "cpu_millis": g.cpu_millis,
                    "memory_mib": g.memory_mib} for g in r.groups],
        "total_gpus": milli // 1000 if milli % 1000 == 0 else milli / 1000,
    }


def resources_from_dict(d: Mapping[str, Any]) -> ResourceRequest:
    """Inverse of :func:`resources_to_dict` (trusted input: the store)."""
    groups = tuple(WorkerGroup(name=str(g["name"]), gpus=int(g["gpus"]), workers=int(g.get("workers", 1)),
                               cpu_millis=int(g.get("cpu_millis", 0)), memory_mib=int(g.get("memory_mib", 0)))
                   for g in d.get("groups") or ())
    if groups:
        return ResourceRequest.of_groups(
            groups, gpu_models=tuple(d.get("gpu_models", ())), min_memory_mib=int(d.get("min_memory_mib", 0)),
            nvlink=bool(d.get("nvlink", False)), node_selector=dict(d.get("node_selector", {})),
            tolerations=tuple(d.get("tolerations", ())))
    return ResourceRequest(
        gpus=int(d.get("gpus", 1)), gpu_milli=int(d.get("gpu_milli") or 1000),  # 0: no GPU (job_to_dict)
        gpu_models=tuple(d.get("gpu_models", ())), min_memory_mib=int(d.get("min_memory_mib", 0)),
        mig_profile=d.get("mig_profile"), nvlink=bool(d.get("nvlink", False)),
        cpu_millis=int(d.get("cpu_millis", 0)), memory_mib=int(d.get("memory_mib", 0)),
        workers=int(d.get("workers", 1)), node_selector=dict(d.get("node_selector", {})),
        tolerations=tuple(d.get("tolerations", ())),
    )


def spec_to_dict(s: JobSpec) -> dict[str, Any]:
    """JobSpec → JSON dict (``released_at_exit`` only where true: the few leases of kernels a
    server did not start carry it; ``time_limit_source`` only where its queue gave the limit; every
    other job's object stays as it was)."""
    out = {
        "name": s.name, "user": s.user, "team": s.team, "kind": s.kind.value,
        "priority": s.priority.value, "resources": resources_to_dict(s.resources),
        "time_limit_s": s.time_limit_s, "command": list(s.command), "script": s.script,
        "notebook": s.notebook, "working_dir": s.working_dir, "env": dict(s.env),
        "image": s.image, "port": s.port, "kernel_id": s.kernel_id, "profile": s.profile,
        "checkpointable": s.checkpointable, "parameters": dict(s.parameters), "definition_id": s.definition_id,
        "unlimited": s.unlimited, "source": s.source, "notebook_json": s.notebook_json,
        "kernel_notebook": s.kernel_notebook, "parent_job_id": s.parent_job_id,
    }
    if s.released_at_exit:
        out["released_at_exit"] = True
    if s.asking_process is not None:  # newuser41 N1: who asked, checked on its own host
        pid, started, host = s.asking_process
        out["asking_process"] = {"pid": pid, "started": started, "host": host}
    if s.time_limit_source is not None:  # a limit its queue gave (newuser28 N8): only where set
        out["time_limit_source"] = s.time_limit_source
    if s.no_preempt:  # a request that never evicts (newuser36 N6): only where set
        out["no_preempt"] = True
    if s.not_kept:  # a finished job's row that keeps its env as names only, its command cut (red30 R4)
        out["not_kept"] = dict(s.not_kept)
    return out


def spec_from_dict(d: Mapping[str, Any]) -> JobSpec:
    """Inverse of :func:`spec_to_dict` (trusted input: the store)."""
    return JobSpec(
        name=d["name"], user=d["user"], team=d.get("team", "default"), kind=JobKind(d.get("kind", "training")),
        priority=PriorityClass(d.get("priority", "normal")),
        resources=resources_from_dict(d.get("resources", {})), time_limit_s=d.get("time_limit_s"),
        command=tuple(d.get("command", ())), script=d.get("script"), notebook=d.get("notebook"),
        working_dir=d.get("working_dir"), env=dict(d.get("env", {})), image=d.get("image"),
        port=d.get("port"), kernel_id=d.get("kernel_id"), profile=d.get("profile"),
        checkpointable=bool(d.get("checkpointable", False)), parameters=dict(d.get("parameters") or {}),
        definition_id=d.get("definition_id"), unlimited=bool(d.get("unlimited", False)),
        source=d.get("source"), notebook_json=d.get("notebook_json"), kernel_notebook=d.get("kernel_notebook"),
        parent_job_id=d.get("parent_job_id"), released_at_exit=bool(d.get("released_at_exit", False)),
        asking_process=_asking_from(d.get("asking_process")),
        time_limit_source=d.get("time_limit_source"), no_preempt=bool(d.get("no_preempt", False)),
        not_kept={str(k): int(v) for k, v in (d.get("not_kept") or {}).items()},
    )


def allocation_to_dict(a: Allocation | None) -> dict[str, Any] | None:
    """Allocation → JSON dict (or None). ``gpu_milli`` is 0 when it holds no GPU (a CPU-only job):
    the model keeps 1000 there, which read as a whole GPU in the job object (new user 11, N8) and in
    the audit's ``admit`` record (new user 14, N6); :func:`allocation_from_dict` reads 0 back as 1000."""
    if a is None:
        return None
    held = bool(a.gpu_uuids) or any(u for _, u in a.workers)
    return {"node": a.node, "gpu_uuids": list(a.gpu_uuids), "gpu_milli": a.gpu_milli if held else 0,
            "workers": [{"node": n, "gpu_uuids": list(u)} for n, u in a.workers]}


def allocation_from_dict(d: Mapping[str, Any] | None) -> Allocation | None:
    """Inverse of :func:`allocation_to_dict`."""
    if d is None:
        return None
    return Allocation(node=d["node"], gpu_uuids=tuple(d["gpu_uuids"]), gpu_milli=int(d.get("gpu_milli") or 1000),
                      workers=tuple((w["node"], tuple(w["gpu_uuids"])) for w in d.get("workers", ())))


def reason_to_dict(r: PendingReason | None) -> dict[str, Any] | None:
    """PendingReason → JSON dict (or None)."""
    if r is None:
        return None
    return {"code": r.code, "message": r.message, "details": dict(r.details), "unblock": r.unblock,
            "position": r.position, "eta": _ts(r.eta), "eta_reason": r.eta_reason,
            "per_flavor": [dict(f) for f in r.per_flavor], "predicted_start": _ts(r.predicted_start)}


def reason_from_dict(d: Mapping[str, Any] | None) -> PendingReason | None:
    """Inverse of :func:`reason_to_dict`."""
    if d is None:
        return None
    return PendingReason(code=d["code"], message=d["message"], details=dict(d.get("details", {})),
                         unblock=d.get("unblock", ""), position=d.get("position"),
                         eta=_parse_ts(d.get("eta"), "reason.eta"), eta_reason=d.get("eta_reason", ""),
                         per_flavor=tuple(dict(f) for f in d.get("per_flavor", ())),
                         predicted_start=_parse_ts(d.get("predicted_start"), "reason.predicted_start"))


def job_to_dict(j: Job, *, simulated: bool = False) -> dict[str, Any]:
    """Job → the REST API's job object (spec fields flattened next to the lifecycle fields).

    Carried content (``source``, ``notebook_json``) stays in the store: no answer or event
    repeats it (size, and the queue shows others' jobs).
    """
    out = spec_to_dict(j.spec)
    del out["source"], out["notebook_json"]
    out.update({
        "id": j.id, "state": j.state.value, "submitted_at": _ts(j.submitted_at),
        "admitted_at": _ts(j.admitted_at), "started_at": _ts(j.started_at),
        "finished_at": _ts(j.finished_at), "allocation": allocation_to_dict(j.allocation),
        "reason": reason_to_dict(j.reason), "exit_code": j.exit_code, "message": j.message,
        "attempts": j.attempts, "false_starts": j.false_starts, "not_before": _ts(j.not_before),
        "preempted_by": j.preempted_by,
        "nominated": allocation_to_dict(j.nominated), "stopping_since": _ts(j.stopping_since),
        "simulated": simulated,
    })
    if j.held is not None:  # only when set: a person's hold, an admin's top (hubadmin25 B18)
        out["held"] = hold_to_dict(j.held)
    if j.top_at is not None:
        out["top_at"] = _ts(j.top_at)
    if j.eligible_at is not None:
        out["eligible_at"] = _ts(j.eligible_at)
    # new user 11, N8: a 0-GPU job read "gpus": 0, "gpu_milli": 1000 — told it held a whole GPU. The model
    # keeps gpu_milli as the share of *each* GPU (1000 when there are none: never fractional); the job
    # object says 0 (its allocations too: allocation_to_dict), and the readers take 0 back as that 1000
    if out["resources"]["gpus"] == 0 and not out["resources"]["groups"]:
        out["resources"]["gpu_milli"] = 0
    return out


def job_from_dict(d: Mapping[str, Any]) -> Job:
    """Inverse of :func:`job_to_dict` (trusted input: the store)."""
    return Job(
        id=d["id"], spec=spec_from_dict(d), state=JobState(d["state"]),
        submitted_at=_parse_ts(d.get("submitted_at"), "submitted_at"),
        admitted_at=_parse_ts(d.get("admitted_at"), "admitted_at"),
        started_at=_parse_ts(d.get("started_at"), "started_at"),
        finished_at=_parse_ts(d.get("finished_at"), "finished_at"),
        allocation=allocation_from_dict(d.get("allocation")), reason=reason_from_dict(d.get("reason")),
        exit_code=d.get("exit_code"), message=d.get("message", ""), attempts=int(d.get("attempts", 0)),
        false_starts=int(d.get("false_starts") or 0),
        not_before=_parse_ts(d.get("not_before"), "not_before"), preempted_by=d.get("preempted_by"),
        nominated=allocation_from_dict(d.get("nominated")),
        stopping_since=_parse_ts(d.get("stopping_since"), "stopping_since"),
        held=hold_from_dict(d.get("held")), top_at=_parse_ts(d.get("top_at"), "top_at"),
        eligible_at=_parse_ts(d.get("eligible_at"), "eligible_at"),
    )


def hold_to_dict(h: Hold | None) -> dict[str, Any] | None:
    """A person's hold on a job (hubadmin25 B18) → ``{"by", "at", "admin"}``; None stays None."""
    return None if h is None else {"by": h.by, "at": _ts(h.at), "admin": h.admin}


def hold_from_dict(d: Mapping[str, Any] | None) -> Hold | None:
    """Inverse of :func:`hold_to_dict` (trusted input: the store)."""
    if not d:
        return None
    at = _parse_ts(d.get("at"), "held.at")
    if at is None:
        raise ValueError("held.at is missing")
    return Hold(by=str(d["by"]), at=at, admin=bool(d.get("admin")))


def gpu_to_dict(g: GPU) -> dict[str, Any]:
    """GPU → JSON dict; ``simulated`` is always present so every surface can label it."""
    return {
        "uuid": g.uuid, "index": g.index, "node": g.node, "model": g.model, "memory_mib": g.memory_mib,
        "pci_bus_id": g.pci_bus_id, "mig_enabled": g.mig_enabled,
        "mig_devices": [{"uuid": m.uuid, "profile": m.profile, "gpu_instance_id": m.gpu_instance_id,
                         "memory_mib": m.memory_mib} for m in g.mig_devices],
        "nvlink_peers": list(g.nvlink_peers), "health": g.health.value, "health_reason": g.health_reason,
        "simulated": g.simulated, "foreign_memory_mib": g.foreign_memory_mib,
        "health_since": _ts(g.health_since), "health_hint": g.health_hint,
    }


def _gpu_from_dict(d: Mapping[str, Any]) -> GPU:
    return GPU(
        uuid=d["uuid"], index=int(d["index"]), node=d["node"], model=d["model"], memory_mib=int(d["memory_mib"]),
        pci_bus_id=d.get("pci_bus_id", ""), mig_enabled=bool(d.get("mig_enabled", False)),
        mig_devices=tuple(MigDevice(uuid=m["uuid"], profile=m["profile"], gpu_instance_id=int(m["gpu_instance_id"]),
                                    memory_mib=int(m["memory_mib"])) for m in d.get("mig_devices", ())),
        nvlink_peers=tuple(d.get("nvlink_peers", ())), health=Health(d.get("health", "healthy")),
        health_reason=d.get("health_reason", ""), simulated=bool(d.get("simulated", False)),
        foreign_memory_mib=int(d.get("foreign_memory_mib", 0)),
        health_since=_parse_ts(d.get("health_since"), "health_since"), health_hint=d.get("health_hint", ""),
    )


def cordon_to_dict(cordon: Cordon | None) -> dict[str, Any] | None:
    """A node's maintenance cordon → ``{"reason", "by", "at", "evict_at"}`` (None: not cordoned by an admin)."""
    if cordon is None:
        return None
    return {"reason": cordon.reason, "by": cordon.by, "at": _ts(cordon.at), "evict_at": _ts(cordon.evict_at)}


def cordon_from_dict(d: Mapping[str, Any] | None) -> Cordon | None:
    """Inverse of :func:`cordon_to_dict`."""
    if not d:
        return None
    return Cordon(reason=str(d.get("reason") or ""), by=str(d.get("by") or ""),
                  at=parse_utc(d.get("at") or "", field="cordon.at"),
                  evict_at=_parse_ts(d.get("evict_at"), "cordon.evict_at"))


def inventory_to_dict(inv: Inventory) -> dict[str, Any]:
    """Inventory → the REST API's inventory object (nodes with GPUs, flat GPU list, NVML status)."""
    nodes: list[dict[str, Any]] = [{
        "name": n.name, "cpu_millis": n.cpu_millis, "memory_mib": n.memory_mib, "labels": dict(n.labels),
        "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints],
        "ready": n.ready, "unschedulable": n.unschedulable, "gpus": [gpu_to_dict(g) for g in n.gpus],
        "mig_strategy": n.mig_strategy, "warnings": list(n.warnings), "cordon": cordon_to_dict(n.cordon),
    } for n in inv.nodes]
    return {
        "source": inv.source, "simulated": inv.simulated, "nodes": nodes,
        "gpus": [gpu for node in nodes for gpu in node["gpus"]],
        "nvml": None if inv.nvml is None else {
            "available": inv.nvml.available, "error": inv.nvml.error,
            "device_count": inv.nvml.device_count, "driver_version": inv.nvml.driver_version},
    }


def inventory_from_dict(d: Mapping[str, Any]) -> Inventory:
    """Inverse of :func:`inventory_to_dict`."""
    nodes = tuple(Node(
        name=n["name"], gpus=tuple(_gpu_from_dict(g) for g in n.get("gpus", ())),
        cpu_millis=int(n.get("cpu_millis", 0)), memory_mib=int(n.get("memory_mib", 0)),
        labels=dict(n.get("labels", {})),
        taints=tuple(Taint(t["key"], t.get("value", ""), t.get("effect", "NoSchedule")) for t in n.get("taints", ())),
        ready=bool(n.get("ready", True)), unschedulable=bool(n.get("unschedulable", False)),
        mig_strategy=str(n.get("mig_strategy", "none")), warnings=tuple(n.get("warnings", ())),
        cordon=cordon_from_dict(n.get("cordon")),
    ) for n in d.get("nodes", ()))
    nv = d.get("nvml")
    nvml = None if nv is None else NvmlStatus(available=nv["available"], error=nv.get("error", ""),
                                               device_count=int(nv.get("device_count", 0)),
                                               driver_version=nv.get("driver_version", ""))
    return Inventory(nodes=nodes, source=d.get("source", "static"), nvml=nvml)


def quota_to_dict(q: Quota) -> dict[str, Any]:
    """Quota → JSON dict."""
    return {"team": q.team, "user": q.user, "gpu_model": q.gpu_model, "guaranteed": q.guaranteed,
            "borrowing_limit": q.borrowing_limit}


def quota_from_dict(d: Mapping[str, Any]) -> Quota:
    """JSON dict → Quota (validating types; admin input).

    Raises:
        jupyter_sched.errors.ValidationError: naming the field.
    """
    from ..errors import ValidationError, shown

    if not isinstance(d, Mapping):
        raise ValidationError("each quota must be an object", field="quotas",
                              hint='e.g. {"team": "ml", "guaranteed": 4, "borrowing_limit": 2}')
    unknown = sorted(set(d) - {"team", "user", "gpu_model", "guaranteed", "borrowing_limit"})
    if unknown:
        raise ValidationError(f"unknown quota field {unknown[0]!r}", field=unknown[0],
                              hint="quota fields: team, user, gpu_model, guaranteed, borrowing_limit")
    team = d.get("team")
    if not isinstance(team, str) or not team:
        raise ValidationError("quota.team must be a non-empty string", field="team", hint='e.g. "team-ml"')
    user = d.get("user")
    if user is not None and not isinstance(user, str):
        raise ValidationError("quota.user must be a string or null", field="user", hint="omit it for a team line")
    model = d.get("gpu_model", "*")
    if not isinstance(model, str) or not model:
        raise ValidationError("quota.gpu_model must be a string", field="gpu_model", hint='use "*" for any model')
    numbers: dict[str, float | None] = {}
    for key in ("guaranteed", "borrowing_limit"):
        value = d.get(key, 0 if key == "guaranteed" else None)
        if value is None and key == "borrowing_limit":
            numbers[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            # NaN and infinities too: a stored row with one (SQLite keeps 9e999 as inf) is quarantined, never served
            raise ValidationError(f"quota.{key} must be a number (got {shown(value)})", field=key,
                                  hint="give a number of GPUs" + (" or null for unlimited" if key == "borrowing_limit" else ""))
        if value < 0:
            raise ValidationError(f"quota.{key} must be >= 0 (got {value})", field=key, hint="give 0 or more GPUs")
        numbers[key] = float(value)
    return Quota(team=team, user=user, gpu_model=model, guaranteed=numbers["guaranteed"] or 0.0,
                 borrowing_limit=numbers["borrowing_limit"])


def budget_to_dict(b: Budget) -> dict[str, Any]:
    """Budget → JSON dict."""
    return {"team": b.team, "user": b.user, "gpu_hours": b.gpu_hours, "period": b.period}


def budget_from_dict(d: Mapping[str, Any]) -> Budget:
    """JSON dict → Budget. A stored row with a negative, infinite or NaN ``gpu_hours`` or an unknown period does
    not read (the store then holds its scope's GPU work, fail-closed: verify27 V6) — it was read as "0 of -1
    GPU-hours" (s27-trust, noticed).

    Raises:
        jupyter_sched.errors.ValidationError: naming ``gpu_hours`` or ``period``.
    """
    import math

    from ..errors import ValidationError, shown
    from .periods import PERIODS, PERIODS_TEXT

    hours, period = float(d["gpu_hours"]), d.get("period", "month")
    if not (math.isfinite(hours) and hours >= 0):
        raise ValidationError(f"budget.gpu_hours must be a number >= 0 (got {shown(d['gpu_hours'])})",
                              field="gpu_hours", hint="e.g. 500 GPU-hours a period")
    if period not in PERIODS:
        raise ValidationError(f"budget.period must be {PERIODS_TEXT} (got {shown(period)})", field="period",
                              hint='e.g. "month"')
    return Budget(team=d["team"], user=d.get("user"), gpu_hours=hours, period=period)


def team_policy_to_dict(t: TeamPolicy) -> dict[str, Any]:
    """TeamPolicy → JSON dict."""
    return {"team": t.team, "weight": t.weight, "allowed_priorities": list(t.allowed_priorities),
            "members": list(t.members), "reclaim": t.reclaim}


def team_policy_from_dict(d: Mapping[str, Any]) -> TeamPolicy:
    """JSON dict → TeamPolicy (trusted)."""
    return TeamPolicy(team=d["team"], weight=float(d.get("weight", 1.0)),
                      allowed_priorities=tuple(d.get("allowed_priorities", ("normal", "low"))),
                      members=tuple(d.get("members", ())), reclaim=d.get("reclaim"))


def _asking_from(value: Any) -> tuple[int, int, str] | None:
    """A stored ``asking_process`` as the spec keeps it (None: absent or not the stored shape)."""
    if not isinstance(value, Mapping):
        return None
    try:
        return int(value["pid"]), int(value["started"]), str(value["host"])
    except (KeyError, TypeError, ValueError):
        return None
