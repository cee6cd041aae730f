"""Accounting (feedback layer): allocated GPU-seconds per job interval, rolled up by user, team, model."""

from .usage import (
    ROLLUP_KEYS,
    UsageInterval,
    budget_usage,
    decayed_gpu_seconds,
    gpu_seconds,
    period_start,
    rollup,
)

__all__ = ["ROLLUP_KEYS", "UsageInterval", "budget_usage", "decayed_gpu_seconds", "gpu_seconds",
           "period_start", "rollup"]
