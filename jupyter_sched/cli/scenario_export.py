"""``jupyter-sched usage --as-scenario --quarter 2026Q4 > q4.yaml``: the job history of a period (a hub's or a lab's) as a
``jupyter-sched simulate`` scenario (hubadmin26 B7), so an admin can replay last quarter under a proposed
quota line (``simulate q4.yaml --quotas proposed.yaml``) and compare each team's waits.

Built here, on the CLI's side, from three reads an admin may make: ``GET inventory`` (the cluster, node by
node: ``cluster: {nodes: [{name, model, gpus, cpu, memory_mib}]}``), ``GET quotas`` (the lines in force) and
``GET jobs?all=true`` pages of the work submitted in the period (``since`` <= submitted < ``until``). Each job
that ran becomes one arrival: its submit offset from the period's start, runtime = finished - started (its last
attempt), GPUs, models asked for, workers, team, user, kind, priority, time limit. The scenario is JSON, which
is YAML too, so this stays standard library only (the CLI's start-up cost: :mod:`.main`).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..client._wire import Req
from ..errors import AuthorizationError
from ..model.periods import next_period_start, period_start
from ..model.units import clock_text

__all__ = ["History", "as_scenario", "history_scenario", "history_source", "last_full_quarter", "other_periods"]


@dataclass(frozen=True)
class History:
    """A period's history as a scenario, and what was left out of it.

    Attributes:
        scenario: the scenario document (:mod:`jupyter_sched.sim.scenario`'s format).
        never_ran: jobs submitted in the period that never started (cancelled or refused while waiting).
        still_live: jobs still waiting or running now (no runtime yet).
        no_gpu: CPU-only jobs (no GPU asked: they do not wait for the GPUs a quota line splits).
    """

    scenario: dict[str, Any]
    never_ran: int
    still_live: int
    no_gpu: int


def _when(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(timezone.utc) if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def _iso(when: datetime) -> str:
    return f"{when.astimezone(timezone.utc):%Y-%m-%dT%H:%M:%S}Z"


def last_full_quarter(now: datetime) -> tuple[datetime, datetime]:
    """The calendar quarter (UTC) before the one ``now`` is in: ``(start, end)``, end not included."""
    end = period_start(now, "quarter")
    start = period_start(datetime.fromtimestamp(end.timestamp() - 86400, tz=timezone.utc), "quarter")
    return start, next_period_start(start, "quarter")


def other_periods(start: datetime, end: datetime, now: datetime) -> str:
    """What to give instead of the period ``[start, end)`` that had nothing to replay — never that period itself
    (newuser35 n2: ``--quarter 2026Q4`` was told "e.g. --quarter 2026Q4"): the quarter before the one it starts in,
    and the time after it up to ``now`` (a period that ended before now) or, for one that runs to now, that earlier
    quarter's start up to now: ``--quarter 2026Q3 (the quarter before) or --since 2026-07-01 (from then to now)``."""
    before, _ = last_full_quarter(start)
    quarter = f"{before.year}Q{(before.month - 1) // 3 + 1}"
    after = end if end < now else before
    return (f"--quarter {quarter} (the quarter before) or --since {_day_or_time(after)} "
            f"({'from its end' if end < now else 'from then'} to now)")


def _day_or_time(when: datetime) -> str:
    """``2026-10-01`` for a UTC midnight (as ``--since`` takes a date), else its ISO 8601 UTC time."""
    when = when.astimezone(timezone.utc)
    return when.date().isoformat() if when == datetime(when.year, when.month, when.day, tzinfo=timezone.utc) \
        else _iso(when)


def _cluster(inventory: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``GET inventory``'s nodes as the scenario's list: a node whose GPUs are of several models is one entry
    per model (``node-a``, ``node-a/H100-80GB``), as the simulator's nodes have one model each."""
    out: list[dict[str, Any]] = []
    for node in inventory.get("nodes") or ():
        if not isinstance(node, Mapping):
            continue
        models = Counter(str(g.get("model") or "unknown") for g in node.get("gpus") or () if isinstance(g, Mapping))
        cpu = round(float(node.get("cpu_millis") or 0) / 1000, 3)
        for k, (model, count) in enumerate(models.most_common() or [("A100-80GB", 0)]):
            entry: dict[str, Any] = {"name": str(node.get("name")) + ("" if k == 0 else f"/{model}"), "model": model,
                                     "gpus": count}
            if k == 0 and cpu:
                entry["cpu"] = cpu
            if k == 0 and node.get("memory_mib"):
                entry["memory_mib"] = int(node["memory_mib"])
            out.append(entry)
    return out


def _gpus(resources: Mapping[str, Any]) -> int | str:
    """A job's GPUs per worker as a scenario says them: ``2``, or ``"0.5"`` for a share of one."""
    gpus = int(resources.get("gpus") or 0)
    milli = int(resources.get("gpu_milli") or 1000)
    return f"{milli / 1000:g}" if gpus == 1 and 0 < milli < 1000 else gpus


def _resources(job: Mapping[str, Any]) -> Mapping[str, Any]:
    value = job.get("resources")
    return value if isinstance(value, Mapping) else {}


def _arrival(job: Mapping[str, Any], start: datetime) -> dict[str, Any] | None:
    """One job that ran, as a scenario's arrival; None when it has no start and end."""
    submitted, started, finished = (_when(job.get(k)) for k in ("submitted_at", "started_at", "finished_at"))
    if submitted is None or started is None or finished is None:
        return None
    resources = _resources(job)
    entry: dict[str, Any] = {
        "name": str(job.get("id")), "user": str(job.get("user")), "team": str(job.get("team") or "default"),
        "kind": str(job.get("kind") or "training"), "priority": str(job.get("priority") or "normal"),
        "gpus": _gpus(resources), "submit": round(max(0.0, (submitted - start).total_seconds()), 3),
        "runtime": round(max(0.0, (finished - started).total_seconds()), 3)}
    if resources.get("gpu_models"):
        entry["models"] = [str(m) for m in resources["gpu_models"]]
    if int(resources.get("workers") or 1) > 1:
        entry["workers"] = int(resources["workers"])
    if job.get("time_limit_s"):
        entry["time_limit"] = float(job["time_limit_s"])
    if job.get("checkpointable"):
        entry["checkpointable"] = True
    return entry


_LIVE = ("pending", "admitted", "running", "preempted")
_LINE_KEYS = ("team", "user", "gpu_model", "guaranteed", "borrowing_limit")


def history_scenario(inventory: Mapping[str, Any], quotas: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], *,
                     start: datetime, end: datetime, name: str) -> History:
    """The scenario of the work submitted in ``[start, end)`` (``jobs``: ``GET jobs`` rows, any order).

    Arrivals are in submit order; jobs with no GPU, still live, or never started are counted, not replayed.
    """
    arrivals: list[dict[str, Any]] = []
    never = live = no_gpu = 0
    for job in sorted(jobs, key=lambda j: str(j.get("submitted_at") or "")):
        submitted = _when(job.get("submitted_at"))
        if submitted is None or not start <= submitted < end:
            continue
        resources = _resources(job)
        if not int(resources.get("gpus") or 0):
            no_gpu += 1
        elif str(job.get("state")) in _LIVE:
            live += 1
        elif (entry := _arrival(job, start)) is None:
            never += 1
        else:
            arrivals.append(entry)
    lines = [{k: line.get(k) for k in _LINE_KEYS if line.get(k) is not None}
             for line in quotas.get("quotas") or () if isinstance(line, Mapping)]
    doc = {"name": name, "start": _iso(start), "cluster": {"nodes": _cluster(inventory)}, "quotas": lines,
           "jobs": arrivals}
    return History(scenario=doc, never_ran=never, still_live=live, no_gpu=no_gpu)


def history_source(config: Any) -> str:
    """What a scenario's history is named after, by the server that answered (``GET config``'s
    ``features.hub``): ``hub history`` of a hub's service, ``lab history`` of a single ``jupyter lab``
    (verify30 V3: a personal lab's export was named "hub history"), ``history`` where it does not say."""
    features = config.get("features") if isinstance(config, Mapping) else None
    hub = features.get("hub") if isinstance(features, Mapping) else None
    return "hub history" if hub is True else "lab history" if hub is False else "history"


def scenario_text(doc: Mapping[str, Any]) -> str:
    """``doc`` as JSON (valid YAML) with one job per line, so a reader can grep and edit it."""
    head = {k: v for k, v in doc.items() if k != "jobs"}
    parts = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()]
    jobs = ",\n".join(f"    {json.dumps(j)}" for j in doc.get("jobs") or ())
    parts.append(f'  "jobs": [\n{jobs}\n  ]')
    return "{\n" + ",\n".join(parts) + "\n}"


def as_scenario(client: Any, args: argparse.Namespace, io: Any, window: tuple[str | None, str | None],
                now: datetime) -> int:
    """``usage --as-scenario``: the scenario on stdout, what it holds and left out on stderr.

    ``window`` is ``usage``'s ``(since, until)`` when a period was asked (until None: up to now); both None:
    the last full calendar quarter. Admins only: the server refuses everyone else's ``GET jobs?all=true``.
    """
    wrong = [flag for flag, given in (("--csv", args.csv), ("--by", args.by != "user"), ("--period", args.period))
             if given]
    if wrong:
        print(f"jupyter-sched usage: {wrong[0]} does not go with --as-scenario (it writes a simulate scenario, not "
              "a report) [usage_error]", file=io.err)
        return 2  # EXIT_USAGE (main's; not imported: the CLI's start-up cost)
    if window == (None, None):
        start, end = last_full_quarter(now)
    else:
        start = _when(window[0]) or last_full_quarter(now)[0]
        end = min(_when(window[1]) or now, now)
    try:
        jobs = client.jobs_all(all_users=True, since=_iso(start), until=_iso(end))
    except AuthorizationError as exc:  # the user typed no `all`: --as-scenario is what asks it (newuser34 n3)
        if exc.field not in ("all", "user"):
            raise
        raise AuthorizationError(f"--as-scenario is for admins (it writes every user's jobs); "
                                 f"{exc.message.rsplit('; ', 1)[-1]}", field="--as-scenario",
                                 hint="your own usage: jupyter-sched usage") from None
    history = history_scenario(client.call(Req("GET", "inventory")), client.call(Req("GET", "quotas")), jobs,
                               start=start, end=end, name=f"{history_source(client.config())} {_iso(start)} to {_iso(end)}")
    period = f"{clock_text(start, None)} → {clock_text(end, None)} (not included)"
    count = len(history.scenario["jobs"])
    if not count:
        print(f"jupyter-sched usage: no job with GPUs ran of those submitted {period}: nothing to replay — give "
              f"another period, e.g. {other_periods(start, end, now)} [not_found]", file=io.err)
        return 1
    print(scenario_text(history.scenario), file=io.out)
    nodes = history.scenario["cluster"]["nodes"]
    models = Counter[str]()
    for node in nodes:
        models[node["model"]] += node["gpus"]
    left = [f"{n} {what}" for n, what in ((history.never_ran, "never started (cancelled or refused while waiting)"),
                                           (history.still_live, "still waiting or running"),
                                           (history.no_gpu, "with no GPU")) if n]
    print(f"wrote {count} job{'' if count == 1 else 's'} submitted {period} as a simulate scenario; cluster: "
          f"{len(nodes)} node{'' if len(nodes) == 1 else 's'} as the inventory is now ("
          + ", ".join(f"{n} x {m}" for m, n in sorted(models.items())) + f"); {len(history.scenario['quotas'])} "
          "quota line(s) in force now" + (f"; left out: {', '.join(left)}" if left else "")
          + ". Replay it: jupyter-sched simulate FILE, or under a proposed line: jupyter-sched simulate FILE "
          "--quotas proposed.yaml (one line per team compares the waits)", file=io.err)
    return 0
