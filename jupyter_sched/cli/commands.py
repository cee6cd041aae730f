"""The subcommands of ``jupyter-sched`` that talk to a server (see :mod:`.main` for the usage).

Each takes the API client, the parsed arguments and the streams, prints what happened and
returns the exit code. Sentences come from :mod:`jupyter_sched.wording`, shared with the magics
and the panel.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import PurePath
from typing import Any, TypeVar

from ..errors import AuthorizationError, ValidationError
from ..model.periods import said_to_reader
from ..textsafe import FollowedLine, escaped_controls, printable_log, rewritten_line
from ..userfiles import notebook_start
from ..wording import gpus_text, job_detail, job_line, progress_text, render_reason, state_word, wait_progress
from ..wording.cordons import drain_text
from ..wording.flags import bare_seconds_note
from ..wording.jobs import (
    TERMINAL_STATES,
    cluster_wait,
    ends_by,
    fit_name,
    gone_text,
    lease_given_back,
    restarted_text,
    serving_text,
    state_filter,
    still_going,
    stop_detail,
    unhealthy_text,
    work_name,
)
from ..wording.log_clocks import log_clocks_said, log_note_said
from ..wording.time_limits import planned_limit_line
from ..wording.usage import submitted_window
from .cancel import cancel
from .definitions import definitions, note_parameters
from .job_changes import change as change_job
from .main import (
    EXIT_INTERRUPTED,
    EXIT_JOB_FAILED,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    PROG,
    QUEUE_LIMIT_MAX,
    Streams,
    job_of,
)
from .nodes import nodes as nodes_command
from .progress import TerminalProgress
from .team_names import unknown_team
from .teams import teams as teams_command
from .users import users as users_command

__all__ = ["COMMANDS", "number_or_text"]

T = TypeVar("T")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def status(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """Server, identity, GPUs and my work, from three small answers: ``GET me`` already counts my
    running jobs, leases and pending jobs, so no job list is fetched (on a busy server that list
    is megabytes, and the slowest part of the command) — except my GPU-holding jobs while some of
    them are stopping, to say why and until when. ``status JOB``: that job's one line (``--json``: its
    record), as ``%schedule status JOB`` prints it (new user 24, N11)."""
    if getattr(args, "job", None):
        job = client.job(job_of(client, args.job, "status", io))  # a name of mine is taken for its id
        if args.json:
            _dump(job, io)
        else:
            print(job_line(job, _now()), file=io.out)
        return EXIT_OK
    config, me, inventory = client.config(), client.me(), client.inventory()
    if args.json:
        _dump({"server": client.connection.url, "config": config, "me": me, "inventory": inventory}, io)
        return EXIT_OK
    from ..client.status import status_lines_of

    for line in status_lines_of(client, config=config, me=me, inventory=inventory):
        print(line, file=io.out)
    return EXIT_OK


_RUNNABLE = (".py", ".ipynb", ".sh", ".bash", ".r", ".jl", ".pl", ".rb", ".js")


def default_name(body: dict[str, Any]) -> str:
    """A job's name when none is given, as the magics name theirs (the script's or notebook's stem):
    ``--script train.py`` / ``-- python train.py`` → ``train``; ``-- python -m pkg.train`` → ``pkg.train``;
    ``-- ./run`` → ``run``. "" when nothing names it (the server's default, "job", then stands)."""
    for key in ("script", "notebook"):
        if isinstance(body.get(key), str) and body[key].strip():
            return PurePath(body[key]).stem[:200]
    command = [str(part) for part in body.get("command") or ()]
    for i, part in enumerate(command):
        if part == "-m" and i + 1 < len(command) and i > 0:
            return command[i + 1][:200]
        if not part.startswith("-") and part.lower().endswith(_RUNNABLE):
            return PurePath(part).stem[:200]
    first = PurePath(command[0]).name if command else ""
    return first[:200] if first.strip() else ""


def _refuse_options_after_command(argv: Sequence[str], options: Sequence[str], *, script: str | None = None,
                                  switches: Sequence[str] = (), before: Sequence[str] = ()) -> None:
    """Refuse submit's own options (or a typo or prefix of one) written after a command given without ``--``:
    ``submit --gpus 1 python train.py --time-limit 2m`` gave the job no time limit and ``train.py`` the words
    ``--time-limit 2m`` (newuser31 N9: the CLI twin of N1, ``%schedule run train.py --time-limt 1h``). With
    ``--`` before the command every word after it is the command's, as the usage says. ``script``: the words are
    the arguments of ``--script SCRIPT`` (newuser32 N3: ``--script train.py 3 --time-limit 1m --dry-run`` ran a real,
    unlimited job with those words as train.py's arguments); else ``argv[0]`` is the command. The fix offered is
    the user's whole line re-ordered (newuser32 N5: it kept only the first misplaced option, and pasted it ran a
    job with the wrong request): ``before`` (what was typed before the command, ``submit`` included: kept), every
    submit option found after the command moved before it (``switches``: those that take no value).

    Raises:
        ValidationError: naming the first such option (field) and the line that says what was meant.
    """
    import shlex

    from ..wording.flags import meant_option

    program = script if script is not None else argv[0]
    first = 0 if script is not None else 1
    found: list[tuple[str, str]] = []  # (as typed, as meant)
    moved: list[str] = []
    kept: list[str] = list(argv[:first])
    at = first
    while at < len(argv):
        word = argv[at]
        flag = word.split("=", 1)[0]
        meant = (flag if flag in options else meant_option(flag, options)) if flag.startswith("--") and \
            len(flag) > 2 else ""
        if not meant:
            kept.append(word)
            at += 1
            continue
        found.append((flag, meant))
        moved.append(meant + word[len(flag):])
        if "=" not in word and meant not in switches and at + 1 < len(argv):
            moved.append(argv[at + 1])
            at += 1
        at += 1
    if not found:
        return
    head, before = (list(before[:before.index("submit")]), list(before[before.index("submit") + 1:])) \
        if "submit" in before else ([], list(before))
    before = _without(before, {meant for _, meant in found}, switches)  # said again after it: the later one meant
    flag, meant = found[0]
    others = f" (and {', '.join(f for f, _ in found[1:])})" if len(found) > 1 else ""
    if script is not None:
        line = shlex.join([PROG, *head, "submit", *moved, *before, *kept])
        raise ValidationError(
            f"{flag}{others} after --script {script} would go to {script} as its argument"
            + (f" — did you mean {meant}?" if meant != flag else ""), field=flag,
            hint=f"put {PROG} submit's options before --script: {line}; if {script} takes {flag} itself, write -- "
                 f"before its arguments: --script {script} -- {shlex.join(argv)}")
    line = shlex.join([PROG, *head, "submit", *before, *moved, "--", *kept])
    raise ValidationError(
        f"{flag}{others} after the command {program} would go to it as its argument"
        + (f" — did you mean {meant}?" if meant != flag else ""), field=flag,
        hint=f"put {PROG} submit's options before the command and -- before it: {line}; if {program} takes {flag} "
             "itself, write -- before the command")


def _without(words: Sequence[str], flags: set[str], switches: Sequence[str]) -> list[str]:
    """``words`` less each of ``flags`` (with its value, unless a switch or written ``--flag=value``)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        flag = word.split("=", 1)[0]
        if flag in flags:
            skip = "=" not in word and flag not in switches
            continue
        kept.append(word)
    return kept


def _typed_before(argv: Sequence[str]) -> list[str]:
    """The words typed before ``argv`` (the command, or a script's arguments) — global options, ``submit`` and its
    options — as the user typed them; [] where the CLI did not record them (called as a library)."""
    from .main import _Parser

    typed = list(_Parser.typed)
    if "submit" not in typed or len(argv) > len(typed) or typed[len(typed) - len(argv):] != list(argv):
        return []
    return typed[:len(typed) - len(argv)]


def submit(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """``POST jobs`` from the options; prints ``submitted j-… (name): <state line>``; ``--wait`` then waits."""
    body: dict[str, Any] = {}
    argv = list(args.argv)
    separated = bool(argv) and argv[0] == "--"
    if separated:
        argv = argv[1:]
    if args.script:
        body["script"] = args.script
        if argv:
            if not separated:  # the script's arguments without -- : submit's options among them are refused (N3)
                _refuse_options_after_command(argv, tuple(getattr(args, "submit_options", ()) or ()),
                                              script=args.script, before=_typed_before(argv),
                                              switches=tuple(getattr(args, "submit_switches", ()) or ()))
            body["args"] = argv
    elif args.notebook:
        body["notebook"] = args.notebook
    elif argv:
        if not separated:  # a command without -- : submit's options after it are refused (newuser31 N9)
            _refuse_options_after_command(argv, tuple(getattr(args, "submit_options", ()) or ()),
                                          before=_typed_before(argv),
                                          switches=tuple(getattr(args, "submit_switches", ()) or ()))
        body["command"] = argv
    from .run_options import run_fields, workdir_path

    # what the run asks for, read as definitions create/edit read it (one definition: cli/run_options, newuser42 n4)
    body.update(run_fields(args))
    if args.name is not None:
        body["name"] = args.name
    if getattr(args, "parameters", None):  # read and checked with the usage (main._check_parameters)
        body["parameters"] = args.parameters
    if getattr(args, "no_preempt", False):  # newuser36 N6
        body["no_preempt"] = True
    # a relative --workdir is this shell's folder's, as the default is (new user 11, N20: `--workdir data`
    # went as typed and the server read it elsewhere); a quoted '~/…' stays the owner's home, for the server
    workdir = args.workdir
    body["working_dir"] = workdir_path(workdir) if workdir else os.getcwd()
    if args.notebook and not workdir:
        # a notebook starts in its own folder, as Jupyter starts its kernel and a definition's run does
        # (newuser26 N10: `--notebook sub/nb.ipynb` ran in this shell's folder; its `open('local.txt')` failed)
        body["notebook"], body["working_dir"] = notebook_start(args.notebook)
    if args.name is None and (named := default_name(body)):
        body["name"] = named  # new user 9: `-- python train.py` was "job", a table full of them
    resolved, mode, here = _program_on_my_path(client, body.get("command"))
    if resolved is not None:
        body["command"] = [resolved, *body["command"][1:]]
    path_said, unpassed = "", False
    if here and mode != "hub":  # the job runs with this shell's PATH and Python environment (newuser27 N2)
        from ..client.submitter_env import submitter_env, submitter_note

        sent, too_long = submitter_env(os.environ, body.get("env") or {})
        if sent:
            body["env"] = {**sent, **(body.get("env") or {})}
        path_said, unpassed = submitter_note(sent, too_long), bool(too_long)
    if getattr(args, "dry_run", False):  # newuser26 N8: the terminal had no dry run, the magic and the panel did
        return _dry_run(client, body, io, args)
    # a restart of the server is ridden out: sent again while it surely never reached it (hubadmin24 B18); a
    # send whose answer was lost is looked for once the service answers, and sent again only if absent (newuser31 N8)
    from ..client.ride_out import ARRIVED, SENT_AGAIN, MaybeSubmitted, submit_through_restart
    from .main import EXIT_NO_SERVER, error_line, failure

    try:
        job, how = submit_through_restart(lambda key: client.submit_keyed(body, key), lambda n: client.jobs(limit=n),
                                          body, _say(io), stop="Ctrl-C stops, nothing is submitted",
                                          look=f"{PROG} jobs", keys_honoured=client.submit_keys_honoured)
    except MaybeSubmitted as exc:  # "no server answered" (exit 3), and how to look before sending it again
        print(failure(args, error_line("submit", exc), exc), file=io.err)
        return EXIT_NO_SERVER
    if how == ARRIVED:
        print(f"{PROG} submit: note: submitted after the service restarted (its answer was lost in the restart; "
              "the job had arrived, so it was not sent twice)", file=io.err)
    elif how == SENT_AGAIN:
        print(f"{PROG} submit: note: the scheduler did not get it before the restart; sent again once it answered",
              file=io.err)
    if resolved is not None and argv and _PYTHON.fullmatch(str(argv[0])):  # even under -q (newuser28 N3)
        from ..client.submitter_env import foreign_python_warning

        if said := foreign_python_warning(argv, resolved, str(body.get("working_dir") or "."), own=sys.executable):
            print(f"{PROG} submit: warning: {said}", file=io.err)
    if args.quiet:  # notes said on every submit of a loop (new user 13, N17): asked to leave them out
        pass
    elif resolved is not None and (elsewhere := _found_elsewhere(argv[0], resolved, body.get("env") or {})):
        # said when it tells something (newuser42 n3: 4 lines on every submit of a loop, though the job's PATH —
        # your own, sent with it — finds the same program); each sentence with its capital (newuser28 nit n3)
        print(f"{PROG} submit: note: runs {argv[0]} as {resolved} (the one on your PATH; {elsewhere}); give a full "
              "path to run "
              f"another. {path_said[:1].upper() + path_said[1:] + '. ' if path_said else ''}Your shell's other variables are not passed: "
              "--env NAME passes one as set here, --env NAME=VALUE another value", file=io.err)
    elif path_said and (resolved is None or unpassed):  # a path's program (a launcher script) looks up by this PATH
        print(f"{PROG} submit: note: {path_said}", file=io.err)
    elif mode == "hub" and argv and _PYTHON.fullmatch(str(argv[0])):
        # new user 10, N19: `-- python` ran the job Python silently while `-- python3` ran /usr/bin/python3
        print(f"{PROG} submit: note: on the hub, {argv[0]} runs the scheduler's job Python (c.HubSchedApp.job_python, "
              "where the hub's admins install the users' packages), whichever of python / python3 you type; give a "
              "full path to run another", file=io.err)
    if args.json and not args.wait:
        _dump(job, io)
        return EXIT_OK
    line = job_line(job, _now())  # "job j-… (name): pending, …": the id and its name, as the magic says (new user 10, N17)
    print(f"submitted {line.split(' ', 1)[1]}", file=io.out)
    _request_notes(args, job, io)
    if args.notebook and body.get("parameters") and not args.quiet:  # as `definitions run -p` notes it (N27)
        # the notebook the job runs: the body's name in the body's folder (newuser39 n3: the typed path was joined to
        # its own folder again, `sub/rep.ipynb` read at sub/sub/rep.ipynb — no file, no note; run A: `--workdir W
        # --notebook nop.ipynb` read ./nop.ipynb)
        run_name = body.get("notebook")
        folder = os.path.expanduser(str(body.get("working_dir") or "."))
        path = os.path.join(folder, str(run_name)) if run_name else os.path.expanduser(str(args.notebook))
        note_parameters(path, body["parameters"], io, prefix=f"{PROG} submit: ", said=job.get("warnings"))
    if args.wait:
        return _wait_for(client, str(job["id"]), None, io, json_out=args.json)
    return EXIT_OK


_PYTHON = re.compile(r"python(3(\.\d+)?)?")
"""Bare interpreter names: on a hub they run the scheduler's job Python, never the terminal's."""


def _found_elsewhere(program: str, resolved: str, env: Mapping[str, Any]) -> str:
    """What the job's own PATH would run as ``program`` when it is not ``resolved`` (the submitter's PATH's, sent as
    the command): ``the job's PATH finds /usr/bin/python first``, ``the job's PATH finds no python``, ``the job gets
    the server's PATH``; "" when it finds the same — then the note "runs python as …" tells nothing (newuser42 n3:
    it was said on every submit, four lines, the job's PATH being this shell's own, sent with it)."""
    import shutil

    job_path = env.get("PATH")
    if not isinstance(job_path, str):  # not sent (longer than the server takes): the server's, unknown here
        return "the job gets the server's PATH"
    found = shutil.which(program, path=job_path)
    if found is None:
        return f"the job's PATH finds no {program}"
    return "" if os.path.abspath(found) == resolved else f"the job's PATH finds {os.path.abspath(found)} first"


def _program_on_my_path(client: Any, command: Any) -> tuple[str | None, str, bool]:
    """The full path of a command's program as the submitter's PATH finds it, where the job runs on
    this machine (a local executor on a server at a loopback address); None to send it as typed.
    With the server's mode (``""`` when not asked) and whether the job runs here
    (:func:`..client.submitter_env.runs_here`).

    New user 7, F11: ``submit -- python train.py`` ran the *server's* ``python`` (its PATH: pyenv's,
    without the packages of the venv on the terminal's PATH) and failed with ModuleNotFoundError,
    while ``%schedule run`` uses the kernel's own interpreter. A name with a ``/`` is kept as given.
    On a hub, a bare ``python`` / ``python3`` goes as typed: the job Python the admins set up runs
    it (new user 10, N19: ``python3`` ran /usr/bin/python3 without packages, ``python`` the job Python)."""
    import shutil

    from ..client.submitter_env import runs_here

    here, mode = runs_here(client)
    if not isinstance(command, list) or not command or not isinstance(command[0], str) or "/" in command[0]:
        return None, mode, here
    found = shutil.which(command[0])
    if found is None or not here or (mode == "hub" and _PYTHON.fullmatch(command[0])):
        return None, mode, here
    return os.path.abspath(found), mode, here


QUEUE_LINES = 50
"""Pending jobs ``jupyter-sched queue`` shows unless told otherwise: a busy server holds
thousands, and the whole queue is megabytes the terminal would only scroll past."""


def _picked(args: argparse.Namespace) -> Any:
    """``queue --user U`` / ``--team T``: the test a queue row passes (both: U's work charged to T);
    None without either."""
    user, team = getattr(args, "user", None), getattr(args, "team", None)
    if not user and not team:
        return None
    return lambda row: (not user or row.get("user") == user) and (not team or row.get("team") == team)


def _whose(args: argparse.Namespace) -> str:
    """``user ana in team ml has``, ``user ana has``, ``team ml has`` (for the empty answer)."""
    parts = [f"{k} {getattr(args, k)}" for k in ("user", "team") if getattr(args, k, None)]
    said = " in ".join(parts)
    return said[:1].upper() + said[1:] + " has"


def queue(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """The queue as a table: the first pending jobs in queue order, then the running ones, the
    reason and ETA as sentences. Asks the server for one pending entry more than it shows, to know
    whether to say that more wait behind them."""
    shown = None if args.everything or (args.json and args.limit is None) else (args.limit or QUEUE_LINES)
    total: int | None = None  # pending entries in the whole queue, when the server says
    picked = _picked(args)
    if getattr(args, "summary", False):  # one line per team: who holds what now (hubadmin23 A12)
        from .queue_summary import summary

        return summary(client, args, io, picked)
    if args.mine:  # the server lists all of the caller's own pending jobs when no limit is given
        rows = [row for row in client.queue() if row.get("mine") and (picked is None or picked(row))]
    elif picked is not None:  # --user/--team: from the whole queue, each with its place in it (hubadmin23 A12)
        rows = [row for row in client.queue_all() if picked(row)]
    elif shown is None:  # every pending job: page through the whole queue
        rows = client.queue_all()
    else:
        rows, total = client.queue_head(min(shown + 1, QUEUE_LIMIT_MAX))
    more = False
    if shown is not None:
        pending = [row for row in rows if row.get("position") is not None]
        if len(pending) > shown:
            more = True
            total = len(pending) if args.mine or picked else total  # all of the caller's own (or U's, T's) are here
            cut = {id(row) for row in pending[shown:]}
            rows = [row for row in rows if id(row) not in cut]
    if args.json:
        _dump(rows, io)
        return EXIT_OK
    # open idle warnings of the caller's own work holding GPUs (one small GET; new user 4)
    from ..client.status import idle_notes

    idle = idle_notes(client, rows) if any(row.get("mine") and row.get("position") is None for row in rows) else {}
    now = _now()
    table = [["ID", "USER", "STATE", "PRIO", "GPUS", "POS", "NAME"]]
    details: list[str] = [""]
    for job in rows:
        reason = job.get("reason") if isinstance(job.get("reason"), dict) else None
        kind = str(job.get("kind") or "")
        position = (reason or {}).get("position") or job.get("position") or ""
        name = work_name(job)  # a lease given no name: "lease for nb/x.ipynb" (new user 10, N11)
        table.append([str(job.get("id", "")), str(job.get("user", "")), state_word(job),
                      str(job.get("priority", "")), gpus_text(job).split(" GPU")[0], str(position),
                      fit_name(name)])
        if reason:  # why it waits and until when, as the panel and the magics say it (a lease as a lease)
            text = render_reason(reason, now=now, relative=True, kind=kind, mine=job.get("mine") is True)
            details.append(" · ".join(part for part in (text.summary.rstrip("."), text.eta, planned_limit_line(job))
                                      if part))  # its queue's limit, giving none (newuser28 N8)
        else:
            held = cluster_wait(job).rstrip(".") or " · ".join(
                # a GPU gone from the inventory under it, in the words of `jobs` and the magics (verify 23, V4);
                # my running job's own progress report, where it made one (session 21)
                part for part in (gone_text(job), unhealthy_text(job), drain_text(job), _ends_by(job, now),
                                  progress_text(job, now), restarted_text(job),  # start 2, after preemption (v5)
                                  serving_text(job, now))
                if part)  # F9
            warned = idle.get(str(job.get("id"))) if job.get("mine") else None
            details.append(f"{held} · {warned}" if warned else held)
    if len(table) == 1:
        unknown = unknown_team(client, getattr(args, "team", None)) if picked and not args.mine else None
        if unknown:  # a mistyped team is no team with nothing to do (hubadmin25 B14)
            print(f"{PROG} queue: --team: {unknown} [usage_error]", file=io.err)
            return EXIT_USAGE
        print("You have nothing pending or running." if args.mine else
              f"{_whose(args)} nothing pending or running." if picked else
              "The queue is empty: nothing pending or running.", file=io.out)
        return EXIT_OK
    _print_table(table, io, details=details)
    if more:
        mine = " --mine" if args.mine else "".join(f" --{k} {getattr(args, k)}" for k in ("user", "team")
                                                   if getattr(args, k, None))
        left = total - shown if total is not None and shown is not None else 0
        behind = f"{left} more" if left > 0 else "More"  # how many (new user 16, N14)
        print(f"{behind}{' of your' if args.mine else ''} pending jobs wait behind these {shown}: "
              f"`{PROG} queue{mine} --all` lists every one (or --limit N).", file=io.out)
    return EXIT_OK


def _ends_by(job: dict[str, Any], now: datetime) -> str:
    """The ETA column of work holding GPUs: the one renderer's (:func:`~jupyter_sched.wording.jobs.ends_by`,
    the magics' queue table's too; new user 14, N18: a copy here printed 366 days as "8784h00m")."""
    return ends_by(job, now, cancel=f"{PROG} cancel")


def jobs(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """My jobs (admins: ``--all``), newest first, as a table like ``queue``'s (ID, STATE, PRIO, GPUS,
    NAME; USER with ``--all``), each with a detail line: why it waits, where it runs and until when,
    how it ended (:func:`~jupyter_sched.wording.jobs.job_detail`); leases too, as ``%schedule jobs``
    lists them (new user 11, N18: a no-kernel lease, whose hint says `cancel l-…` releases it, was in
    no list of the user's but the queue)."""
    user, team = getattr(args, "user", None), getattr(args, "team", None)
    since, until = getattr(args, "since", None), getattr(args, "until", None)
    others = args.all_users or user is not None
    try:
        # one more than asked tells whether older ones exist: pages of the server's 1000 at most, followed
        # by their cursor until then (hubadmin25 B19: 1000 was the most, and more were not said)
        query, keep = state_filter(args.state)  # "stopping" is a word of the lists, "running" on the wire
        rows, more = client.jobs_upto(args.limit, keep=keep, state=query, user=user, all_users=args.all_users,
                                      team=team, since=since, until=until)
    except AuthorizationError as exc:
        if exc.field not in ("all", "user"):
            raise
        option = "--all" if exc.field == "all" else "--user"
        raise AuthorizationError("only admins may list everyone's jobs" if option == "--all"
                                 else "only admins may list another user's jobs", field=option,
                                 hint=f"leave out {option} to list your own") from None
    if args.json:
        _dump(rows, io)
        return EXIT_OK
    if not rows:
        unknown = unknown_team(client, team, has_work=lambda: bool(client.jobs_upto(
            1, user=user, all_users=args.all_users, team=team)[0]))  # jobs of it at any time: a team
        if unknown:  # a mistyped team is no team with no jobs (hubadmin25 B14)
            print(f"{PROG} jobs: --team: {unknown} [usage_error]", file=io.err)
            return EXIT_USAGE
        whose = f" of {user}" if user is not None else " of anyone" if args.all_users else ""
        window = submitted_window(since, until, _now())  # as status and usage say a period (newuser36 n5)
        scope = "".join(f" {part}" for part in (f"in team {team}" if team else "", window) if part)
        if args.state or scope:
            print(f"No {args.state + ' ' if args.state else ''}jobs{whose}{scope}.", file=io.out)
        else:
            print(f"No jobs{whose} yet: `{PROG} submit --gpus 1 -- python "
                  "train.py` starts one.", file=io.out)
        return EXIT_OK
    # a table as `queue` prints one (new user 6: "job j-…: running on vm: GPU-…" lines read unlike
    # the other lists): one aligned row per job, what its line said after the state on a line under it
    now = _now()
    table = [["ID", *(["USER"] if others else []), "STATE", "PRIO", "GPUS", "NAME"]]
    details: list[str] = [""]
    # open idle warnings, as `queue` and %gpu say them (new user 18, N16: `jobs` said "held until
    # released" 16 s before the lease's release)
    from ..client.status import idle_notes

    idle = idle_notes(client, rows) if any(job.get("state") in ("admitted", "running") for job in rows) else {}
    for job in rows:
        name = work_name(job)  # a lease given no name: "lease for nb/x.ipynb" (new user 10, N11)
        table.append([str(job.get("id", "")), *([str(job.get("user", ""))] if others else []), state_word(job),
                      str(job.get("priority", "")), gpus_text(job).split(" GPU")[0],
                      fit_name(name)])
        # a stopping job's detail says its stop (job_detail), not also when its time limit would end it
        ends = "" if stop_detail(job, None) else _ends_by(job, now)
        # job_detail says a GPU gone from the inventory under it (gone_gpus: hub admin 22, H3)
        details.append(" · ".join(part for part in (job_detail(job, now), ends, idle.get(str(job.get("id")), ""))
                                  if part))
    _print_table(table, io, details=details)
    if more:
        from .admin_views import record_time

        oldest = str(rows[-1].get("submitted_at") or "")  # pasted whole after --until: the server's exact time
        print(f"Older jobs are not shown (the oldest shown was submitted {record_time(oldest, now, seconds=False)}): "
              f"--limit {args.limit * 2} shows "
              f"more, or --until {oldest} the next ones; --since, --state, --team and --user narrow it.", file=io.out)
    return EXIT_OK


def logs(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """Print the job's log (``-f``: keep printing until it ends). A job with nothing to show is
    said so on stderr (``j-… is pending: no output yet``), so an empty answer is not mistaken for
    a failed command; stdout stays the log alone. Terminal control sequences in it are dropped or
    shown, never obeyed (:mod:`jupyter_sched.textsafe`), unless ``--raw``.

    ``-f`` ends with the job's outcome on stderr (``job j-… (lf4): failed, exit code 3``, the lines
    just shown not quoted again) and exits as ``wait`` does: 0 if it succeeded, 4 if not (new user
    17, N20: it ended silently with 0 for a failed job, where ``%schedule logs -f`` said the outcome).

    The scheduler's notes for the log's readers (the answers' ``notes``: that the job's pace outruns
    its time limit, once per run — new user 21, N7) are printed on stderr, each once, where they
    arrive (``-f``) or after the log; stdout stays the job's own output."""
    from ..client._wire import new_notes

    out = io.out
    raw = getattr(args, "raw", False)

    def shown(text: str) -> str:
        """The log's next text as printed: as written (``--raw``), else :func:`printable_log`, a progress
        bar's updates as its last state (new user 27, N4) — knowing whether it begins a line."""
        if raw:
            return text
        begins = not last[0] or last[0].endswith("\n")  # the scheduler's lines' clocks: the reader's (newuser41 n2)
        return printable_log(log_clocks_said(text, line_start=begins), line_start=begins)

    if getattr(args, "notebook", False):  # the executed notebook instead of the log (newuser39 N1)
        from .executed import save_executed_notebook

        return save_executed_notebook(client, args, io)
    if getattr(args, "output", None) is not None:
        print(f"{PROG} logs: -o FILE saves the executed notebook: add --notebook (the log itself: > FILE) "
              "[usage_error]", file=io.err)
        return EXIT_USAGE
    said: set[tuple[str, str]] = set()
    last = [""]  # the log's last text shown: a note starts on a line of its own

    def note(found: Mapping[str, Any]) -> None:
        out.flush()
        print(("\n" if last[0] and not last[0].endswith("\n") else "") + printable_log(log_note_said(found)),
              file=io.err, flush=True)
        last[0] = ""

    # -f: a restart of the server is ridden out from its first request on, the log read on from the last offset
    # (hubadmin23 A18; CI of session 41: a restart during the name lookup or the first read ended it, exit 3)
    poll = _ride_out(lambda line: note({"text": line}), f"still following {args.job_id}'s log",
                     following=True) if args.follow else _at_once
    args.job_id = poll(lambda: job_of(client, args.job_id, "logs", io))  # a name of mine is taken for its id

    tail = getattr(args, "tail", None)  # 0 or more: its parser's type (wording.flags.line_count) said anything else
    offset = 0
    if tail is not None:  # the last N lines, read through in the largest slices (newuser26 N4: an 18 MB log whole)
        lines, offset, chunk = _last_lines(client, args.job_id, tail)
        out.write(shown("".join(lines)))
        last[0] = lines[-1] if lines else ""
    if args.follow:
        wrote = bool(last[0])
        # whether there is anything yet, and a 404 before any wait
        chunk = poll(lambda: client.logs(args.job_id, offset=offset))
        followed = FollowedLine(terminal=_is_terminal(out))  # a progress bar redrawn in place (newuser40 n11)
        if last[0] and not last[0].endswith("\n"):
            followed.on_screen = printable_log(last[0].rsplit("\n", 1)[-1])
        try:
            if not chunk["text"] and not wrote:
                poll(lambda: _say_no_output(client, args.job_id, io, follow=True))
            for text in client.follow_logs(args.job_id, offset=offset, on_note=note, noted=said, through=poll):
                wrote = wrote or bool(text)
                begins = not last[0] or last[0].endswith("\n")
                out.write(text if raw else followed.shown(log_clocks_said(text, line_start=begins)))
                out.flush()
                last[0] = text
            job = poll(lambda: client.job(args.job_id))
        except KeyboardInterrupt:
            _still_going(args.job_id, "", io, what="following its log")
            return EXIT_INTERRUPTED
        if job.get("kind") == "lease" or str(job.get("state")) not in TERMINAL_STATES:
            if not wrote:
                _say_no_output(client, args.job_id, io, follow=False)
            return EXIT_OK
        print(job_line(job, _now(), log_shown=wrote), file=io.err)
        _say_notebook(job, io)
        return EXIT_OK if job.get("state") == "succeeded" else EXIT_JOB_FAILED
    pending = ""  # an unfinished line held to the next slice, a progress bar's updates kept as its last state
    while tail is None:  # read the whole log in bounded slices
        chunk = client.logs(args.job_id, offset=offset)
        if raw:
            out.write(chunk["text"])
        else:
            head, newline, pending = (pending + chunk["text"]).rpartition("\n")
            out.write(printable_log(log_clocks_said(head + newline), line_start=True))
            pending = rewritten_line(pending)
        last[0] = chunk["text"] or last[0]
        if chunk["next_offset"] == offset or not chunk["text"]:
            break
        offset = chunk["next_offset"]
    out.write(printable_log(log_clocks_said(pending), line_start=True) if pending else "")
    out.flush()
    if offset == 0 and not chunk["text"]:
        _say_no_output(client, args.job_id, io, follow=False)
    for found in new_notes(chunk, said):
        note(found)
    return EXIT_OK


def env_pair(item: str, *, field: str, environ: Mapping[str, str], here: str, setter: str) -> tuple[str, str]:
    """``(name, value)`` of one ``--env``: ``NAME=VALUE``, or ``NAME`` alone for the value ``NAME`` has in
    ``environ`` (the submitter's: this shell, or the kernel), as ``docker run -e NAME`` and Slurm's
    ``--export=NAME`` pass it (newuser26 n2: it was refused, "is not NAME=VALUE").

    Raises:
        ValidationError: no name (``=x``, empty), or ``NAME`` alone while ``environ`` has no ``NAME`` —
            naming ``here`` and how to set it (``setter``: ``export`` / ``%env``)."""
    name, sep, value = item.partition("=")
    name = name.strip()
    if not name:
        raise ValidationError(f"--env {item!r} is not NAME=VALUE", field=field,
                              hint=f"e.g. --env SEED=1, or --env SEED to pass {here}'s SEED")
    if sep:
        return name, value
    if name not in environ:
        raise ValidationError(f"--env {name}: {name} is not set in {here}", field=field,
                              hint=f"{setter} {name}=… first, or give its value: --env {name}=VALUE")
    return name, environ[name]


def _request_notes(args: argparse.Namespace, answer: Mapping[str, Any], io: Streams) -> None:
    """The notes on a request, on stderr — a submit's and its dry run's alike (newuser31 n13): a bare
    ``--time-limit`` number's unit, then the server's ``warnings``; none under ``--quiet``."""
    if args.quiet:  # notes said on every submit of a loop (new user 13, N17): asked to leave them out
        return
    if said := bare_seconds_note(args.time_limit):
        print(f"{PROG} submit: note: {said}", file=io.err)
    # said once, in the option's name: the server's note on a bare time_limit (newuser31 N4) is this one
    server_said = bare_seconds_note(args.time_limit, option="time_limit")
    for warning in [w for w in answer.get("warnings") or () if not server_said or w != server_said]:
        print(f"{PROG} submit: note: {said_to_reader(str(warning))}", file=io.err)  # its "this UTC day" (n11)


def _dry_run(client: Any, body: Mapping[str, Any], io: Streams, args: argparse.Namespace) -> int:
    """``submit --dry-run``: ``POST dryrun`` with the body a submit would send, its line on stdout
    (:func:`~jupyter_sched.wording.jobs.dryrun_line`); "never, because of the quota" is an answer, not an error."""
    from ..errors import QuotaError, UnschedulableError
    from ..wording import refusal_line, refusal_text
    from ..wording.jobs import dryrun_line, never_here

    try:
        answer = client.dryrun(body)
    except (QuotaError, UnschedulableError) as err:
        print(never_here(refusal_line(*refusal_text(err.message, err.hint, err.details, err.field))), file=io.out)
        return EXIT_OK
    print(dryrun_line(answer, _now()), file=io.out)
    _request_notes(args, answer, io)
    return EXIT_OK


TAIL_SLICE = 1 << 20
"""Bytes a ``logs --tail`` read asks for at once (the server's largest slice)."""

MAX_LOG_TAIL_LINES = 1_000_000
"""The server's bound on ``GET jobs/{id}/logs?tail=`` (``services.models.jobs.MAX_LOG_TAIL_LINES``, kept
equal by a test; not imported: the CLI starts without the server's models): more is read back here."""


def _last_lines(client: Any, job_id: str, count: int) -> tuple[list[str], int, dict[str, Any]]:
    """``(lines, end offset, last answer)``: the last ``count`` lines of the job's log so far (each with its
    newline; an unfinished last line counts). The server reads them back from the log's end (``tail``,
    newuser35 N2: reading the log through from byte 0 took 2.9 s for a 220 MB log); lines more than its
    :data:`TAIL_SLICE` bytes hold are read back slice by slice before them (one last line longer than that:
    its last :data:`TAIL_SLICE` bytes). A line a progress bar rewrote
    with ``\\r`` is one line here and printed as its last state (new user 27, N4)."""
    try:
        chunk = client.logs(job_id, tail=min(max(count, 0), MAX_LOG_TAIL_LINES), limit=TAIL_SLICE)
    except ValidationError as exc:
        if exc.field != "tail":
            raise
        return _last_lines_read_through(client, job_id, count)  # a server from before tail
    text, start = str(chunk["text"] or ""), int(chunk.get("offset") or 0)
    cut = 0  # the answer begins at a line's start; a slice read before it may begin mid-line
    while start > 0 and _line_count(text) - cut < count:  # more than one answer holds: the slice before it
        begin = max(0, start - TAIL_SLICE)
        earlier = client.logs(job_id, offset=begin, limit=start - begin)
        text, start, cut = str(earlier["text"] or "") + text, begin, 1
    if count <= 0:
        return [], int(chunk["next_offset"]), chunk
    pieces = text.split("\n")
    partial = pieces.pop()
    lines = [piece + "\n" for piece in pieces] + ([partial] if partial else [])
    return lines[-count:], int(chunk["next_offset"]), chunk


def _is_terminal(stream: Any) -> bool:
    """Whether ``stream`` writes to a terminal (a stream without ``isatty`` does not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _line_count(text: str) -> int:
    """Lines of ``text`` as :func:`_last_lines` counts them (an unfinished last line is one)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _last_lines_read_through(client: Any, job_id: str, count: int) -> tuple[list[str], int, dict[str, Any]]:
    """:func:`_last_lines` from a server without ``tail``: the log read through in :data:`TAIL_SLICE`
    slices, keeping the last ``count`` lines (newuser26 N4's way)."""
    from collections import deque

    kept: deque[str] = deque(maxlen=max(count, 0) or 1)
    partial, offset = "", 0
    while True:
        chunk = client.logs(job_id, offset=offset, limit=TAIL_SLICE)
        text = partial + str(chunk["text"] or "")
        pieces = text.split("\n")
        partial = pieces.pop()
        kept.extend(piece + "\n" for piece in pieces)
        if chunk["next_offset"] == offset or not chunk["text"]:
            break
        offset = chunk["next_offset"]
    if partial:
        kept.append(partial)
    return (list(kept) if count > 0 else []), offset, chunk


def _say(io: Streams) -> Callable[[str], None]:
    """A line on ``io.err``, flushed (a ride-out's notice)."""
    return lambda line: print(line, file=io.err, flush=True)


def _still_going(job_id: str, state: str, io: Streams, *, what: str) -> None:
    """After Ctrl-C: ``stopped waiting; j-… keeps going (pending) — `jupyter-sched cancel j-…` stops it``."""
    where = f" ({state})" if state else ""
    print(f"\nstopped {what}; {job_id} keeps going{where} — `{PROG} cancel {job_id}` stops it", file=io.err)


def _say_no_output(client: Any, job_id: str, io: Streams, *, follow: bool) -> None:
    """``j-… is pending: no output yet`` / ``j-… succeeded with no output`` (on stderr)."""
    job = client.job(job_id)
    state = str(job.get("state") or "")
    word = state_word(job)
    if job.get("kind") == "lease":
        print(f"{job_id} is a lease (GPUs held for a kernel): leases have no log; the kernel's output is in its "
              "notebook", file=io.err)
    elif state in ("pending", "preempted", "admitted"):
        reason = job.get("reason") if state != "admitted" else None
        reason = reason if isinstance(reason, Mapping) else {}
        text = render_reason(reason, now=_now(), relative=True, kind=str(job.get("kind") or "") or None,
                             mine=job.get("mine") is not False) if reason else None
        if text is not None and reason.get("code") == "Held":  # never starts until released (newuser39 n13)
            from ..wording.reasons import as_clause

            fix = as_clause(text.unblock).rstrip(".") if text.unblock else f"release it: {PROG} release {job_id}"
            print(f"{job_id} is {text.summary.rstrip('.')}: it will not start until released — {fix}"
                  + ("; following anyway (Ctrl-C stops)" if follow else ""), file=io.err)
            return
        # its place and ETA, as `wait` carries them (newuser39 n13)
        where = f" ({text.line})" if text is not None and text.line else ""
        then = "; its output follows once it starts (Ctrl-C stops following)" if follow else \
            f" — `{PROG} logs -f {job_id}` follows it once it starts"
        print(f"{job_id} is {word}: no output yet{where}{then}", file=io.err)
    elif state == "running":
        print(f"{job_id} is running: no output yet" + ("" if follow else f" — `{PROG} logs -f {job_id}` follows it"),
              file=io.err)
    elif not follow:
        print(f"{job_id} {word} with no output", file=io.err)


def wait(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """Wait for a job to end with a progress bar (queue, then run); exit 0 only if it succeeded."""
    from ..model.units import parse_duration

    limit = parse_duration(args.wait_timeout, field="--for", hint="give how long to wait, e.g. --for 10m, or leave "
                           "--for out to wait until it ends") if args.wait_timeout else None  # new user 20, N24
    # ridden out from the name lookup on (CI of session 41: a restart during it ended the wait, exit 3)
    poll = _ride_out(_say(io), f"still waiting for {args.job_id}")
    args.job_id = poll(lambda: job_of(client, args.job_id, "wait", io))  # a name of mine is taken for its id
    return _wait_for(client, args.job_id, limit, io, json_out=args.json, poll=poll)


def _ride_out(say: Callable[[str], None], doing: str, *, following: bool = False) -> Any:
    """A :class:`~jupyter_sched.client.ride_out.RideOut` for one wait (its notice said once through ``say``)."""
    from ..client.ride_out import CTRL_C, RideOut

    return RideOut(say, doing=doing, stop=CTRL_C.replace("waiting", "following") if following else CTRL_C)


def _at_once(fetch: Callable[[], T]) -> T:
    """``fetch()``: a request that is not ridden out (a command that does not wait)."""
    return fetch()


def _wait_for(client: Any, job_id: str, limit_s: float | None, io: Streams, *, json_out: bool,
              poll: Any = None) -> int:
    """Poll ``job_id`` until it ends (or ``limit_s`` seconds pass), riding out a restart of the
    server (:mod:`jupyter_sched.client.ride_out`, hubadmin23 A18) through ``poll`` (a new one when None): exit 0 /
    4 / 5 / 130 as ``wait --help`` says; a server that stays silent past the ride-out raises its error (exit 3)."""
    from ..client.waiting import poll_job

    with TerminalProgress(io.err) as bar:
        poll = poll or _ride_out(_say(io), f"still waiting for {job_id}")
        poll.before_notice = bar.close
        job: dict[str, Any] = {}

        def ended(read: dict[str, Any]) -> bool:  # every read: kept for Ctrl-C's line, its frame shown
            job.clear()
            job.update(read)
            frame = wait_progress(read, _now())
            if frame.phase != "done":
                bar.show(frame)
            return frame.phase == "done"

        try:  # the client's wait polls the same way (client.waiting.poll_job, newuser42 N1)
            job, done = poll_job(lambda: client.job(job_id), poll, limit_s=limit_s, ended=ended)
            if not done:
                assert limit_s is not None
                bar.close()
                print(still_going(job, limit_s, _now()), file=io.out)
                return EXIT_TIMEOUT
        except KeyboardInterrupt:  # Ctrl-C stops the waiting, not the job: say so (the magics do)
            bar.close()
            _still_going(job_id, str(job.get("state") or ""), io, what="waiting")
            return EXIT_INTERRUPTED
    if json_out:
        _dump(job, io)
    else:
        print(job_line(job, _now()), file=io.out)
        _say_notebook(job, io)
    # a lease its owner gave back ended as a lease should (new user 16, N9: exit 4, "it ended otherwise")
    return EXIT_OK if job.get("state") == "succeeded" or lease_given_back(job) else EXIT_JOB_FAILED


def _say_notebook(job: dict[str, Any], io: Streams) -> None:
    """An ended notebook job's executed notebook: how to open it, on stderr (:func:`.executed.notebook_hint`)."""
    from .executed import notebook_hint

    hint = notebook_hint(job)
    if hint:
        print(hint, file=io.err)


def _admin_view(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """``usage``, ``audit`` or ``quotas`` (:mod:`.admin_views`, imported only for them: the CLI's start-up cost)."""
    from . import admin_views

    view: Callable[[Any, argparse.Namespace, Streams], int] = getattr(admin_views, args.command)
    return view(client, args, io)


COMMANDS: dict[str, Callable[[Any, argparse.Namespace, Streams], int]] = {
    "status": status, "submit": submit, "queue": queue, "jobs": jobs, "cancel": cancel, "logs": logs, "wait": wait,
    "definitions": definitions, "usage": _admin_view, "audit": _admin_view, "quotas": _admin_view,
    "teams": teams_command, "users": users_command, "nodes": nodes_command,
    "hold": change_job, "release": change_job, "update": change_job, "top": change_job,
}


# ---- helpers -----------------------------------------------------------------------------


def number_or_text(value: str) -> float | int | str:
    """An option's text as the JSON number it spells in ASCII digits: a whole number stays a
    (Python, arbitrary-size) integer, so the server's answer quotes what was typed
    (``got 99999999999999999999999``, not a float's ``99999999999999991611392``); a decimal goes as
    a float; anything else (a word, ``1_0``, other scripts' digits, infinity) as the text itself,
    which the server refuses naming the field."""
    text = value.strip()
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    if not re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", text):
        return value  # a word, "1_0", Arabic-Indic digits (float() reads both; new user 15, N3): the server names the field
    number = float(text)
    if not math.isfinite(number):
        return value  # "1e400" goes as text, which JSON can carry, and the server refuses it by name
    if number.is_integer() and abs(number) < 2**53:
        return int(number)  # "2.0", "1e3"
    return number  # the server takes numbers only (N3): "1e300" is said back as 1e+300


def _dump(value: Any, io: Streams) -> None:
    json.dump(value, io.out, indent=2, sort_keys=True)
    io.out.write("\n")


def _print_table(rows: list[list[str]], io: Streams, *, details: list[str] | None = None) -> None:
    """Columns padded to their widest cell; ``details[i]`` (a sentence: why a job waits, until
    when) goes on an indented line under row ``i``, wrapped to the terminal's width on a terminal,
    so no row is padded to the longest sentence (new-user round 3: 400-character rows). Each cell's controls,
    bidirectional and zero-width characters are written as escapes (:func:`~jupyter_sched.textsafe.escaped_controls`:
    a user name ``amy\u200b`` never prints as ``amy``; red29 R2)."""
    rows = [[escaped_controls(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    isatty = getattr(io.out, "isatty", None)
    width = 0
    if details and isatty is not None and isatty():
        import shutil

        width = max(shutil.get_terminal_size((100, 24)).columns, 40)
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip(), file=io.out)
        detail = details[i] if details and i < len(details) else ""
        if detail:
            if width:
                import textwrap

                print(textwrap.fill(detail, width, initial_indent="    ", subsequent_indent="      "), file=io.out)
            else:
                print(f"    {detail}", file=io.out)

