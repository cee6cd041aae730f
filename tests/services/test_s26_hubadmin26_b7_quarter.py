"""hubadmin26 B7: a GPU-hour budget per calendar quarter (UTC: Jan 1, Apr 1, Jul 1, Oct 1), as
Slurm's ``PriorityUsageResetPeriod=QUARTERLY``. Before: ``PUT quotas {"budgets": [{…, "period":
"quarter"}]}`` was a 400 ("must be 'day', 'week' or 'month'") and ``usage`` had no ``--quarter``.

Real parts: the periods' arithmetic, ``build_services`` on a SQLite store (its quotas and accounting
services: the REST handlers' one call), the request models' refusal words, the CLI's window."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jupyter_sched.cli.admin_views import _quarter, usage_window
from jupyter_sched.errors import ValidationError
from jupyter_sched.model.periods import next_period_start, period_start
from jupyter_sched.services import build_services
from jupyter_sched.services.models import GetUsageReportRequest, SetQuotasRequest, parse

UTC = timezone.utc


@pytest.mark.parametrize(("now", "start", "reset"), [
    (datetime(2026, 12, 5, 19, 45, tzinfo=UTC), datetime(2026, 10, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
    (datetime(2026, 1, 1, 0, 0, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC)),
    (datetime(2026, 6, 30, 23, 59, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)),
    # 00:30 on Jul 1 at +02:00 is still June 30 in UTC: the second quarter
    (datetime(2026, 7, 1, 0, 30, tzinfo=timezone(timedelta(hours=2))), datetime(2026, 4, 1, tzinfo=UTC),
     datetime(2026, 7, 1, tzinfo=UTC)),
])
def test_s26_hubadmin26_b7_a_quarter_is_a_calendar_quarter_in_utc(now: datetime, start: datetime, reset: datetime) -> None:
    assert period_start(now, "quarter") == start
    assert next_period_start(now, "quarter") == reset
    assert next_period_start(datetime(2026, 12, 15, tzinfo=UTC), "month") == datetime(2027, 1, 1, tzinfo=UTC)


def test_s26_hubadmin26_b7_a_quarter_budget_is_set_counted_from_the_quarters_start_and_resets_at_its_end(
        tmp_path: Path) -> None:
    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"})
    try:
        now = datetime.now(UTC)
        start = period_start(now, "quarter")
        with services.store.transaction(now=now) as tx:  # one GPU-hour before the quarter, one in it
            for job_id, began in (("j-before", start - timedelta(hours=2)), ("j-in", start)):
                tx.open_usage(job_id=job_id, attempt=1, user="ha26", team="nlp", kind="training",
                              gpus=[("GPU-0", "A100", 1.0)], started_at=began)
                tx.close_usage(job_id, min(began + timedelta(hours=1), now))
        boss = services.caller("boss", admin=True)
        body = {"quotas": [{"team": "nlp", "guaranteed": 1, "borrowing_limit": 0}],
                "budgets": [{"team": "nlp", "gpu_hours": 900, "period": "quarter"}]}
        services.quotas.set(boss, SetQuotasRequest.model_validate(body))
        (budget,) = services.quotas.get(boss).to_wire()["budgets"]
        assert budget["period"] == "quarter", budget
        me = services.accounting.me(services.caller("ha26", admin=False, groups=["nlp"])).to_wire()
        (mine,) = me["budgets"]
        assert mine["resets_at"] == f"{next_period_start(now, 'quarter'):%Y-%m-%dT%H:%M:%S}Z", mine
        in_quarter = min(now - start, timedelta(hours=1)).total_seconds() / 3600
        assert mine["used_gpu_hours"] == pytest.approx(in_quarter, abs=0.01), mine  # the hour before is not counted
        report = services.accounting.report(boss, GetUsageReportRequest(  # type: ignore[call-arg]
            by="period", period="quarter", all=True, since=f"{start - timedelta(days=1):%Y-%m-%dT%H:%M:%S}Z"))
        rows = report.to_wire()
        assert [r["period"][:10] for r in rows] == [f"{period_start(start - timedelta(days=1), 'quarter'):%Y-%m-%d}",
                                                     f"{start:%Y-%m-%d}"], rows
    finally:
        services.store.close()


def test_s26_hubadmin26_b7_a_wrong_period_names_quarter_among_the_choices() -> None:
    with pytest.raises(ValidationError) as caught:
        parse(SetQuotasRequest, {"budgets": [{"team": "nlp", "gpu_hours": 900, "period": "year"}]})
    assert "'day', 'week', 'month' or 'quarter'" in str(caught.value), str(caught.value)
    assert caught.value.field == "budgets[0].period"


def test_s26_hubadmin26_b7_usage_quarter_is_the_whole_quarter_alone() -> None:
    assert _quarter("2026Q4") == ("2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z")
    assert _quarter("2027-q1") == ("2027-01-01T00:00:00Z", "2027-04-01T00:00:00Z")
    with pytest.raises(argparse.ArgumentTypeError, match=r"write YYYYQN, e\.g\. 2026Q4"):
        _quarter("2026Q5")
    args = argparse.Namespace(since=None, until=None, month=None, quarter=_quarter("2026Q3"))
    assert usage_window(args, datetime(2026, 12, 5, tzinfo=UTC)) == ("2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z")
    current = argparse.Namespace(since=None, until=None, month=None, quarter=_quarter("2026Q4"))
    assert usage_window(current, datetime(2026, 12, 5, tzinfo=UTC)) == ("2026-10-01T00:00:00Z", None)  # ends now
    both = argparse.Namespace(since="2026-10-01T00:00:00Z", until=None, month=None, quarter=_quarter("2026Q4"))
    with pytest.raises(ValueError, match="--quarter is a whole quarter by itself"):
        usage_window(both, datetime(2026, 12, 5, tzinfo=UTC))
