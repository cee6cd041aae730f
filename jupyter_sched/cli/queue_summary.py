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
from ..model.team_load import HOLDING, job_gpus, team_rows

__all__ = ["HOLDING", "job_gpus", "summary", "team_rows"]


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
