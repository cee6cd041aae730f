"""Budget warnings: which GPU-hour budgets crossed 80 % / 100 % of their period's allowance.

Pure: the caller gives the budgets, the GPU-hours used in each budget's current period
(:func:`~.usage.budget_usage`) and the warnings already sent this period (from the audit log,
so a restart never repeats one); the answer is the warnings to send now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from ..model import Budget
from .usage import period_start

__all__ = ["DEFAULT_THRESHOLDS", "BudgetAlert", "budget_alerts"]

DEFAULT_THRESHOLDS = (80, 100)
"""Percent of a budget at which a warning event is sent."""


@dataclass(frozen=True, slots=True)
class BudgetAlert:
    """``used_gpu_hours`` of ``budget_gpu_hours`` (``percent``) crossed ``threshold`` % this period.

    ``key`` identifies the warning for de-duplication: ``team|user|period start|threshold``.
    """

    team: str
    user: str | None
    period: str
    period_start: datetime
    threshold: int
    used_gpu_hours: float
    budget_gpu_hours: float
    percent: float

    @property
    def key(self) -> str:
        return f"{self.team}|{self.user or ''}|{self.period_start.isoformat()}|{self.threshold}"

    def to_dict(self) -> dict[str, object]:
        """Event / audit payload (GPU-hours, percent)."""
        return {"team": self.team, "user": self.user, "period": self.period,
                "period_start": self.period_start.isoformat(), "threshold_percent": self.threshold,
                "used_gpu_hours": round(self.used_gpu_hours, 6), "budget_gpu_hours": self.budget_gpu_hours,
                "percent": round(self.percent, 3), "key": self.key}


def budget_alerts(
    budgets: Iterable[Budget],
    used: Mapping[tuple[str, str | None], float],
    *,
    now: datetime,
    already_sent: Iterable[str] = (),
    thresholds: Iterable[int] = DEFAULT_THRESHOLDS,
) -> list[BudgetAlert]:
    """Warnings to send now: for each budget, the highest threshold reached this period that was
    not sent yet (a budget that jumps from 50 % to 120 % sends only the 100 % warning, and marks
    nothing else). A budget of 0 GPU-hours counts as 100 % used once any usage exists.

    Args:
        budgets: the quota set's budgets.
        used: GPU-hours used this period keyed ``(team, user or None)``.
        now: the time (its period is the one checked).
        already_sent: ``BudgetAlert.key`` values sent before.
        thresholds: percents to warn at (default 80 and 100).
    """
    sent = set(already_sent)
    levels = sorted(set(thresholds), reverse=True)
    out = []
    for budget in budgets:
        hours = float(used.get((budget.team, budget.user), 0.0))
        if budget.gpu_hours > 0:
            percent = 100.0 * hours / budget.gpu_hours
        else:
            percent = 100.0 if hours > 0 else 0.0
        start = period_start(now, budget.period)
        for level in levels:
            if percent >= level:
                alert = BudgetAlert(team=budget.team, user=budget.user, period=budget.period, period_start=start,
                                    threshold=level, used_gpu_hours=hours, budget_gpu_hours=budget.gpu_hours,
                                    percent=percent)
                if alert.key not in sent:
                    out.append(alert)
                break
    return out
