"""``jupyter-sched nodes [list]`` (anyone: every node, its GPUs and state, as Slurm's ``sinfo -R``) and
``jupyter-sched nodes cordon|drain|uncordon NODE``: an admin takes a node out of service for
maintenance and back (hubadmin24; ``POST nodes/{node}/cordon``, ``POST nodes/{node}/uncordon``,
:mod:`jupyter_sched.services.nodes`). Slurm's ``scontrol update nodename=X state=drain reason=…``,
``kubectl cordon`` / ``kubectl drain``.

``cordon`` and ``drain`` ask the server first what happens to the work on the node (``dry_run``),
print it — each job or lease, its owner and its fate — and ask before going on, as ``teams move`` and
``cancel --all`` do (``--yes`` skips the question; without a terminal it refuses rather than guess).
``uncordon`` only opens the node again: it does not ask. Standard library only at parse time (the
CLI's start-up cost: :mod:`.main`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any
from urllib.parse import quote

from ..client._wire import Req
from .confirm import go_on

__all__ = ["add_parser", "nodes"]

_SHOWN = 20
"""Work items listed before "… and N more"."""

_REASON_HELP = 'why, said to users whose jobs wait for the node, e.g. --reason "PSU swap, back by 18:00" (required)'


def add_parser(sub: Any) -> None:
    """Add ``nodes`` (``nodes cordon|drain|uncordon``) to the subcommands."""
    nodes_p = sub.add_parser("nodes", allow_abbrev=False,
                             help="list the nodes; admin: cordon, drain or uncordon a node for maintenance")
    # `nodes` alone lists them, as `definitions` alone does (newuser28 n14: it was "ACTION: missing")
    acts = nodes_p.add_subparsers(dest="nodes_command", metavar="ACTION")
    cordon = acts.add_parser(
        "cordon", allow_abbrev=False, help="place no new work on NODE; what runs there runs on to its end",
        description="Place no new work (jobs, leases, backfill) on NODE; jobs only it could hold wait, their reason "
                    "naming the cordon, its reason, you and the time. The work running there runs on to its own end "
                    "or time limit (drain --evict-after stops it sooner). It shows the work on the node and asks "
                    "first. Stored: it outlives restarts. Admins only; audited (node_cordoned). Example: "
                    'jupyter-sched nodes cordon gpu-node-3 --reason "PSU swap"')
    drain = acts.add_parser(
        "drain", allow_abbrev=False, help="cordon NODE and stop the work still there after --evict-after",
        description="Cordon NODE (see nodes cordon --help) and, with --evict-after, stop the work still running there "
                    "that long from now: with the normal grace and the checkpoint signal for checkpointable jobs, then "
                    "requeued (a kernel's lease ends). Without --evict-after it is a cordon: the work runs on to its own "
                    "end. It shows the work on the node and each one's fate, and asks first. Admins only; audited "
                    '(node_cordoned). Example: jupyter-sched nodes drain gpu-node-3 --evict-after 2h --reason "PSU swap"')
    for act in (cordon, drain):
        act.add_argument("node", metavar="NODE", help="the node's name (jupyter-sched nodes list lists them)")
        act.add_argument("--reason", required=True, help=_REASON_HELP)
        act.add_argument("--dry-run", dest="dry_run", action="store_true", help="show what would happen; change nothing")
        act.add_argument("--yes", action="store_true", help="do not ask")
    drain.add_argument("--evict-after", dest="evict_after", metavar="DURATION",
                       help='stop the work still on the node this long from now, e.g. "2h", "30m" or "0" (now)')
    acts.add_parser("list", allow_abbrev=False, help="every node: its GPUs, how many are in use, and its state",
                    description="Every node of the inventory, one line each: its GPUs by model, how many are in use "
                                "or unhealthy, and whether it takes new work — or the cordon (reason, who, when, a "
                                "drain's stop). Like Slurm's sinfo -R. Anyone may read it.")
    uncordon = acts.add_parser(
        "uncordon", allow_abbrev=False, help="new work may be placed on NODE again",
        description="New work may be placed on NODE again; a drain's pending stop is called off. Admins only; audited "
                    "(node_uncordoned). Example: jupyter-sched nodes uncordon gpu-node-3")
    uncordon.add_argument("node", metavar="NODE", help="the node's name")
    uncordon.add_argument("--dry-run", dest="dry_run", action="store_true", help="show what would happen; change nothing")
    # nothing to ask, yet taken as cordon and drain take it: a script's `cordon --yes …; uncordon --yes` was refused
    # at its uncordon and left the node out of service (newuser35 n10)
    uncordon.add_argument("--yes", action="store_true", help="do not ask (it never asks: taken as cordon and drain "
                                                             "take it)")


def nodes(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``nodes [list]``: the nodes; ``nodes cordon|drain|uncordon``: the plan, the question, the change (exit 0;
    2 when not confirmed without a terminal, or a bad --evict-after)."""
    if args.nodes_command in (None, "list"):
        return _list(client, args, io)
    node = quote(args.node, safe="")
    if args.nodes_command == "uncordon":
        done = client.call(Req("POST", f"nodes/{node}/uncordon", body={"dry_run": bool(args.dry_run)}))
        _print(done, args, io, work=done.get("changed") is not False)  # "nothing changed": no work list (B18)
        return 0
    body: dict[str, Any] = {"reason": args.reason}
    if getattr(args, "evict_after", None) is not None:
        from ..model.units import parse_duration  # only when asked: the CLI's start-up cost

        # "0" is now, as the help says (hubadmin26 B18: it was refused "must be a positive duration … (or "0": now)")
        body["evict_after_s"] = 0.0 if args.evict_after.strip().lower() in ("0", "0s", "0m", "0h", "now") else \
            parse_duration(args.evict_after, field="--evict-after",
                           hint='give how long the work may run on, e.g. --evict-after 2h (or "0": now); leave it '
                                "out to let it run to its end")
    path = f"nodes/{node}/cordon"
    plan = client.call(Req("POST", path, body={**body, "dry_run": True}))
    if args.dry_run or not args.yes:
        _print(plan, args, io)
    if args.dry_run:
        return 0
    verb = "Drain" if body.get("evict_after_s") is not None else "Cordon"
    if not args.yes and (code := go_on(io, f"nodes {args.nodes_command}", f"{verb} node {args.node}?",
                                       declined="nothing changed")) is not None:
        return code
    done = client.call(Req("POST", path, body={**body, "dry_run": False}))
    _print(done, args, io, work=False)
    return 0


def _print(answer: dict[str, Any], args: argparse.Namespace, io: Any, *, work: bool = True) -> None:
    """The answer's sentence and (``work``) one line per job or lease on the node, with its fate."""
    if getattr(args, "json", False):
        print(json.dumps(answer, indent=2), file=io.out)
        return
    from ..model.periods import said_to_reader
    from ..model.units import gpus_phrase  # "1 GPU", never "1 GPUs" (hubadmin26 B2)
    from ..textsafe import escaped_controls, escaped_line

    # the server's sentences (``… by alice at 15:40 UTC``, a job's fate ``stopped at 17:40 UTC``): their clocks in
    # the caller's zone, as the CLI's own (newuser38 n30)
    print(escaped_controls(said_to_reader(str(answer.get("text") or ""))), file=io.out)
    items = answer.get("work") or [] if work else []
    for item in items[:_SHOWN]:  # a user's name on an admin's terminal, escaped on one line (s30)
        print(escaped_line(f"  {item.get('id')}  {item.get('user')}  {item.get('kind')}  "
                           f"{gpus_phrase(item.get('gpus', 0))}: {said_to_reader(str(item.get('fate')))}"), file=io.out)
    if len(items) > _SHOWN:
        print(f"  … and {len(items) - _SHOWN} more (--json lists them all)", file=io.out)


def _list(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``nodes list``: one line per node of ``GET inventory`` (hubadmin26 B18: no command listed the nodes an
    admin cordons, and the refusals said "jupyter-sched status lists them", which it does not)."""
    from datetime import datetime, timezone

    from ..model.codec import cordon_from_dict
    from ..model.units import gpus_phrase
    from ..textsafe import escaped_line
    from ..wording.cordons import cordon_sentence

    inventory = client.call(Req("GET", "inventory"))
    if getattr(args, "json", False):
        print(json.dumps(inventory.get("nodes") or [], indent=2), file=io.out)
        return 0
    held = {uuid for uuid, holders in (inventory.get("allocations") or {}).items() if holders}
    now = datetime.now(timezone.utc)
    nodes = inventory.get("nodes") or []
    if not nodes:
        print("no nodes in the inventory", file=io.out)
        return 0
    for node in nodes:
        gpus = node.get("gpus") or []
        models: dict[str, int] = {}
        for gpu in gpus:
            models[str(gpu.get("model"))] = models.get(str(gpu.get("model")), 0) + 1
        what = ", ".join(f"{count} x {model}" for model, count in models.items()) or "no GPUs"
        used = sum(1 for gpu in gpus if gpu.get("uuid") in held)
        sick = sum(1 for gpu in gpus if gpu.get("health", "healthy") != "healthy")
        counts = f"{used} in use" + (f", {sick} unhealthy" if sick else "")
        name = str(node.get("name"))
        if node.get("cordon") is not None or node.get("unschedulable"):
            state = cordon_sentence(name, cordon_from_dict(node.get("cordon")), now=now).removeprefix(f"node {name} is ")
        else:
            state = "ready" if node.get("ready", True) else "not ready"
        print(escaped_line(f"{name}  {what} ({counts})  {state}"), file=io.out)  # node and model names: s30
    print(f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}, {gpus_phrase(sum(len(n.get('gpus') or []) for n in nodes))}",
          file=io.out)
    return 0
