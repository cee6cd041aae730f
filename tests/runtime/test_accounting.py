"""GPU-seconds roll-ups (pure functions over allocation intervals)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jupyter_sched.accounting import UsageInterval, budget_usage, decayed_gpu_seconds, gpu_seconds, period_start, rollup
from jupyter_sched.model import Budget
from tests.runtime.builders import T0

H = timedelta(hours=1)


def interval(job: str = "j-1", *, user: str = "ana", team: str = "ml", model: str = "A100", share: float = 1.0,
             start_h: float = 0, end_h: float | None = 1, gpu: str = "GPU-0") -> UsageInterval:
    return UsageInterval(job_id=job, attempt=1, user=user, team=team, kind="training", gpu_uuid=gpu, gpu_model=model,
                         share=share, started_at=T0 + start_h * H, ended_at=None if end_h is None else T0 + end_h * H)


@pytest.mark.parametrize(
    "iv, since_h, until_h, now_h, want_s",
    [
        pytest.param(interval(), None, None, 5, 3600, id="a closed hour on one GPU is 3600 GPU-seconds"),
        pytest.param(interval(share=0.5), None, None, 5, 1800, id="half a shared GPU counts half"),
        pytest.param(interval(end_h=None), None, None, 2, 7200, id="an open interval runs until now"),
        pytest.param(interval(end_h=4), 1, 3, 5, 7200, id="only the part inside the window counts"),
        pytest.param(interval(), 2, None, 5, 0, id="an interval before the window counts nothing"),
    ],
)
def test_gpu_seconds(iv, since_h, until_h, now_h, want_s) -> None:
    since = None if since_h is None else T0 + since_h * H
    until = None if until_h is None else T0 + until_h * H
    assert gpu_seconds(iv, now=T0 + now_h * H, since=since, until=until) == pytest.approx(want_s)


def test_rollup_groups_and_orders_largest_first() -> None:
    rows = rollup([interval("j-1", user="ana"), interval("j-2", user="bob", end_h=3),
                   interval("j-2", user="bob", end_h=3, gpu="GPU-1")], now=T0 + 5 * H, by=("user",))
    assert rows == [{"user": "bob", "gpu_seconds": 21600.0, "gpu_hours": 6.0, "jobs": 1},
                    {"user": "ana", "gpu_seconds": 3600.0, "gpu_hours": 1.0, "jobs": 1}]
    by_model = rollup([interval(model="A100"), interval(model="H100", job="j-2")], now=T0 + 2 * H,
                      by=("team", "gpu_model"))
    assert [(r["team"], r["gpu_model"]) for r in by_model] == [("ml", "A100"), ("ml", "H100")]
    with pytest.raises(ValueError, match="cannot group"):
        rollup([], now=T0, by=("color",))


def test_decayed_usage_halves_after_one_half_life() -> None:
    recent = decayed_gpu_seconds([interval(start_h=0, end_h=0.01)], now=T0 + 0.01 * H, half_life_s=3600)
    old = decayed_gpu_seconds([interval(start_h=0, end_h=0.01)], now=T0 + 1.01 * H, half_life_s=3600)
    assert old["ana"] == pytest.approx(recent["ana"] / 2, rel=1e-6)
    assert recent["ana"] == pytest.approx(36, rel=0.01)


def test_budget_usage_counts_the_current_period_only() -> None:
    now = T0.replace(day=29)  # a Sunday
    last_month = interval(start_h=-30 * 24, end_h=-30 * 24 + 10)
    this_month = interval(job="j-2", start_h=-2, end_h=-1)
    used = budget_usage([last_month, this_month], [Budget(team="ml", gpu_hours=5, period="month")], now=now)
    assert used[("ml", None)] == pytest.approx(1.0)
    assert period_start(now, "week").weekday() == 0
    assert period_start(now, "day") == now.replace(hour=0)
    with pytest.raises(ValueError, match="period"):
        period_start(now, "year")
