"""Accounting (feedback layer): allocated GPU-seconds per job interval, rolled up by user, team, model;
reports with utilization, cost and efficiency (:mod:`.report`); budget warnings (:mod:`.alerts`)."""

from .alerts import DEFAULT_THRESHOLDS, BudgetAlert, budget_alerts
from .report import (
    REPORT_KEYS,
    ROLLUP_SECONDS,
    AccountingError,
    UtilizationSample,
    check_intervals,
    price_for,
    report_csv,
    samples_from_rollups,
    usage_report,
)
from .usage import (
    ROLLUP_KEYS,
    UsageInterval,
    budget_usage,
    decayed_gpu_seconds,
    gpu_seconds,
    period_start,
    rollup,
)

__all__ = ["DEFAULT_THRESHOLDS", "REPORT_KEYS", "ROLLUP_KEYS", "ROLLUP_SECONDS", "AccountingError", "BudgetAlert", "UsageInterval",
           "UtilizationSample", "budget_alerts", "budget_usage", "check_intervals", "decayed_gpu_seconds", "gpu_seconds",
           "period_start", "price_for", "report_csv", "rollup", "samples_from_rollups", "usage_report"]
