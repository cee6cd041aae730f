"""Session 23 (s23-acct): one usage period, said the same way everywhere. Before, ``jupyter-sched status`` said
"the last 7 days" (GET me's ``gpu_hours_7d``), ``jupyter-sched usage`` said "this month" while the routes it
read (``GET usage``, ``GET usage/report``) counted all recorded time when no ``since`` was given, and no
answer said its period. Now the rule is one (``accounting.usage.USAGE_WINDOW``: the 7 days before the answer
unless ``since`` is given), every REST row says ``since``/``until``, GET me says ``gpu_hours_since``, and the
CLI and ``status`` say ``in the last 7 days (since Nov 28 08:40 UTC)`` (the panel: labextension
test/s23_acct_usage.test.ts).

Real parts: ``build_services`` on a SQLite store (wall clock), its accounting service (the REST handlers'
one call), the status wording, the CLI's ``usage`` over a client double at the wire.
"""

from __future__ import annotations

import argparse
import io
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jupyter_sched.accounting.usage import USAGE_WINDOW
from jupyter_sched.cli.admin_views import usage
from jupyter_sched.model import parse_utc
from jupyter_sched.services import build_services
from jupyter_sched.services.models import GetUsageReportRequest, GetUsageRequest
from jupyter_sched.wording.status import status_lines
from jupyter_sched.wording.usage import USAGE_DAYS, last_days

NOW = datetime(2026, 12, 5, 8, 40, tzinfo=timezone.utc)


def test_s23_acct_usage_period_one_rule_on_every_route_and_each_row_says_it(tmp_path: Path) -> None:
    """Failed before: GET usage and GET usage/report without ``since`` counted the 10-day-old job too (3 GPU-hours
    where GET me said 1), and no row said its period."""
    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"})
    try:
        now = datetime.now(timezone.utc)
        with services.store.transaction(now=now) as tx:
            for job, ago, hours in (("j-old", timedelta(days=10), 2), ("j-new", timedelta(days=2), 1)):
                tx.open_usage(job_id=job, attempt=1, user="ana", team="ml", kind="training",
                              gpus=[("GPU-0", "A100", 1.0)], started_at=now - ago)
                tx.close_usage(job, now - ago + timedelta(hours=hours))
        ana = services.caller("ana", admin=False)
        me = services.accounting.me(ana).to_wire()
        (row,) = services.accounting.usage(ana, GetUsageRequest()).to_wire()  # type: ignore[call-arg]
        (report,) = services.accounting.report(ana, GetUsageReportRequest()).to_wire()  # type: ignore[call-arg]
        assert me["gpu_hours_7d"] == row["gpu_hours"] == report["allocated_gpu_hours"] == 1.0, (me, row, report)
        for said in (row, report):
            since, until = parse_utc(said["since"], field="since"), parse_utc(said["until"], field="until")
            assert until - since == USAGE_WINDOW and abs(until - now) < timedelta(minutes=1), said
        assert abs(parse_utc(me["gpu_hours_since"], field="since") - parse_utc(row["since"], field="since")) \
            < timedelta(minutes=1), me
        # a period asked for is the period said; one starting in the future is empty, not an error
        asked = (now - timedelta(days=30)).isoformat()
        (everything,) = services.accounting.usage(ana, GetUsageRequest(since=asked)).to_wire()  # type: ignore[call-arg]
        assert everything["gpu_hours"] == 3.0 and parse_utc(everything["since"], field="since") == \
            parse_utc(asked, field="since"), everything
        later = (now + timedelta(days=1)).isoformat()
        assert services.accounting.report(ana, GetUsageReportRequest(since=later)).to_wire() == []  # type: ignore[call-arg]
    finally:
        services.store.close()


def test_s23_acct_usage_period_status_and_the_cli_say_it_alike() -> None:
    """Failed before: status said "in the last 7 days" with no start, `usage` said "this month"."""
    since, until = "2026-11-28T08:40:00Z", "2026-12-05T08:40:00Z"
    assert USAGE_DAYS * 86400 == USAGE_WINDOW.total_seconds()
    assert last_days(since, NOW) == "in the last 7 days (since Nov 28 08:40 UTC)"
    me = {"user": "ana", "team": "ml", "teams": ["ml"], "gpu_hours_7d": 1.0, "gpu_hours_since": since,
          "in_use": {"gpus": 0, "jobs": 0, "leases": 0}, "quotas": [], "budgets": [], "pending": 0}
    lines = status_lines("http://x/", {"version": "1"}, me, {"gpus": []}, now=NOW)
    assert "usage      1.00 GPU-hour allocated to you in the last 7 days (since Nov 28 08:40 UTC)" in lines, lines

    said = _cli([{"user": "ana", "allocated_gpu_hours": 1.0, "cost": None, "jobs": 1, "since": since, "until": until}])
    assert "everyone's usage, in the last 7 days (since Nov 28 08:40 UTC); GPU-HOURS" in said, said
    assert "this month" not in said
    assert _cli([]) == "no usage recorded: everyone's usage, in the last 7 days (since Nov 28 08:40 UTC)\n"
    assert _cli([], since="2026-12-01T00:00:00Z").startswith("no usage recorded (everyone's usage, Dec 1 00:00 UTC → now")


class _Wire:
    """The server's JSON answers, as ``client.call`` returns them."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def config(self) -> dict[str, Any]:
        return {"features": {"hub": True}}  # GET config as a hub answers it (the footer names its price setting)

    def pages(self, req: Any) -> Any:  # the report is one page here (SchedClient.pages follows Link: red30 R8)
        yield self.call(req)

    def call(self, req: Any) -> Any:
        if req.path == "me":
            return {"user": "boss", "is_admin": True, "gpu_hours_since": "2026-11-28T08:40:00Z"}
        return self.rows


def _cli(rows: list[dict[str, Any]], since: str | None = None) -> str:
    out = io.StringIO()
    args = argparse.Namespace(by="user", since=since, until=None, month=None, csv=False, json=False)
    assert usage(_Wire(rows), args, SimpleNamespace(out=out, err=io.StringIO())) == 0
    return out.getvalue()
