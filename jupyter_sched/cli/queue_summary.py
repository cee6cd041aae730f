"""``jupyter-sched queue --summary``: who holds what now, one line per team (hubadmin23 A12: at twenty
users the admin counted rows of a 77-line ``queue --all`` to answer "which team holds what, what is
borrowed, how many wait").

Two reads: the whole queue (``GET queue``, paged) and the quota set (``GET quotas``). Per team: GPUs
running (admitted or running work) against the team's guarantee and its borrowing limit above it (its
team lines, any user, summed over GPU models), the part over the guarantee (borrowed), pending jobs and
the GPUs they ask for, and how long the longest-waiting one has waited. ``--user``/``--team`` narrow
the rows the same way ``queue`` does. Under the table, for an admin, every budget's standing (GET quotas'
``budget_standings``: used, left, reset, what running work may still use, what a new job may use;
hubadmin25 B16).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from ..client._wire import Req
from ..model.team_load import HOLDING, job_gpus, team_rows

__all__ = ["HOLDING", "budget_held", "job_gpus", "summary", "team_rows"]


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
        from .team_names import unknown_team

        unknown = unknown_team(client, getattr(args, "team", None), quotas=quotas, rows=rows)
        if unknown:  # a mistyped team is no team with nothing to do (hubadmin25 B14)
            print(f"jupyter-sched queue: --team: {unknown} [usage_error]", file=io.err)
            return 2
        print("No team has work pending or running, and no team has a quota line." if picked is None and not mine
              else "No team has work pending or running that matches.", file=io.out)
        return 0
    table = [["TEAM", "RUNNING", "GUARANTEE", "LIMIT", "BORROWED", "PENDING", "PENDING GPUS", "OLDEST WAIT"]]
    for t in teams:
        limit = "none" if t["unlimited"] else ("-" if t["limit"] is None else f"+{t['limit']:g}")
        table.append([t["team"], f"{t['running']:g}", "-" if t["guaranteed"] is None else f"{t['guaranteed']:g}",
                      # no quota line: nothing guaranteed, so nothing is borrowed from anyone — a newcomer
                      # read "BORROWED 4" as a debt (newuser30 n17)
                      limit, "-" if t["guaranteed"] is None else f"{t['borrowed']:g}",
                      str(t["pending"]), f"{t['pending_gpus']:g}",
                      "-" if t["oldest_wait_s"] is None else format_duration(t["oldest_wait_s"])])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(r)).rstrip(), file=io.out)
    for t in teams:  # one count per thing, as admission counts it; said where it is not the asks' sum (newuser39 n7)
        if t["shares_rest"] > 0:
            print(f"{t['team']}: RUNNING {t['running']:g} counts GPUs only its shares hold whole, as its quota line "
                  f"does ({t['shares_rest']:g} GPU of it their unused rest; its work asks "
                  f"{t['running'] - t['shares_rest']:g})", file=io.out)
    for line in budget_held(rows, now):  # a spent budget, not the GPUs, holds them (hubadmin24 B8 addendum)
        print(line, file=io.out)
    standings = quotas.get("budget_standings") if isinstance(quotas, Mapping) else None
    shown = [b for b in standings or () if isinstance(b, Mapping) and (picked is None or not getattr(args, "team", None)
                                                                       or b.get("team") == args.team)]
    if shown:  # an admin's answer: every budget's standing (hubadmin25 B16)
        print("Budgets now:", file=io.out)
        from ..wording.budgets import standing_text

        for budget in shown:  # in the reader's zone and words, as `status` says a budget (newuser30 n11)
            print(f"  {standing_text(budget, now) or budget.get('text')}", file=io.out)
    print("GPUs now: RUNNING held by admitted and running work (a GPU only a team's shares hold counts whole); GUARANTEE the team's quota lines (- none); LIMIT "
          "what it may borrow above it (none: no limit); BORROWED running over the guarantee (- no quota line); PENDING jobs "
          "waiting and the GPUs they ask; OLDEST WAIT since the longest-waiting one's submit.", file=io.out)
    return 0


def budget_held(rows: list[Mapping[str, Any]], now: datetime) -> list[str]:
    """One line per team (or user in it) whose pending work a spent GPU-hour budget holds (reason code
    ``BudgetExhausted``): ``nlp: 8 pending jobs held by a spent budget — nlp has spent its GPU-hour budget:
    0.48 of 0.3 GPU-hours this month; they start Jan 1 00:00 UTC at the earliest (when it resets), or when
    an admin raises it`` (hubadmin24 B8: the summary showed idle GPUs and a queue, and not why)."""
    from ..model.periods import said_to_reader
    from ..model.units import clock_text
    from ..wording.reasons import wire_time

    held: dict[str, tuple[int, str, Any]] = {}
    for row in rows:
        reason = row.get("reason")
        if row.get("state") != "pending" or not isinstance(reason, Mapping) or reason.get("code") != "BudgetExhausted":
            continue
        message = str(reason.get("message") or "")
        count, _, eta = held.get(message, (0, "", None))
        held[message] = (count + 1, str(row.get("team") or "-"), eta or reason.get("eta"))
    out = []
    for message, (count, team, eta) in sorted(held.items(), key=lambda kv: kv[1][1]):
        when = wire_time(eta)
        start = (f"they start {clock_text(when, now)} at the earliest (when it resets)" if when is not None
                 else "they start when it resets")
        # budget_admission "safe" holds work a budget not spent yet cannot cover (hubadmin25 B22)
        by = "a spent budget" if " has spent " in message else "what its budget has left"
        said = said_to_reader(message, now)  # "today" on UTC (newuser30 n11), its clocks in the reader's zone (n30)
        out.append(f"{team}: {count} pending job{'s' if count != 1 else ''} held by {by} — {said}; "
                   f"{start}, or when an admin raises it")
    return out

