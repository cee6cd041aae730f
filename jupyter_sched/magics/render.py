"""Turn API objects (job / lease / inventory / telemetry JSON) into text lines and DataFrames.

Pure formatting over the wire shapes of :mod:`jupyter_sched.model.codec`; the magics print
what these return. Sentences (job lines, reasons, ETAs) come from :mod:`jupyter_sched.wording`,
shared with the CLI and the panel; this module adds the DataFrames. Times are shown in UTC;
``now`` is passed in so tests can pin it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..wording import gpus_text, job_line, progress_text, render_reason, state_word
from ..wording.cordons import drain_text
from ..wording.exit_codes import exit_code_words
from ..wording.jobs import (
    GONE_WORDS,
    TERMINAL_STATES,
    ends_by,
    gone_text,
    granted_uuids,
    lease_end_words,
    projected_text,
    restarted_text,
    unhealthy_text,
    work_name,
)
from ..wording.reasons import clock_times, code_words
from ..wording.time_limits import planned_limit_line

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "draining_line", "gpu_frame", "pandas", "granted_uuids", "is_granted", "is_pending", "is_terminal", "job_line",
    "jobs_frame",
    "no_gpus_message",
    "profiles_frame", "queue_frame", "reason_line", "samples_from", "shown_frame", "USAGE_COLUMNS", "usage_frame",
]

def shown_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (a table the magics display) with every text cell as the CLI's tables print it
    (:func:`~jupyter_sched.textsafe.escaped_controls`: controls, bidirectional and invisible characters as escapes,
    ``train\\u200b``): a notebook's table shows a job, user, team, node or definition name as what it is, never
    as another's (s30, red29 R2's rule; a DataFrame's HTML escapes markup, not these). Other cells are kept.
    Returned as a :class:`~jupyter_sched.magics.frames.WholeTextFrame`: a DataFrame that shows each text whole,
    not cut at pandas' 50 characters (newuser30 n20: queue reasons and long names ended in "…")."""
    from ..textsafe import escaped_controls
    from .frames import whole_text

    frame = whole_text(frame)
    for column in frame.columns:  # text columns: object or pandas' str dtype (pandas 3)
        cells = list(frame[column])
        if any(isinstance(v, str) and v != escaped_controls(v) for v in cells):
            frame[column] = [escaped_controls(v) if isinstance(v, str) else v for v in cells]
    return frame


def pandas() -> Any:
    """pandas, or an ImportError that says which extra brings it (a slim install has none)."""
    try:
        import pandas as pd
    except ModuleNotFoundError as exc:
        from ..extras import install_extra

        raise ModuleNotFoundError(f"the magics' tables need pandas: {install_extra('lab')}",
                                  name=exc.name) from None
    return pd


def is_terminal(job: Mapping[str, Any]) -> bool:
    """True when the job / lease will never run again."""
    return str(job.get("state")) in TERMINAL_STATES


def is_pending(job: Mapping[str, Any]) -> bool:
    """True while it waits for GPUs (pending, or preempted and about to requeue)."""
    return str(job.get("state")) in ("pending", "preempted")


def draining_line(lease: Mapping[str, Any]) -> str:
    """``lease l-1, released, still holds GPU-…: <its message>`` for a released lease whose GPU a
    process still uses (the engine keeps it held until then: red team 18, R6), else ""."""
    if str(lease.get("state")) not in ("admitted", "running") or not lease.get("stop_requested"):
        return ""
    uuids = granted_uuids(lease)
    said = clock_times(str(lease.get("message") or "").strip(), None) or "waiting for its processes to free the GPU"  # n30
    return f"lease {lease.get('id')}, released, still holds {', '.join(uuids) or 'its GPUs'}: {said}"


def is_granted(job: Mapping[str, Any]) -> bool:
    """True when it holds GPUs (admitted / running with an allocation)."""
    return str(job.get("state")) in ("admitted", "running") and job.get("allocation") is not None


def reason_line(job: Mapping[str, Any], now: datetime) -> str:
    """One line for a waiting job, as the CLI and the panel say it (:func:`jupyter_sched.wording.render_reason`):
    ``queued #2 · <what blocks it> · ETA 19:42 UTC (in 5m) · <what would unblock it>``."""
    reason = job.get("reason")
    if not isinstance(reason, Mapping):
        return f"{job.get('state', 'pending')}: waiting for the next scheduling cycle"
    return render_reason(reason, now=now, relative=True, kind=str(job.get("kind") or ""),
                         mine=job.get("mine") is True).line


def no_gpus_message(inventory: Mapping[str, Any]) -> str | None:
    """The case 015 message when the inventory has no GPUs, else None. On Kubernetes it says the
    cluster has no GPU nodes and gives no executor advice: the executor is already Kubernetes
    (case 027)."""
    if inventory.get("gpus"):
        return None
    if inventory.get("source") == "kubernetes":
        return ("This cluster has no GPU nodes (no node advertises nvidia.com/gpu or a MIG resource). "
                "Ask an admin to add a GPU node pool; GPU requests are refused until one joins.")
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
    """Telemetry answer → ``[{"gpu_uuid", "utilization_pct", "memory_used_mib", "timestamp", "note"}]``.

    Accepts a list of samples or an object holding one under ``samples`` / ``gpus`` / ``telemetry``;
    a device row of ``GET telemetry`` (``{"gpu_uuid", "current": sample, "recent": [...]}``) gives
    its ``current`` sample.
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
        # GET telemetry nests each device's latest sample under "current" (issue 20: reading the
        # row itself showed util_pct None for every GPU, simulated ones included)
        sample = row.get("current") if isinstance(row.get("current"), Mapping) else row
        assert isinstance(sample, Mapping)
        out.append({
            "gpu_uuid": str(sample.get("mig_uuid") or row.get("mig_uuid") or uuid),
            "utilization_pct": sample.get("utilization_pct", sample.get("util_percent")),
            "memory_used_mib": sample.get("memory_used_mib"),
            "timestamp": sample.get("timestamp"),
            "note": sample.get("note") or "",
        })
    return out


def gpu_frame(inventory: Mapping[str, Any], work: Iterable[Mapping[str, Any]],
              samples: Sequence[Mapping[str, Any]] = (), mine: Sequence[str] = (),
              now: datetime | None = None) -> pd.DataFrame:
    """The ``%gpu status`` table: one row per GPU.

    Columns: node, index, model, memory_mib, allocated_to (``user: kind id (name)``, with its share
    (``0.5 GPU``) for a fraction, and for the reader's own job that reported its progress the
    words every surface says (``, 70 % done, reported 02:14 UTC (1m ago)`` at ``now``: new user 21,
    N6), and when it is projected to end where that is before its time limit — the end its waiters are
    given (``, projected end ~02:20 UTC (in 6m)``: new user 22, N10); the holders of a shared GPU
    separated by ``; ``; a job given twice in
    ``work`` is one holder, its last copy read), util_pct,
    memory_used_mib (latest sample; ``-`` where none is known to the reader — no telemetry, or another user's
    GPU on a hub, whose use is not shown to them — as the CLI's ``-``, not pandas' ``NaN``: newuser31 n4), health (``cordoned (node n3 is cordoned for
    maintenance: …)`` on a node an admin cordoned: hubadmin24), simulated, this_kernel, uuid.
    Then a row per GPU the inventory no longer lists that work in ``work`` still holds (its
    ``gone_gpus``: a node or GPUs gone under it, hubadmin 22 H3), with no index, model or samples
    and ``health`` :data:`GONE_HEALTH` — it was dropped from the table, as if nobody held it.
    """
    pd = pandas()

    holders: dict[str, list[str]] = {}
    # one holder per job id, the last copy given winning: the kernel's own lease arrives both in the
    # queue and as this kernel's lease, and was listed twice on its GPU (new user 13, N3)
    unique = {str(job.get("id")) if job.get("id") else f"#{n}": job for n, job in enumerate(work)}
    for job in unique.values():
        if not is_granted(job):
            continue
        label = f"{job.get('user')}: {job.get('kind', 'job')} {job.get('id')}"
        if work_name(job):
            label += f" ({work_name(job)})"
        res = job.get("resources") if isinstance(job.get("resources"), Mapping) else {}
        assert isinstance(res, Mapping)
        milli = res.get("gpu_milli", 1000)
        if isinstance(milli, int) and 0 < milli < 1000:  # a share: a GPU may hold several (each named)
            label += f" {milli / 1000:g} GPU"
        reported = progress_text(job, now)  # only the reader's own work carries its report (GET queue)
        if reported:
            label += f", {reported}"
        if ends := projected_text(job, now, brief=True):
            label += f", {ends}"  # the end its waiters are given: the reader's own work only (new user 22, N10)
        for uuid in granted_uuids(job):
            holders.setdefault(uuid, []).append(label)
    latest: dict[str, Mapping[str, Any]] = {}
    for sample in samples:
        latest[str(sample["gpu_uuid"])] = sample
    rows, gone_rows = [], []
    listed = {str(gpu.get("uuid")) for gpu in inventory.get("gpus", ())}
    for job in unique.values():  # GPUs gone from the inventory under work (hubadmin 22, H3): said, not dropped
        gone = job.get("gone_gpus") if is_granted(job) else None
        for uuid in [str(u) for u in gone if str(u) not in listed] if isinstance(gone, list) else ():
            listed.add(uuid)
            alloc = job.get("allocation") if isinstance(job.get("allocation"), Mapping) else {}
            assert isinstance(alloc, Mapping)
            gone_rows.append({"node": alloc.get("node"), "index": "", "model": "", "memory_mib": "",  # blank, not NaN
                         "allocated_to": "; ".join(holders.get(uuid, ())), "util_pct": "-", "memory_used_mib": "-",
                         "health": GONE_HEALTH, "simulated": bool(job.get("simulated")), "this_kernel": uuid in mine,
                         "uuid": uuid})
    # a node cordoned for maintenance (hubadmin24): its healthy GPUs' health says so, with the admin's reason
    cordoned = {str(n.get("name")): str((n.get("cordon") or {}).get("text") or f"node {n.get('name')} is cordoned")
                for n in inventory.get("nodes", ()) if isinstance(n, Mapping) and n.get("unschedulable")}
    for gpu in inventory.get("gpus", ()):
        uuid = str(gpu.get("uuid"))
        sample = latest.get(uuid, {})
        if sample and gpu.get("simulated") and uuid not in holders:
            # a simulated GPU's figures are the CPU activity of the work placed on it: none now, so 0 —
            # not the last sample of a job that just ended (new user 11, N12: 22.9 % on a free GPU)
            sample = {**sample, "utilization_pct": 0.0, "memory_used_mib": 0.0}
        rows.append({
            "node": gpu.get("node"), "index": gpu.get("index"), "model": gpu.get("model"),
            "memory_mib": gpu.get("memory_mib"), "allocated_to": "; ".join(holders.get(uuid, ())),
            "util_pct": _figure(sample.get("utilization_pct")), "memory_used_mib": _figure(sample.get("memory_used_mib")),
            "health": (f"cordoned ({cordoned[str(gpu.get('node'))]})"
                       if gpu.get("health") == "healthy" and str(gpu.get("node")) in cordoned else gpu.get("health")),
            "simulated": bool(gpu.get("simulated")), "this_kernel": uuid in mine, "uuid": uuid,
        })
    columns = ["node", "index", "model", "memory_mib", "allocated_to", "util_pct", "memory_used_mib", "health",
               "simulated", "this_kernel", "uuid"]
    return shown_frame(pd.DataFrame(rows + gone_rows, columns=columns))


def _figure(value: Any) -> Any:
    """A ``%gpu`` table figure as known (a number), or ``-`` where none is (newuser31 n4: ``NaN``)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


GONE_HEALTH = GONE_WORDS
"""The ``health`` of a ``%gpu status`` row for a GPU the inventory no longer lists that work still holds: the
words ``queue``, ``status`` and ``jobs`` say after its name (:func:`~jupyter_sched.wording.jobs.gone_text`; new
user 24: the row said it in words of its own)."""


def queue_frame(rows: Iterable[Mapping[str, Any]], now: datetime, idle: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The ``%schedule queue`` table: position, id, user, kind, state, GPUs, priority, reason, ETA. ``idle``: the
    reader's idle notes by job id (:func:`~jupyter_sched.client.status.idle_notes`), said in a running row's detail
    as the CLI's ``queue`` and ``jobs`` say them (race41: the CLI's line had the idle clause, the magic's none)."""
    pd = pandas()
    idle = idle or {}

    out = []
    for job in rows:
        reason = job.get("reason") if isinstance(job.get("reason"), Mapping) else {}
        assert isinstance(reason, Mapping)
        if is_terminal(job):
            out.append(_ended_row(job))
            continue
        text = render_reason(reason, now=now, relative=True, kind=str(job.get("kind") or ""),
                             mine=job.get("mine") is True) if reason else None
        position = reason.get("position", job.get("position")) if is_pending(job) else None
        out.append({
            # blank, not pandas' <NA>, where there is no place in the queue (running work, issue 20)
            "position": position if isinstance(position, int) else "", "id": job.get("id"), "name": work_name(job),
            "user": job.get("user"), "kind": job.get("kind"), "state": state_word(job), "gpus": gpus_text(job),
            "priority": job.get("priority"), "reason": code_words(str(reason.get("code") or "")),
            # no sentence's full stop in a table cell (the CLI's queue has none); its queue's limit, giving none
            # (newuser28 N8)
            "detail": " · ".join(part for part in (text.summary.rstrip("."), planned_limit_line(job)) if part)
            if text else (
                # running work: a GPU gone from the inventory under it (hubadmin 22, H3) and its own progress
                # report, as the CLI's jobs table says them (session 21)
                " · ".join(part for part in ("waiting for the next scheduling cycle", planned_limit_line(job)) if part)
                if is_pending(job) else
                " · ".join(part for part in (gone_text(job), unhealthy_text(job), drain_text(job), progress_text(job, now),
                                             restarted_text(job), idle.get(str(job.get("id")), "")) if part)),
            # the words of the CLI's line, the reader's own leases as theirs (mine) included (new user 16, N8)
            "eta": text.eta.removeprefix("ETA ") if text and is_pending(job)
            else ends_by(job, now, cancel="%schedule cancel"),  # running work: when it ends at the latest, as the CLI says
            "unblocks_when": text.unblock if text else "",
            "gpu_uuids": ", ".join(granted_uuids(job)),
        })
    columns = ["position", "id", "name", "user", "kind", "state", "gpus", "priority", "reason", "detail", "eta",
               "unblocks_when", "gpu_uuids"]
    return shown_frame(pd.DataFrame(out, columns=columns))


JOBS_COLUMNS = ("id", "name", "state", "gpus", "kind", "detail", "eta", "position", "reason", "unblocks_when",
                "priority", "gpu_uuids")
"""``%schedule jobs``'s columns, in order: what a job is first (newuser26 n13: ``position``, empty for every
finished job, led the table); ``user`` is the reader's own, left out."""

_SOMETIMES = frozenset({"eta", "position", "reason", "unblocks_when", "gpu_uuids"})
"""Columns of :data:`JOBS_COLUMNS` left out when empty in every row (a list of finished jobs has no queue)."""


def jobs_frame(rows: Iterable[Mapping[str, Any]], now: datetime, idle: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The ``%schedule jobs`` table (my jobs, newest first): :func:`queue_frame`'s cells in
    :data:`JOBS_COLUMNS`' order, those of :data:`_SOMETIMES` only where some row has one."""
    frame = queue_frame(rows, now, idle)
    keep = [c for c in JOBS_COLUMNS if c not in _SOMETIMES or any(str(v) != "" for v in frame[c])]
    return frame[keep]


def _ended_row(job: Mapping[str, Any]) -> dict[str, Any]:
    """A finished job's row: no position, reason or ETA (the last reason it waited with is history,
    issue 20), and as detail what ended it — ``cancelled by ana``, ``exit code 1``, the message."""
    message = lease_end_words(job)  # "released by you" as the CLI's lines say it (new user 23, N17)
    exit_code = job.get("exit_code")
    said = exit_code_words(exit_code) if exit_code is not None else ""  # 137: SIGKILL, as the CLI (newuser42 n1)
    detail = message or said
    if exit_code is not None and message and "exit" not in message:
        detail = f"{said}; {message}"
    elif said != f"exit code {exit_code}" and message.startswith(f"exited with code {exit_code}"):
        detail = said + message[len(f"exited with code {exit_code}"):]
    return {"position": "", "id": job.get("id"), "name": work_name(job), "user": job.get("user"),
            "kind": job.get("kind"), "state": state_word(job), "gpus": gpus_text(job), "priority": job.get("priority"),
            "reason": "", "detail": detail, "eta": "", "unblocks_when": "", "gpu_uuids": ""}


USAGE_COLUMNS = ("user", "gpu_hours", "utilized", "efficiency", "cost", "jobs")
"""``%schedule usage``'s columns: ``jupyter-sched usage``'s (USER, GPU-HOURS, UTILIZED, EFFICIENCY, COST, JOBS)."""


def usage_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The ``%schedule usage`` table (GET usage/report by user): the CLI's columns, GPU-hours as numbers
    (rounded to 3 places) — newuser27 N6; efficiency and cost in the CLI's cells (``42 %``, ``<1 %``;
    ``-`` for no price), one renderer (newuser31 n9: ``0.002`` and ``None``)."""
    from ..wording.usage import cost_cell, efficiency_cell

    pd = pandas()

    def num(value: Any) -> Any:
        return round(float(value), 3) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    out = [{"user": row.get("user") or "-", "gpu_hours": num(row.get("allocated_gpu_hours")),
            "utilized": num(row.get("utilized_gpu_hours")), "efficiency": efficiency_cell(row.get("efficiency")),
            "cost": cost_cell(row), "jobs": row.get("jobs")} for row in rows]
    return shown_frame(pd.DataFrame(out, columns=list(USAGE_COLUMNS)))


def profiles_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The ``%schedule profiles`` table: name, description, defaults."""
    pd = pandas()

    out = []
    for row in rows:
        defaults = row.get("defaults") if isinstance(row.get("defaults"), Mapping) else {
            k: v for k, v in row.items() if k not in ("name", "description")}
        assert isinstance(defaults, Mapping)
        out.append({"name": row.get("name"), "description": row.get("description", ""),
                    "defaults": ", ".join(f"{k}={v}" for k, v in defaults.items())})
    return shown_frame(pd.DataFrame(out, columns=["name", "description", "defaults"]))
