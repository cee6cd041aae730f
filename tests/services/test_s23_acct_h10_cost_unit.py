"""hubadmin22 H10 (the part left in session 22): the usage report's ``cost`` was a bare number — its unit
was only in the field's description, the trait help and the CLI's footnote, never in the answer or the
CSV an admin hands on. Now every row says ``cost_unit`` (``c.HubSchedApp.gpu_price_unit``, e.g. EUR;
"price units" when the admin named none, with a start-up WARNING; null when nothing is priced), the CSV
has a ``cost_unit`` column beside ``cost``, and ``jupyter-sched usage`` says the server's unit.

Real parts: ``build_services`` on a SQLite store (what ``jupyter-sched serve`` builds), its accounting
service and CSV writer; the HubSchedApp trait; the CLI's ``usage`` over a client double at the wire
(``call(Req) -> JSON``).
"""

from __future__ import annotations

import argparse
import io
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from traitlets import TraitError

from jupyter_sched.cli.admin_views import usage
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.services import build_services
from jupyter_sched.services.models import GetUsageReportRequest


def _served(tmp_path: Path, **settings: Any) -> Any:
    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off",
                               **settings})
    start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=3)
    with services.store.transaction(now=start) as tx:
        tx.open_usage(job_id="j-1", attempt=1, user="ana", team="ml", kind="training",
                      gpus=[("GPU-0", "A100", 1.0)], started_at=start)
        tx.close_usage("j-1", start + timedelta(hours=2))
    return services


def _report(services: Any, fmt: str = "json") -> Any:
    boss = services.caller("boss", admin=True)
    request = GetUsageReportRequest(all=True, by="team", format=fmt)  # type: ignore[call-arg]
    rows = services.accounting.report(boss, request)
    return services.accounting.report_csv(rows, request) if fmt == "csv" else rows.to_wire()


def test_s23_acct_h10_each_cost_says_its_unit_in_the_answer_and_the_csv(tmp_path: Path) -> None:
    """Failed before: the rows had no ``cost_unit`` (and ``build_services`` took no unit)."""
    services = _served(tmp_path, gpu_prices={"*": 2.5}, gpu_price_unit="EUR")
    try:
        (row,) = _report(services)
        assert (row["team"], row["cost"], row["cost_unit"]) == ("ml", 5.0, "EUR"), row
        header, line = _report(services, "csv").splitlines()
        cells = dict(zip(header.split(","), line.split(","), strict=True))
        assert header.split(",").index("cost_unit") == header.split(",").index("cost") + 1, header
        assert (cells["cost"], cells["cost_unit"]) == ("5.0", "EUR"), cells
    finally:
        services.store.close()


def test_s23_acct_h10_prices_without_a_unit_say_price_units_and_warn_at_start(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="jupyter_sched"):
        services = _served(tmp_path, gpu_prices={"*": 2.5})
    try:
        (row,) = _report(services)
        assert (row["cost"], row["cost_unit"]) == (5.0, "price units"), row
    finally:
        services.store.close()
    said = [r.getMessage() for r in caplog.records if "gpu_price_unit" in r.getMessage()]
    assert said and 'c.HubSchedApp.gpu_price_unit = "USD"' in said[0], said
    (tmp_path / "free").mkdir()
    unpriced = _served(tmp_path / "free")
    try:
        (row,) = _report(unpriced)
        assert (row["cost"], row["cost_unit"]) == (None, None), row  # nothing priced: no unit to say
    finally:
        unpriced.store.close()


@pytest.mark.parametrize("bad", ["US\n$", "x" * 25])
def test_s23_acct_h10_a_unit_that_cannot_be_one_cell_is_refused_naming_the_setting(bad: str) -> None:
    with pytest.raises(TraitError, match=r"c\.HubSchedApp\.gpu_price_unit: .*Fix: name the currency"):
        HubSchedApp(gpu_price_unit=bad)
    assert HubSchedApp(gpu_price_unit="  CHF ").gpu_price_unit == "CHF"


class _Wire:
    """The server's JSON answers, as ``client.call`` returns them."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def config(self) -> dict[str, Any]:
        return {"features": {"hub": True}}  # a hub's answer (its prices are c.HubSchedApp's)

    def pages(self, req: Any) -> Any:  # the report is one page here (SchedClient.pages follows Link: red30 R8)
        yield self.call(req)

    def call(self, req: Any) -> Any:
        if req.path == "me":
            return {"user": "boss", "is_admin": True}
        return self.rows


def test_s23_acct_h10_the_cli_says_the_servers_unit() -> None:
    """Failed before: the CLI said its fixed "price units of c.HubSchedApp.gpu_prices" whatever the server priced in."""
    out = io.StringIO()
    rows = [{"team": "ml", "allocated_gpu_hours": 2.0, "utilized_gpu_hours": None, "efficiency": None,
             "cost": 5.0, "cost_unit": "EUR", "jobs": 1}]
    args = argparse.Namespace(by="team", since=None, csv=False, json=False)
    assert usage(_Wire(rows), args, SimpleNamespace(out=out, err=io.StringIO())) == 0
    assert "COST in EUR" in out.getvalue() and "price units" not in out.getvalue(), out.getvalue()
    out = io.StringIO()
    usage(_Wire([{**rows[0], "cost": None, "cost_unit": None}]), args, SimpleNamespace(out=out, err=io.StringIO()))
    assert "COST: none, no prices are set (c.HubSchedApp.gpu_prices)" in out.getvalue(), out.getvalue()
