"""The accounting series of ``GET metrics``, for an admin's scrape (or a scraper's token holding
:data:`METRICS_SCOPE`) only: what each team used and where its budget stands (hubadmin25 B9).
:func:`make_admin_registry` chains them after every public family of :mod:`.metrics`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .metrics import OTHER_TEAMS, TEAM_SERIES, SchedRegistry

__all__ = ["METRICS_SCOPE", "AccountingCollector", "make_admin_registry"]

METRICS_SCOPE = "custom:jupyter-sched:metrics"
"""Hub scope whose holder's ``GET metrics`` has the admin series (:class:`AccountingCollector`) without
being a scheduler admin: the scope for a Prometheus scraper's service token (docs/admin.md, "For a Prometheus
board"). Declare it in ``c.JupyterHub.custom_scopes``."""


class AccountingCollector(Collector):
    """The accounting series, for an admin's scrape only (:func:`make_admin_registry`): what each team used
    and where its budget stands. A team's total is admin-only elsewhere too (``GET usage/report?all``;
    a member reads only their own share: red team 15, R14), so these never reach a user's scrape.

    - ``jupyter_sched_team_gpu_seconds_total{team,model}``: allocated GPU-seconds of every usage
      interval so far (a running job's to the scrape), from the store's accounting
      (:meth:`~jupyter_sched.store.Store.gpu_seconds_by_team_model`), counting what admins' end corrections
      later took back; ``jupyter_sched_team_gpu_seconds_corrected_total{team,model}``: what they took back
      (:func:`~jupyter_sched.store.claimed_ends.taken_back`). A correction that shortens a job made the one
      counter go down, which Prometheus reads as a reset (``increase()`` counted the whole total again: s36-edges);
      now it moves the amount into the second. Usage is never pruned and retention keeps the corrections, so
      both only grow, across restarts too: the GPU-hours a day ``usage`` says are
      ``(increase(…gpu_seconds_total[1d]) - increase(…gpu_seconds_corrected_total[1d])) / 3600``.
      Within a process neither sample is ever below one shown before (:meth:`_rising`): a usage interval
      still open counts to the scrape, and its end, recorded later, can be earlier (the job's own end).
    - ``jupyter_sched_team_budget_gpu_hours{team,period}``, ``…_budget_used_gpu_hours{team,period}``
      (this period, as ``GET me``), ``…_budget_resets_timestamp_seconds{team,period}`` (Unix seconds):
      each team budget (:func:`~jupyter_sched.services.budget_standing.standings`). A budget of one user
      in a team is left out: its label would be a user.

    Args:
        service: the scheduler's services (``store``, ``clock``).
    """

    def __init__(self, service: Any) -> None:
        self.service = service
        self._shown: dict[tuple[str, str, str], float] = {}

    def _rising(self, family: str, key: tuple[str, str], value: float) -> float:
        """``value``, or the sample this process showed last for ``family``'s ``key`` when that is larger: a counter
        never goes down between two scrapes of one process (a restart is a reset Prometheus handles). The engine
        records a job's end when it notices it, at the job's own end, so a scrape between the two counted the
        interval past its end; and two reads a correction commits between would disagree. Scrapes are one at a
        time (:class:`~.metrics.SchedRegistry`), so no lock."""
        shown = max(value, self._shown.get((family, *key), 0.0))
        self._shown[(family, *key)] = shown
        return shown

    def collect(self) -> Iterator[Metric]:
        """Yield the families above (none without a store)."""
        store = getattr(self.service, "store", None)
        if store is None:
            return
        from ..services.budget_standing import standings

        clock = getattr(self.service, "clock", None)
        now = clock.now() if clock is not None else datetime.now(timezone.utc)
        from ..store.claimed_ends import taken_back

        with store.transaction(write=False, one_view=True) as tx:  # one state: a correction moves seconds between
            used = tx.gpu_seconds_by_team_model(until=now)
            back = taken_back(tx)
        teams = sorted({team for team, _ in used} | {team for team, _ in back})
        kept = set(teams[:TEAM_SERIES - 1]) if len(teams) > TEAM_SERIES else set(teams)
        folded: defaultdict[tuple[str, str], float] = defaultdict(float)
        folded_back: defaultdict[tuple[str, str], float] = defaultdict(float)
        for (team, model), seconds in used.items():
            folded[(team if team in kept else OTHER_TEAMS, model)] += seconds
        for (team, model), seconds in back.items():
            series = (team if team in kept else OTHER_TEAMS, model)
            folded[series] += seconds  # usage before corrections: the counter never goes down
            folded_back[series] += seconds
        usage = CounterMetricFamily(
            "jupyter_sched_team_gpu_seconds",
            "Allocated GPU-seconds so far per team and GPU model (the usage accounting), counting what admins' end "
            "corrections took back later (jupyter_sched_team_gpu_seconds_corrected_total): subtract it for the "
            "corrected usage. Never goes down", labels=["team", "model"])
        for series, seconds in sorted(folded.items()):
            usage.add_metric(list(series), self._rising("usage", series, seconds))
        yield usage
        corrected = CounterMetricFamily(
            "jupyter_sched_team_gpu_seconds_corrected",
            "GPU-seconds admins' end corrections took back from the usage per team and GPU model (jupyter-sched "
            "doctor correct-end, POST jobs/{id}/end): jupyter_sched_team_gpu_seconds_total minus this is the "
            "corrected usage", labels=["team", "model"])
        for series, seconds in sorted(folded_back.items()):
            corrected.add_metric(list(series), self._rising("corrected", series, seconds))
        yield corrected
        budgets = [b for b in store.quota_set().budgets if b.user is None][:TEAM_SERIES]
        limit = GaugeMetricFamily("jupyter_sched_team_budget_gpu_hours", "The team's GPU-hour budget per period",
                                  labels=["team", "period"])
        spent = GaugeMetricFamily("jupyter_sched_team_budget_used_gpu_hours",
                                  "GPU-hours the team used in the budget's current period", labels=["team", "period"])
        resets = GaugeMetricFamily("jupyter_sched_team_budget_resets_timestamp_seconds",
                                   "When the budget's period ends (Unix seconds, UTC)", labels=["team", "period"])
        for standing in standings(store, budgets, now=now):
            key = [standing.budget.team, standing.budget.period]
            limit.add_metric(key, float(standing.budget.gpu_hours))
            spent.add_metric(key, standing.used_gpu_hours)
            resets.add_metric(key, standing.resets_at.timestamp())
        yield from (limit, spent, resets)


class _Chain(Collector):
    """Every family of ``first`` (a registry: collectors registered on it later included), then ``then``'s."""

    def __init__(self, first: CollectorRegistry, then: Collector) -> None:
        self.first, self.then = first, then

    def collect(self) -> Iterator[Metric]:
        yield from self.first.collect()
        yield from self.then.collect()


def make_admin_registry(public: SchedRegistry, service: Any) -> SchedRegistry:
    """The registry an admin's scrape reads (:data:`METRICS_SCOPE` too): every family of ``public``
    (those registered on it later included), then the :class:`AccountingCollector`'s."""
    registry = SchedRegistry()
    registry.register(_Chain(public, AccountingCollector(service)))
    return registry
