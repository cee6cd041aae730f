"""``jupyter-sched`` (also ``jupyter sched``): the scheduler from a terminal.

Subcommands talk to a running Jupyter server with the jupyter_sched extension through the
same REST API as the panel and the magics (:mod:`jupyter_sched.client`)::

    jupyter-sched status                         server, identity, GPUs, my jobs
    jupyter-sched submit --gpus 1 -- python train.py --epochs 3
    jupyter-sched submit --gpus 2 --script train.py
    jupyter-sched queue                          pending and running work with reasons
    jupyter-sched cancel JOB_ID [JOB_ID ...]
    jupyter-sched logs JOB_ID [-f]

Server discovery: ``--url``/``--token``, else ``JUPYTER_SCHED_URL``/``JUPYTER_SCHED_TOKEN``,
else the running-server files of this machine (``jupyter_server.serverapp.list_running_servers``).

Exit codes: 0 success; 1 the server refused the request (the error line says why); 2 bad
command line; 3 no server found or the server did not answer; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import SchedError

__all__ = ["EXIT_NO_SERVER", "EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_NO_SERVER = 3
EXIT_INTERRUPTED = 130

PROG = "jupyter-sched"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (one sub-parser per subcommand)."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="GPU scheduling for Jupyter: submit, watch and cancel jobs on a running server.")
    parser.add_argument("--url", help="Jupyter server base URL, e.g. http://127.0.0.1:8888/ (default: discover)")
    parser.add_argument("--token", help="Jupyter server token (default: $JUPYTER_SCHED_TOKEN or discovered)")
    parser.add_argument("--json", action="store_true", help="print the server's JSON instead of tables")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sub.add_parser("status", help="server, identity, GPU inventory and my jobs")

    submit = sub.add_parser("submit", help="submit a job; the command follows --",
                            description="Submit a job. Say what to run with --script, --notebook, or a "
                                        "command after -- (e.g. -- python train.py --epochs 3).")
    submit.add_argument("--gpus", help="GPUs: whole number, or a fraction below 1 (default 1)")
    submit.add_argument("--model", help="acceptable GPU model(s), comma separated, e.g. A100,H100")
    submit.add_argument("--mem-per-gpu", dest="mem_per_gpu", help='minimum memory per GPU, e.g. "40GiB"')
    submit.add_argument("--cpu", help="CPU cores per worker, e.g. 8 or 0.5 (default: not reserved)")
    submit.add_argument("--memory", help='host memory per worker, e.g. "64GiB" (default: not reserved)')
    submit.add_argument("--priority", choices=["high", "normal", "low"], help="priority class (default normal)")
    submit.add_argument("--team", help="team / queue charged")
    submit.add_argument("--name", help="job name")
    submit.add_argument("--time-limit", dest="time_limit", help='wall-clock limit, e.g. "2h" or seconds')
    submit.add_argument("--profile", help="admin-defined template, e.g. bert-finetune")
    submit.add_argument("--nvlink", action="store_true", help="require NVLink-connected GPUs")
    submit.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="extra environment variable")
    submit.add_argument("--workdir", default=None, help="working directory (default: the current directory)")
    what = submit.add_mutually_exclusive_group()
    what.add_argument("--script", help="Python script to run")
    what.add_argument("--notebook", help="notebook to execute headless")
    submit.add_argument("argv", nargs=argparse.REMAINDER, help="-- command and arguments (or script arguments)")

    sub.add_parser("queue", help="pending and running work with position, reason and ETA")

    cancel = sub.add_parser("cancel", help="cancel jobs")
    cancel.add_argument("job_ids", nargs="+", metavar="JOB_ID")

    logs = sub.add_parser("logs", help="print a job's log")
    logs.add_argument("job_id", metavar="JOB_ID")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing until the job ends")

    sub.add_parser("serve", help="run the central service for a JupyterHub (jupyter-sched serve --help)",
                   add_help=False)
    sub.add_parser("simulate", help="replay a trace or scenario through the scheduler (jupyter-sched simulate --help)",
                   add_help=False)
    sub.add_parser("fetch-traces", help="download public GPU cluster traces (jupyter-sched fetch-traces --help)",
                   add_help=False)
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the CLI; return the exit code (see the module docstring)."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["serve"]:  # hub mode: runs a server, not a client (see jupyter_sched.hub.serve)
        from ..hub.serve import main as serve_main

        return serve_main(raw[1:], err=stderr)
    if raw[:1] in (["simulate"], ["fetch-traces"]):  # offline tools: no server needed (jupyter_sched.sim)
        from ..sim.cli import main as sim_main

        return sim_main(raw, out=stdout, err=stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    from ..client import NoServerError, ServerUnreachableError, connect

    try:
        client = connect(args.url, args.token if args.token is not None else os.environ.get("JUPYTER_SCHED_TOKEN"),
                         timeout_s=args.timeout)
    except NoServerError as exc:
        print(f"{PROG}: {exc}", file=stderr)
        return EXIT_NO_SERVER
    try:
        with client:
            return _COMMANDS[args.command](client, args, stdout)
    except ServerUnreachableError as exc:
        print(f"{PROG}: {exc}", file=stderr)
        return EXIT_NO_SERVER
    except SchedError as exc:
        where = f" [{exc.field}]" if exc.field else ""
        print(f"{PROG}: {exc.code}{where}: {exc}", file=stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


# ---- subcommands -------------------------------------------------------------------------


def _status(client: Any, args: argparse.Namespace, out: TextIO) -> int:
    config, me, inventory = client.config(), client.me(), client.inventory()
    jobs = client.jobs()
    if args.json:
        _dump({"server": client.connection.url, "config": config, "me": me, "inventory": inventory, "jobs": jobs}, out)
        return EXIT_OK
    gpus = inventory.get("gpus", [])
    label = " (simulated)" if inventory.get("simulated") else ""
    nvml = inventory.get("nvml") or {}
    print(f"server     {client.connection.url}  jupyter_sched {config.get('version', '?')}", file=out)
    print(f"user       {me.get('user')}{' (admin)' if me.get('is_admin') else ''}", file=out)
    models: dict[str, int] = {}
    for gpu in gpus:
        models[gpu["model"]] = models.get(gpu["model"], 0) + 1
    summary = ", ".join(f"{n} x {m}" for m, n in sorted(models.items())) or "none"
    print(f"gpus       {len(gpus)}{label}: {summary}", file=out)
    if nvml and not nvml.get("available", True):
        print(f"nvml       unavailable: {nvml.get('error', '')}", file=out)
    states: dict[str, int] = {}
    for job in jobs:
        states[job["state"]] = states.get(job["state"], 0) + 1
    print("my jobs    " + (", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "none"), file=out)
    return EXIT_OK


def _submit(client: Any, args: argparse.Namespace, out: TextIO) -> int:
    body: dict[str, Any] = {}
    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if args.script:
        body["script"] = args.script
        if argv:
            body["args"] = argv
    elif args.notebook:
        body["notebook"] = args.notebook
    elif argv:
        body["command"] = argv
    for key in ("gpus", "model", "mem_per_gpu", "cpu", "memory", "priority", "team", "name", "time_limit", "profile"):
        value = getattr(args, key)
        if value is not None:
            body[key] = _number_or_text(value) if key in ("gpus", "cpu") else value
    if args.nvlink:
        body["nvlink"] = True
    if args.env:
        env: dict[str, str] = {}
        for item in args.env:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise SchedError(f"--env {item!r} is not NAME=VALUE", field="env", hint="e.g. --env SEED=1")
            env[name] = value
        body["env"] = env
    body["working_dir"] = args.workdir or os.getcwd()
    job = client.submit(body)
    if args.json:
        _dump(job, out)
        return EXIT_OK
    line = f"submitted {job['id']}: {job['state']}"
    reason = job.get("reason") or {}
    if job["state"] == "pending" and reason.get("message"):
        line += f" — {reason['message']}"
    print(line, file=out)
    return EXIT_OK


def _queue(client: Any, args: argparse.Namespace, out: TextIO) -> int:
    rows = client.queue()
    if args.json:
        _dump(rows, out)
        return EXIT_OK
    table = [["ID", "USER", "STATE", "PRIO", "GPUS", "POS", "REASON", "ETA"]]
    for job in rows:
        reason = job.get("reason") or {}
        resources = job.get("resources") or {}
        gpus = resources.get("gpus", "")
        if resources.get("gpu_milli", 1000) < 1000:
            gpus = f"{resources['gpu_milli'] / 1000:g}"
        table.append([str(job.get("id", "")), str(job.get("user", "")), str(job.get("state", "")),
                      str(job.get("priority", "")), str(gpus),
                      str(reason.get("position") or job.get("position") or ""),
                      str(reason.get("message") or ""), str(reason.get("eta") or "")])
    _print_table(table, out)
    return EXIT_OK


def _cancel(client: Any, args: argparse.Namespace, out: TextIO) -> int:
    for job_id in args.job_ids:
        job = client.cancel(job_id)
        if args.json:
            _dump(job, out)
        else:
            print(f"{job['id']}: {job['state']}", file=out)
    return EXIT_OK


def _logs(client: Any, args: argparse.Namespace, out: TextIO) -> int:
    if args.follow:
        for text in client.follow_logs(args.job_id):
            out.write(text)
            out.flush()
        return EXIT_OK
    offset = 0
    while True:  # read the whole log in bounded slices
        chunk = client.logs(args.job_id, offset=offset)
        out.write(chunk["text"])
        if chunk["next_offset"] == offset or not chunk["text"]:
            break
        offset = chunk["next_offset"]
    out.flush()
    return EXIT_OK


_COMMANDS = {"status": _status, "submit": _submit, "queue": _queue, "cancel": _cancel, "logs": _logs}


# ---- helpers -----------------------------------------------------------------------------


def _number_or_text(value: str) -> float | int | str:
    try:
        number = float(value)
    except ValueError:
        return value  # the server names the field and the fix
    if not math.isfinite(number):
        return value  # "inf" / "nan" go as text, which JSON can carry, and the server refuses them by name
    return int(number) if number.is_integer() else number


def _dump(value: Any, out: TextIO) -> None:
    json.dump(value, out, indent=2, sort_keys=True)
    out.write("\n")


def _print_table(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip(), file=out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
