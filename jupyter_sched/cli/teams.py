"""``jupyter-sched teams move TEAM --to NEW``: an admin moves a team's work to another team, after a
hub group rename (hubadmin23 A9; ``POST teams/{team}/move``, :mod:`jupyter_sched.services.team_move`).

It asks the server for the plan first (``dry_run``), prints it — each job and definition, what
changes or why it is left, what the new team would hold against its guarantee and limit — and asks
before moving, as ``cancel --all`` does (``--yes`` skips the question; without a terminal it refuses
rather than guess). Standard library only (the CLI's start-up cost: :mod:`.main`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any
from urllib.parse import quote

from ..client._wire import Req
from ..model.periods import said_to_reader
from .confirm import go_on

__all__ = ["add_parser", "teams"]

_SHOWN = 20
"""Items the plan lists before "… and N more"."""


def add_parser(sub: Any) -> None:
    """Add ``teams`` (``teams move``) to the subcommands."""
    teams_p = sub.add_parser("teams", allow_abbrev=False, help="admin: move a team's work to another team (after a hub group rename)",
                             description="Admins: move a team's work to another team (teams move). Your own team, its "
                                         "quota and what it uses: jupyter-sched status.")
    acts = teams_p.add_subparsers(dest="teams_command", metavar="ACTION")
    acts.required = True
    move = acts.add_parser(
        "move", help="re-charge TEAM's pending and running jobs and definitions to --to",
        description="Re-charge TEAM's pending and running jobs and its definitions to the team --to, those whose "
                    "owners are members of it (the others are listed and left, with why). It shows the plan — per "
                    "job what changes, and what the new team would hold against its guarantee and limit — and asks "
                    "first. GPU-hours already used stay charged to TEAM in usage reports. Admins only; audited "
                    "(team_moved). Example, after the hub group vision was renamed cv: "
                    "jupyter-sched teams move vision --to cv")
    move.add_argument("team", metavar="TEAM", help="the team whose work moves (e.g. the old hub group's name)")
    move.add_argument("--to", required=True, metavar="NEW", help="the team it is charged to from now on")
    move.add_argument("--with-quota", dest="with_quota", action="store_true",
                      help="also move TEAM's quota lines to NEW (refused when NEW has a line already)")
    move.add_argument("--dry-run", dest="dry_run", action="store_true", help="show the plan; change nothing")
    move.add_argument("--yes", action="store_true", help="do not ask")


def teams(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``teams move``: the plan, the question, the move (exit 0; 2 when not confirmed without a terminal)."""
    path = f"teams/{quote(args.team, safe='')}/move"
    body = {"to": args.to, "with_quota": bool(args.with_quota)}
    plan = _call(client, Req("POST", path, body={**body, "dry_run": True}))
    if getattr(args, "json", False) and (args.dry_run or not args.yes):
        print(json.dumps(plan, indent=2), file=io.out)
        if args.dry_run:
            return 0
    elif not args.yes or args.dry_run:
        _show(plan, io)
    if args.dry_run:
        return 0
    if not plan.get("moved") and not plan.get("quota"):
        print(f"nothing to move: none of {args.team}'s work belongs to members of {args.to}", file=io.out)
        return 0
    question = f"Move {plan.get('moved')} job(s)/definition(s) of {args.team} to {args.to}?"
    if not args.yes and (code := go_on(io, "teams move", question, declined="nothing moved")) is not None:
        return code
    done = _call(client, Req("POST", path, body={**body, "dry_run": False}))
    if getattr(args, "json", False):
        print(json.dumps(done, indent=2), file=io.out)
    else:  # the server's sentence, its clocks in the caller's zone (newuser38 n30)
        print(said_to_reader(str(done.get("text") or "")), file=io.out)
    return 0


def _call(client: Any, req: Req) -> Any:
    """``client.call(req)``; a refusal of the path's team is said of the positional ``TEAM`` typed, not of a
    ``--team`` option this command has not (hubadmin25 B14: ``jupyter-sched teams: --team: 'nope' has …``)."""
    from ..errors import SchedError

    try:
        return client.call(req)
    except SchedError as exc:
        if exc.field != "team":
            raise
        exc.field = "TEAM"
        raise


def _show(plan: dict[str, Any], io: Any) -> None:
    """The plan: one line per item, then the new team's holding and what happens to usage."""
    from ..textsafe import escaped_controls, escaped_line

    items = plan.get("items") or []
    for item in items[:_SHOWN]:  # a user's name and the server's words, escaped on one line (s30)
        state = item.get("state") or "definition"
        gpus = float(item.get("gpus") or 0)
        print(escaped_line(f"  {item.get('outcome'):5}  {item.get('id')}  {item.get('user')}  {state}  "
                           f"{gpus:g} GPU{'' if gpus == 1 else 's'}: {item.get('why')}"), file=io.out)
    if len(items) > _SHOWN:
        print(f"  … and {len(items) - _SHOWN} more (--json lists them all)", file=io.out)
    if plan.get("quota"):
        print(escaped_controls(f"quota: {plan['quota']}"), file=io.out)
    print(escaped_controls(said_to_reader(str((plan.get("holding") or {}).get("text") or ""))), file=io.out)
    print(str(plan.get("usage") or ""), file=io.out)
