"""The accounting series of ``GET metrics``, for an admin's scrape (or a scraper's token holding
:data:`METRICS_SCOPE`) only: what each team used and where its budget stands (hubadmin25 B9).
:func:`make_admin_registry` chains them after every public family of :mod:`.metrics`."""

from __future__ import annotations

from collections import Counter
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
      (:meth:`~jupyter_sched.store.Store.gpu_seconds_by_team_model`). Usage is never pruned, so it
      only grows, across restarts too: ``increase(…[1d]) / 3600`` is GPU-hours a day, as ``usage`` says.
    - ``jupyter_sched_team_budget_gpu_hours{team,period}``, ``…_budget_used_gpu_hours{team,period}``
      (this period, as ``GET me``), ``…_budget_resets_timestamp_seconds{team,period}`` (Unix seconds):
      each team budget (:func:`~jupyter_sched.services.budget_standing.standings`). A budget of one user
      in a team is left out: its label would be a user.

    Args:
        service: the scheduler's services (``store``, ``clock``).
    """

    def __init__(self, service: Any) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        """Yield the families above (none without a store)."""
        store = getattr(self.service, "store", None)
        if store is None:
            return
        from ..services.budget_standing import standings

        clock = getattr(self.service, "clock", None)
        now = clock.now() if clock is not None else datetime.now(timezone.utc)
        used = store.gpu_seconds_by_team_model(until=now)
        teams = sorted({team for team, _ in used})
        kept = set(teams[:TEAM_SERIES - 1]) if len(teams) > TEAM_SERIES else set(teams)
        folded: Counter[tuple[str, str]] = Counter()
        for (team, model), seconds in used.items():
            folded[(team if team in kept else OTHER_TEAMS, model)] += seconds
        usage = CounterMetricFamily("jupyter_sched_team_gpu_seconds",
                                    "Allocated GPU-seconds so far per team and GPU model (the usage accounting)",
                                    labels=["team", "model"])
        for (team, model), seconds in sorted(folded.items()):
            usage.add_metric([team, model], seconds)
        yield usage
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
