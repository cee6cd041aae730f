"""The admin waste report: allocated-but-idle GPU-hours per job and per user, largest first (pure).

Inputs are the allocation intervals (:class:`~.usage.UsageInterval`) and the stored one-minute
telemetry rollups (``Store.rollup_rows`` / :func:`jupyter_sched.telemetry.rollup_to_dict` shape).
For each allocated GPU-second the rollup minute covering it says:

- *idle*: valid activity below ``threshold_pct`` (``activity_max`` of the minute's valid
  samples), or a confirmed utilization latch with no valid sample (case 026) — wasted;
- *active*: valid activity at or above the threshold;
- *unknown*: no valid reading (blank), or no row within ``max_gap_s`` — never counted as waste.

A row stands from its minute until the next row of its GPU, at most ``max_gap_s`` (so samples
every 5 minutes cover their 5 minutes; case 025). Shares count: half a shared GPU idle for an
hour is 0.5 idle GPU-hours. On a shared (time-sliced) GPU whose minute has per-process data
(``job_shares``, issue 18 item 2), an active minute is judged per job by the job's own activity
relative to what it holds: a job whose processes did nothing is idle while its co-tenant works.
Where the minute carries each holder's own part (``job_minutes``, schema version 11), a job's
state is that of the samples taken while it held the GPU: the seconds before it started or after
it ended say nothing about it (new user 14, N26). Rows written before validity was stored (no ``valid_samples``
field) count as valid when they carry an activity.

Source of the idea: Princeton's jobstats / job_defense_shield rank users by idle allocation;
here the trailing idle state comes from the same validity rules as idle reclamation.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .. import untrusted_json
from ..model import Inventory
from ..model.units import parse_utc, to_iso
from .usage import UsageInterval

__all__ = ["JobMinute", "UnattributedRow", "WasteReport", "WasteRow", "capacity_hours", "job_minutes_of",
           "job_shares_of", "merged_spans", "mig_uuids_of", "minute_state", "unattributed_usage", "waste_report"]

Span = tuple[datetime, datetime]


def minute_state(row: Mapping[str, Any], threshold_pct: float) -> str:
    """``idle``, ``active`` or ``unknown`` for one rollup row (module docstring)."""
    activity = row.get("activity_max")
    valid = row.get("valid_samples")
    if valid is None:
        valid = int(row.get("samples") or 0) if activity is not None else 0
    if valid and activity is not None:
        return "active" if float(activity) >= threshold_pct else "idle"
    if "util_latch" in str(row.get("rules") or "").split(","):
        return "idle"
    return "unknown"


@dataclass(frozen=True, slots=True)
class WasteRow:
    """One job's (or user's) idle allocation.

    Attributes:
        key: job id or user. user / team / kind: of the job (user rows: team of their largest job).
        allocated_gpu_hours: GPU-hours allocated in the window.
        idle_gpu_hours: of which idle (wasted). unknown_gpu_hours: of which without valid telemetry.
        idle_share: idle / allocated (0..1).
    """

    key: str
    user: str
    team: str
    kind: str
    allocated_gpu_hours: float
    idle_gpu_hours: float
    unknown_gpu_hours: float

    @property
    def idle_share(self) -> float:
        return self.idle_gpu_hours / self.allocated_gpu_hours if self.allocated_gpu_hours else 0.0

    def to_dict(self) -> dict[str, object]:
        return {"key": self.key, "user": self.user, "team": self.team, "kind": self.kind,
                "allocated_gpu_hours": round(self.allocated_gpu_hours, 4),
                "idle_gpu_hours": round(self.idle_gpu_hours, 4), "unknown_gpu_hours": round(self.unknown_gpu_hours, 4),
                "idle_share": round(self.idle_share, 4)}


@dataclass(frozen=True, slots=True)
class WasteReport:
    """Jobs and users ranked by idle GPU-hours (largest first; ties by key)."""

    jobs: tuple[WasteRow, ...]
    users: tuple[WasteRow, ...]

    def to_dict(self) -> dict[str, object]:
        return {"jobs": [r.to_dict() for r in self.jobs], "users": [r.to_dict() for r in self.users]}


@dataclass(frozen=True, slots=True)
class _Minute:
    """One GPU-minute of the timeline: its state, its activity (%) and, on a shared GPU, each job's
    part of it from per-process data (None: not known)."""

    state: str
    activity: float
    shares: Mapping[str, float] | None
    jobs: Mapping[str, tuple[str, float]] | None = None
    """Each holder's own ``(state, activity %)`` over the samples taken while it held the GPU
    (``job_minutes``); None: the GPU's minute stands for its holders."""


def _timeline(rows: Iterable[Mapping[str, Any]], threshold_pct: float) -> dict[str, tuple[list[datetime],
                                                                                        list[_Minute]]]:
    """Per GPU: minutes (sorted) and what they say; a minute written twice keeps the row with more samples."""
    best: dict[tuple[str, datetime], tuple[int, _Minute]] = {}
    for row in rows:
        if row.get("mig_instance") is not None:
            continue
        minute = row["minute"]
        when = minute if isinstance(minute, datetime) else parse_utc(str(minute), field="minute")
        key = (str(row["gpu_uuid"]), when)
        count = int(row.get("samples") or 0)
        if key not in best or count > best[key][0]:
            own = job_minutes_of(row)
            jobs = None if own is None else {
                job: (minute_state({"activity_max": m.activity_max, "valid_samples": m.valid_samples,
                                    "rules": m.rules}, threshold_pct), m.activity_max or 0.0)
                for job, m in own.items()}
            best[key] = (count, _Minute(minute_state(row, threshold_pct), float(row.get("activity_max") or 0.0),
                                        job_shares_of(row), jobs))
    out: dict[str, tuple[list[datetime], list[_Minute]]] = {}
    for (gpu, when), (_, state) in sorted(best.items()):
        times, states = out.setdefault(gpu, ([], []))
        times.append(when)
        states.append(state)
    return out


def _json_mapping(raw: Any) -> Mapping[str, Any] | None:
    """A rollup column's JSON object (text, or already decoded), or None when it is not one."""
    try:
        parsed = untrusted_json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None
    return parsed if isinstance(parsed, Mapping) else None


def job_shares_of(row: Mapping[str, Any]) -> Mapping[str, float] | None:
    """A rollup's ``job_shares`` (JSON text ``{"job id": fraction}``: each job's part of a shared
    GPU's utilization from per-process data), or None when absent or unreadable."""
    raw = row.get("job_shares")
    parsed = _json_mapping(raw) if raw else None
    if parsed is None:
        return None
    shares = {str(k): float(v) for k, v in parsed.items() if isinstance(v, (int, float)) and 0 <= v <= 1}
    return shares or None


@dataclass(frozen=True, slots=True)
class JobMinute:
    """One job's own minute on a GPU it held: over the samples taken while it held it (a rollup's
    ``job_minutes`` entry, schema version 11; new user 14, N26).

    Attributes:
        samples: samples taken while it held the GPU. valid_samples: of which valid.
        utilization_avg: mean utilization of the valid ones, % (None: none valid).
        activity_max: highest valid activity, % (None: none valid). memory_used_max_mib: MiB.
        rules: validity rules seen in those samples (``""`` when all valid).
    """

    samples: int
    valid_samples: int
    utilization_avg: float | None
    activity_max: float | None
    memory_used_max_mib: float | None
    rules: str = ""

    @property
    def valid_share(self) -> float:
        """Valid samples / samples (0..1): the part of its time in that minute telemetry covered."""
        return self.valid_samples / self.samples if self.samples > 0 else 0.0


def _percent(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        return None
    return float(value)


def job_minutes_of(row: Mapping[str, Any]) -> dict[str, JobMinute] | None:
    """A rollup's ``job_minutes`` (JSON text ``{"job id": {"samples", "valid_samples",
    "utilization_avg", "activity_max", "memory_used_max_mib", "rules"}}``): each holder's own
    minute; ``{}`` when the minute was attributed and nobody held the GPU; None when the row has no
    attribution (written before schema version 11, a MIG instance) or it is unreadable — then the
    GPU's minute stands for its holders, as before. An entry whose numbers are not counts and
    percentages is left out (unknown for that job)."""
    raw = row.get("job_minutes")
    parsed = None if raw is None or raw == "" else _json_mapping(raw)
    if parsed is None:
        return None
    out: dict[str, JobMinute] = {}
    for job, entry in parsed.items():
        if not isinstance(entry, Mapping):
            continue
        samples, valid = entry.get("samples"), entry.get("valid_samples")
        if not isinstance(samples, int) or not isinstance(valid, int) or not 0 <= valid <= samples:
            continue
        memory = entry.get("memory_used_max_mib")
        out[str(job)] = JobMinute(samples=samples, valid_samples=valid,
                                  utilization_avg=_percent(entry.get("utilization_avg")),
                                  activity_max=_percent(entry.get("activity_max")),
                                  memory_used_max_mib=float(memory) if isinstance(memory, (int, float)) else None,
                                  rules=str(entry.get("rules") or ""))
    return out


def _state_for(minute: _Minute, iv: UsageInterval, threshold_pct: float) -> str:
    """The minute's state for ``iv``'s job: on a shared GPU with per-process data, by the job's own
    activity relative to what it holds (``activity x part / share``: a job whose processes did
    nothing is idle even while its co-tenant keeps the GPU busy), else the GPU's state. Where the
    minute has the job's own part (``job_minutes``), that part's state and activity are the job's:
    seconds of the minute before it started or after it ended say nothing about it (N26)."""
    state, activity = minute.state, minute.activity
    if minute.jobs is not None:
        state, activity = minute.jobs.get(iv.job_id, ("unknown", 0.0))
    if state != "active" or minute.shares is None or iv.job_id not in minute.shares:
        return state
    own = activity * minute.shares[iv.job_id] / max(iv.share, 1e-9)
    return "active" if own >= threshold_pct else "idle"


def _split(iv: UsageInterval, start: datetime, end: datetime, times: list[datetime], states: list[_Minute],
           gap: timedelta, threshold_pct: float) -> tuple[float, float]:
    """``(idle seconds, unknown seconds)`` of ``[start, end)`` on one GPU for ``iv``'s job."""
    idle = covered_known = 0.0
    i = max(bisect_right(times, start) - 1, 0)
    while i < len(times) and times[i] < end:
        hold_end = times[i] + gap
        if i + 1 < len(times):
            hold_end = min(hold_end, times[i + 1])
        lo, hi = max(times[i], start), min(hold_end, end)
        if hi > lo:
            seconds = (hi - lo).total_seconds()
            state = _state_for(states[i], iv, threshold_pct)
            if state == "idle":
                idle += seconds
            if state != "unknown":
                covered_known += seconds
        i += 1
    total = (end - start).total_seconds()
    return idle, max(0.0, total - covered_known)


def waste_report(intervals: Iterable[UsageInterval], rollups: Iterable[Mapping[str, Any]], *, now: datetime,
                 threshold_pct: float = 5.0, max_gap_s: float = 600.0, since: datetime | None = None,
                 until: datetime | None = None) -> WasteReport:
    """Rank jobs and users by allocated-but-idle GPU-hours (module docstring).

    Args:
        intervals: allocation intervals (open ones end at ``now``).
        rollups: one-minute rollup rows (dicts with ``gpu_uuid``, ``minute``, ``activity_max``,
            ``valid_samples``, ``rules``, ``samples``).
        now: end of open intervals.
        threshold_pct: idle below this activity, % (use the idle policy's).
        max_gap_s: longest span one rollup row stands for, seconds.
        since / until: the window (default: everything up to ``now``).

    Raises:
        TimestampError: a rollup ``minute`` that is not aware ISO 8601.
    """
    timeline = _timeline(rollups, threshold_pct)
    gap = timedelta(seconds=max_gap_s)
    jobs: dict[str, list[float]] = {}
    meta: dict[str, UsageInterval] = {}
    for iv in intervals:
        start = iv.started_at if since is None else max(iv.started_at, since)
        end = min(iv.ended_at or now, until or now)
        if end <= start:
            continue
        times, states = timeline.get(iv.gpu_uuid, ([], []))
        idle, unknown = _split(iv, start, end, times, states, gap, threshold_pct)
        acc = jobs.setdefault(iv.job_id, [0.0, 0.0, 0.0])
        acc[0] += iv.charged * (end - start).total_seconds() / 3600.0  # as billed: what it keeps (red40 R1)
        acc[1] += iv.charged * idle / 3600.0
        acc[2] += iv.charged * unknown / 3600.0
        meta.setdefault(iv.job_id, iv)
    job_rows = [WasteRow(key=j, user=meta[j].user, team=meta[j].team, kind=meta[j].kind, allocated_gpu_hours=a,
                         idle_gpu_hours=i, unknown_gpu_hours=u) for j, (a, i, u) in jobs.items()]
    users: dict[str, list[float]] = {}
    team_of: dict[str, tuple[float, str]] = {}
    for r in job_rows:
        acc = users.setdefault(r.user, [0.0, 0.0, 0.0])
        acc[0] += r.allocated_gpu_hours
        acc[1] += r.idle_gpu_hours
        acc[2] += r.unknown_gpu_hours
        if r.allocated_gpu_hours > team_of.get(r.user, (-1.0, ""))[0]:
            team_of[r.user] = (r.allocated_gpu_hours, r.team)
    user_rows = [WasteRow(key=u, user=u, team=team_of[u][1], kind="", allocated_gpu_hours=a, idle_gpu_hours=i,
                          unknown_gpu_hours=n) for u, (a, i, n) in users.items()]

    def rank(rows: list[WasteRow]) -> tuple[WasteRow, ...]:
        return tuple(sorted(rows, key=lambda r: (-round(r.idle_gpu_hours, 9), r.key)))

    return WasteReport(jobs=rank(job_rows), users=rank(user_rows))


@dataclass(frozen=True, slots=True)
class UnattributedRow:
    """Activity on one GPU while nobody was allocated it (case 021: usage that belongs to no job).

    Attributes:
        gpu_uuid / node: the GPU.
        first_minute / last_minute: the first and last such rollup minute in the window.
        active_gpu_hours: those minutes, in hours (the rollups' one-minute resolution).
        activity_max_pct: the highest valid activity of those minutes, %.
        processes_max: most processes seen on it in one of those minutes (None: not reported).
        processes: ``(pid, user, age_s)`` of the processes the rollups name in those minutes (user
            ``""`` and age None where unknown; age at the last minute seen), by pid.
    """

    gpu_uuid: str
    node: str
    first_minute: datetime
    last_minute: datetime
    active_gpu_hours: float
    activity_max_pct: float
    processes_max: int | None
    processes: tuple[tuple[int, str, float | None], ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"gpu_uuid": self.gpu_uuid, "node": self.node, "first_minute": to_iso(self.first_minute),
                "last_minute": to_iso(self.last_minute), "active_gpu_hours": round(self.active_gpu_hours, 4),
                "activity_max_pct": round(self.activity_max_pct, 2), "processes_max": self.processes_max,
                "processes": [{"pid": pid, "user": user, "age_s": age} for pid, user, age in self.processes]}


def _named_processes(row: Mapping[str, Any]) -> list[tuple[int, str, float | None]]:
    """A rollup's ``processes`` (JSON text ``[[pid, user, age_s], ...]``); unreadable entries are skipped."""
    raw = row.get("processes")
    if not raw:
        return []
    try:
        parsed = untrusted_json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []
    out: list[tuple[int, str, float | None]] = []
    for entry in parsed if isinstance(parsed, list) else ():
        if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], int):
            age = entry[2] if isinstance(entry[2], (int, float)) else None
            out.append((entry[0], str(entry[1] or ""), None if age is None else float(age)))
    return out


def mig_uuids_of(inventory: Inventory) -> dict[tuple[str, int], str]:
    """``{(GPU uuid, GPU instance id): MIG uuid}`` of every MIG slice the inventory names (rollups
    name a slice by its parent and ``GPU_I_ID``, allocations by its ``MIG-...`` uuid)."""
    return {(gpu.uuid, mig.gpu_instance_id): mig.uuid for gpu in inventory.gpus() for mig in gpu.mig_devices}


def unattributed_usage(intervals: Iterable[UsageInterval], rollups: Iterable[Mapping[str, Any]], *, now: datetime,
                       threshold_pct: float = 5.0, max_gap_s: float = 120.0,
                       mig_uuids: Mapping[tuple[str, int], str] | None = None,
                       held: Iterable[tuple[str, datetime, datetime]] | None = None) -> tuple[UnattributedRow, ...]:
    """GPUs busy while nobody was allocated them, most active hours first (case 021: usage on a
    GPU no job held must appear somewhere — here, to admins, with the pid, user and age of the
    processes the rollups name where the telemetry had them, e.g. NVML; the live ones are also in
    ``GET telemetry``'s ``foreign`` list).

    A rollup row counts when its valid activity reached ``threshold_pct`` (:func:`minute_state`
    ``active``; blank and suspect rows never count). As in :func:`waste_report`, a row stands from
    its minute until the GPU's next row, at most ``max_gap_s``; the part of that span no
    allocation interval of the GPU covers is unattributed. A MIG slice is its own device: its rows
    (``mig_instance`` = GPU instance id) count against the allocations of its ``MIG-...`` uuid,
    found in ``mig_uuids`` (the inventory's); a slice the inventory does not name is left out, and
    so are the whole-GPU rows of a GPU in MIG mode (a MIG-mode GPU is never allocated whole).

    Args:
        intervals: allocation intervals of the window (open ones end at ``now``).
        rollups: rollup rows (``gpu_uuid``, ``node``, ``minute``, ``activity_max``,
            ``valid_samples``, ``processes_max``, ``processes``).
        now: end of open intervals and of the last row's span.
        threshold_pct: active from this activity, % (the idle policy's threshold).
        max_gap_s: longest span one row stands for, seconds.
        mig_uuids: ``{(GPU uuid, GPU instance id): MIG uuid}`` of the inventory's MIG slices.
        held: ``(GPU uuid, start, end)`` of the spans some allocation held each GPU, instead of
            ``intervals`` (the store's merged spans: :func:`~.store_report.unattributed_for`).

    Each active minute asks the GPU's merged held spans by binary search (s29: it filtered every
    interval of the GPU for each minute — O(minutes x rows)).

    Raises:
        TimestampError: a rollup ``minute`` that is not aware ISO 8601.
    """
    spans = merged_spans(held if held is not None else
                         ((iv.gpu_uuid, iv.started_at, iv.ended_at or now) for iv in intervals))
    rows_by_gpu: dict[str, dict[datetime, Mapping[str, Any]]] = {}
    mig_mode: set[str] = set()
    slices = mig_uuids or {}
    for row in rollups:
        gpu = str(row["gpu_uuid"])
        if row.get("mig_instance") is not None:
            mig_mode.add(gpu)
            slice_uuid = slices.get((gpu, int(row["mig_instance"])))
            if slice_uuid is None:
                continue
            gpu = slice_uuid
        minute = row["minute"]
        when = minute if isinstance(minute, datetime) else parse_utc(str(minute), field="minute")
        kept = rows_by_gpu.setdefault(gpu, {}).get(when)
        if kept is None or int(row.get("samples") or 0) > int(kept.get("samples") or 0):
            rows_by_gpu[gpu][when] = row
    gap = timedelta(seconds=max_gap_s)
    out: list[UnattributedRow] = []
    for gpu, by_minute in rows_by_gpu.items():
        if gpu in mig_mode:
            continue
        times = sorted(by_minute)
        seconds, activity, processes = 0.0, 0.0, None
        named: dict[int, tuple[int, str, float | None]] = {}
        first = last = None
        for i, when in enumerate(times):
            row = by_minute[when]
            if minute_state(row, threshold_pct) != "active":
                continue
            stop = min(when + gap, times[i + 1] if i + 1 < len(times) else now)
            free = _uncovered(when, stop, spans.get(gpu, []))
            if free <= 0:
                continue
            seconds += free
            first, last = first or when, when
            activity = max(activity, float(row["activity_max"]))
            if row.get("processes_max") is not None:
                processes = max(int(row["processes_max"]), processes or 0)
            for pid, user, age in _named_processes(row):  # later minutes: the process's age then
                known = named.get(pid)
                named[pid] = (pid, user or (known[1] if known else ""), age if age is not None
                              else (known[2] if known else None))
        if first is not None and last is not None:
            node = str(by_minute[first].get("node") or "")
            out.append(UnattributedRow(gpu_uuid=gpu, node=node, first_minute=first, last_minute=last,
                                       active_gpu_hours=seconds / 3600.0, activity_max_pct=activity,
                                       processes_max=processes, processes=tuple(sorted(named.values()))))
    return tuple(sorted(out, key=lambda r: (-r.active_gpu_hours, r.gpu_uuid)))


def merged_spans(held: Iterable[tuple[str, datetime, datetime]]) -> dict[str, list[Span]]:
    """Per GPU uuid: the union of its ``(gpu, start, end)`` spans as disjoint spans, by start (overlapping or
    touching spans joined); empty spans left out."""
    by_gpu: dict[str, list[Span]] = {}
    for gpu, lo, hi in held:
        if hi > lo:
            by_gpu.setdefault(gpu, []).append((lo, hi))
    out: dict[str, list[Span]] = {}
    for gpu, pairs in by_gpu.items():
        pairs.sort()
        merged = [pairs[0]]
        for lo, hi in pairs[1:]:
            if lo <= merged[-1][1]:
                if hi > merged[-1][1]:
                    merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        out[gpu] = merged
    return out


def _uncovered(start: datetime, end: datetime, held: list[Span]) -> float:
    """Seconds of ``[start, end)`` outside every ``held`` span (disjoint, by start: :func:`merged_spans`): a
    binary search to the first span ending after ``start``, then the few spans inside."""
    covered = 0.0
    i = bisect_right(held, start, key=lambda span: span[1])
    while i < len(held) and held[i][0] < end:
        lo, hi = max(held[i][0], start), min(held[i][1], end)
        if hi > lo:
            covered += (hi - lo).total_seconds()
        i += 1
    return max(0.0, (end - start).total_seconds() - covered)


def capacity_hours(inventory: Inventory, *, hours: float) -> dict[str, float]:
    """The capacity a report divides by over ``hours``: ``allocatable_gpu_hours`` (healthy GPUs on
    ready nodes) and ``unavailable_gpu_hours`` (the rest), reported apart — an unhealthy GPU is
    unavailable, never idle (case 018)."""
    usable = sum(inventory.healthy_models().values())
    total = inventory.gpu_count()
    return {"allocatable_gpu_hours": usable * hours, "unavailable_gpu_hours": (total - usable) * hours}
