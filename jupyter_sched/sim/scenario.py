"""YAML scenario files for the simulator: cluster, policy, quotas, idle policy and arrivals.

Format (every duration accepts ``90``, ``"45s"``, ``"10m"``, ``"2h30m"``)::

    name: interactive-idle-tails
    start: "2026-03-02T08:00:00Z"        # optional, aware UTC
    cluster: {nodes: 2, gpus_per_node: 8, model: A100-80GB, cpu: 64, memory: 512Gi}
    #   or  {tiresias: n32g4}  or  {openb: gpu_node}
    #   or, node by node (models may differ; what `jupyter-sched usage --as-scenario` writes):
    #       {nodes: [{name: node-a, model: A100-80GB, gpus: 4}, {name: node-b, model: H100-80GB, gpus: 8}]}
    profile: {backfill: true, preemption: true, reclaim: true}
    idle: {window: 2h, warning: 15m, busy_kernel_window: 4h, threshold_pct: 5}   # optional
    #     also grace (after the window), lease_mode / job_mode / service_mode (release|requeue|stop|notify)
    tick: 1m                              # cycle period while work runs (idle needs samples)
    horizon: 12h                          # optional end
    quotas:                               # optional, Kueue-style lines (gpu_model: one model's line)
      - {team: vision, guaranteed: 8, borrowing_limit: 8}
      - {team: nlp, gpu_model: H100-80GB, guaranteed: 2, borrowing_limit: 0}
    jobs:
      - name: alice-notebook
        user: alice
        team: vision
        kind: lease                       # training | inference | lease
        priority: normal
        gpus: 1                           # or "0.5" for a shared GPU
        submit: 0m
        runtime: 6h                       # user releases it then (omit: never)
        time_limit: 8h                    # declared limit (backfill/ETA)
        activity:                         # from start; after it: idle tail (GPU 0 %, kernel idle)
          - {for: 20m, util: 70, kernel: busy}
          - {for: 10m, util: 0, kernel: busy}     # data-loading dip
          - {for: 30m, util: 80, telemetry: blank}  # what the GPU reports: normal | blank | latch
        repeat: {count: 3, every: 30m}    # optional clones, names suffixed -1, -2, ...

Errors are :class:`~jupyter_sched.errors.ValidationError` naming the field (``jobs[3].gpus``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from ..errors import NotFoundError, ValidationError
from ..model import (
    ANY_MODEL,
    GPU,
    Inventory,
    JobKind,
    Node,
    PriorityClass,
    Quota,
    QuotaSet,
    ResourceRequest,
    parse_duration,
    parse_gpus,
    parse_memory_mib,
    parse_utc,
)
from ..reclaim import IdlePolicies, IdlePolicy, ReclaimMode
from ..scheduling import SchedulingProfile
from .simulator import Activity, SimJob
from .traces import openb_inventory, read_tiresias_cluster

__all__ = ["Scenario", "load_scenario", "parse_scenario", "quota_lines", "read_yaml"]


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario: everything :class:`~jupyter_sched.sim.simulator.Simulator` needs."""

    name: str
    inventory: Inventory
    jobs: tuple[SimJob, ...]
    profile: SchedulingProfile = field(default_factory=SchedulingProfile)
    quotas: QuotaSet = field(default_factory=QuotaSet)
    idle: IdlePolicies | None = None
    tick_s: float | None = None
    horizon_s: float | None = None
    start: datetime = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def simulator_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~jupyter_sched.sim.simulator.Simulator` (besides inventory, jobs)."""
        return {"profile": self.profile, "quotas": self.quotas, "idle": self.idle, "tick_s": self.tick_s,
                "horizon_s": self.horizon_s, "start": self.start}


def _dur(value: Any, field_name: str, *, allow_none: bool = True) -> float | None:
    """A duration in seconds; zero (``0``, ``"0m"``) is allowed here (an offset, not a limit)."""
    if (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0) \
            or (isinstance(value, str) and re.fullmatch(r"\s*0+(\.0+)?\s*[dhms]?\s*", value)):
        return 0.0
    seconds = parse_duration(value, field=field_name)
    if seconds is None and not allow_none:
        raise ValidationError(f"{field_name} is required", field=field_name, hint="e.g. '10m'")
    return seconds


_KEYS: dict[str, tuple[str, ...]] = {
    "scenario": ("name", "start", "cluster", "profile", "idle", "tick", "horizon", "quotas", "jobs"),
    "cluster": ("nodes", "gpus_per_node", "model", "cpu", "memory", "tiresias", "openb"),
    "node": ("name", "model", "gpus", "cpu", "memory", "memory_mib"),
    "profile": ("name", "backfill", "preemption", "reclaim"),
    "idle": ("threshold_pct", "window", "warning", "grace", "busy_kernel_window", "lease_mode", "job_mode",
             "service_mode"),
    "quota": ("team", "user", "gpu_model", "guaranteed", "borrowing_limit"),
    "job": ("name", "user", "team", "kind", "priority", "gpus", "models", "workers", "submit", "runtime",
            "time_limit", "activity", "checkpointable", "repeat"),
    "activity": ("for", "util", "kernel", "telemetry", "mem"),
    "repeat": ("count", "every"),
}
"""The keys each part of a scenario reads: any other is refused (new user 17, N19: a misspelt ``runtme``
made a job run forever, ``modle`` or ``profle`` were silently ignored), as REST refuses unknown fields."""


def _map(value: Any, field_name: str, keys: str | None = None) -> Mapping[str, Any]:
    """``value`` as a mapping (None: empty); with ``keys`` (a :data:`_KEYS` entry), a key it does not
    read is refused, naming the key and the nearest one it reads."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"{field_name} must be a mapping", field=field_name, hint="use key: value lines")
    if keys is not None:
        known = _KEYS[keys]
        for key in value:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                meant = f" — did you mean {close[0]!r}?" if close else ""
                where = "" if field_name == "scenario" else f"{field_name}: "
                raise ValidationError(f"{where}unknown key {str(key)!r}{meant}",
                                      field=f"{field_name}.{key}" if field_name != "scenario" else str(key),
                                      hint=f"the keys read here: {', '.join(known)}")
    return value


def _cluster(spec: Mapping[str, Any]) -> Inventory:
    if "tiresias" in spec:
        return read_tiresias_cluster(str(spec["tiresias"])).inventory(str(spec.get("model", "V100")))
    if "openb" in spec:
        return openb_inventory()
    if isinstance(spec.get("nodes"), list):
        return _node_list(spec)
    try:
        nodes = int(spec.get("nodes", 1))
        per = int(spec.get("gpus_per_node", 8))
    except (TypeError, ValueError) as exc:
        raise ValidationError("cluster.nodes and cluster.gpus_per_node must be integers", field="cluster",
                              hint="e.g. {nodes: 2, gpus_per_node: 8}") from exc
    if nodes < 1 or per < 0:
        raise ValidationError("cluster needs at least one node and >= 0 GPUs per node", field="cluster.nodes",
                              hint="e.g. nodes: 2")
    model = str(spec.get("model", "A100-80GB"))
    cpu = int(float(spec.get("cpu", 0)) * 1000)
    mem = parse_memory_mib(str(spec["memory"]), field="cluster.memory") if "memory" in spec else 0
    out = []
    for n in range(nodes):
        name = f"node-{n}"
        gpus = tuple(GPU(uuid=f"GPU-sim-{n}-{i}", index=i, node=name, model=model, memory_mib=81920,
                         simulated=True) for i in range(per))
        out.append(Node(name=name, gpus=gpus, cpu_millis=cpu, memory_mib=int(mem or 0)))
    return Inventory(nodes=tuple(out), source="simulated")


def _entries(items: Any, where: str, keys: str, what: str, example: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(where[i], entry)`` of a list of mappings, each read by :func:`_map` with ``keys``.

    Raises:
        ValidationError: ``where`` not a list (``must be a list of <what>``), or an entry as :func:`_map`.
    """
    if not isinstance(items, list):
        raise ValidationError(f"{where} must be a list of {what}", field=where, hint=f"e.g. {example}")
    for i, item in enumerate(items):
        yield f"{where}[{i}]", _map(item, f"{where}[{i}]", keys)


def _node_list(spec: Mapping[str, Any]) -> Inventory:
    """``cluster: {nodes: [{name, model, gpus, cpu, memory}]}``: one entry per node, each its own GPU
    model (a hub with A100 and H100 nodes; hubadmin26 B7). ``cpu`` (cores) and ``memory`` (``512Gi``)
    are optional; the homogeneous keys (``gpus_per_node``, ``model``) do not go with it.

    Raises:
        ValidationError: naming ``cluster.nodes[i].<key>`` (an unknown key, a missing or bad value,
            a name given twice) or ``cluster.<key>`` beside the list.
    """
    example = "nodes: [{name: node-a, model: A100-80GB, gpus: 4}]"
    beside = [k for k in ("gpus_per_node", "model", "cpu", "memory") if k in spec]
    if beside:
        raise ValidationError(f"cluster.{beside[0]} does not go with a list of nodes: give it in each node",
                              field=f"cluster.{beside[0]}", hint=f"e.g. {example}")
    if not spec["nodes"]:
        raise ValidationError("cluster.nodes is an empty list", field="cluster.nodes", hint=f"e.g. {example}")
    out: list[Node] = []
    for where, m in _entries(spec["nodes"], "cluster.nodes", "node", "nodes", example):
        name = str(m.get("name") or f"node-{len(out)}")
        if any(n.name == name for n in out):
            raise ValidationError(f"{where}.name {name!r} is given twice", field=f"{where}.name",
                                  hint="give each node its own name")
        gpus = m.get("gpus", 0)
        if isinstance(gpus, bool) or not isinstance(gpus, int) or not 0 <= gpus <= 64:
            raise ValidationError(f"{where}.gpus must be a whole number from 0 to 64 (got {gpus!r})",
                                  field=f"{where}.gpus", hint="e.g. gpus: 8")
        model = str(m.get("model") or "A100-80GB")
        cpu = m.get("cpu", 0)
        if isinstance(cpu, bool) or not isinstance(cpu, (int, float)) or not 0 <= cpu <= 100_000:
            raise ValidationError(f"{where}.cpu must be a number of cores (got {cpu!r})", field=f"{where}.cpu",
                                  hint="e.g. cpu: 64")
        if "memory" in m:
            mem = parse_memory_mib(str(m["memory"]), field=f"{where}.memory")
        else:
            mem = m.get("memory_mib", 0)
            if isinstance(mem, bool) or not isinstance(mem, int) or mem < 0:
                raise ValidationError(f"{where}.memory_mib must be a whole number of MiB (got {mem!r})",
                                      field=f"{where}.memory_mib", hint="or memory: 512Gi")
        out.append(Node(name=name, gpus=tuple(
            GPU(uuid=f"GPU-sim-{name}-{k}", index=k, node=name, model=model, memory_mib=81920, simulated=True)
            for k in range(gpus)), cpu_millis=int(cpu * 1000), memory_mib=int(mem or 0)))
    return Inventory(nodes=tuple(out), source="simulated")


def quota_lines(items: Any, where: str = "quotas") -> QuotaSet:
    """Quota lines as a scenario (or ``simulate --quotas FILE``) gives them: a list of
    ``{team, user, gpu_model, guaranteed, borrowing_limit}`` (``gpu_model`` absent: every model).

    Raises:
        ValidationError: naming ``<where>[i].<key>``: not a list, an unknown key, no team, a
            guarantee or limit that is not a number >= 0.
    """
    if items is None:
        return QuotaSet()
    lines = []
    for at, m in _entries(items, where, "quota", "quota lines", "- {team: vision, guaranteed: 8, borrowing_limit: 8}"):
        team = m.get("team")
        if not isinstance(team, str) or not team.strip():
            raise ValidationError(f"{at}.team must be a team name", field=f"{at}.team", hint="e.g. team: vision")
        numbers: dict[str, float | None] = {}
        for key in ("guaranteed", "borrowing_limit"):
            value = m.get(key, 0 if key == "guaranteed" else None)
            if value is None:
                numbers[key] = None
                continue
            if isinstance(value, str):  # "4" quoted in YAML
                try:
                    value = float(value)
                except ValueError:
                    pass
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise ValidationError(f"{at}.{key} must be a number of GPUs >= 0 (got {value!r})",
                                      field=f"{at}.{key}", hint=f"e.g. {key}: 4")
            numbers[key] = float(value)
        user = m.get("user")
        lines.append(Quota(team=team, user=None if user is None else str(user),
                           gpu_model=str(m.get("gpu_model") or ANY_MODEL),
                           guaranteed=numbers["guaranteed"] or 0.0, borrowing_limit=numbers["borrowing_limit"]))
    return QuotaSet(quotas=tuple(lines))


def _activity(items: Any, where: str) -> tuple[Activity, ...]:
    if items is None:
        return ()
    out = []
    for at, m in _entries(items, where, "activity", "stretches", "- {for: 20m, util: 70, kernel: busy}"):
        dur = _dur(m.get("for"), f"{at}.for", allow_none=False)
        util = float(m.get("util", 0))
        kernel = str(m.get("kernel", "busy" if util > 0 else "idle"))
        telemetry = str(m.get("telemetry", "normal"))
        if not 0 <= util <= 100 or kernel not in ("busy", "idle") or telemetry not in ("normal", "blank", "latch"):
            raise ValidationError(f"{at}: util must be 0..100, kernel busy|idle, telemetry normal|blank|latch",
                                  field=at,
                                  hint="e.g. {for: 10m, util: 0, kernel: busy} for a data-loading dip")
        memory = float(parse_memory_mib(m["mem"], field=f"{at}.mem")) if "mem" in m else 1024.0
        out.append(Activity(duration_s=float(dur or 0.0), util_pct=util, kernel=kernel, telemetry=telemetry,
                            memory_mib=memory))
    return tuple(out)


def _jobs(items: Any) -> tuple[SimJob, ...]:
    if not isinstance(items, list) or not items:
        raise ValidationError("jobs must be a non-empty list", field="jobs", hint="see the scenario format")
    out: list[SimJob] = []
    for i, item in enumerate(items):
        where = f"jobs[{i}]"
        m = _map(item, where, "job")
        name = str(m.get("name", f"job-{i}"))
        try:
            kind = JobKind(str(m.get("kind", "training")))
            priority = PriorityClass(str(m.get("priority", "normal")))
        except ValueError as exc:
            raise ValidationError(f"{where}: unknown kind or priority", field=f"{where}.kind",
                                  hint="kind: training|inference|lease; priority: high|normal|low") from exc
        gpus, milli = parse_gpus(m.get("gpus", 1), field=f"{where}.gpus")
        req = ResourceRequest(gpus=gpus, gpu_milli=milli, gpu_models=tuple(m.get("models", ()) or ()),
                              workers=int(m.get("workers", 1)))
        base = SimJob(
            name=name, user=str(m.get("user", "user")), team=str(m.get("team", "default")),
            submit_s=float(_dur(m.get("submit", 0), f"{where}.submit") or 0.0),
            runtime_s=_dur(m.get("runtime"), f"{where}.runtime"),
            resources=req, kind=kind, priority=priority,
            time_limit_s=_dur(m.get("time_limit"), f"{where}.time_limit"),
            activity=_activity(m.get("activity"), f"{where}.activity"),
            checkpointable=bool(m.get("checkpointable", False)))
        rep = _map(m.get("repeat"), f"{where}.repeat", "repeat")
        count = int(rep.get("count", 1))
        every = float(_dur(rep.get("every", 0), f"{where}.repeat.every") or 0.0)
        if count < 1:
            raise ValidationError(f"{where}.repeat.count must be >= 1", field=f"{where}.repeat.count", hint="e.g. 3")
        for k in range(count):
            out.append(base if count == 1 else SimJob(
                name=f"{name}-{k + 1}", user=base.user, team=base.team, submit_s=base.submit_s + k * every,
                runtime_s=base.runtime_s, resources=base.resources, kind=base.kind, priority=base.priority,
                time_limit_s=base.time_limit_s, activity=base.activity, checkpointable=base.checkpointable))
    return tuple(out)


def parse_scenario(doc: Mapping[str, Any]) -> Scenario:
    """Build a :class:`Scenario` from a parsed YAML document.

    Raises:
        ValidationError: a field is missing or malformed (the error names it).
    """
    doc = _map(doc, "scenario", "scenario")
    prof = _map(doc.get("profile"), "profile", "profile")
    profile = SchedulingProfile(
        name=str(prof.get("name", "sim")), backfill=bool(prof.get("backfill", True)),
        preemption=bool(prof.get("preemption", True)), reclaim=bool(prof.get("reclaim", True)))
    idle_doc = doc.get("idle")
    idle = None
    if idle_doc is not None:
        im = _map(idle_doc, "idle", "idle")
        defaults = IdlePolicy()
        busy = im.get("busy_kernel_window", defaults.busy_kernel_window_s)
        def mode(key: str, default: ReclaimMode) -> ReclaimMode:
            try:
                return ReclaimMode(str(im.get(key, default.value)))
            except ValueError:
                raise ValidationError(f"idle.{key} must be release, requeue, stop or notify", field=f"idle.{key}",
                                      hint="e.g. lease_mode: release") from None

        idle = IdlePolicies(default=IdlePolicy(
            threshold_pct=float(im.get("threshold_pct", defaults.threshold_pct)),
            window_s=float(_dur(im.get("window", defaults.window_s), "idle.window") or defaults.window_s),
            warning_s=float(_dur(im.get("warning", defaults.warning_s), "idle.warning") or 0.0),
            grace_s=float(_dur(im.get("grace", 0), "idle.grace") or 0.0),
            busy_kernel_window_s=None if busy is None else _dur(busy, "idle.busy_kernel_window"),
            lease_mode=mode("lease_mode", defaults.lease_mode), job_mode=mode("job_mode", defaults.job_mode),
            service_mode=mode("service_mode", defaults.service_mode)))
    quotas = quota_lines(doc.get("quotas"))
    start = parse_utc(doc["start"], field="start") if doc.get("start") else datetime(2026, 1, 1, tzinfo=timezone.utc)
    return Scenario(
        name=str(doc.get("name", "scenario")), inventory=_cluster(_map(doc.get("cluster"), "cluster", "cluster")),
        jobs=_jobs(doc.get("jobs")), profile=profile, quotas=quotas, idle=idle,
        tick_s=_dur(doc.get("tick"), "tick"), horizon_s=_dur(doc.get("horizon"), "horizon"),
        start=start or datetime(2026, 1, 1, tzinfo=timezone.utc))


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse a scenario YAML file (JSON is YAML too: what ``usage --as-scenario`` writes).

    Raises:
        NotFoundError: no such file.
        ValidationError: not YAML, or a malformed field.
    """
    return parse_scenario(read_yaml(path, "scenario"))


def read_yaml(path: str | Path, what: str) -> Any:
    """The parsed YAML document of the file at ``path`` (``what``: the argument it came from, for errors).

    Raises:
        NotFoundError: no such file (field ``what``).
        ValidationError: a folder, or not YAML (one line with the place, field ``what``).
    """
    p = Path(path)
    if p.is_dir():  # it exists: "does not exist" would be false (new user 14, N1's kind)
        raise ValidationError(f"{what} file {p} is a directory, not a file", field=what,
                              hint=f"give the path of a {what} YAML file in it")
    if not p.is_file():
        raise NotFoundError(f"{what} file {p} does not exist", field=what, hint="check the path")
    try:
        return yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:  # one line, not PyYAML's five-line dump (new user 14, N24)
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or "it cannot be parsed").split())
        raise ValidationError(f"{p.name} is not valid YAML{where}: {problem}", field=what,
                              hint="check indentation and quoting") from None
