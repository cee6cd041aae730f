"""``%schedule define``: job definitions from a notebook (a thin client of ``api/sched/definitions``).

Grammar::

    %schedule define NOTEBOOK.ipynb|SCRIPT.py --cron "0 12 * * 1-5" [--tz Europe/Berlin]
                     [--name NAME] [-p NAME=VALUE ...] [--missed run_once|skip] [--paused]
                     [--overlap skip_waiting|skip_unfinished|allow] [--no-preempt]
                     [--gpus N] [--model M] [--mem-per-gpu 20GiB] [--priority P] [--time-limit 2h]
                     [--queue TEAM] [--profile NAME] [-- SCRIPT ARGS...]
    %schedule define list [--all]          my definitions (admins: --all for everyone's)
    %schedule define show DEF              one definition: schedule in words, next firings, runs
    %schedule define runs DEF              its runs: state and reason of each
    %schedule define run DEF [-p N=V ...]  run it now (parameters for this run only)
    %schedule define edit DEF [--cron C | --no-schedule] [--tz Z] [--name N] [-p N=V ...] [--unset-parameter N ...]
                          [--missed M] [--overlap O] [--no-preempt | --preempt] [job options]
    %schedule define pause DEF | resume DEF | delete DEF [--cancel-runs]

``-p`` values are read as JSON when they parse (``3``, ``0.5``, ``true``, ``[1, 2]``) and as text
otherwise (``-p region=eu``). Parsing raises :class:`~jupyter_sched.errors.ValidationError` naming
the argument, as every magic does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..client._routes import routes
from ..client.definition_names import definition_id
from ..definitions.parameters import NOTEBOOK_ARGUMENT, NOTEBOOK_VALUES_HINT, parameters_file_note, unsaid_note
from ..errors import ValidationError
from ..model.names import file_name
from ..wording import definition_deleted
from ..wording.jobs import named
from .parsing import JobOptions, _add_request_options, _nonempty, _options, _Parser, job_body, parameters_of
from .render import shown_frame

__all__ = ["DEFINE_ACTIONS", "DefineCommand", "definitions_frame", "parse_define", "run_define"]

DEFINE_ACTIONS = ("list", "show", "runs", "run", "edit", "pause", "resume", "delete")
_PROG = "%schedule define"


@dataclass(frozen=True, slots=True)
class DefineCommand:
    """A parsed ``%schedule define`` line.

    Attributes:
        action: ``create`` or one of :data:`DEFINE_ACTIONS`.
        target: the notebook or script (create) or the definition id (other actions).
        cron / timezone / name / missed / paused / no_schedule: definition fields as typed.
        parameters: ``-p`` values (JSON-decoded where they parse).
        options: job request options (GPUs, model, time limit, ...).
        args: a script's arguments.
        all_users: (list) everyone's definitions (admins).
        preempt: (edit) ``--preempt``: its runs may preempt again (undoes ``--no-preempt``).
        unset: (edit) ``--unset-parameter`` names: parameters removed (``-p`` sets the ones it names, the rest stay).
        cancel_runs: (delete) also cancel its runs still waiting to start.
    """

    action: str
    target: str | None = None
    cron: str | None = None
    timezone: str | None = None
    name: str | None = None
    missed: str | None = None
    overlap: str | None = None
    paused: bool = False
    no_schedule: bool = False
    parameters: Mapping[str, Any] = field(default_factory=dict)
    options: JobOptions = field(default_factory=JobOptions)
    args: tuple[str, ...] = ()
    all_users: bool = False
    cancel_runs: bool = False
    preempt: bool = False
    unset: tuple[str, ...] = ()


def _definition_parser(action: str) -> _Parser:
    parser = _Parser(f"{_PROG} {action}" if action != "create" else _PROG, "%schedule")
    parser.add_argument("--cron")
    parser.add_argument("--tz")
    parser.add_argument("--missed", choices=("run_once", "skip"))
    parser.add_argument("--overlap", choices=("skip_waiting", "skip_unfinished", "allow"))
    parser.add_argument("-p", "--parameter", action="append", default=[])
    # its runs ask free GPUs only, as %%schedule --no-preempt (session 38: a definition could not carry it); an
    # edit's --preempt undoes it, as `jupyter-sched definitions edit --preempt`
    if action == "create":
        parser.add_argument("--no-preempt", dest="no_preempt", action="store_true")
        parser.add_argument("--paused", action="store_true")
    else:
        preempt = parser.add_mutually_exclusive_group()
        preempt.add_argument("--no-preempt", dest="no_preempt", action="store_true")
        preempt.add_argument("--preempt", dest="preempt", action="store_true")
        parser.add_argument("--no-schedule", action="store_true")
        parser.add_argument("--unset-parameter", dest="unset_parameter", action="append", default=[])
    _add_request_options(parser)
    return parser


def parse_define(tokens: Sequence[str]) -> DefineCommand:
    """Parse the tokens after ``%schedule define``.

    Raises:
        ValidationError: naming the argument (``--cron``, ``-p``, ``DEF``, ``TARGET``...).
    """
    tokens = list(tokens)
    if not tokens:
        raise ValidationError(f"{_PROG}: missing NOTEBOOK, SCRIPT or action", field="TARGET",
                              hint='e.g. %schedule define report.ipynb --cron "0 12 * * 1-5" --tz Europe/Berlin')
    head, rest = tokens[0], tokens[1:]
    if head == "list":
        parser = _Parser(f"{_PROG} list", "%schedule")
        parser.add_argument("--all", action="store_true")
        return DefineCommand("list", all_users=parser.parse_args(rest).all)
    if head in ("show", "runs", "pause", "resume", "delete"):
        parser = _Parser(f"{_PROG} {head}", "%schedule")
        parser.add_argument("definition", metavar="DEF")
        if head == "delete":
            parser.add_argument("--cancel-runs", dest="cancel_runs", action="store_true")
        ns = parser.parse_args(rest)
        return DefineCommand(head, target=_nonempty(ns.definition, "DEF"),
                             cancel_runs=bool(getattr(ns, "cancel_runs", False)))
    if head == "run":
        parser = _Parser(f"{_PROG} run", "%schedule")
        parser.add_argument("definition", metavar="DEF")
        parser.add_argument("-p", "--parameter", action="append", default=[])
        ns = parser.parse_args(rest)
        return DefineCommand("run", target=_nonempty(ns.definition, "DEF"),
                             parameters=parameters_of(ns.parameter, _PROG))
    action = "edit" if head == "edit" else "create"
    if action == "edit":
        if not rest or rest[0].startswith("-"):
            raise ValidationError(f"{_PROG} edit: missing DEF", field="DEF", hint="e.g. %schedule define edit d-1 --cron '0 6 * * *'")
        target, rest = rest[0], rest[1:]
    else:
        target, rest = head, rest
    verbatim: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, verbatim = rest[:cut], rest[cut + 1:]
    ns = _definition_parser(action).parse_args(rest)
    if action == "create":
        if not target.endswith((".ipynb", ".py")):
            raise ValidationError(f"{_PROG}: {target!r} is neither a notebook (.ipynb) nor a script (.py)",
                                  field="TARGET", hint="e.g. %schedule define report.ipynb --cron '0 12 * * *'")
        if verbatim and target.endswith(".ipynb"):
            raise ValidationError(f"{_PROG}: " + NOTEBOOK_ARGUMENT.format(word=verbatim[0]), field=verbatim[0],
                                  hint=NOTEBOOK_VALUES_HINT)
    if getattr(ns, "no_schedule", False) and ns.cron:
        raise ValidationError(f"{_PROG} edit: give --cron or --no-schedule, not both", field="--cron",
                              hint="--no-schedule leaves only run-now")
    return DefineCommand(
        action, target=target, cron=ns.cron, timezone=ns.tz, name=_nonempty(ns.name, "--name"), missed=ns.missed,
        overlap=ns.overlap, paused=bool(getattr(ns, "paused", False)), no_schedule=bool(getattr(ns, "no_schedule", False)),
        parameters=parameters_of(ns.parameter, _PROG),
        options=_options(ns, gpus=ns.gpus, min_gpus=0), args=tuple(verbatim), preempt=bool(getattr(ns, "preempt", False)),
        unset=tuple(getattr(ns, "unset_parameter", ())))


def definition_body(cmd: DefineCommand, *, target_path: str | None = None) -> dict[str, Any]:
    """The request body for create (``target_path``: the resolved notebook/script) or edit."""
    body: dict[str, Any] = job_body(cmd.options)
    body.pop("name", None)
    if cmd.options.time_limit_s is not None:
        body["time_limit"] = body.pop("time_limit_s")
    if cmd.name or (cmd.action == "create" and target_path):
        body["name"] = cmd.name or file_name(Path(str(target_path)).stem)  # an id-shaped stem is no name (red41 R2)
    if target_path is not None:
        body["notebook" if target_path.endswith(".ipynb") else "script"] = target_path
        body["working_dir"] = str(Path(target_path).parent)
    if cmd.cron is not None:
        body["schedule"] = cmd.cron
    if cmd.no_schedule:
        body["schedule"] = None
    if cmd.timezone is not None:
        body["timezone"] = cmd.timezone
    if cmd.missed is not None:
        body["missed"] = cmd.missed
    if cmd.overlap is not None:
        body["overlap"] = cmd.overlap
    if cmd.paused:
        body["paused"] = True
    if cmd.preempt:
        body["no_preempt"] = False
    if cmd.parameters:
        body["parameters"] = dict(cmd.parameters)
    if cmd.args:
        body["args"] = list(cmd.args)
    return body


def _server_notes(definition: Any, say: Callable[[str], None]) -> None:
    """The server's notes on a created or edited definition's runs (``warnings``, e.g. priority low
    may be preempted at any moment; verify21 V9), as ``%gpu request`` says its own: ``Note: …``."""
    for warning in (definition.get("warnings") or ()) if isinstance(definition, Mapping) else ():
        say(f"Note: {warning}")


def _note_unknown_parameters(definition: Mapping[str, Any], parameters: Mapping[str, Any], say: Callable[[str], None]) -> None:
    """Say when ``-p`` names something the notebook's parameters cell does not set (new user 6,
    F10: ``-p regoin=eu`` ran every night with the default region, unsaid)."""
    path = definition.get("notebook")
    # said once: the server's answer reads the notebook too where it can (newuser39 n3)
    note = unsaid_note(parameters_file_note(path, parameters), definition.get("warnings")) if isinstance(path, str) else ""
    if note:
        say(f"Note: {note}")


def _local(text: str | None, zone: str) -> str:
    """A firing in the definition's zone as the CLI and the panel write it: ``Dec 7 12:00 CET``
    (:func:`~..wording.definitions.firing_text`; new user 20, N27: ``2026-12-07 12:00 CET`` here)."""
    from ..wording.definitions import firing_text

    return firing_text(text, zone, datetime.now(timezone.utc)) if text else ""


def definition_line(d: Mapping[str, Any], *, next_run: bool = True) -> str:
    """``d-… (daily): At 12:00 on Monday through Friday (Europe/Berlin); next run Jun 2 12:00 CEST``
    (``next_run=False``: without it, for ``show``, which lists the next firings below: new user 14, N24)."""
    from ..wording.definitions import schedule_text  # one wording with the CLI (new user 13, N20)

    when = schedule_text(d, run=f"%schedule define run {d['id']}")
    line = f"{named(d['id'], str(d.get('name') or ''))}: {when}"
    if d.get("paused"):
        return line + "; paused"
    nxt = _local(d.get("next_run_at"), str(d.get("timezone", "UTC"))) if next_run else ""
    return line + (f"; next run {nxt}" if nxt else "")


def _run_row(run: Mapping[str, Any], zone: str) -> dict[str, Any]:
    job = run.get("job") if isinstance(run.get("job"), Mapping) else {}
    assert isinstance(job, Mapping)
    reason = job.get("reason") if isinstance(job.get("reason"), Mapping) else {}
    assert isinstance(reason, Mapping)
    from ..wording.definitions import catch_up_text, trigger_text  # one wording with the CLI and the panel
    from ..wording.jobs import WAITING_STATES, job_detail

    now = datetime.now(timezone.utc)
    # a waiting run's reason rendered here, its ETA in the zone its row is said in (the server's message says UTC:
    # newuser38 n20, "11:28 CET" beside reasons in UTC) — the CLI's runs line's words
    waits = job.get("state") in WAITING_STATES and bool(reason)
    return {"scheduled_for": _local(run.get("scheduled_for"), zone),
            "trigger": trigger_text(run),  # "run now", not the wire's "manual" (new user 23, N7)
            "job_id": run.get("job_id"), "state": job.get("state", "deleted"),
            "reason": job_detail(job, now) if waits else reason.get("message") or job.get("message", ""),
            "parameters": json.dumps(run.get("parameters") or {}),
            "catch_up": catch_up_text(run, zone, now)}


def definitions_frame(rows: Sequence[Mapping[str, Any]]) -> Any:
    """``%schedule define list``: id, name, target, its parameters (compact), schedule in words, zone, paused, next
    run, last run."""
    import pandas as pd

    from ..wording.definitions import in_its_zone, last_run_parts, parameters_brief

    out = []
    now = datetime.now(timezone.utc)
    for d in rows:
        # the last run in the CLI list's words (newuser37 N1: one renderer, wording.definitions), in its zone as its
        # next run (newuser38 n20)
        with in_its_zone(d):
            last_state, last_reason = last_run_parts(d.get("last_run"), now)
        out.append({"id": d["id"], "name": d["name"], "target": d.get("notebook") or d.get("script"),
                    "schedule": d.get("schedule_description") or d.get("schedule") or "",
                    "parameters": parameters_brief(d).removeprefix("parameters "),  # as the CLI list (session 38)
                    "timezone": d.get("timezone"), "paused": d.get("paused"),
                    "next_run": _local(d.get("next_run_at"), str(d.get("timezone", "UTC"))),
                    "last_state": last_state, "last_reason": last_reason})
    columns = ["id", "name", "target", "parameters", "schedule", "timezone", "paused", "next_run", "last_state",
               "last_reason"]
    return shown_frame(pd.DataFrame(out, columns=columns))


def runs_frame(runs: Sequence[Mapping[str, Any]], zone: str) -> Any:
    """A definition's runs: when, trigger (``scheduled``, ``run now``, or ``catch-up`` for the one run after an
    outage: :func:`~jupyter_sched.wording.definitions.trigger_text`), job, state,
    reason (the failing cell for notebooks), parameters, and what a catch-up run stands for."""
    import pandas as pd

    from ..wording.definitions import in_its_zone

    with in_its_zone({"timezone": zone}):  # every clock of a row in the definition's zone (newuser38 n20)
        rows = [_run_row(r, zone) for r in runs]
    return shown_frame(pd.DataFrame(rows,
                                    columns=["scheduled_for", "trigger", "job_id", "state", "reason", "parameters",
                                             "catch_up"]))


def run_define(call: Callable[[Any], Any], tokens: Sequence[str], *, resolve: Callable[[str, str], Path],
               say: Callable[[str], None],
               definitions: Callable[[bool], Sequence[Mapping[str, Any]]] | None = None) -> Any:
    """Carry out ``%schedule define ...``.

    Args:
        call: sends one :class:`~jupyter_sched.client._wire.Req` and returns the decoded JSON.
        tokens: the words after ``define``.
        definitions: ``definitions(all_users)`` → every page of ``GET definitions`` (the client's
            :meth:`~jupyter_sched.client.SchedClient.definitions`, which follows ``Link: rel=next``:
            red28 R6 paged the list at 100); None: ``call``'s one answer (a double that answers whole).
        resolve: ``resolve(path, what)`` → the existing file (raises naming the argument).
        say: prints one line for the user.

    Returns:
        The definition id (create), a DataFrame (list, runs, show; None and a sentence when there
        is nothing to list), the run's job id (run), or None.
    """
    cmd = parse_define(tokens)
    if cmd.action == "list":
        rows = (definitions(cmd.all_users) if definitions is not None
                else call(routes.definitions(all_users=cmd.all_users)))
        if not rows:  # one sentence, not an "Empty DataFrame" (issue 20)
            say(("No job definitions yet" if cmd.all_users else "You have no job definitions yet")
                + '. Create one: %schedule define NOTEBOOK.ipynb --cron "0 12 * * 1-5"')
            return None
        return definitions_frame(rows)
    if cmd.action == "create":
        assert cmd.target is not None
        path = resolve(cmd.target, "notebook" if cmd.target.endswith(".ipynb") else "script")
        body = definition_body(cmd, target_path=str(path))
        zone = None
        if cmd.timezone is None and body.get("schedule"):  # the kernel's zone, as the panel uses the browser's (N7)
            from ..client.local_zone import local_zone

            if (zone := local_zone(os.environ)) is not None:
                body["timezone"] = zone[0]
        created = call(routes.create_definition(body))
        say("Defined " + definition_line(created))
        if zone is not None:
            from ..client.local_zone import zone_note

            said = zone_note(zone)
            say(f"Note: {said[:1].upper()}{said[1:]}.")
        _server_notes(created, say)
        _note_unknown_parameters(created, cmd.parameters, say)
        return str(created["id"])
    target = definition_id(call, str(cmd.target))  # a name as the CLI takes it (verify21 V5)
    if cmd.action == "edit":
        from ..wording.definitions import changes_text

        before = call(routes.definition(target, runs=1))  # to say what changed, as the CLI does (new user 20, N9)
        body = definition_body(cmd)
        if cmd.parameters or cmd.unset:  # -p sets the ones it names; PATCH's parameters are the whole set (newuser38 N1)
            from ..definitions.parameters import edited_parameters

            body["parameters"] = edited_parameters(before.get("parameters"), cmd.parameters, cmd.unset)
        edited = call(routes.update_definition(target, body))
        say("Updated " + definition_line(edited))
        if changed := changes_text(before, edited):
            say(f"Changed: {changed}.")
        _server_notes(edited, say)
        if cmd.parameters:  # the whole set it now holds, as the server reads it (said once: newuser39 n3)
            _note_unknown_parameters(edited, edited.get("parameters") or cmd.parameters, say)
        return None
    if cmd.action in ("pause", "resume"):
        req = routes.pause_definition(target) if cmd.action == "pause" else routes.resume_definition(target)
        say(("Paused " if cmd.action == "pause" else "Resumed ") + definition_line(call(req)))
        return None
    if cmd.action == "delete":
        name = str(call(routes.definition(target, runs=1)).get("name") or "")  # said with the id (new user 12, N1)
        gone = call(routes.delete_definition(target, cancel_runs=cmd.cancel_runs))
        said = definition_deleted(named(target, name), gone, cancel="%schedule cancel")
        say(said[0].upper() + said[1:] + ".")
        return None
    if cmd.action == "run":
        definition = call(routes.definition(target, runs=1))
        name = str(definition.get("name") or "")  # said with the id (new user 12, N1)
        run = call(routes.run_definition(target, {"parameters": dict(cmd.parameters)} if cmd.parameters else {}))
        _note_unknown_parameters(definition, cmd.parameters, say)  # as `jupyter-sched definitions run -p` says it
        from ..wording.definitions import run_made_text

        made = run_made_text(run, definition)  # its real state (newuser34 N5 nit); clocks in its zone (n30)
        say(f"{made[0].upper()}{made[1:]} of {named(target, name)} with parameters "
            f"{json.dumps(run.get('parameters') or {})}; %schedule wait {run['job_id']} follows it.")
        return str(run["job_id"])
    detail = call(routes.definition(target, runs=50))
    from ..wording.definitions import skipped_text

    skipped = skipped_text(detail, datetime.now(timezone.utc))  # one wording with the CLI (new user 34, n1)
    if detail.get("runs") and cmd.action == "runs":  # the zone of every time below, named once (newuser38 n20)
        from ..wording.definitions import zone_header

        say(zone_header(detail)[0].upper() + zone_header(detail)[1:] + ".")
    if cmd.action == "runs" and skipped:
        say(skipped[0].upper() + skipped[1:] + ".")
    if cmd.action == "show":  # the first firing said once: as the first of the next ones
        upcoming = list(detail.get("upcoming") or [])
        from ..wording.definitions import runs_text

        say(definition_line(detail, next_run=not upcoming))
        say(f"  {runs_text(detail)}")  # what each firing runs (new user 20, N9)
        if skipped:
            say(f"  {skipped}")
        for when in upcoming:
            say(f"  next: {_local(when, str(detail.get('timezone', 'UTC')))}")
    runs = detail.get("runs") or []
    if not runs:  # one sentence, not pandas' "Empty DataFrame / Columns: [...]" (new user 22, small items)
        say(f"{'  ' if cmd.action == 'show' else ''}No runs yet: %schedule define run {cmd.target} starts one now.")
        return None
    return runs_frame(runs, str(detail.get("timezone", "UTC")))
