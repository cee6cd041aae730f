"""``jupyter-sched queue --summary``: who holds what now, one line per team (hubadmin23 A12: at twenty
users the admin counted rows of a 77-line ``queue --all`` to answer "which team holds what, what is
borrowed, how many wait").

Two reads: the whole queue (``GET queue``, paged) and the quota set (``GET quotas``). Per team: GPUs
running (admitted or running work) against the team's guarantee and its borrowing limit above it (its
team lines, any user, summed over GPU models), the part over the guarantee (borrowed), pending jobs and
the GPUs they ask for, and how long the longest-waiting one has waited. ``--user``/``--team`` narrow
the rows the same way ``queue`` does.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from ..client._wire import Req

__all__ = ["job_gpus", "summary", "team_rows"]

HOLDING = ("admitted", "running")


def job_gpus(row: Mapping[str, Any]) -> float:
    """GPUs one queue row holds or asks for: a gang's workers times GPUs each (group by group), a
    fractional GPU as its share (``gpu_milli``/1000)."""
    res = row.get("resources") if isinstance(row.get("resources"), Mapping) else row
    assert isinstance(res, Mapping)
    groups = [g for g in res.get("groups") or () if isinstance(g, Mapping)]
    if groups:
        return float(sum(int(g.get("workers", 1) or 1) * float(g.get("gpus", 0) or 0) for g in groups))
    gpus = float(res.get("gpus", 0) or 0)
    milli = res.get("gpu_milli", 1000) or 1000
    share = milli / 1000 if gpus == 1 and milli < 1000 else 1.0
    return int(res.get("workers", 1) or 1) * gpus * share


def team_rows(queue: list[Mapping[str, Any]], quotas: Mapping[str, Any], now: datetime) -> list[dict[str, Any]]:
    """One dict per team with work in ``queue`` or a team quota line: ``team``, ``running`` (GPUs),
    ``guaranteed`` (GPUs, None without a line), ``limit`` (GPUs above the guarantee; None: no line, or
    unlimited — ``unlimited`` True), ``borrowed`` (GPUs running over the guarantee), ``pending`` (jobs),
    ``pending_gpus``, ``oldest_wait_s`` (seconds, None when nothing waits); sorted by team."""
    teams: dict[str, dict[str, Any]] = {}

    def team(name: str) -> dict[str, Any]:
        return teams.setdefault(name, {"team": name, "running": 0.0, "guaranteed": None, "limit": None,
                                       "unlimited": False, "borrowed": 0.0, "pending": 0, "pending_gpus": 0.0,
                                       "oldest_wait_s": None})

    for line in quotas.get("quotas") or ():
        if not isinstance(line, Mapping) or line.get("user"):
            continue
        entry = team(str(line.get("team")))
        entry["guaranteed"] = (entry["guaranteed"] or 0.0) + float(line.get("guaranteed") or 0)
        if line.get("borrowing_limit") is None:
            entry["unlimited"] = True
        else:
            entry["limit"] = (entry["limit"] or 0.0) + float(line["borrowing_limit"])
    for row in queue:
        entry = team(str(row.get("team") or "-"))
        if row.get("state") in HOLDING:
            entry["running"] += job_gpus(row)
        elif row.get("state") == "pending":
            entry["pending"] += 1
            entry["pending_gpus"] += job_gpus(row)
            try:
                since = datetime.fromisoformat(str(row.get("submitted_at")).replace("Z", "+00:00"))
            except ValueError:
                continue
            waited = max(0.0, (now - since).total_seconds())
            entry["oldest_wait_s"] = max(entry["oldest_wait_s"] or 0.0, waited)
    for entry in teams.values():
        entry["borrowed"] = max(0.0, entry["running"] - (entry["guaranteed"] or 0.0))
        if entry["unlimited"]:
            entry["limit"] = None
    return [teams[name] for name in sorted(teams)]


def summary(client: Any, args: argparse.Namespace, io: Any, picked: Callable[[Any], bool] | None) -> int:
    """``queue --summary``: the table of :func:`team_rows` (``--json``: the rows)."""
    from ..model.units import format_duration

    mine = bool(getattr(args, "mine", False))
    rows = [row for row in client.queue_all() if (picked is None or picked(row)) and (not mine or row.get("mine"))]
    quotas = client.call(Req("GET", "quotas"))
    now = datetime.now(timezone.utc)
    teams = team_rows(rows, quotas if isinstance(quotas, Mapping) else {}, now)
    if picked is not None or mine:  # --team/--user/--mine: only teams with that work
        named = {str(row.get("team") or "-") for row in rows} | ({args.team} if getattr(args, "team", None) else set())
        teams = [t for t in teams if t["team"] in named]
    if getattr(args, "json", False):
        import json

        print(json.dumps(teams, indent=2), file=io.out)
        return 0
    if not teams:
        print("No team has work pending or running, and no team has a quota line.", file=io.out)
        return 0
    table = [["TEAM", "RUNNING", "GUARANTEE", "LIMIT", "BORROWED", "PENDING", "PENDING GPUS", "OLDEST WAIT"]]
    for t in teams:
        limit = "none" if t["unlimited"] else ("-" if t["limit"] is None else f"+{t['limit']:g}")
        table.append([t["team"], f"{t['running']:g}", "-" if t["guaranteed"] is None else f"{t['guaranteed']:g}",
                      limit, f"{t['borrowed']:g}", str(t["pending"]), f"{t['pending_gpus']:g}",
                      "-" if t["oldest_wait_s"] is None else format_duration(t["oldest_wait_s"])])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(r)).rstrip(), file=io.out)
    print("GPUs now: RUNNING held by admitted and running work; GUARANTEE the team's quota lines (- none); LIMIT "
          "what it may borrow above it (none: no limit); BORROWED running over the guarantee; PENDING jobs "
          "waiting and the GPUs they ask; OLDEST WAIT since the longest-waiting one's submit.", file=io.out)
    return 0
