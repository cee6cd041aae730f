"""``jupyter-sched hold|release|top JOB…`` and ``jupyter-sched update JOB --time-limit … --priority …``:
change a job after submit (hubadmin25 B18; ``PATCH jobs/{id}``, :mod:`jupyter_sched.services.job_update` says
who may change what). Slurm's ``scontrol hold|release|top`` and ``scontrol update job=… TimeLimit=… QOS=…``.

Each job gets one line saying what changed, in the server's words::

    j-1m93… (train): held (release with: jupyter-sched release j-1m93…)
    j-1m93… (train): time limit 4h00m → 3h00m: it is stopped at 14:05 UTC (in 1h12m), 3h00m after its start

A refusal of one of several jobs is said on stderr and the others go on (exit 1 at the end, 2 when one was bad input), as ``cancel``
does. Standard library only at parse time (the CLI's start-up cost: :mod:`.main`).
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from typing import Any

from ..errors import SchedError
from ..wording.jobs import changed_line
from .main import EXIT_OK, JOB_HELP, Streams, error_line, failure, job_of, refused_status

__all__ = ["NAMES", "add_parsers", "change"]

NAMES = ("hold", "release", "update", "top")
"""The subcommands this module adds."""


_HELP = {
    "hold": ("hold pending jobs: they stay queued but never start until released",
             "Hold pending jobs: each stays in the queue but never starts, and reserves nothing, until it is released "
             "(jupyter-sched release JOB); its reason says who held it and when, its ETA 'unknown: held'. You may hold "
             "your own jobs; admins any job — an admin's hold is released by an admin only. Audited (job_held). "
             "Example: jupyter-sched hold nightly-1 nightly-2"),
    "release": ("release held jobs: they queue again from now, behind work submitted while they were held",
                "Release held jobs: each queues again from now (its submit time kept), behind work submitted while "
                "it was held (Slurm's EligibleTime). A job an admin held is "
                "released by an admin only. Audited (job_released). Example: jupyter-sched release nightly-1"),
    "update": ("change a job's time limit or priority class",
               "Change a job's time limit (pending or running: a running job is stopped at the new limit) or "
               "a pending job's priority class. You may shorten your job's limit at any time and lengthen a pending "
               "one up to its queue's maximum; only an admin lengthens a running job's limit. A class must be granted "
               "to you in the job's team (admins: any). Audited (job_updated, with the value before). Example: "
               "jupyter-sched update train --time-limit +1h"),
    "top": ("admin: put pending jobs first in their class",
            "Put pending jobs first in their class (the last one topped goes first), e.g. a job a preemption sent back "
            "to the end of the queue. --undo takes that back. Admins only; audited (job_topped). Example: "
            "jupyter-sched top j-1m93d0kba-gtkhhs"),
}
"""Per subcommand: its one-line help and its description."""


def add_parsers(sub: Any, want: Any) -> list[str]:
    """Add ``hold``, ``release``, ``update`` and ``top`` (those ``want(name)`` accepts); their names."""
    added: list[str] = []
    for name in NAMES:
        if not want(name):
            continue
        short, description = _HELP[name]
        parser = sub.add_parser(name, help=short, description=description)
        parser.add_argument("job_ids", nargs="+", metavar="JOB", help=JOB_HELP)
        if name == "update":
            parser.add_argument("--time-limit", dest="time_limit", metavar="LIMIT",
                                help='the new limit: "4h", "+1h" or "-30m" (from the current one), seconds, or 0 for none')
            parser.add_argument("--priority", "--priority-class", dest="priority", metavar="{high,normal,low}",
                                help="the pending job's new class")
        if name == "top":
            parser.add_argument("--undo", action="store_true", help="no longer first in its class")
        added.append(name)
    return added


def change(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """``hold``, ``release``, ``update`` or ``top`` of each JOB: one line each (exit 1 if any was refused, 2 if any
    was bad input: :func:`.main.refused_status`)."""
    command = str(args.command)
    body = _body(args)
    if not body:
        print(f"jupyter-sched update: say what to change: --time-limit LIMIT and/or --priority CLASS "
              f"(e.g. jupyter-sched update {args.job_ids[0]} --time-limit +1h)", file=io.err)
        return 2
    code = EXIT_OK
    for ref in args.job_ids:
        try:
            job_id = job_of(client, ref, command, io)
            job = client.update_job(job_id, **body)
        except SchedError as exc:
            if len(args.job_ids) == 1:
                raise
            print(failure(args, error_line(command, exc), exc), file=io.err)  # keep going with the other jobs
            code = max(code, refused_status(exc))  # 2 if any was bad input (newuser38 n2)
            continue
        if getattr(args, "json", False):
            print(json.dumps(job, sort_keys=True), file=io.out)
            continue
        print(changed_line(job, datetime.now(timezone.utc)), file=io.out)
    return code


def _body(args: argparse.Namespace) -> dict[str, Any]:
    """The ``PATCH jobs/{id}`` body of the command line."""
    if args.command == "hold":
        return {"held": True}
    if args.command == "release":
        return {"held": False}
    if args.command == "top":
        return {"top": not args.undo}
    body: dict[str, Any] = {}
    if args.time_limit is not None:
        from .commands import number_or_text  # seconds as a number, a duration as text (as submit sends it)

        text = args.time_limit.strip()  # "+3600" moves the limit: sent as text, never as the number 3600
        body["time_limit"] = text if text[:1] in ("+", "-") else number_or_text(args.time_limit)
    if args.priority is not None:
        body["priority"] = args.priority.strip().lower()
    return body
