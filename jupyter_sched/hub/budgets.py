"""Budget warnings at 80 % and 100 %: check, audit once per period, push as events.

:func:`warn_budgets` reads the quota set's budgets and this period's allocated GPU-hours from
the store (:meth:`~jupyter_sched.store.Store.gpu_seconds`: summed by the database), asks
:func:`jupyter_sched.accounting.budget_alerts` which thresholds were newly crossed, records each
as an audit event (action ``budget_warning``, details = the alert) and publishes it on the
service's event stream (type ``budget_warning``; the panel and ``GET events`` see it). The audit
log is the memory: a warning already recorded this period is never sent again, also after a
restart or from a second service on the same store.

Admission itself is the core's: a job of a team/user whose budget is used up pends with
``BudgetExhausted`` and the numbers (the engine fills ``Snapshot.usage.gpu_hours_this_period``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..accounting import DEFAULT_THRESHOLDS, budget_alerts, period_start
from ..model.periods import this_period_text
from ..model.units import gpu_hours_phrase

__all__ = ["BUDGET_ACTION", "warn_budgets"]

BUDGET_ACTION = "budget_warning"
"""Audit action and event type of a budget warning."""


def warn_budgets(service: Any, *, now: datetime | None = None,
                 thresholds: Iterable[int] = DEFAULT_THRESHOLDS) -> list[dict[str, Any]]:
    """Send the budget warnings due now; return them (``BudgetAlert.to_dict()`` shapes).

    Args:
        service: the scheduler's :class:`~jupyter_sched.services.Services` (uses ``store``, ``clock``
            and ``bus``).
        now: the time (default the service's clock).
        thresholds: percents to warn at (default 80 and 100).
    """
    at = now or service.clock.now()
    budgets = service.store.quota_set().budgets
    if not budgets:
        return []
    earliest = min(period_start(at, b.period) for b in budgets)
    # summed by the database, one figure per budget: the rows never leave it (red26 R1)
    used = {(b.team, b.user): service.store.gpu_seconds(since=period_start(at, b.period), until=at, user=b.user,
                                                        team=b.team) / 3600 for b in budgets}
    sent = {str(e.details.get("key")) for e in service.store.list_events(action=BUDGET_ACTION, since=earliest,
                                                                          limit=100_000)}
    out = []
    for alert in budget_alerts(budgets, used, now=at, already_sent=sent, thresholds=thresholds):
        who = alert.team if alert.user is None else f"user {alert.user} in team {alert.team}"
        # a day's budget reads "today", as the gate's reason and status say it (newuser28 n12)
        message = (f"{who} used {alert.used_gpu_hours:.2f} of {gpu_hours_phrase(alert.budget_gpu_hours, f'{alert.budget_gpu_hours:g}')} "
                   f"{this_period_text(alert.period)} ({alert.percent:.0f} %, warning at {alert.threshold} %)")
        data = {**alert.to_dict(), "message": message}
        service.store.add_event(actor="scheduler", action=BUDGET_ACTION, user=alert.user, message=message,
                                details=data, at=at)
        service.bus.publish({"type": BUDGET_ACTION, "data": data})
        out.append(data)
    return out
