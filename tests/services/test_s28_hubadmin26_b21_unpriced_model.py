"""hubadmin26 B21 (its second wish): a node of a GPU model with no price joins the inventory while
``c.HubSchedApp.gpu_prices`` prices only the models there were — every usage report's cost of its use is
unknown from then on, and nothing said so when it joined. Now the refresh that adds it logs one WARNING naming
the model, its GPUs and the setting to price it, and admins read the same in ``GET inventory``'s warnings
(``jupyter-sched status``: an ``inventory`` line) for as long as it holds."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.accounting.prices import price_table, unpriced_model_warnings
from jupyter_sched.services import build_services
from jupyter_sched.wording.status import status_lines

H100_UNPRICED = ("GPU model 'H100-80GB' (4 GPUs) has no price per GPU-hour in force: the usage report's cost of its "
                 "use is unknown — add it to c.HubSchedApp.gpu_prices (a number, or [[from, price], ...] to date it), "
                 "or a default \"*\"")


def _node(name: str, model: str, n: int) -> dict[str, object]:
    return {"name": name, "gpus": [{"uuid": f"GPU-{name}-{i}", "index": i, "model": model, "memory_mib": 81920}
                                   for i in range(n)]}


def test_hubadmin26_b21_a_new_unpriced_model_is_warned_in_the_log_and_the_admins_inventory(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"nodes": [_node("node-a", "A100-80GB", 2)]}))
    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                "inventory_source": "static", "inventory_file": str(path), "telemetry_source": "off",
                "gpu_prices": {"A100-80GB": 2.0}, "gpu_price_unit": "USD"}
    with caplog.at_level("WARNING", logger="jupyter_sched"):
        service = build_services(settings)
    try:
        admin, ann = service.caller("boss", admin=True), service.caller("ann", admin=False)
        assert service.system.inventory(admin).warnings == []
        path.write_text(json.dumps({"nodes": [_node("node-a", "A100-80GB", 2), _node("node-c", "H100-80GB", 4)]}))
        with caplog.at_level("WARNING", logger="jupyter_sched"):
            for _ in range(2):  # the same inventory again: said once
                service.ctx.inventory_source.invalidate()
                service.ctx.inventory()
        seen = service.system.inventory(admin).warnings
        hidden = service.system.inventory(ann).warnings
    finally:
        service.store.close()
    said = [r.getMessage() for r in caplog.records if "no price per GPU-hour" in r.getMessage()]
    assert said == [f"jupyter_sched: {H100_UNPRICED}"], said
    assert all(r.levelname == "WARNING" for r in caplog.records if "no price per GPU-hour" in r.getMessage())
    assert seen == [H100_UNPRICED] and hidden == [], (seen, hidden)
    lines = status_lines("http://hub", {}, {"user": "boss"}, {"gpus": [], "nodes": [], "warnings": seen})
    assert f"inventory  {H100_UNPRICED}" in lines, lines


@pytest.mark.parametrize(("prices", "said"), [
    ({}, []),  # no prices: no report has a cost, nothing is missing
    ({"A100-80GB": 2.0, "*": 1.0}, []),  # the default prices it
    ({"A100-80GB": 2.0, "H100-80GB": [["2026-12-01", 5.0]]}, []),  # its price is in force from Dec 1
    ({"A100-80GB": 2.0, "H100-80GB": [["2027-01-01", 5.0]]}, ["H100-80GB"]),  # not yet in force
    ({"H100-80GB": 5.0}, ["A100-80GB"]),
])
def test_hubadmin26_b21_which_models_have_no_price_in_force(prices: dict[str, Any], said: list[str]) -> None:
    warnings = unpriced_model_warnings(price_table(prices), {"A100-80GB": 2, "H100-80GB": 4},
                                       datetime(2026, 12, 6, tzinfo=timezone.utc))
    assert [w.split("'")[1] for w in warnings] == said, warnings


def test_hubadmin26_b21_a_partly_unpriced_row_says_its_priced_part_and_its_unpriced_hours() -> None:
    """The panel's team totals were partial with no word: a row whose cost is unknown gave nothing to sum. The
    row now says what the priced part cost (a lower bound) and how many GPU-hours had no price."""
    from jupyter_sched.accounting import UsageInterval, usage_report
    from jupyter_sched.services.models import UsageReportRow

    dec1 = datetime(2026, 12, 1, tzinfo=timezone.utc)

    def iv(model: str, hours: float, job: str) -> UsageInterval:
        return UsageInterval(job_id=job, attempt=1, user="ana", team="ml", kind="training", gpu_uuid=f"GPU-{job}",
                             gpu_model=model, share=1.0, started_at=dec1, ended_at=dec1 + timedelta(hours=hours))

    rows = [iv("A100", 10, "a"), iv("H200", 3.25, "b")]
    (team,) = usage_report(rows, now=dec1 + timedelta(days=1), by=("team",), prices={"A100": 2.0}, cost_unit="USD")
    assert (team["cost"], team["priced_cost"], team["unpriced_gpu_hours"]) == (None, 20.0, 3.25), team
    assert {"priced_cost", "unpriced_gpu_hours"} <= set(UsageReportRow.model_fields)  # the REST model carries them
    (priced,) = usage_report(rows[:1], now=dec1 + timedelta(days=1), by=("team",), prices={"A100": 2.0})
    assert priced["cost"] == 20.0 and "priced_cost" not in priced and "unpriced_gpu_hours" not in priced, priced


def test_hubadmin26_b21_the_cli_cost_of_a_partly_unpriced_row_is_a_lower_bound() -> None:
    from jupyter_sched.cli.admin_views import _cost

    assert _cost({"cost": None, "priced_cost": 20.0, "unpriced_gpu_hours": 3.25}) == "≥ 20.000"
    assert _cost({"cost": 12.5}) == "12.500" and _cost({"cost": None}) == "-"
