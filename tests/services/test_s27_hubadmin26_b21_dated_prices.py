"""hubadmin26 B21: prices had no dates — raising the H100 price on Dec 1 re-priced October and November in every
later report (a quarter's chargeback not reproducible) — and a model without a price failed every report over its
use (a node of a new model added to the inventory) until the config was edited and the service restarted.

Now ``c.HubSchedApp.gpu_prices`` takes ``[from, price]`` pairs and each piece of usage is priced at the price in
force then; usage with no price in force has an unknown cost, said on its row. Real parts: ``build_services`` on
a SQLite store, its accounting service; the HubSchedApp trait."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.accounting import UsageInterval, usage_report
from jupyter_sched.accounting.prices import price_table
from jupyter_sched.errors import ValidationError
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.services import build_services
from tests.services.test_s23_acct_h10_cost_unit import _report, _served

D = timedelta(days=1)
DEC1 = datetime(2026, 12, 1, tzinfo=timezone.utc)


def _iv(model: str, start: datetime, end: datetime, job: str = "j-1") -> UsageInterval:
    return UsageInterval(job_id=job, attempt=1, user="ana", team="ml", kind="training", gpu_uuid=f"GPU-{job}",
                         gpu_model=model, share=1.0, started_at=start, ended_at=end)


def test_hubadmin26_b21_a_price_change_does_not_reprice_the_past() -> None:
    prices = {"H100": [[None, 4.0], ["2026-12-01", 5.0]]}
    rows = [_iv("H100", DEC1 - 10 * D, DEC1 + 5 * D)]
    (row,) = usage_report(rows, now=DEC1 + 20 * D, by=("team",), prices=prices)
    assert row["cost"] == pytest.approx(10 * 24 * 4.0 + 5 * 24 * 5.0), row
    (november,) = usage_report(rows, now=DEC1 + 20 * D, by=("team",), since=DEC1 - 30 * D, until=DEC1, prices=prices)
    assert november["cost"] == pytest.approx(10 * 24 * 4.0), november  # what it cost before the change, still


def test_hubadmin26_b21_a_model_without_a_price_is_unknown_not_a_failure_nor_free() -> None:
    rows = [_iv("A100", DEC1, DEC1 + D, "a"), _iv("H200", DEC1, DEC1 + D / 2, "b")]
    by_model = usage_report(rows, now=DEC1 + 2 * D, by=("gpu_model",), prices={"A100": 2.0}, cost_unit="USD")
    assert [(r["gpu_model"], r["cost"]) for r in by_model] == [("A100", 48.0), ("H200", None)], by_model
    assert by_model[1]["warnings"] == [
        "no price per GPU-hour for GPU model 'H200' was in force for 12.000 of these GPU-hours: cost unknown — add it "
        'to c.HubSchedApp.gpu_prices (a number, or [[from, price], ...] to date it), or a default "*"'], by_model
    (team,) = usage_report(rows, now=DEC1 + 2 * D, by=("team",), prices={"A100": 2.0})
    assert team["cost"] is None and "'H200'" in team["warnings"][0], team  # a sum with an unknown part is unknown
    # a model's own schedule from its first date; "*" before it
    (dated,) = usage_report([_iv("H200", DEC1 - D, DEC1 + D)], now=DEC1 + 2 * D, by=("team",),
                            prices={"H200": [["2026-12-01", 6.0]], "*": 1.0})
    assert dated["cost"] == pytest.approx(24 * 1.0 + 24 * 6.0), dated


@pytest.mark.parametrize("prices, field", [
    pytest.param({"H100": [["Dec 1", 5.0]]}, "gpu_prices[H100]", id="a from that is no date"),
    pytest.param({"H100": -1.0}, "gpu_prices[H100]", id="a negative price"),
    pytest.param({"H100": [["2026-12-01", 5.0], ["2026-12-01", 6.0]]}, "gpu_prices[H100]", id="two prices, one date"),
    pytest.param({"H100": [5.0]}, "gpu_prices[H100]", id="not a pair"),
])
def test_hubadmin26_b21_malformed_prices_are_refused_naming_the_model(prices: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        price_table(prices)
    assert err.value.field == field


def test_hubadmin26_b21_the_service_takes_dated_prices_and_refuses_bad_ones_at_start(tmp_path: Path) -> None:
    HubSchedApp(gpu_prices={"H100": [[None, 4.0], ["2026-12-01", 5.0]], "*": 1.5})  # the trait takes both forms
    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"}
    with pytest.raises(ValidationError) as bad:
        build_services({**settings, "gpu_prices": {"H100": [["soon", 5.0]]}})
    assert bad.value.field == "gpu_prices[H100]"
    services = _served(tmp_path, gpu_prices={"A100": [[None, 2.0], ["2026-12-01", 3.0]]})  # 2 h of A100 just now
    try:
        (row,) = _report(services)
        assert row["cost"] == pytest.approx(6.0), row  # two hours at the price in force now (after Dec 1)
    finally:
        services.store.close()
