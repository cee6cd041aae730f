"""``jupyter-sched definitions …``: job definitions from a terminal (same REST API as the panel and magics).

::

    jupyter-sched definitions [list] [--all]
    jupyter-sched definitions create report.ipynb --cron "0 12 * * 1-5" --tz Europe/Berlin \\
        [-p region=eu] [--gpus 1] [--model A100] [--time-limit 1h] [--profile P] [--missed skip]
        [--overlap skip_waiting|skip_unfinished|allow] [--no-preempt] [--paused] [--args "SCRIPT ARGS"]
        [--cpu 8] [--memory 64GiB] [--env NAME=VALUE] [--workdir W] [--nvlink]   (submit's own: run_options)
    jupyter-sched definitions show DEF          schedule in words, next firings, recent runs
    jupyter-sched definitions runs DEF          each run: when, state, reason
    jupyter-sched definitions run DEF [-p region=apac]
    jupyter-sched definitions edit DEF [--file NOTEBOOK_OR_SCRIPT] [--cron C | --no-schedule] [--tz Z] [--name N]
        [-p K=V] [--unset-parameter K] [--gpus N] [--env K=V] [--unset-env K] [--no-preempt | --preempt] ...
    jupyter-sched definitions pause DEF | resume DEF | delete DEF [--cancel-runs]

Only the standard library is imported (the CLI's start-up rule).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from collections.abc import Mapping
from typing import Any

from ..client._routes import routes
from ..userfiles import file_problem
from ..wording import definition_deleted
from .confirm import confirmed, interactive
from .main import EXIT_OK, PROG, Streams, _Parser

__all__ = ["add_parser", "definitions"]

_ACTIONS = ("list", "create", "show", "runs", "run", "edit", "pause", "resume", "delete")


def parameters_from(values: list[str], parser: argparse.ArgumentParser) -> dict[str, Any]:
    """``-p NAME=VALUE`` words → parameters (:func:`~jupyter_sched.definitions.parameters.parse_parameter_words`,
    the magics' reading too); a bad one ends the command with the subcommand's usage line (exit 2)."""
    from ..definitions.parameters import parse_parameter_words
    from ..errors import ValidationError

    try:
        return parse_parameter_words(values)
    except ValidationError as err:
        parser.error(f"{err.message} — {err.hint}")


def _notes(result: Any, io: Streams, action: str) -> None:
    """The server's notes on a created or edited definition's runs (``warnings``: e.g. priority low
    may be preempted at any moment; verify21 V9), on stderr as ``submit`` says its own."""
    for warning in (result.get("warnings") or ()) if isinstance(result, Mapping) else ():
        print(f"{PROG} definitions {action}: note: {warning}", file=io.err)


def note_parameters(path: Any, parameters: Any, io: Streams, *, prefix: str = "", said: Any = None) -> None:
    """A note on stderr when ``parameters`` name something the notebook at ``path`` (read here, when
    this machine has it) does not set in its parameters cell, or give a value of another type than
    its default (new user 6, F10: ``-p regoin=eu`` was accepted and every run used the default
    region; new user 13, N20) — unless the server's answer said it among its ``warnings`` (``said``:
    it reads the notebook too, newuser39 n3), so it is said once."""
    if not parameters or not isinstance(parameters, Mapping) or not isinstance(path, str):
        return
    from ..definitions.parameters import parameters_file_note, unsaid_note

    note = unsaid_note(parameters_file_note(path, parameters), said)
    if note:
        print(f"{prefix}note: {note}", file=io.err)


def _definition_options(p: argparse.ArgumentParser, *, create: bool) -> None:
    """The options ``create`` and ``edit`` share (what a run asks for: ``submit``'s, :mod:`.run_options`). On ``edit`` a help text says an option left out
    keeps the current value, never create's default (new user 19, N15: ``edit --help`` said
    "--gpus … (default 1)" while leaving it out kept the definition's ``gpus 0``)."""
    def said(text: str, default: str) -> str:
        if not create:
            return f"{text} (left out: unchanged)"
        return f"{text} ({default})" if default else text

    p.add_argument("--cron", help=said('cron schedule, 5 fields, e.g. "0 12 * * 1-5" (12:00 on weekdays)',
                                       "default: none, runs only when asked"))
    p.add_argument("--tz", help=said("IANA time zone of the schedule, e.g. Europe/Berlin",
                                     "default: your time zone (TZ, else /etc/localtime's), else UTC"))
    p.add_argument("--name", help=said("name", "default: the file's name"))
    p.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter for the notebook's 'parameters' cell (or the script's --NAME); repeatable" +
                   ("" if create else " (sets the ones named; the others are unchanged)"))
    p.add_argument("--missed", choices=("run_once", "skip"),
                   help=said("firings missed while no server ran: one catch-up run for the latest (run_once) or none "
                             "(skip); never one run per missed firing", "default run_once"))
    p.add_argument("--overlap", choices=("skip_waiting", "skip_unfinished", "allow"),
                   help=said("a firing while the previous run has not finished: skipped while it still waits to "
                             "start (skip_waiting), skipped while it waits or runs (skip_unfinished), or queued as "
                             "another run (allow)", "default skip_waiting"))
    # what each run asks for: submit's own options, one definition of them (newuser42 n4: --memory, --cpu, --env,
    # --workdir, --nvlink were submit's alone, so a nightly job needing them could not be defined from the CLI)
    from .run_options import add_run_options

    add_run_options(p, said, edit=not create,
                    workdir_default="default: the notebook's or script's folder" if create else
                    "left out: unchanged; a new file given with --file moves a folder that was its old file's")
    # each run asks as `submit --no-preempt` does (session 38: a definition could not carry it); edit --preempt undoes it
    no_preempt = ("free GPUs only: its runs never preempt or reclaim another's running job (another team's borrowed "
                  "GPUs included); each waits for a free GPU instead")
    if create:
        p.add_argument("--no-preempt", dest="no_preempt", action="store_const", const=True, help=no_preempt)
        p.add_argument("--paused", action="store_true", help="save it paused")
    else:
        preempt = p.add_mutually_exclusive_group()
        preempt.add_argument("--no-preempt", dest="no_preempt", action="store_const", const=True,
                             help=said(no_preempt, ""))
        preempt.add_argument("--preempt", dest="no_preempt", action="store_const", const=False,
                             help="its runs may preempt again, as any job (undoes --no-preempt)")
        p.add_argument("--no-schedule", dest="no_schedule", action="store_true", help="remove the schedule")
        p.add_argument("--unset-parameter", dest="unset_parameter", action="append", default=[], metavar="NAME",
                       help="remove a parameter (its runs then use the notebook's own value); repeatable")


DEF_HELP = "a definition's id (d-…) or name; `jupyter-sched definitions` lists yours"
"""What ``DEF`` accepts, in each action's --help (session 22: as ``JOB`` of wait/logs/cancel says it)."""


def add_parser(sub: Any) -> None:
    """Register ``definitions`` and its actions on the CLI's sub-parsers."""
    parser = sub.add_parser("definitions", help="recurring notebook/script jobs: create, list, pause, run, delete",
                            description="Job definitions: a notebook or script with its GPU request, parameters "
                                        "and a cron schedule in a time zone; each firing runs it as a job.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="my definitions (admins: --all)")
    listing.add_argument("--all", dest="all_users", action="store_true",
                         help="every user's definitions, each line with its owner (admins only)")
    create = actions.add_parser("create", help="save a notebook or script with a schedule")
    # each positional and option says what it takes (newuser34 n1: NOTEBOOK_OR_SCRIPT and run's -p had no help)
    create.add_argument("target", metavar="NOTEBOOK_OR_SCRIPT",
                        help="the notebook (.ipynb) or script each firing runs: a path from this folder; it runs in its own "
                             "folder")
    create.add_argument("--args", dest="script_args", default="", help='a script\'s arguments, e.g. "--epochs 3"')
    _definition_options(create, create=True)
    for name, text in (("show", "one definition with its next firings and runs"), ("runs", "its runs"),
                       ("pause", "stop firing"), ("resume", "fire again from now on")):
        actions.add_parser(name, help=text).add_argument("definition", metavar="DEF", help=DEF_HELP)
    delete = actions.add_parser("delete", help="delete it (its runs stay; runs still queued are listed)")
    delete.add_argument("definition", metavar="DEF", help=DEF_HELP)
    delete.add_argument("--cancel-runs", dest="cancel_runs", action="store_true",
                        help="also cancel its runs still waiting to start (running ones go on)")
    delete.add_argument("--yes", action="store_true",
                        help="do not ask (on a terminal it asks first; a script, with no terminal, is not asked)")
    run = actions.add_parser("run", help="run it now")
    run.add_argument("definition", metavar="DEF", help=DEF_HELP)
    run.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                     help="a parameter for this run only, over the definition's (the notebook's 'parameters' cell, or "
                          "the script's --NAME); repeatable")
    edit = actions.add_parser("edit", help="change some fields")
    edit.add_argument("definition", metavar="DEF", help=DEF_HELP)
    # the file it runs, checked as create checks it (newuser42 n4: changing it meant delete and create again)
    edit.add_argument("--file", dest="target", metavar="NOTEBOOK_OR_SCRIPT", default=None,
                      help="another notebook (.ipynb) or script for its runs: a path from this folder (left out: "
                           "unchanged)")
    _definition_options(edit, create=False)
    # as create's (newuser37 N4: a typo in a script's arguments meant delete and create again); "" clears them
    edit.add_argument("--args", dest="script_args", default=None,
                      help='a script\'s new arguments, e.g. "--epochs 3" ("" for none)')


def _body(args: argparse.Namespace, parser: argparse.ArgumentParser, *, create: bool,
          before: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The request of a create, or an edit's change (``before``: the definition as stored, whose
    variables ``--env``/``--unset-env`` change by name and whose file's folder a new ``--file`` moves)."""
    from ..errors import ValidationError
    from .run_options import run_fields, workdir_path

    body: dict[str, Any] = {}
    for key, field in (("cron", "schedule"), ("tz", "timezone"), ("name", "name"), ("missed", "missed"),
                       ("overlap", "overlap")):
        value = getattr(args, key, None)
        if value is not None:
            body[field] = value
    job = (before or {}).get("job")
    try:  # what each run asks for, read as submit reads it (newuser42 n4)
        body.update(run_fields(args, edit=not create,
                               current_env=job.get("env") if isinstance(job, Mapping) else None))
    except ValidationError as err:
        parser.error(f"{err.message} — {err.hint}")
    if args.parameter:
        body["parameters"] = parameters_from(args.parameter, parser)
    if getattr(args, "no_preempt", None) is not None:
        body["no_preempt"] = args.no_preempt
    if getattr(args, "no_schedule", False):
        body["schedule"] = None
    if not create and getattr(args, "script_args", None) is not None:
        body["args"] = _script_args(args.script_args, parser)
    if args.workdir:
        body["working_dir"] = workdir_path(args.workdir)
    if getattr(args, "target", None) is not None:
        _check_file(args.target, parser)
        target = os.path.abspath(args.target)
        body["notebook" if target.endswith(".ipynb") else "script"] = target
        folder = os.path.dirname(target)
        if create:
            body.setdefault("working_dir", folder)
        elif "working_dir" not in body and _in_its_files_folder(before or {}):
            body["working_dir"] = folder  # it started in its file's folder: it still does
    if create:
        body.setdefault("name", os.path.splitext(os.path.basename(target))[0])
        extra = _script_args(args.script_args, parser)
        if extra:
            body["args"] = extra
        if args.paused:
            body["paused"] = True
    return body


def _check_file(typed: str, parser: argparse.ArgumentParser) -> None:
    """The notebook or script a create or an edit names, as each firing would read it: an empty or missing one,
    a folder, a file it could not read is a usage error naming the thing by its kind (newuser31 n15)."""
    if not typed.strip():  # not "NOTEBOOK_OR_SCRIPT : <cwd> is a folder" (new user 16, N4)
        parser.error("NOTEBOOK_OR_SCRIPT must not be empty — give the notebook or script each firing runs, "
                     "e.g. reports/daily.ipynb")
    problem = file_problem(typed, os.getcwd())  # each firing would fail to find or read it
    if problem:
        from ..wording.files import path_refusal  # on a refusal only: wording/ costs each call

        what = "notebook" if typed.endswith(".ipynb") else "script"
        parser.error(" — ".join(path_refusal(what, typed, problem, what, "cli")))


def _in_its_files_folder(d: Mapping[str, Any]) -> bool:
    """Whether a stored definition's runs start in its notebook's or script's own folder (create's default)."""
    job = d.get("job")
    path = d.get("notebook") or d.get("script")
    folder = job.get("working_dir") if isinstance(job, Mapping) else None
    return isinstance(path, str) and (folder is None or folder == os.path.dirname(path))


def _script_args(text: str, parser: argparse.ArgumentParser) -> list[str]:
    """``--args "…"`` as the shell splits it; an unclosed quote is a usage error naming ``--args`` (not a traceback)."""
    try:
        return shlex.split(text)
    except ValueError as exc:
        parser.error(f"--args: {exc} in {text[:200]!r} — close the quote, e.g. --args \"--name 'my run'\"")


def _line(d: Mapping[str, Any], *, next_run: bool = True, owner: bool = False) -> str:
    """``d-…  daily  At 01:00 every day (UTC)  next 01:00 UTC``; ``d-…  d2  no schedule: runs only with
    `jupyter-sched definitions run d2``` (one wording with the magics: :func:`wording.definitions.schedule_text`).
    ``next_run=False``: without the next firing (``show`` lists the next ones below it: new user 14, N24).
    ``owner``: its owner after the id (``d-…  ana  daily  …``: ``list --all``, hubadmin23 A12)."""
    from ..wording.definitions import schedule_text

    when = schedule_text(d, run=f"`{PROG} definitions run {shlex.quote(str(d.get('name') or d['id']))}`")
    scheduled = bool(d.get("schedule_description") or d.get("schedule")) and next_run
    state = "  paused" if d.get("paused") else \
        f"  next {_clock(d.get('next_run_at'), d.get('timezone'))}{_moved(d, d.get('next_run_at'))}" if scheduled else ""
    whose = f"  {d.get('user') or '-'}" if owner else ""
    return f"{d['id']}{whose}  {d['name']}  {when}{state}"


def _clock(value: Any, zone: Any = None) -> str:
    """A wire time in the definition's zone, as every surface writes a firing
    (:func:`~..wording.definitions.firing_text`): ``Dec 3 07:00 CET``; ``-`` when none."""
    from datetime import datetime, timezone

    from ..wording.definitions import firing_text

    return firing_text(value, zone, datetime.now(timezone.utc))


def _moved(d: Mapping[str, Any], value: Any) -> str:
    """`` (02:30 does not exist that day: clocks go forward)`` after a firing daylight saving moved or
    repeats (newuser40 n4: :func:`~..definitions.schedule.wall_clock_note`); "" for any other firing."""
    from ..definitions.schedule import parse_schedule, wall_clock_note
    from ..errors import SchedError
    from ..wording.reasons import wire_time

    when = wire_time(value)
    if when is None or not d.get("schedule"):
        return ""
    try:
        note = wall_clock_note(parse_schedule(d["schedule"], d.get("timezone") or "UTC", min_interval_s=0), when)
    except SchedError:  # a stored schedule that no longer parses says so on its own line
        return ""
    return f" ({note})" if note else ""


def _resolve(client: Any, target: str) -> str:
    """A definition named on the command line: its id, or its name when exactly one of mine has
    it (``definitions`` lists names first; a person types ``run daily``, not ``run d-1m8…``).

    Raises:
        ValidationError: several of my definitions have that name (field DEF; the hint lists their ids).
    """
    from ..client.definition_names import definition_id

    return definition_id(client.call, target)


def _named(client: Any, target: str, typed: str) -> str:
    """``d-1 (daily)``: the definition's id and name, as every line writes them (the name looked up
    when the person typed the id: new user 12, N1 — runs and deletes named it by id alone)."""
    from ..wording.jobs import named

    if target != typed:
        return named(target, typed)
    return named(target, str(client.call(routes.definition(target, runs=1)).get("name") or ""))


RUNS_HEADER = "WHEN              TRIGGER    JOB                 OUTCOME"


def _run_line(run: Mapping[str, Any], zone: Any = None, definition: Mapping[str, Any] | None = None) -> str:
    """``Dec 2 07:47 CET  run now    j-…  failed, exit code 1 — cell 3 raised ValueError: …``; the one
    run after an outage says ``catch-up`` and what it stands for (hub admin 22): ``… succeeded — catch-up,
    5s late: 1 earlier firing (06:07 UTC) got no run while no server was running``."""
    from datetime import datetime, timezone

    from ..wording.definitions import NO_JOB_WORDS, catch_up_text, run_parameters_text, trigger_text
    from ..wording.jobs import job_outcome

    now = datetime.now(timezone.utc)
    job = run.get("job")
    outcome = job_outcome(job, now) if isinstance(job, Mapping) else NO_JOB_WORDS
    # a run's own parameters where they differ from the definition's (newuser37 N4: `run now -p` runs were unsaid)
    own = run_parameters_text(run, definition) if definition is not None else ""
    if own:
        outcome = f"({own}) {outcome}"
    said = catch_up_text(run, zone, now)
    # the words the panel and the magics say (new user 23, N7: "schedule"/"manual" here, "scheduled"/"run now" there)
    return (f"{_clock(run.get('scheduled_for'), zone):16}  {trigger_text(run):9}  {run.get('job_id')}  {outcome}"
            + (f" — {said}" if said else ""))


def _show(result: Mapping[str, Any], action: str, out: Any) -> None:
    """``definitions show`` / ``runs`` of one definition (GET's answer with its runs), every clock in its zone."""
    from datetime import datetime, timezone

    from ..wording.definitions import skipped_text, zone_header

    zone = result.get("timezone")

    skipped = skipped_text(result, datetime.now(timezone.utc))  # new user 34, n1: said, not a silent gap
    if action == "runs" and skipped:
        print(skipped, file=out)
    if action == "show":  # the first firing said once: as the first of the next ones
        upcoming = list(result.get("upcoming") or [])
        print(_line(result, next_run=not upcoming), file=out)
        for warning in result.get("warnings") or ():  # a model no GPU has now (hubadmin26 B8)
            print(f"  {warning}", file=out)
        from ..wording.definitions import parameters_text, runs_text

        print(f"  {runs_text(result)}", file=out)  # what each firing runs (new user 20, N9)
        if said := parameters_text(result):  # and with which parameters (newuser37 N4)
            print(f"  {said}", file=out)
        if skipped:
            print(f"  {skipped}", file=out)
        for when in upcoming:
            print(f"  next  {_clock(when, zone)}{_moved(result, when)}", file=out)
    runs = result.get("runs") or []
    if runs:  # the zone named once (each clock also says its abbreviation)
        print(f"{RUNS_HEADER}  ({zone_header(result)})", file=out)
    for run in runs:
        print(_run_line(run, zone, result), file=out)
    if not runs and action == "runs":
        print("no runs yet", file=out)


def definitions(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """Carry out ``jupyter-sched definitions ACTION`` (see the module docstring)."""
    action = args.action or "list"
    parser = _Parser(prog=f"{PROG} definitions {action}",  # its errors in the CLI's one style
                     usage=f"{PROG} definitions {action} ... [-p NAME=VALUE ...]")
    out = io.out
    if action == "list":
        rows = client.definitions(all_users=getattr(args, "all_users", False))  # every page (red28 R6)
        if args.json:
            print(json.dumps(rows, indent=1), file=out)
        everyone = getattr(args, "all_users", False)  # whose each is (hubadmin23 A12: no owner column)
        if rows and not args.json:
            from datetime import datetime, timezone

            from ..wording.definitions import in_its_zone, last_run_text, parameters_brief

            now = datetime.now(timezone.utc)
        for d in [] if args.json else rows:
            # how its last run went, as the magics' last_state / last_reason say it (newuser37 N1: a run that failed
            # every night was said by `show` alone, one definition at a time); its parameters, compact (session 38)
            with in_its_zone(d):  # its last run's end in its zone, as its next firing (newuser38 n20)
                tail = [part for part in (parameters_brief(d), last_run_text(d.get("last_run"), now)) if part]
                print("  ".join([_line(d, owner=everyone), *tail]), file=out)
            for warning in d.get("warnings") or ():  # a model no GPU has now (hubadmin26 B8)
                print(f"  {warning}", file=out)
        if not rows and not args.json:
            print("no definitions (create one: jupyter-sched definitions create NOTEBOOK --cron ...)", file=out)
        return EXIT_OK
    if action == "create":
        body = _body(args, parser, create=True)
        zone = None
        if args.tz is None and body.get("schedule"):  # read in the caller's zone, as cron is (newuser27 N7)
            from ..client.local_zone import local_zone

            if (zone := local_zone(os.environ)) is not None:
                body["timezone"] = zone[0]
        result = client.call(routes.create_definition(body))
        print(json.dumps(result, indent=1) if args.json else "defined " + _line(result), file=out)
        if zone is not None and not args.json:
            from ..client.local_zone import zone_note

            print(f"{PROG} definitions create: note: {zone_note(zone)}", file=io.err)
        _notes(result, io, "create")
        note_parameters(result.get("notebook"), result.get("parameters"), io, said=result.get("warnings"))
        return EXIT_OK
    target = _resolve(client, args.definition)
    before: Mapping[str, Any] = {}
    if action == "edit":
        change = _body(args, parser, create=False)
        if not change and not args.unset_parameter:
            parser.error("nothing to change: give --file, --cron, --no-schedule, --tz, --name, -p NAME=VALUE, "
                         "--unset-parameter NAME, --args, --gpus, --model, --mem-per-gpu, --cpu, --memory, --priority, "
                         "--time-limit, --profile, --team, --nvlink, --no-nvlink, --env NAME=VALUE, --unset-env NAME, "
                         "--workdir, --no-preempt, --preempt, --missed or --overlap")
        edits_parameters = bool(args.parameter or args.unset_parameter)
        # to say what changed (N9), and the parameters it keeps: PATCH's parameters are the whole set (newuser38 N1);
        # its variables, which --env / --unset-env change by name, and its file's folder, which --file moves (n4)
        reads = edits_parameters or bool(args.env or args.unset_env) or args.target is not None
        before = client.call(routes.definition(target, runs=1)) if reads or not args.json else {}
        if reads:
            change = _body(args, parser, create=False, before=before)
        if edits_parameters:
            from ..definitions.parameters import edited_parameters
            from ..errors import ValidationError

            try:
                change["parameters"] = edited_parameters(before.get("parameters"), change.get("parameters") or {},
                                                         args.unset_parameter)
            except ValidationError as err:
                parser.error(f"{err.message} — {err.hint}")
        if args.json:
            before = {}
        result = client.call(routes.update_definition(target, change))
    elif action in ("pause", "resume"):
        result = client.call(routes.pause_definition(target) if action == "pause" else routes.resume_definition(target))
    elif action == "delete":
        ref = "" if args.json else _named(client, target, args.definition)  # before it is gone
        # asked on a terminal, as cancel asks; --yes as cancel takes it (hubadmin25 B14); a script (no terminal)
        # deletes as it always did, as `cancel JOB` cancels one job unasked
        if not getattr(args, "yes", False) and interactive(io) and not confirmed(
                io, f"Delete definition {ref or args.definition}{' and cancel its waiting runs' if args.cancel_runs else ''}?"):
            print("nothing deleted", file=out)
            return EXIT_OK
        result = client.call(routes.delete_definition(target, cancel_runs=args.cancel_runs))
        print(json.dumps(result) if args.json else definition_deleted(ref, result, cancel="jupyter-sched cancel"),
              file=out)
        return EXIT_OK
    elif action == "run":
        from ..wording.definitions import run_made_text

        body = {"parameters": parameters_from(args.parameter, parser)} if args.parameter else {}
        result = client.call(routes.run_definition(target, body))
        if body:
            note_parameters(client.call(routes.definition(target)).get("notebook"), body["parameters"], io)
        if args.json:
            print(json.dumps(result, indent=1), file=out)
            return EXIT_OK
        from ..wording.jobs import named

        definition = client.call(routes.definition(target, runs=1))  # its name, and its zone for the reason's clocks
        name = str(definition.get("name") or "") if target == args.definition else args.definition  # as _named
        print(f"{run_made_text(result, definition)} of {named(target, name)} — `{PROG} wait {result['job_id']}` "
              "follows it", file=out)
        return EXIT_OK
    else:
        result = client.call(routes.definition(target, runs=50))
        if args.json:
            print(json.dumps(result, indent=1), file=out)
            return EXIT_OK
        from ..wording.definitions import in_its_zone

        with in_its_zone(result):  # one zone on each line: the definition's (newuser38 n20)
            _show(result, action, out)
        return EXIT_OK
    done = {"edit": "edited", "pause": "paused", "resume": "resumed"}[action]
    print(json.dumps(result, indent=1) if args.json else f"{done} " + _line(result), file=out)
    if before:  # what the edit changed, not only the schedule it keeps (new user 20, N9)
        from ..wording.definitions import changes_text

        if changed := changes_text(before, result):
            print(f"  changed: {changed}", file=out)
    if action == "edit":
        _notes(result, io, "edit")
    if action == "edit" and "parameters" in change:
        # the whole set it now holds, as the server reads it (said once: newuser39 n3)
        note_parameters(result.get("notebook"), result.get("parameters") or change["parameters"], io,
                        said=result.get("warnings"))
    return EXIT_OK
