"""Accounting rules: inconsistent records are errors, telemetry gaps are unknown, budgets warn once.

Pure functions over builders, and the budget watcher over a real store (SQLite).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.accounting import (
    AccountingError,
    BudgetAlert,
    UsageInterval,
    UtilizationSample,
    budget_alerts,
    price_for,
    usage_report,
)
from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.budgets import BUDGET_ACTION, warn_budgets
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Budget
from jupyter_sched.store import Store, sqlite_url

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)


def iv(job: str = "j-1", *, gpu: str = "GPU-0", start_h: float = 0, end_h: float | None = 1, share: float = 1.0,
       attempt: int = 1, user: str = "ana", team: str = "ml", model: str = "A100") -> UsageInterval:
    return UsageInterval(job_id=job, attempt=attempt, user=user, team=team, kind="training", gpu_uuid=gpu,
                         gpu_model=model, share=share, started_at=T0 + start_h * H,
                         ended_at=None if end_h is None else T0 + end_h * H)


@pytest.mark.parametrize(
    "records, match",
    [
        pytest.param([iv(start_h=1, end_h=0.5)], "before it starts", id="an interval ending before it starts"),
        pytest.param([iv(start_h=5, end_h=None)], "in the future", id="an interval starting after the report time"),
        pytest.param([iv(share=0)], "share 0", id="a zero share"),
        pytest.param([iv(share=1.5)], "share 1.5", id="a share above one GPU"),
        pytest.param([replace(iv(), started_at=datetime(2026, 11, 29, 12))], "no UTC offset",
                     id="a naive timestamp"),
    ],
)
def test_inconsistent_usage_records_are_errors_not_zeros(records: list[UsageInterval], match: str) -> None:
    with pytest.raises(AccountingError, match=match):
        usage_report(records, now=T0 + 4 * H)


@pytest.mark.parametrize(
    "records, want_hours",
    [
        pytest.param([iv(), iv()], 1.0, id="the same job attempt and GPU twice"),
        pytest.param([iv(attempt=1, end_h=2), iv(attempt=2, start_h=1, end_h=3)], 3.0,
                     id="two attempts of one job overlapping on one GPU"),
        pytest.param([iv("j-1", end_h=2), iv("j-2", start_h=1, end_h=3)], 3.0, id="two whole jobs on one GPU at once"),
    ],
)
def test_hubadmin25_b7_overlapping_records_are_counted_once_and_warned(records: list[UsageInterval],
                                                                        want_hours: float) -> None:
    # hubadmin25 B7: they failed the whole report; now the GPU's time counts once and the row says so
    (row,) = usage_report(records, now=T0 + 4 * H, by=("team",))
    assert row["allocated_gpu_hours"] == want_hours
    assert row["warnings"] and all("counted once" in w for w in row["warnings"])


def test_back_to_back_attempts_and_shared_halves_are_consistent() -> None:
    rows = usage_report([iv(attempt=1, end_h=1), iv(attempt=2, start_h=1, end_h=2),
                         iv("j-2", gpu="GPU-1", share=0.5), iv("j-3", gpu="GPU-1", share=0.5, user="bob")],
                        now=T0 + 3 * H, by=("user",))
    assert [(r["user"], r["allocated_gpu_hours"], r["jobs"]) for r in rows] == [("ana", 2.5, 2), ("bob", 0.5, 1)]


def test_a_bad_utilization_sample_is_an_error() -> None:
    with pytest.raises(AccountingError, match="101 %"):
        usage_report([iv()], [UtilizationSample("GPU-0", T0, 101)], now=T0 + 2 * H)


def test_samples_hold_until_the_next_sample_or_the_gap_limit() -> None:
    samples = [UtilizationSample("GPU-0", T0, 100), UtilizationSample("GPU-0", T0 + 0.25 * H, 0)]
    row = usage_report([iv()], samples, now=T0 + 2 * H, max_sample_gap_s=1800)[0]
    # 100 % for 15 min, 0 % for 30 min (gap limit), unknown for the last 15 min
    assert (row["utilized_gpu_seconds"], row["telemetry_coverage"], row["efficiency"]) == (900.0, 0.75, 0.333333)


@pytest.mark.parametrize(
    "prices, want",
    [
        pytest.param({"A100": 2.5}, 2.5, id="the model's own price"),
        pytest.param({"*": 1.0}, 1.0, id="the default price for unlisted models"),
    ],
)
def test_prices_per_gpu_hour(prices: dict[str, float], want: float) -> None:
    assert price_for("A100", prices) == want


def test_a_model_without_a_price_is_unknown_not_free() -> None:
    # hubadmin26 B21: no failure of the whole report either (a node of a new model added before its price)
    (row,) = usage_report([iv(model="H100")], now=T0 + 2 * H, prices={"A100": 2.0})
    assert row["cost"] is None and "no price per GPU-hour for GPU model 'H100'" in row["warnings"][0], row


@pytest.mark.parametrize("kwargs, field", [
    pytest.param({"by": ("color",)}, "by", id="an unknown grouping"),
    pytest.param({"by": ("period",), "period": "year"}, "period", id="an unknown period"),
    pytest.param({"since": T0 + H, "until": T0}, "until", id="a window ending before it starts"),
])
def test_bad_report_arguments_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        usage_report([iv()], now=T0 + 2 * H, **kwargs)
    assert err.value.field == field


def test_period_rollup_splits_an_interval_at_the_day_boundary() -> None:
    late = iv(start_h=11, end_h=13)  # 23:00 -> 01:00 next day
    rows = usage_report([late], now=T0 + 14 * H, by=("period",), period="day")
    assert [(r["period"], r["allocated_gpu_hours"]) for r in rows] == [
        ("2026-11-29T00:00:00+00:00", 1.0), ("2026-11-30T00:00:00+00:00", 1.0)]


@pytest.mark.parametrize(
    "used, sent, want",
    [
        pytest.param(7.9, (), [], id="below 80 percent nothing is sent"),
        pytest.param(8.0, (), [80], id="at 80 percent the first warning"),
        pytest.param(9.0, ("ml||2026-11-01T00:00:00+00:00|80",), [], id="the 80 percent warning is sent once"),
        pytest.param(12.0, (), [100], id="a jump past 100 percent sends only the 100 percent warning"),
    ],
)
def test_budget_alerts(used: float, sent: tuple[str, ...], want: list[int]) -> None:
    budget = Budget(team="ml", gpu_hours=10, period="month")
    alerts = budget_alerts([budget], {("ml", None): used}, now=T0, already_sent=sent)
    assert [a.threshold for a in alerts] == want
    assert all(isinstance(a, BudgetAlert) and a.budget_gpu_hours == 10 for a in alerts)


def test_budget_warnings_are_audited_published_and_never_repeated_after_a_restart(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "sched.sqlite")
    clock = ManualClock(T0 + 3 * H)

    def make() -> SchedulerService:
        return SchedulerService(store=Store(url), inventory=SimulatedInventory(2, node="n1"),
                                executor=LocalExecutor(tmp_path / "jobs"), clock=clock)

    svc = make()
    svc.set_quotas({"budgets": [{"team": "ml", "gpu_hours": 2, "period": "month"}],
                    "user_teams": {"ana": "ml"}}, actor="admin")
    with svc.store.transaction(now=T0) as tx:  # ana held 2 GPUs for 0:48 -> 1.6 GPU-hours = 80 %
        tx.open_usage(job_id="j-1", attempt=1, user="ana", team="ml", kind="training",
                      gpus=[("GPU-0", "A100", 1.0), ("GPU-1", "A100", 1.0)], started_at=T0)
        tx.close_usage("j-1", T0 + timedelta(minutes=48))
    sent = warn_budgets(svc)
    assert [(w["threshold_percent"], w["used_gpu_hours"], w["budget_gpu_hours"]) for w in sent] == [(80, 1.6, 2.0)]
    assert warn_budgets(svc) == []
    svc.store.close()
    again = make()
    assert warn_budgets(again) == []  # the audit log remembers across restarts
    audited = again.audit(action=BUDGET_ACTION)
    assert len(audited) == 1 and "1.60 of 2 GPU-hours" in audited[0]["message"]
    again.store.close()


def test_the_report_of_a_service_keeps_the_usage_shape_and_filters_by_user(tmp_path: Path) -> None:
    from jupyter_sched.hub.usage import usage_report_for

    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0 + 2 * H))
    with svc.store.transaction(now=T0) as tx:
        for job, user, gpu in (("j-1", "ana", "GPU-0"), ("j-2", "bob", "GPU-1")):
            tx.open_usage(job_id=job, attempt=1, user=user, team="ml", kind="training",
                          gpus=[(gpu, "A100", 1.0)], started_at=T0)
            tx.close_usage(job, T0 + H)
    rows = usage_report_for(svc, user="ana", by=("user",), prices={"*": 3.0})
    assert rows == [{"user": "ana", "allocated_gpu_seconds": 3600.0, "allocated_gpu_hours": 1.0,
                     "utilized_gpu_seconds": None, "utilized_gpu_hours": None, "telemetry_coverage": 0.0,
                     "efficiency": None, "cost": 3.0, "cost_unit": "price units", "jobs": 1, "gpu_seconds": 3600.0, "gpu_hours": 1.0,
                     "telemetry_pending": False, "since": None, "until": "2026-11-29T14:00:00Z"}]  # its period (s23)
    assert [r["team"] for r in usage_report_for(svc, user=None, by=("team",))] == ["ml"]
    with pytest.raises(ValidationError):
        usage_report_for(svc, user=None, since="yesterday")
    svc.store.close()
