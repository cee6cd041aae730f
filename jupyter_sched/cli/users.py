"""``jupyter-sched users rename OLD NEW``: an admin carries a user renamed on the hub over to the new name
(hubadmin26 B10; ``POST users/{user}/rename``, :mod:`jupyter_sched.services.user_rename`).

It asks the server for the plan first (``dry_run``), prints it — each live job and definition, the counts
of finished jobs, quota lines, budgets, memberships and usage intervals, what keeps the old name — and asks
before moving, as ``teams move`` does (``--yes`` skips the question; without a terminal it refuses rather
than guess). Standard library only (the CLI's start-up cost: :mod:`.main`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any
from urllib.parse import quote

from ..client._wire import Req
from ..model.periods import said_to_reader
from .confirm import go_on

__all__ = ["add_parser", "users"]

_SHOWN = 20
"""Items the plan lists before "… and N more"."""


def add_parser(sub: Any) -> None:
    """Add ``users`` (``users rename``) to the subcommands."""
    users_p = sub.add_parser("users", allow_abbrev=False,
                             help="admin: carry a user renamed on the hub over to the new name",
                             description="Admins: carry a user renamed on the hub over to the new name (users rename). "
                                         "Your own account, team and use: jupyter-sched status.")
    acts = users_p.add_subparsers(dest="users_command", metavar="ACTION")
    acts.required = True
    rename = acts.add_parser(
        "rename", help="move OLD's jobs, definitions, quota lines, budgets and usage to NEW",
        description="After a user was renamed on the hub (Admin page, or PATCH /hub/api/users/OLD "
                    '{"name": "NEW"}), move everything the scheduler keeps under OLD to NEW: every job record '
                    "(live and finished), definitions (those paused when OLD left the hub are resumed), per-user "
                    "quota lines and budgets, team memberships and usage (GPU-hours, fair share, budget standing). "
                    "The audit log keeps the old name, and jobs running now keep the OS account they were started "
                    "as. It shows the plan and asks first. Admins only; audited (user_renamed). Example: "
                    "jupyter-sched users rename ana ana.lopez")
    rename.add_argument("user", metavar="OLD", help="the user's old name")
    rename.add_argument("to", metavar="NEW", help="the user's new name (on a hub: renamed there first)")
    rename.add_argument("--dry-run", dest="dry_run", action="store_true", help="show the plan; change nothing")
    rename.add_argument("--yes", action="store_true", help="do not ask")
    rename.add_argument("--merge", action="store_true",
                        help="NEW already has records of its own and is the same person: carry the work into it "
                             "(without --merge, a NEW with records is refused)")


def users(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``users rename``: the plan, the question, the move (exit 0; 2 when not confirmed without a terminal)."""
    path = f"users/{quote(args.user, safe='')}/rename"
    plan = _call(client, Req("POST", path, body={"to": args.to, "dry_run": True, "merge": args.merge}))
    if getattr(args, "json", False) and (args.dry_run or not args.yes):
        print(json.dumps(plan, indent=2), file=io.out)
        if args.dry_run:
            return 0
    elif not args.yes or args.dry_run or plan.get("already"):
        _show(plan, io)
    if args.dry_run or plan.get("already"):
        return 0
    if not args.yes and (code := go_on(io, "users rename", f"Move {args.user}'s work to {args.to}?",
                                       declined="nothing moved")) is not None:
        return code
    done = _call(client, Req("POST", path, body={"to": args.to, "dry_run": False, "merge": args.merge}))
    if getattr(args, "json", False):
        print(json.dumps(done, indent=2), file=io.out)
    else:
        print(said_to_reader(str(done.get("text") or "")), file=io.out)  # its clocks: the caller's zone (n30)
        for note in done.get("notes") or []:
            print(f"note: {note}", file=io.out)
    return 0


def _call(client: Any, req: Req) -> Any:
    """``client.call(req)``; a refusal of the path's user or of ``to`` is said of the positional ``OLD``/``NEW``
    typed (hubadmin25 B14: an error line named an option the command has not)."""
    from ..errors import SchedError

    try:
        return client.call(req)
    except SchedError as exc:
        if exc.field in ("user", "to"):
            exc.field = "OLD" if exc.field == "user" else "NEW"
        raise


def _show(plan: dict[str, Any], io: Any) -> None:
    """The plan: one line per live job and definition, then the summary and the notes."""
    from ..textsafe import escaped_controls, escaped_line

    items = plan.get("items") or []
    for item in items[:_SHOWN]:  # the server's words about a user's work, escaped on one line (s30)
        print(escaped_line(f"  {item.get('id')}  {item.get('state') or 'definition'}: {item.get('why')}"), file=io.out)
    if len(items) > _SHOWN:
        print(f"  … and {len(items) - _SHOWN} more (--json lists them all)", file=io.out)
    print(escaped_controls(said_to_reader(str(plan.get("text") or ""))), file=io.out)
    for note in plan.get("notes") or []:
        print(escaped_line(f"note: {note}"), file=io.out)
