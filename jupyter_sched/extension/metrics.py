"""Prometheus metrics of the scheduler, in a private ``CollectorRegistry``.

A private registry keeps these series out of jupyter_server's own ``/metrics`` and lets
several servers in one test process coexist. Values are read from the service when scraped
(no background bookkeeping that could drift from the store):

- ``jupyter_sched_queue_length{priority}``      pending jobs per priority class
- ``jupyter_sched_running_jobs{kind}``          jobs / leases holding GPUs
- ``jupyter_sched_gpus{model,state}``           GPUs allocated / free / unavailable per model
                                                (fractions count in GPUs: two 0.5 GPU jobs = 1
                                                allocated GPU; an unhealthy GPU, or one on a node
                                                that is not ready, is ``unavailable`` — never free:
                                                case 018)
- ``jupyter_sched_node_cordoned{node,reason,by}`` 1 per node cordoned for maintenance (``jupyter-sched nodes
                                                cordon``; a Kubernetes cordon has no reason); a GPU there
                                                that no work holds is ``unavailable`` above (hubadmin24)
- ``jupyter_sched_gpu_utilization_percent``     mean GPU utilization over the devices sampled now,
                                                valid readings only (suspect or blank ones add 0 %:
                                                case 026); absent without telemetry
- ``jupyter_sched_preemptions_total``           preemption events seen since start (priority and quota
  reclaim: hubadmin23 A12, the audit's ``reclaim`` rows are here)
- ``jupyter_sched_reclaims_total``              idle reclaims that freed GPUs since start (engine count)
- ``jupyter_sched_idle_gpus``                   GPUs of work with an open idle warning
- ``jupyter_sched_eta_coverage_ratio``          share of recently started jobs that waited and had an
  ETA when queued (absent while none waited: nothing measured); ``jupyter_sched_eta_median_abs_error_seconds``: their median ETA error (case 034),
  only once :data:`ETA_PUBLIC_MIN_JOBS` jobs waited among them. Every user may read these, so
  they are the fixed-window aggregate only; the detail (a window the caller picks, down to one
  job's wait and error, p90/max/mean) is admin-only in ``GET eta-accuracy`` (red-team 3 finding 5)
- ``jupyter_sched_eta_failing``                 1 while the engine's last full cycle could not project ETAs
  (its decisions made without them; the log names the cause once); ``jupyter_sched_engine_tick_failures``:
  engine ticks failed in a row for one cause, 0 when the last passed (red team 21, R5)
- ``jupyter_sched_event_clients``               connected event-stream clients
- ``jupyter_sched_event_clients_dropped_total`` clients dropped for falling behind
- per team (hubadmin23 A12: no series said which team holds what), by the rule of ``jupyter-sched queue
  --summary`` (:func:`jupyter_sched.model.team_load.team_rows`, so the two agree):
  ``jupyter_sched_team_running_gpus{team}`` GPUs held by the team's admitted and running jobs and leases (a
  fractional GPU as its share), ``jupyter_sched_team_pending_jobs{team}``, and for a team with a team quota
  line ``jupyter_sched_team_guaranteed_gpus{team}`` (its lines' guarantees summed over GPU models) and
  ``jupyter_sched_team_borrowed_gpus{team}`` (running above that guarantee). The one label is ``team``,
  never a user: cardinality is the teams there are, which admins set (quota lines; ``user_teams`` or team
  ``members``; hub groups in hub mode) — a user can charge only a team they are in — and at most
  :data:`TEAM_SERIES` teams are labelled (those holding or asking for the most GPUs; the rest summed as
  ``team="(other teams)"``). Nothing here is news to a scraper: every user reads each job's team and GPUs
  in ``GET queue`` and the quota lines in ``GET quotas``, so these stay readable by every user, as the
  rest of ``GET metrics`` is (it is not admin-gated).
- split by GPU model (hubadmin25 B9: the summed gauges could not say "nlp uses 2 of its 2 A100"):
  ``jupyter_sched_team_model_running_gpus{team,model}`` and per team quota line
  ``jupyter_sched_team_line_{guaranteed,borrowing_limit,running,borrowed}_gpus{team,model}``
  (:func:`_team_model_families`); waits: ``jupyter_sched_pending_gpus{priority}``,
  ``jupyter_sched_oldest_wait_seconds{priority}``, ``jupyter_sched_team_oldest_wait_seconds{team}``;
  health: ``jupyter_sched_node_gpus{node,model,state}`` (:func:`_node_gpus`). ``model`` is a model of the
  inventory or of an admin's quota line, ``node`` a node of the inventory: no label is a string a user typed.
- for an admin's scrape, or a token holding the metrics scope, only (:mod:`.metrics_accounting`):
  the accounting — ``jupyter_sched_team_gpu_seconds_total{team,model}`` (never down: what an admin's end
  correction took back is in ``jupyter_sched_team_gpu_seconds_corrected_total{team,model}``) and the team budgets'
  standing.

``GET metrics`` is open to every user and each scrape reads every unfinished job, the inventory
and the last admissions; sixteen concurrent scrapes by one user held the request threads that
serve everyone's ``GET jobs`` / ``GET queue`` (about 0.4 s added to each: red-team 3 finding 4).
So :class:`SchedRegistry` shares scrapes: at most one computation at a time (others await it on
the event loop, holding no thread), and its text is served again for ``min_interval_s`` (1 s)
after that computation started — far below any Prometheus scrape interval.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timezone
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..backfill.accuracy import accuracy_from_admits
from .events import EventHub

__all__ = ["OTHER_TEAMS", "TEAM_SERIES", "SchedCollector", "SchedRegistry", "make_registry"]

_PRIORITIES = ("high", "normal", "low")
_GPU_STATES = ("healthy", "unhealthy", "not_ready", "cordoned")


TEAM_SERIES = 200
"""Teams labelled in the per-team gauges; beyond, the rest are summed under :data:`OTHER_TEAMS`."""
OTHER_TEAMS = "(other teams)"
"""The ``team`` label of the teams beyond :data:`TEAM_SERIES` (no team name has brackets or spaces)."""

ETA_WINDOW = 1000
"""Admissions the ETA accuracy gauges look back over."""
ETA_PUBLIC_MIN_JOBS = 10
"""Jobs that waited in the window before its median ETA error is published: a median over one
or two waits is those users' waits (red-team 3 finding 5)."""


class SchedCollector(Collector):
    """Reads queue, allocation and event counts at scrape time.

    Args:
        service: the scheduler's :class:`~jupyter_sched.services.Services`.
        hub: the event hub (event counts, client counts).
    """

    def __init__(self, service: Any, hub: EventHub) -> None:
        self.service = service
        self.hub = hub

    def collect(self) -> Iterator[Metric]:
        """Yield the metric families described in the module docstring."""
        jobs = list(self.service.list_jobs(user=None, state="pending,admitted,running"))
        queue = GaugeMetricFamily("jupyter_sched_queue_length", "Pending jobs per priority class",
                                  labels=["priority"])
        pending = Counter(str(j.get("priority", "normal")) for j in jobs if j.get("state") == "pending")
        for priority in _PRIORITIES:
            queue.add_metric([priority], pending.get(priority, 0))
        yield queue

        holding = [j for j in jobs if j.get("state") in ("admitted", "running")]
        running = GaugeMetricFamily("jupyter_sched_running_jobs", "Jobs and leases holding GPUs", labels=["kind"])
        kinds = Counter(str(j.get("kind", "training")) for j in holding)
        for kind in ("training", "inference", "lease"):
            running.add_metric([kind], kinds.get(kind, 0))
        yield running

        inventory = self.service.system.inventory().to_wire()
        model_of = {g["uuid"]: g["model"] for g in inventory.get("gpus", [])}
        for gpu in inventory.get("gpus", []):
            for mig in gpu.get("mig_devices", []):
                model_of[mig["uuid"]] = gpu["model"]
        total = Counter(g["model"] for g in inventory.get("gpus", []))
        ready = {n["name"]: bool(n.get("ready", True)) for n in inventory.get("nodes", [])}
        cordoned = {n["name"] for n in inventory.get("nodes", []) if n.get("unschedulable")}
        held = {u for j in holding for w in ((j.get("allocation") or {}).get("workers") or [j.get("allocation") or {}])
                for u in w.get("gpu_uuids", [])}
        # a GPU on a cordoned node is given no new work: unavailable once its work ended (hubadmin24)
        unavailable = Counter(g["model"] for g in inventory.get("gpus", [])
                              if g.get("health", "healthy") != "healthy" or not ready.get(g.get("node", ""), True)
                              or (g.get("node") in cordoned and g.get("uuid") not in held))
        used: dict[str, float] = {}
        for job in holding:
            alloc = job.get("allocation") or {}
            share = float(alloc.get("gpu_milli", 1000)) / 1000.0
            uuids = [u for w in alloc.get("workers") or [] for u in w.get("gpu_uuids", [])] \
                or list(alloc.get("gpu_uuids", []))
            for uuid in uuids:
                if uuid in model_of:
                    used[model_of[uuid]] = used.get(model_of[uuid], 0.0) + share
        gpus = GaugeMetricFamily("jupyter_sched_gpus", "GPUs per model and state (allocated/free/unavailable)",
                                 labels=["model", "state", "simulated"])
        simulated = str(bool(inventory.get("simulated", False))).lower()
        for model, count in sorted(total.items()):
            usable = float(count - unavailable.get(model, 0))
            allocated = min(usable, used.get(model, 0.0))
            gpus.add_metric([model, "allocated", simulated], allocated)
            gpus.add_metric([model, "free", simulated], usable - allocated)
            gpus.add_metric([model, "unavailable", simulated], float(unavailable.get(model, 0)))
        yield gpus
        nodes = GaugeMetricFamily("jupyter_sched_node_cordoned", "Nodes cordoned for maintenance (no new work placed "
                                  "there): 1 per node, with the admin's reason and who cordoned it",
                                  labels=["node", "reason", "by"])
        for node in inventory.get("nodes", []):
            if node.get("unschedulable"):
                cordon = node.get("cordon") or {}
                nodes.add_metric([str(node["name"]), str(cordon.get("reason") or ""), str(cordon.get("by") or "")], 1.0)
        yield nodes
        yield from _node_gpus(inventory)
        yield from self._teams(jobs, model_of)
        yield from self._waits(jobs)
        utilization = self._utilization()
        if utilization is not None:
            util = GaugeMetricFamily("jupyter_sched_gpu_utilization_percent",
                                     "Mean GPU utilization now, valid readings only (suspect/blank count as 0)")
            util.add_metric([], utilization)
            yield util

        preemptions = CounterMetricFamily(
            "jupyter_sched_preemptions", "Running jobs preempted since server start, for any cause: priority, "
            "and quota reclaim (work on borrowed GPUs stopped to return them to their team's guarantee); "
            "not idle reclaim (jupyter_sched_reclaims)")
        preemptions.add_metric([], float(self.hub.counts.get("preempted", 0)))
        yield preemptions
        idle = self.service.telemetry.idle_stats()
        reclaims = CounterMetricFamily(
            "jupyter_sched_reclaims", "Idle reclaims since server start: GPUs taken back from idle kernel leases "
            "or jobs (the idle policy); quota reclaims are counted in jupyter_sched_preemptions")
        reclaims.add_metric([], float(idle.get("reclaims", 0)))
        yield reclaims
        idle_gpus = GaugeMetricFamily("jupyter_sched_idle_gpus", "GPUs of work with an open idle warning")
        idle_gpus.add_metric([], float(idle.get("idle_gpus", 0)))
        yield idle_gpus
        yield from self._eta_accuracy()
        yield from self._failing()
        clients = GaugeMetricFamily("jupyter_sched_event_clients", "Connected event-stream clients")
        clients.add_metric([], float(self.hub.subscribers))
        yield clients
        dropped = CounterMetricFamily("jupyter_sched_event_clients_dropped",
                                      "Event-stream clients dropped for falling behind")
        dropped.add_metric([], float(self.hub.dropped_clients))
        yield dropped


    def _now(self) -> datetime:
        clock = getattr(self.service, "clock", None)
        return clock.now() if clock is not None else datetime.now(timezone.utc)

    def _teams(self, jobs: list[dict[str, Any]], model_of: dict[str, str]) -> Iterator[Metric]:
        """The per-team gauges of the module docstring, from the unfinished ``jobs`` (job dicts) and the
        quota lines in force (:func:`~jupyter_sched.model.team_load.team_rows`); then the same split by
        GPU model (:func:`_team_model_families`; ``model_of``: GPU or MIG uuid → model)."""
        from ..model.codec import quota_to_dict
        from ..model.team_load import team_rows

        store = getattr(self.service, "store", None)
        lines = [quota_to_dict(q) for q in store.quota_set().quotas] if store is not None else []
        rows = team_rows(jobs, {"quotas": lines}, self._now())
        running = GaugeMetricFamily("jupyter_sched_team_running_gpus",
                                    "GPUs held by the team's admitted and running jobs and leases", labels=["team"])
        pending = GaugeMetricFamily("jupyter_sched_team_pending_jobs", "The team's pending jobs", labels=["team"])
        guaranteed = GaugeMetricFamily("jupyter_sched_team_guaranteed_gpus",
                                       "GPUs guaranteed to the team by its team quota lines (summed over GPU models)",
                                       labels=["team"])
        borrowed = GaugeMetricFamily("jupyter_sched_team_borrowed_gpus",
                                     "GPUs the team holds above its guarantee (teams with a team quota line)",
                                     labels=["team"])
        for row in _bounded(rows):
            team = [str(row["team"])]
            running.add_metric(team, float(row["running"]))
            pending.add_metric(team, float(row["pending"]))
            if row["guaranteed"] is not None:
                guaranteed.add_metric(team, float(row["guaranteed"]))
                borrowed.add_metric(team, float(row["borrowed"]))
        yield from (running, pending, guaranteed, borrowed)
        kept = {str(r["team"]) for r in _bounded(rows)}
        yield from _team_model_families(jobs, lines, model_of, kept)

    def _waits(self, jobs: list[dict[str, Any]]) -> Iterator[Metric]:
        """Per priority class: the GPUs pending jobs ask for and the longest wait now (seconds since
        submit; 0 while nothing of that class waits), and per team its longest wait (by
        :func:`~jupyter_sched.model.team_load.team_rows`, as ``queue --summary``'s OLDEST WAIT)."""
        from ..model.team_load import job_gpus, team_rows

        now = self._now()
        gpus = GaugeMetricFamily("jupyter_sched_pending_gpus", "GPUs the pending jobs of a priority class ask for",
                                 labels=["priority"])
        oldest = GaugeMetricFamily("jupyter_sched_oldest_wait_seconds",
                                   "Seconds the longest-waiting pending job of a priority class has waited "
                                   "since its submit (0 when none waits)", labels=["priority"])
        asked: dict[str, float] = {}
        waited: dict[str, float] = {}
        for job in jobs:
            if job.get("state") != "pending":
                continue
            priority = str(job.get("priority", "normal"))
            priority = priority if priority in _PRIORITIES else "normal"
            asked[priority] = asked.get(priority, 0.0) + job_gpus(job)
            since = _when(job.get("submitted_at"))
            if since is not None:
                waited[priority] = max(waited.get(priority, 0.0), max(0.0, (now - since).total_seconds()))
        for priority in _PRIORITIES:
            gpus.add_metric([priority], float(asked.get(priority, 0.0)))
            oldest.add_metric([priority], waited.get(priority, 0.0))
        yield from (gpus, oldest)
        teams = GaugeMetricFamily("jupyter_sched_team_oldest_wait_seconds",
                                  "Seconds the team's longest-waiting pending job has waited (teams with pending work)",
                                  labels=["team"])
        for row in _bounded(team_rows(jobs, {}, now)):
            if row.get("oldest_wait_s") is not None:
                teams.add_metric([str(row["team"])], float(row["oldest_wait_s"]))
        yield teams

    def _failing(self) -> Iterator[Metric]:
        """Whether the engine's ETAs or ticks fail now (red team 21, R5; the log names the cause)."""
        engine = getattr(self.service, "engine", None)
        applier = getattr(engine, "applier", None)
        eta = GaugeMetricFamily("jupyter_sched_eta_failing",
                                "1 while the last full cycle could not project ETAs (decided without them)")
        eta.add_metric([], 1.0 if getattr(applier, "eta_failure", "") else 0.0)
        yield eta
        failing = getattr(getattr(self.service, "runner", None), "failing", None)
        ticks = GaugeMetricFamily("jupyter_sched_engine_tick_failures",
                                  "Engine ticks failed in a row for one cause (0 when the last passed)")
        ticks.add_metric([], float(failing[1]) if failing else 0.0)
        yield ticks

    def _eta_accuracy(self) -> Iterator[Metric]:
        """ETA accuracy over the last admissions of jobs that waited (case 034): predicted at submit
        against the actual start (:func:`jupyter_sched.backfill.accuracy.accuracy_from_admits`)."""
        store = getattr(self.service, "store", None)
        if store is None:
            return
        events = store.list_events(action="admit", newest_first=True, limit=ETA_WINDOW)
        accuracy = accuracy_from_admits((e.at, e.details) for e in events)
        if accuracy.coverage is None:  # no job waited: nothing measured, which a 0 read as "no ETA given" (new user 14, N11)
            return
        coverage = GaugeMetricFamily("jupyter_sched_eta_coverage_ratio",
                                     f"Share of the last {ETA_WINDOW} started jobs that waited and had an ETA when queued")
        coverage.add_metric([], accuracy.coverage)
        yield coverage
        if accuracy.median_abs_error_s is not None and accuracy.jobs >= ETA_PUBLIC_MIN_JOBS:
            error = GaugeMetricFamily("jupyter_sched_eta_median_abs_error_seconds",
                                      "Median |actual - predicted start| of those jobs, in seconds")
            error.add_metric([], accuracy.median_abs_error_s)
            yield error

    def _utilization(self) -> float | None:
        """Cluster utilization from the telemetry monitor's newest samples (None without one)."""
        monitor = getattr(self.service, "monitor", None)
        if monitor is None:
            return None
        latest = monitor.latest()
        if not latest:
            return None
        from ..telemetry.views import cluster_utilization

        return cluster_utilization(latest).utilization_pct


def _when(value: Any) -> datetime | None:
    """An ISO 8601 time of a job dict (``…Z`` or with offset), None when absent or unreadable."""
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _node_gpus(inventory: dict[str, Any]) -> Iterator[Metric]:
    """``jupyter_sched_node_gpus{node,model,state}``: every GPU of the inventory once, in the first state
    that holds of ``unhealthy`` (marked so, ECC/RMA), ``not_ready`` (its node is not ready), ``cordoned``
    (its node is cordoned: no new work placed there, busy or not), ``healthy``. Every state has a
    sample per node and model (0 when none), so a board's "unhealthy > 0" alert has a series to read."""
    ready = {n["name"]: bool(n.get("ready", True)) for n in inventory.get("nodes", [])}
    cordoned = {n["name"] for n in inventory.get("nodes", []) if n.get("unschedulable")}
    counts: Counter[tuple[str, str, str]] = Counter()
    pairs: set[tuple[str, str]] = set()
    for gpu in inventory.get("gpus", []):
        node, model = str(gpu.get("node", "")), str(gpu.get("model", ""))
        state = ("unhealthy" if gpu.get("health", "healthy") != "healthy" else "not_ready"
                 if not ready.get(node, True) else "cordoned" if node in cordoned else "healthy")
        counts[(node, model, state)] += 1
        pairs.add((node, model))
    family = GaugeMetricFamily("jupyter_sched_node_gpus", "GPUs per node and model by health: healthy, unhealthy "
                               "(marked so), not_ready (node not ready), cordoned (node cordoned)",
                               labels=["node", "model", "state"])
    for node, model in sorted(pairs):
        for state in _GPU_STATES:
            family.add_metric([node, model, state], float(counts.get((node, model, state), 0)))
    yield family


def _team_model_families(jobs: list[dict[str, Any]], lines: list[dict[str, Any]], model_of: dict[str, str],
                         kept: set[str]) -> Iterator[Metric]:
    """The per-team gauges split by GPU model (hubadmin25 B9: a two-model cluster's board could not say
    "nlp uses 2 of its 2 A100"): ``jupyter_sched_team_model_running_gpus{team,model}`` — GPUs of each
    inventory model the team's admitted and running work holds (a fractional GPU as its share) — and per
    team quota line ``jupyter_sched_team_line_guaranteed_gpus``, ``_team_line_borrowing_limit_gpus``
    (absent when unlimited), ``_team_line_running_gpus`` (the GPUs the line counts: those of its model,
    every model for ``*``, as the quota ledger counts them) and ``_team_line_borrowed_gpus`` (above the
    guarantee), ``{team,model}`` with the line's model as ``GET quotas`` writes it (``*``: any model).

    Labels: ``team`` only among ``kept`` (the teams :func:`_bounded` labels; others fold into
    :data:`OTHER_TEAMS`), ``model`` only a model of the inventory or of an admin's quota line — never
    a string a user typed (a job's requested model is not a label)."""
    from ..quota.ledger import line_applies

    def team_of(name: Any) -> str:
        return str(name or "-") if str(name or "-") in kept else OTHER_TEAMS

    held: dict[tuple[str, str], float] = {}
    for job in jobs:
        if job.get("state") not in ("admitted", "running"):
            continue
        alloc = job.get("allocation") or {}
        share = float(alloc.get("gpu_milli", 1000)) / 1000.0
        uuids = [u for w in alloc.get("workers") or [] for u in w.get("gpu_uuids", [])] or list(alloc.get("gpu_uuids", []))
        for uuid in uuids:
            if uuid in model_of:
                key = (team_of(job.get("team")), model_of[uuid])
                held[key] = held.get(key, 0.0) + share
    running = GaugeMetricFamily("jupyter_sched_team_model_running_gpus",
                                "GPUs of one model held by the team's admitted and running jobs and leases",
                                labels=["team", "model"])
    for (team, model), gpus in sorted(held.items()):
        running.add_metric([team, model], gpus)
    yield running
    names = {"guaranteed": "GPUs the team quota line guarantees",
             "borrowing_limit": "GPUs the team quota line lets the team borrow above its guarantee (absent: unlimited)",
             "running": "GPUs the team quota line counts now (its model's; every model for *)",
             "borrowed": "GPUs the team holds above the line's guarantee"}
    families = {k: GaugeMetricFamily(f"jupyter_sched_team_line_{k}_gpus", text, labels=["team", "model"])
                for k, text in names.items()}
    totals: dict[tuple[str, str], dict[str, float | None]] = {}
    for line in lines:
        if line.get("user") or str(line.get("team")) not in kept:
            continue
        team, model = str(line["team"]), str(line.get("gpu_model") or "*")
        counted = sum(g for (t, m), g in held.items() if t == team and line_applies(model, m))
        limit = line.get("borrowing_limit")
        totals[(team, model)] = {"guaranteed": float(line.get("guaranteed") or 0),
                                 "borrowing_limit": None if limit is None else float(limit), "running": counted,
                                 "borrowed": max(0.0, counted - float(line.get("guaranteed") or 0))}
    for key, values in sorted(totals.items()):
        for name, value in values.items():
            if value is not None:
                families[name].add_metric(list(key), value)
    yield from families.values()


def _bounded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (:func:`~jupyter_sched.model.team_load.team_rows`) with at most :data:`TEAM_SERIES` teams:
    those holding, then asking for, the most GPUs (then by name) keep their own; the rest are summed as
    :data:`OTHER_TEAMS` (its ``guaranteed`` and ``borrowed`` are the sums of theirs; None when none has a line)."""
    if len(rows) <= TEAM_SERIES:
        return rows
    ranked = sorted(rows, key=lambda r: (-float(r["running"]), -float(r["pending_gpus"]), str(r["team"])))
    kept, rest = ranked[:TEAM_SERIES - 1], ranked[TEAM_SERIES - 1:]
    lined = [r for r in rest if r["guaranteed"] is not None]
    other = {"team": OTHER_TEAMS, "running": sum(float(r["running"]) for r in rest),
             "pending": sum(int(r["pending"]) for r in rest), "pending_gpus": sum(float(r["pending_gpus"]) for r in rest),
             "guaranteed": sum(float(r["guaranteed"]) for r in lined) if lined else None,
             "borrowed": sum(float(r["borrowed"]) for r in lined)}
    return [*sorted(kept, key=lambda r: str(r["team"])), other]


class SchedRegistry(CollectorRegistry):
    """The private registry, whose exposition text scrapes share (see module docstring).

    Args:
        min_interval_s: seconds after a computation started during which its text is served again.
        clock: monotonic seconds (tests freeze it).
    """

    def __init__(self, *, min_interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(auto_describe=False)
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.computations = 0
        self._text: bytes | None = None
        self._started = 0.0
        self._inflight: asyncio.Future[bytes] | None = None

    async def exposition(self, off_loop: Callable[[Callable[[], bytes]], Awaitable[bytes]]) -> bytes:
        """The Prometheus text: the last one if its computation started under ``min_interval_s``
        ago, else the one being computed, else a new one computed by ``off_loop(fn)`` (which runs
        ``fn`` on a request thread). A failed computation fails its waiters and is not kept."""
        now = self.clock()
        if self._text is not None and now - self._started < self.min_interval_s:
            return self._text
        if self._inflight is None:
            self._inflight = asyncio.ensure_future(self._compute(off_loop, now))
        # shielded: a scraper that hangs up does not cancel the computation the others await
        return await asyncio.shield(self._inflight)

    async def _compute(self, off_loop: Callable[[Callable[[], bytes]], Awaitable[bytes]], started: float) -> bytes:
        from prometheus_client import generate_latest

        try:
            self.computations += 1
            text = await off_loop(lambda: generate_latest(self))
            self._text, self._started = text, started
            return text
        finally:
            self._inflight = None


def make_registry(service: Any, hub: EventHub) -> SchedRegistry:
    """A fresh private registry holding one :class:`SchedCollector`."""
    registry = SchedRegistry()
    registry.register(SchedCollector(service, hub))
    return registry

