"""Turn API objects (job / lease / inventory / telemetry JSON) into text lines and DataFrames.

Pure formatting over the wire shapes of :mod:`jupyter_sched.model.codec`; the magics print
what these return. Times are shown in UTC; ``now`` is passed in so tests can pin it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import TimestampError
from ..model.units import format_duration, parse_utc

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "gpu_frame", "granted_uuids", "is_granted", "is_pending", "is_terminal", "job_line", "no_gpus_message",
    "profiles_frame", "queue_frame", "reason_line", "samples_from",
]

TERMINAL = frozenset({"succeeded", "failed", "cancelled", "lost", "rejected"})


def is_terminal(job: Mapping[str, Any]) -> bool:
    """True when the job / lease will never run again."""
    return str(job.get("state")) in TERMINAL


def is_pending(job: Mapping[str, Any]) -> bool:
    """True while it waits for GPUs (pending, or preempted and about to requeue)."""
    return str(job.get("state")) in ("pending", "preempted")


def granted_uuids(job: Mapping[str, Any]) -> tuple[str, ...]:
    """GPU / MIG UUIDs of the job's allocation (all workers), empty when none."""
    alloc = job.get("allocation")
    if not isinstance(alloc, Mapping):
        return ()
    workers = alloc.get("workers") or []
    if workers:
        return tuple(str(u) for w in workers for u in w.get("gpu_uuids", ()))
    return tuple(str(u) for u in alloc.get("gpu_uuids", ()))


def is_granted(job: Mapping[str, Any]) -> bool:
    """True when it holds GPUs (admitted / running with an allocation)."""
    return str(job.get("state")) in ("admitted", "running") and job.get("allocation") is not None


def _eta_text(reason: Mapping[str, Any], now: datetime) -> str:
    eta = reason.get("eta")
    if not eta:
        why = reason.get("eta_reason")
        return f"ETA unknown ({why})" if why else "ETA unknown"
    try:
        when = parse_utc(str(eta), field="eta")
    except TimestampError:
        return f"ETA {eta}"
    wait = (when - now).total_seconds()
    return f"ETA {when:%H:%M} UTC (in {format_duration(max(wait, 0.0))})"


def reason_line(job: Mapping[str, Any], now: datetime) -> str:
    """One line for a waiting job: ``queued #2 · WaitingForCapacity: ... · ETA 19:42 UTC (in 5m)``."""
    reason = job.get("reason")
    if not isinstance(reason, Mapping):
        return f"{job.get('state', 'pending')}: waiting for the next scheduling cycle"
    parts = []
    position = reason.get("position")
    parts.append(f"queued #{position}" if position else "queued")
    message = str(reason.get("message") or "")
    parts.append(f"{reason.get('code', 'Pending')}: {message}" if message else str(reason.get("code", "Pending")))
    parts.append(_eta_text(reason, now))
    unblock = reason.get("unblock")
    if unblock:
        parts.append(f"unblocks when: {unblock}")
    return " · ".join(parts)


def _gpus_text(job: Mapping[str, Any]) -> str:
    res = job.get("resources") if isinstance(job.get("resources"), Mapping) else job
    assert isinstance(res, Mapping)
    gpus = res.get("gpus", 0)
    milli = res.get("gpu_milli", 1000)
    count = f"{milli / 1000:g}" if gpus == 1 and milli and milli < 1000 else str(gpus)
    models = res.get("gpu_models") or []
    return f"{count} GPU" + ("" if count == "1" else "s") + (f" ({'/'.join(models)})" if models else "")


def job_line(job: Mapping[str, Any], now: datetime) -> str:
    """One status line for a job or lease (state, GPUs, where, exit code or reason)."""
    kind = job.get("kind", "job")
    head = f"{'lease' if kind == 'lease' else 'service' if kind == 'inference' else 'job'} {job.get('id')}"
    if job.get("name"):
        head += f" ({job['name']})"
    state = str(job.get("state"))
    if is_pending(job):
        return f"{head}: {state}, {_gpus_text(job)} · {reason_line(job, now)}"
    if state in ("admitted", "running"):
        uuids = granted_uuids(job)
        alloc = job.get("allocation") or {}
        where = f" on {alloc.get('node')}: {', '.join(uuids)}" if uuids else ""
        sim = " [simulated GPUs]" if job.get("simulated") else ""
        return f"{head}: {state}{where}{sim}"
    tail = f", exit code {job['exit_code']}" if job.get("exit_code") is not None else ""
    message = str(job.get("message") or "")
    msg = f" — {message}" if message and not message.startswith("exited with code") else ""
    return f"{head}: {state}{tail}{msg}"


def no_gpus_message(inventory: Mapping[str, Any]) -> str | None:
    """The case 015 message when the inventory has no GPUs, else None."""
    if inventory.get("gpus"):
        return None
    nvml = inventory.get("nvml") if isinstance(inventory.get("nvml"), Mapping) else None
    error = str(nvml.get("error") or "") if nvml else ""
    if "library not found" in error.lower() or "shared library" in error.lower():
        cause = "NVML library not found"
    elif error:
        cause = error
    else:
        cause = "the inventory lists no GPUs"
    return (f"No NVIDIA GPUs available on this host ({cause}). "
            "Use the Kubernetes executor or a GPU node.")


def samples_from(payload: Any) -> list[dict[str, Any]]:
    """Telemetry answer → ``[{"gpu_uuid", "utilization_pct", "memory_used_mib", "timestamp"}]``.

    Accepts a list of samples or an object holding one under ``samples`` / ``gpus`` / ``telemetry``.
    """
    rows = payload
    if isinstance(payload, Mapping):
        for key in ("samples", "gpus", "telemetry", "data"):
            if isinstance(payload.get(key), list):
                rows = payload[key]
                break
    if not isinstance(rows, list):
        return []
    out = []
    for row in rows:
        if not isinstance(row, Mapping):
            continue
        uuid = row.get("gpu_uuid") or row.get("uuid") or row.get("gpu")
        if not uuid:
            continue
        out.append({
            "gpu_uuid": str(row.get("mig_uuid") or uuid),
            "utilization_pct": row.get("utilization_pct", row.get("util_percent")),
            "memory_used_mib": row.get("memory_used_mib"),
            "timestamp": row.get("timestamp"),
        })
    return out


def gpu_frame(inventory: Mapping[str, Any], work: Iterable[Mapping[str, Any]],
              samples: Sequence[Mapping[str, Any]] = (), mine: Sequence[str] = ()) -> pd.DataFrame:
    """The ``%gpu status`` table: one row per GPU.

    Columns: node, index, model, memory_mib, allocated_to (``user: kind id name``), util_pct,
    memory_used_mib (latest sample; None = no telemetry), health, simulated, this_kernel, uuid.
    """
    import pandas as pd

    holders: dict[str, str] = {}
    for job in work:
        if not is_granted(job):
            continue
        label = f"{job.get('user')}: {job.get('kind', 'job')} {job.get('id')}"
        if job.get("name"):
            label += f" ({job['name']})"
        for uuid in granted_uuids(job):
            holders[uuid] = label
    latest: dict[str, Mapping[str, Any]] = {}
    for sample in samples:
        latest[str(sample["gpu_uuid"])] = sample
    rows = []
    for gpu in inventory.get("gpus", ()):
        uuid = str(gpu.get("uuid"))
        sample = latest.get(uuid, {})
        rows.append({
            "node": gpu.get("node"), "index": gpu.get("index"), "model": gpu.get("model"),
            "memory_mib": gpu.get("memory_mib"), "allocated_to": holders.get(uuid, ""),
            "util_pct": sample.get("utilization_pct"), "memory_used_mib": sample.get("memory_used_mib"),
            "health": gpu.get("health"), "simulated": bool(gpu.get("simulated")), "this_kernel": uuid in mine,
            "uuid": uuid,
        })
    columns = ["node", "index", "model", "memory_mib", "allocated_to", "util_pct", "memory_used_mib", "health",
               "simulated", "this_kernel", "uuid"]
    return pd.DataFrame(rows, columns=columns)


def queue_frame(rows: Iterable[Mapping[str, Any]], now: datetime) -> pd.DataFrame:
    """The ``%schedule queue`` table: position, id, user, kind, state, GPUs, priority, reason, ETA."""
    import pandas as pd

    out = []
    for job in rows:
        reason = job.get("reason") if isinstance(job.get("reason"), Mapping) else {}
        assert isinstance(reason, Mapping)
        out.append({
            "position": reason.get("position", job.get("position")), "id": job.get("id"), "name": job.get("name"),
            "user": job.get("user"), "kind": job.get("kind"), "state": job.get("state"), "gpus": _gpus_text(job),
            "priority": job.get("priority"), "reason": reason.get("code", ""),
            "detail": reason.get("message", ""),
            "eta": _eta_text(reason, now).removeprefix("ETA ") if reason else "",
            "gpu_uuids": ", ".join(granted_uuids(job)),
        })
    columns = ["position", "id", "name", "user", "kind", "state", "gpus", "priority", "reason", "detail", "eta",
               "gpu_uuids"]
    frame = pd.DataFrame(out, columns=columns)
    frame["position"] = frame["position"].astype("Int64")  # whole numbers, <NA> for running work
    return frame


def profiles_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The ``%schedule profiles`` table: name, description, defaults."""
    import pandas as pd

    out = []
    for row in rows:
        defaults = row.get("defaults") if isinstance(row.get("defaults"), Mapping) else {
            k: v for k, v in row.items() if k not in ("name", "description")}
        assert isinstance(defaults, Mapping)
        out.append({"name": row.get("name"), "description": row.get("description", ""),
                    "defaults": ", ".join(f"{k}={v}" for k, v in defaults.items())})
    return pd.DataFrame(out, columns=["name", "description", "defaults"])
