"""``jupyter-sched usage`` and ``jupyter-sched audit``: the usage report and the audit log from a
terminal (hubadmin22 H10: both were REST only, found by reading openapi.yaml).

Each is one request to the existing route, so the server decides who sees what: ``usage`` asks
``GET usage/report`` for everyone's usage when the caller is an admin (``all=true``), else their own;
``audit`` is ``GET audit`` (admins; anyone else gets the server's 403 in words). ``cost`` is said with
its unit, the rows' ``cost_unit`` (``c.HubSchedApp.gpu_price_unit``, e.g. USD; "price units" when the
admin named no currency; a CSV column beside ``cost``), and the figures with their period, the rows'
``since``/``until`` (the last 7 days unless ``--since``, as ``status`` says:
:mod:`jupyter_sched.wording.usage`).

Standard library and :mod:`jupyter_sched.wording` only (the CLI's start-up cost: :mod:`.main`).
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from typing import Any

from ..client._wire import Req, unwrap_list
from ..wording.usage import last_days, usage_period

__all__ = ["COST_UNIT", "add_parsers", "audit", "usage"]

COST_UNIT = "price units of c.HubSchedApp.gpu_prices (price per GPU-hour times allocated GPU-hours)"
"""What ``cost`` counts when the server's rows do not say (``cost_unit`` absent: a server before it)."""

_BY = ("user", "team")


def add_parsers(sub: Any, want: Any) -> list[str]:
    """Add ``usage`` and ``audit`` to the subcommands (those ``want(name)`` accepts); their names."""
    added = []
    if want("usage"):
        usage_p = sub.add_parser(
            "usage", help="GPU-hours used, per user or team, with cost (admins: everyone's; others: their own)",
            description="Allocated and utilized GPU-hours, telemetry coverage, efficiency and cost, from GET "
                        "api/sched/usage/report. Admins see everyone's usage, others their own. cost is "
                        "allocated GPU-hours times c.HubSchedApp.gpu_prices, in c.HubSchedApp.gpu_price_unit "
                        "(said under the table and as the CSV's cost_unit column); empty without prices.")
        usage_p.add_argument("--by", choices=_BY, default="user", help="one row per user (default) or per team")
        usage_p.add_argument("--since", metavar="WHEN",
                             help="from this time, ISO 8601 (e.g. 2026-12-01 or 2026-12-01T00:00:00+00:00); "
                                  "default: the last 7 days, the period `status` says")
        usage_p.add_argument("--csv", action="store_true", help="print the report as CSV (the REST answer's columns)")
        added.append("usage")
    if want("audit"):
        audit_p = sub.add_parser("audit", help="admin: the scheduler's decision log, newest first",
                                 description="The audit log (GET api/sched/audit; admins), newest first.")
        audit_p.add_argument("--action", metavar="A", help="only this action, e.g. refused, admit, owner_removed")
        audit_p.add_argument("--user", metavar="U", help="only rows about this user")
        audit_p.add_argument("--limit", type=_limit, default=50, metavar="N", help="at most N rows (default 50, "
                                                                                    "at most 10000)")
        added.append("audit")
    return added


def _limit(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= 10_000:
        raise argparse.ArgumentTypeError(f"--limit wants a whole number from 1 to 10000 (got {value!r})")
    return number


def usage(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``jupyter-sched usage``: the report as a table (or CSV, or the JSON with ``--json``)."""
    me = client.call(Req("GET", "me"))
    params = {"by": args.by, **({"all": "true"} if me.get("is_admin") else {})}
    if args.since:
        params["since"] = args.since
    if args.csv:
        print(str(client.call(Req("GET", "usage/report", params={**params, "format": "csv"}))).rstrip("\n"),
              file=io.out)
        return 0
    rows = unwrap_list(client.call(Req("GET", "usage/report", params=params)), "usage")
    if getattr(args, "json", False):
        import json

        print(json.dumps({"rows": rows, "cost_unit": _cost_unit(rows)}, indent=2), file=io.out)
        return 0
    whose = "everyone's usage" if me.get("is_admin") else f"{me.get('user')}'s usage"
    now = datetime.now(timezone.utc)
    if not rows:  # no row to carry the period: the default one is GET me's (the server's clock)
        period = f"since {args.since}" if args.since else last_days(me.get("gpu_hours_since"), now)
        print(f"no usage recorded: {whose} {period}", file=io.out)
        return 0
    table = [[args.by.upper(), "GPU-HOURS", "UTILIZED", "EFFICIENCY", "COST", "JOBS"]]
    for row in rows:
        table.append([str(row.get(args.by) or "-"), _num(row.get("allocated_gpu_hours")),
                      _num(row.get("utilized_gpu_hours")), _pct(row.get("efficiency")), _num(row.get("cost")),
                      str(row.get("jobs", ""))])
    _print(table, io)
    unit = _cost_unit(rows)
    period = usage_period(rows[0].get("since"), rows[0].get("until"), now)  # one period for every row
    print(f"{whose} {period}; " + (f"COST in {unit}" if unit else "COST: none, no prices are set "
                                                                 "(c.HubSchedApp.gpu_prices)"), file=io.out)
    return 0


def _cost_unit(rows: list[dict[str, Any]]) -> str | None:
    """The unit the rows' costs are in (their ``cost_unit``; :data:`COST_UNIT` from a server that
    does not say it); None when no row has a cost."""
    if not any(r.get("cost") is not None for r in rows):
        return None
    units = sorted({str(r["cost_unit"]) for r in rows if r.get("cost") is not None and r.get("cost_unit")})
    return ", ".join(units) if units else COST_UNIT


def audit(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``jupyter-sched audit``: the decision log, one line per row (``--json``: the rows)."""
    params = {"limit": str(args.limit)}
    if args.action:
        params["action"] = args.action
    if args.user:
        params["user"] = args.user
    rows = unwrap_list(client.call(Req("GET", "audit", params=params)), "audit")
    if getattr(args, "json", False):
        import json

        print(json.dumps(rows, indent=2), file=io.out)
        return 0
    if not rows:
        print("no audit rows match", file=io.out)
        return 0
    table = [["TIME", "ACTOR", "ACTION", "USER", "JOB", "MESSAGE"]]
    for row in rows:
        table.append([str(row.get("at") or "")[:19].replace("T", " "), str(row.get("actor") or ""),
                      str(row.get("action") or ""), str(row.get("user") or "-"), str(row.get("job_id") or "-"),
                      str(row.get("message") or "")])
    _print(table, io)
    return 0


def _num(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f}"


def _pct(value: Any) -> str:
    return "-" if value is None else f"{float(value) * 100:.0f} %"


def _print(rows: list[list[str]], io: Any) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip(), file=io.out)
