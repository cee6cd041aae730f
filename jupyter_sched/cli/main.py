"""``jupyter-sched`` (also ``jupyter sched``): the scheduler from a terminal.

Subcommands talk to a running Jupyter server with the jupyter_sched extension through the
same REST API as the panel and the magics (:mod:`jupyter_sched.client`)::

    jupyter-sched status [JOB]                   server, identity, GPUs, my jobs; or one job's line
    jupyter-sched submit --gpus 1 -- python train.py --epochs 3
    jupyter-sched submit --gpus 2 --script train.py --wait
    jupyter-sched queue [--limit N | --all] [--mine]   pending (first 50) and running work, reasons, ETA
    jupyter-sched wait JOB [--for 2h]            progress bar until the job ends (--timeout: the same)
    jupyter-sched jobs [--state S] [--limit N]   my jobs, newest first, finished ones too
    jupyter-sched cancel JOB [JOB ...]
    jupyter-sched cancel --mine [--state pending] [--yes]     all my jobs (asks first)
    jupyter-sched cancel --all [--yes]                          everyone's jobs (admins)
    jupyter-sched hold|release JOB [JOB ...]                    a pending job never starts until released
    jupyter-sched update JOB [--time-limit 4h|+1h] [--priority low]   change a job (cli/job_changes.py)
    jupyter-sched top JOB [JOB ...] [--undo]                    first in its class (admins)
    jupyter-sched teams move TEAM --to NEW [--with-quota]       a renamed team's work (admins; asks first)
    jupyter-sched users rename OLD NEW                          a user renamed on the hub (admins; asks first)
    jupyter-sched nodes [list]                                  the nodes: GPUs, use, state (anyone)
    jupyter-sched nodes cordon|drain NODE --reason "…" [--evict-after 2h]   maintenance (admins; asks first)
    jupyter-sched nodes uncordon NODE                           back in service (admins)
    jupyter-sched logs JOB [-f]
    jupyter-sched definitions [list|create|show|runs|run|edit|pause|resume|delete]   (cli/definitions.py)

JOB is a job's id (``j-…``; a lease's, ``l-…``) or the name of one of the caller's own jobs
(:data:`JOB_HELP`; ``client.job_id_of`` looks it up).

Server discovery: ``--url``/``--token``, else ``JUPYTER_SCHED_URL``/``JUPYTER_SCHED_TOKEN``,
else the running-server files of this machine (``jupyter_server.serverapp.list_running_servers``).

Exit codes (:data:`EXIT_STATUS_HELP`, said by ``--help``): 0 success; 2 bad input — a command line
the CLI cannot read or a value in it that is wrong whoever checks it, the CLI before sending or the
server (``[usage_error]``, ``[validation_error]``, ``[invalid_timestamp]``), or a bulk cancel not
confirmed; 1 a well-formed request the server refused (not found, not yours, a conflict with the
job's state, over a quota, busy); 3 no server found or the server did not answer; 4 ``wait`` saw
the job end without success; 5 ``wait --for`` ran out; 130 interrupted. (newuser38 n2: the
status followed where a value was checked: ``--time-limit 2x`` 1, ``-5m`` 2.)

Start-up cost matters here (each call is a new process): this module imports only the standard
library; only the named subcommand's parser is built; the HTTP client loads after the command
line is parsed, and nothing on the paths of ``status``, ``queue``, ``cancel`` and ``logs`` imports
numpy, pandas, plotly or scipy
(``tests/onboarding/test_slim_install.py::test_the_cli_paths_import_no_numpy_pandas_plotly_or_scipy``
holds that line, ``jobs`` too), nor jupyter_core, ``http.client``/``ssl``/``email``, ``dataclasses``
or httpx (``…::test_the_cli_paths_load_none_of_the_modules_that_slowed_each_call``; issue 20:
these halved the CPU of a call, ``benchmarks/cli_bench.py`` measures it).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple, NoReturn, TextIO

from ..errors import AuthenticationError, AuthorizationError, NotFoundError, SchedError, ValidationError
from ..model.units import shown_in
from ..userfiles import file_problem, read_head
from .aliases import OneSetting

__all__ = [
    "EXIT_INTERRUPTED", "EXIT_JOB_FAILED", "EXIT_NO_SERVER", "EXIT_OK", "EXIT_REFUSED", "EXIT_STATUS_HELP", "EXIT_TIMEOUT",
    "EXIT_USAGE", "refused_status",
    "build_parser", "job_of", "main",
]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_NO_SERVER = 3
EXIT_JOB_FAILED = 4
EXIT_TIMEOUT = 5
EXIT_INTERRUPTED = 130

PROG = "jupyter-sched"

EXIT_STATUS_HELP = (f"Exit status: {EXIT_OK} done; {EXIT_USAGE} bad input: fix the command and run it again "
                    "(an unknown option, a missing or wrong value such as --gpus two or --time-limit 2x, a file that "
                    "is not there — whether this CLI or the server found it; the line ends with the error's code); "
                    f"{EXIT_REFUSED} refused: the request was fine but the "
                    "server will not do it (no such job, not yours, over a quota, busy; the line ends with the reason's "
                    f"code); {EXIT_NO_SERVER} no server answered; {EXIT_JOB_FAILED} and {EXIT_TIMEOUT} wait's outcomes "
                    f"(`{PROG} wait --help`); {EXIT_INTERRUPTED} interrupted.")
"""The exit statuses of every subcommand, in ``jupyter-sched --help`` (newuser38 n2: a bad value was 1 or 2
by where it was checked, ``--time-limit 2x`` 1 and ``-5m`` 2, ``--workdir /nonexistent`` 1 and
``--script nosuch.py`` 2: a script could not tell a mistake of its own from a refusal). It names no error code: the
bare ``jupyter-sched`` prints this help, and help is no error line (newuser32 n10); :data:`INPUT_CODES` are the codes."""

INPUT_CODES = frozenset({"usage_error", "validation_error", "invalid_timestamp"})
"""The error codes of bad input: exit :data:`EXIT_USAGE` (:func:`refused_status`)."""


def refused_status(exc: BaseException) -> int:
    """The exit status of a request refused with ``exc``: :data:`EXIT_USAGE` for bad input (a
    :class:`~jupyter_sched.errors.ValidationError`, the server's 400 or the CLI's own check), else
    :data:`EXIT_REFUSED` — one rule whoever checked the value (:data:`EXIT_STATUS_HELP`)."""
    return EXIT_USAGE if isinstance(exc, ValidationError) or getattr(exc, "code", None) in INPUT_CODES \
        else EXIT_REFUSED


WAIT_EXIT_CODES = (f"Exit status: {EXIT_OK} the job succeeded; {EXIT_JOB_FAILED} it ended otherwise (failed, "
                   f"cancelled, lost or rejected; a lease released by you or your server — listed as cancelled, 'released by "
                   f"you' — counts as succeeded); "
                   f"{EXIT_TIMEOUT} it was still going when --for ran out; "
                   f"{EXIT_USAGE} bad input (e.g. a bad --for); {EXIT_REFUSED} refused (e.g. no such job); {EXIT_NO_SERVER} no server answered (a restart "
                   f"is waited out first: up to 10 min of no answer); "
                   f"{EXIT_INTERRUPTED} interrupted with Ctrl-C (the job goes on).")
"""``wait`` and ``submit --wait`` exit statuses, said in their --help so scripts can use them (new
user 6, F12: the README said only "exit 0 only if it succeeded")."""

SUBCOMMAND_EXIT_STATUS = (f"Exit status: {EXIT_OK} done; {EXIT_USAGE} bad input (fix the command); {EXIT_REFUSED} refused "
                          f"(the line ends with the reason's code); {EXIT_NO_SERVER} no server answered; "
                          f"{EXIT_INTERRUPTED} interrupted — `{PROG} --help` says more.")
"""The exit statuses in every subcommand's --help that says none of its own (newuser39 n17: they were only in
``jupyter-sched --help`` and ``wait --help``, where a scripter reading ``submit --help`` does not look)."""

LOGS_EXIT_STATUS = (f"Exit status: {EXIT_OK} the log was printed (without -f, whatever the job's state); with -f, "
                    f"once the job ends: {EXIT_OK} it succeeded, {EXIT_JOB_FAILED} it ended otherwise (failed, "
                    f"cancelled, lost), as `{PROG} wait` says; {EXIT_USAGE} bad input; {EXIT_REFUSED} refused (e.g. no "
                    f"such job); {EXIT_NO_SERVER} no server answered; {EXIT_INTERRUPTED} Ctrl-C stopped following "
                    "(the job goes on).")
"""``logs``'s exit statuses (newuser39 n2: ``logs -f`` of a failed job exits 4, which nothing said: a script's
``jupyter-sched logs -f JOB > out.log && next`` stopped silently)."""

WHAT_TO_RUN = "-- python train.py, --script train.py or --notebook analysis.ipynb"

JOB_HELP = f"a job's id (j-…) or the name of one of your jobs; `{PROG} jobs` lists them"
"""What ``JOB`` of ``wait``, ``logs`` and ``cancel`` accepts, in their --help (session 22, issue 20: it
was ``JOB_ID`` in the usage, the help and the errors, although names work; ``%schedule`` said JOB)."""
LEASE_JOB_HELP = f"a job's id (j-…), a kernel lease's id (l-…) or the name of one of your jobs; `{PROG} jobs` lists them"
"""What ``JOB`` of ``wait`` and ``cancel`` accepts: a lease's id too (verify22 V4: the help said only j-…;
``logs`` takes no lease, which has no log)."""


def _seconds(text: str) -> float:
    """argparse type of ``--timeout``: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds, e.g. 30") from None
    if not 0 < value < 86_400 * 366:  # NaN fails too
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds above zero (and under a year), e.g. 30")
    return value


def _positive_int(text: str) -> int:
    """argparse type: a whole number >= 1 (a usage error names the option otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number, e.g. 20") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1; use --all for every pending job")
    return value


JOBS_LINES = 20
"""Jobs ``jupyter-sched jobs`` lists unless told otherwise (the newest)."""

QUEUE_LIMIT_MAX = 10_000
"""Most pending jobs one ``queue --limit`` shows: the server's bound on ``GET queue?limit=``
(``services.models.jobs.QUEUE_LIMIT_MAX``; a test keeps the two equal)."""


JOBS_LIMIT_MAX = 1_000_000
"""Most jobs one ``jobs --limit`` lists (read ``GET jobs`` page by page: hubadmin25 B19, 1000 was a silent cap)."""


def _jobs_limit(text: str) -> int:
    """argparse type of ``jobs --limit``: 1..:data:`JOBS_LIMIT_MAX` (pages of ``GET jobs``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number, e.g. 50") from None
    if not 1 <= value <= JOBS_LIMIT_MAX:
        raise argparse.ArgumentTypeError(f"{value} is not from 1 to {JOBS_LIMIT_MAX} (default {JOBS_LINES})")
    return value


def _queue_limit(text: str) -> int:
    """argparse type of ``queue --limit``: 1..:data:`QUEUE_LIMIT_MAX`."""
    value = _positive_int(text)
    if value > QUEUE_LIMIT_MAX:
        raise argparse.ArgumentTypeError(f"{value} is more than {QUEUE_LIMIT_MAX}; use --all for every pending job")
    return value


_SUBMIT = f"`{PROG} submit --gpus 1 -- python train.py` runs a command as a job"
_CANCEL = f"`{PROG} cancel JOB` stops a job (`{PROG} jobs` lists yours)"
_QUEUE = f"`{PROG} queue` shows the pending and running work; `{PROG} jobs` lists yours"
_INFO = f"`{PROG} status` says the GPUs and your work; `{PROG} nodes` lists the nodes"
NOT_COMMANDS = {"usage": f"`{PROG} status` says your GPU-hours of the last 7 days; GET api/sched/usage?since=… "
                          "those of any period",
                "version": f"`{PROG} --version` says it",
                # the words people try first, from a shell and from Slurm (newuser32 n10: the list alone, or `ls` → logs)
                "run": _SUBMIT, "sbatch": _SUBMIT, "srun": _SUBMIT,
                "kill": _CANCEL, "scancel": _CANCEL, "stop": _CANCEL,
                "ps": _QUEUE, "ls": _QUEUE, "list": _QUEUE, "squeue": _QUEUE,
                "info": _INFO, "sinfo": _INFO}
"""Words tried as a command (new user 14, N25: ``jupyter-sched usage``) → the command that does it."""


class _Wrapped(argparse.HelpFormatter):
    """Help wrapped at spaces only: argparse's wraps at hyphens too, so a help example's id
    (``jupyter-sched top j-1m93d0kba-gtkhhs``) or option was cut over two lines and did not copy as
    one word (newuser35 n4); a word longer than the line stays whole. A description's closing
    ``Example: COMMAND`` is a line of its own, never wrapped: it copies as the command it is."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap  # only when help is drawn (the CLI's start-up cost)

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        prose, mark, example = " ".join(text.split()).rpartition("Example: ")
        if not mark:
            prose, example = example, ""
        filled = textwrap.fill(prose, width, initial_indent=indent, subsequent_indent=indent,
                               break_on_hyphens=False, break_long_words=False)
        return f"{filled}\n{indent}{mark}{example}" if example else filled


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors name the subcommand: ``jupyter-sched queue --mine-only``
    shows ``jupyter-sched queue``'s usage, not the whole program's (argparse hands unknown
    arguments of a subcommand up to the top-level parser). Its help is :class:`_Wrapped`, and so is
    every subcommand's (argparse makes them of the parser's own class)."""

    typed: tuple[str, ...] = ()
    """The words of this run's command line (:func:`main` sets them): an error names an option as typed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Wrapped)
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            where: argparse.ArgumentParser = self
            words = list(sys.argv[1:] if args is None else args)
            command = getattr(parsed, "command", None)
            before = command in words and extras[0] in words[:words.index(command)]
            while not before:  # e.g. `definitions create`, `nodes uncordon`: the innermost usage (newuser35 n10)
                acts = [a for a in (where._subparsers._group_actions if where._subparsers else ())
                        if isinstance(a, argparse._SubParsersAction)]
                name = getattr(parsed, acts[0].dest, None) if acts and acts[0].dest else None
                if not isinstance(name, str) or name not in acts[0].choices:
                    break
                where = acts[0].choices[name]
            where.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _unknown_global_flag(self, message: str) -> str:
        """The first word typed before the command that looks like an option of the program but is none
        (``--urll``, ``--verison``), when argparse's ``message`` is about the COMMAND; "" else."""
        if not (message.startswith("argument COMMAND:") or message.endswith("required: COMMAND")):
            return ""
        known = self._option_string_actions
        words = iter(_Parser.typed)
        for word in words:
            if word in COMMAND_NAMES or word == "--":
                return ""
            if not word.startswith("-"):
                # the COMMAND's place: a mistyped command (`sumbit --gpus 1`) is argparse's to name, with its
                # did-you-mean — not the first option after it (newuser32 N1)
                return ""
            flag = word.split("=", 1)[0]
            matches = [k for k in known if k == flag] or (
                [k for k in known if k.startswith(flag)] if self.allow_abbrev and flag.startswith("--") else [])
            if not matches:
                return flag
            if "=" not in word and known[matches[0]].nargs != 0:
                next(words, None)  # its value (`--url URL`): not the COMMAND's place
        return ""

    def _option_of_command(self, message: str) -> str:
        """For an option of the command typed before it (``jupyter-sched -q submit …``, ``--gpus 2 submit``): ``-q is
        an option of submit: jupyter-sched submit -q …`` — the command line with the option (and its value) moved
        after the command (``definitions create``: after both words); "" for any other message. newuser42 n2: the
        README's "options go before the command" was read as every option, and the refusal said only "not an option
        of jupyter-sched"."""
        extras = re.fullmatch(r"unrecognized arguments: (\S+).*", message)
        if not extras or not extras.group(1).startswith("-"):
            return ""
        flag = extras.group(1).split("=", 1)[0]
        typed = list(_Parser.typed)
        at = next((i for i, word in enumerate(typed) if word.split("=", 1)[0] == flag), -1)
        start = next((i for i in range(at + 1, len(typed)) if typed[i] in COMMAND_NAMES), -1)
        if at < 0 or start < 0:
            return ""
        where: argparse.ArgumentParser = self
        chain: list[str] = []
        for word in typed[start:]:  # the command and its action words: `definitions create`
            acts = [a for a in (where._subparsers._group_actions if where._subparsers else ())
                    if isinstance(a, argparse._SubParsersAction)]
            if not acts or word not in acts[0].choices:
                break
            where, chain = acts[0].choices[word], [*chain, word]
        action = where._option_string_actions.get(flag)
        if action is None:
            return ""
        given = [typed[at]]
        if "=" not in typed[at] and action.nargs != 0 and at + 1 < start:
            given.append(typed[at + 1])  # its value: `--gpus 2 submit`
        rest = " …" if len(typed) > start + len(chain) else ""
        return f"{flag} is an option of {' '.join(chain)}: {PROG} {shlex.join(chain + given)}{rest}"

    def error(self, message: str) -> NoReturn:
        """One line in the CLI's own style (``prog: field: what — usage [usage_error]``, as a refused
        request reads), exit 2 — not argparse's ``usage:`` + ``prog: error:`` pair. A command people
        try that is not one is answered with the one that does it (:data:`NOT_COMMANDS`)."""
        from ..wording.flags import usage_error_line

        if self.prog != PROG and message.endswith("required: ACTION"):
            # a command of actions typed without one (`jupyter-sched teams`): its help, its actions listed, as bare
            # `jupyter-sched` prints the program's (newuser33 n7: "ACTION: missing — usage: … ACTION ...")
            self.print_help()
            self.exit(0)
        if self.prog == PROG and (unknown := self._unknown_global_flag(message)):
            # `--urll URL status` blamed the URL as the COMMAND, `--verison` said "COMMAND: missing": the
            # mistyped flag is what to name (newuser30 N1)
            message = f"unrecognized arguments: {unknown}"
        if self.prog == PROG and (belongs := self._option_of_command(message)):
            message = f"{message} — {belongs}"  # `-q submit …`: the command's option, given first (newuser42 n2)
        tried = re.fullmatch(r"argument COMMAND: invalid choice: '([^']*)' .*", message)
        if tried and tried.group(1) in NOT_COMMANDS:
            message = f"{message} — {NOT_COMMANDS[tried.group(1)]}"
        self.exit(EXIT_USAGE, usage_error_line(self.prog, message, self.format_usage(), _Parser.typed,
                                               options=list(self._option_string_actions)) + "\n")


_VALUED_OPTIONS = ("gpus", "model", "mem_per_gpu", "cpu", "memory", "priority", "team", "queue", "name", "time_limit",
                   "profile", "workdir", "script", "notebook", "cron", "tz")
"""The ``dest`` of every option of ``submit`` and ``definitions create/edit`` that takes a value
(``--workdir``'s is read here, not sent: an empty one was the current folder)."""

COMMAND_NAMES = ("status", "submit", "queue", "wait", "cancel", "hold", "release", "update", "top", "jobs", "logs",
                 "definitions", "teams", "users", "nodes", "serve",
                 "simulate", "fetch-traces", "doctor")
"""The subcommands, in the order ``--help`` lists them."""

ADMIN_VIEW_NAMES = ("usage", "audit", "quotas")
"""The subcommands :mod:`.admin_views` adds (listed by ``--help`` between ``nodes`` and ``serve``): its
module is imported only when one of them is typed (or the whole parser is built)."""

_NO_COMMAND = ""
"""What :func:`_command_in` says for ``--version`` before any command: no subcommand's parser is built
(it prints and exits during parsing; newuser32: building them all was 0.33 s of its 0.41 s)."""


def version_line() -> str:
    """``jupyter-sched 0.1.0+g2251f7f (Python 3.11.2, /srv/venv)``: what a bug report asks first (newuser26
    N1: ``--version`` was "COMMAND: missing"; the version was said only by a running server's status)."""
    import platform

    from ..buildinfo import version_string

    return f"{PROG} {version_string()} (Python {platform.python_version()}, {sys.prefix})"


class _Version(argparse.Action):
    """``--version``: the line is worked out only when asked (the commit costs a ``git`` call)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser._print_message(version_line() + "\n", sys.stdout)
        parser.exit(EXIT_OK)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (one sub-parser per subcommand).

    Args:
        command: build only this subcommand's parser (:func:`main` knows it from the command
            line): each CLI call is a new process, and building all of them is ~20 ms of CPU at
            its start, a sixth of ``jupyter-sched status``. None: every one (``--help``, a mistyped
            command, tests); "": none (``--version``).
    """

    def want(name: str) -> bool:
        return command is None or command == name

    parser = _Parser(
        prog=PROG, description="GPU scheduling for Jupyter: submit, watch and cancel jobs on a running server.",
        epilog=EXIT_STATUS_HELP,
        allow_abbrev=command not in ("teams", "users", "nodes"))  # `teams move --to` is no abbreviation of --token
    parser.add_argument("-V", "--version", action=_Version, help="print the version of jupyter_sched and exit "
                                                                 "(no server needed)")
    parser.add_argument("--url", help="Jupyter server base URL, e.g. http://127.0.0.1:8888/ (default: discover)")
    parser.add_argument("--token", help="Jupyter server token (default: $JUPYTER_SCHED_TOKEN or discovered); "
                                        "prefer $JUPYTER_SCHED_TOKEN or --token-file: other local accounts can "
                                        "read --token in ps")
    parser.add_argument("--token-file", dest="token_file", metavar="FILE",
                        help="read the token from FILE (its first line), which ps does not show")
    parser.add_argument("--json", action="store_true", help="print the server's JSON instead of tables")
    parser.add_argument("--utc", action="store_true", help=UTC_HELP)
    parser.add_argument("--timeout", type=_seconds, default=30.0, metavar="SECONDS",
                        help="seconds per request (default 30)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    if want("status"):
        status = sub.add_parser(
            "status", help="server, identity, GPU inventory and my jobs; or one job's line",
            description="Where you stand: the server this command talks to, who you are to it, its GPUs "
                        "(free and held) and your work (running jobs, leases, pending jobs). With JOB (an id or a name): that job's one line — state, "
                        "where, until when, progress — as %schedule status JOB says it.")  # new user 25, n1
        # one job's line, as `%schedule status JOB` and the quickstart say it (new user 24, N11: "unexpected arguments")
        status.add_argument("job", nargs="?", metavar="JOB", help="a job's id or name: its one line (state, where, "
                                                                   "until when, progress), as %%schedule status JOB")
    if want("submit"):
        _add_submit(sub)
    if want("queue"):
        _add_queue(sub)
    if want("wait"):
        wait = sub.add_parser("wait", help="wait for a job to end, with a progress bar",
                              description="Wait for a job to end, with a progress bar on a terminal.",
                              epilog=WAIT_EXIT_CODES)
        wait.add_argument("job_id", metavar="JOB", help=LEASE_JOB_HELP)
        wait.add_argument("--for", "--timeout", dest="wait_timeout", action=OneSetting, metavar="DURATION",
                          help='give up after this long, e.g. "30m" (default: wait until it ends); '
                               '--timeout is the same, as in %%schedule wait')
    if want("cancel"):
        _add_cancel(sub)
    changes: list[str] = []
    if any(want(name) for name in ("hold", "release", "update", "top")):
        from .job_changes import add_parsers as add_change_parsers  # hold, release, update, top (hubadmin25 B18)

        changes = add_change_parsers(sub, want)
    if want("jobs"):
        _add_jobs(sub)
    if want("logs"):
        from ..wording.flags import TAIL_OPTIONS, line_count  # the magic's too (newuser36 n6)

        logs = sub.add_parser("logs", help="print a job's log",
                              description="Print a job's log: what its program wrote, so far or (-f) until it ends. "
                                          "A kernel's lease (l-…) has no log: its output is in the notebook. "
                                          "A notebook job's executed notebook: --notebook.",
                              epilog=LOGS_EXIT_STATUS)
        logs.add_argument("job_id", metavar="JOB", help=JOB_HELP)
        logs.add_argument("-f", "--follow", action="store_true",
                          help="keep printing until the job ends (a restart of the server is waited out: up to 10 min "
                               "of no answer, then it goes on where it was)")
        logs.add_argument(*TAIL_OPTIONS, dest="tail", type=line_count, default=None, metavar="N",
                          help="only the last N lines (with -f: then follow from there), as kubectl logs --tail")
        logs.add_argument("--raw", action="store_true",
                          help="print the log exactly as the job wrote it; without --raw, terminal control sequences "
                               "(colours, titles, cursor moves) are left out and other control characters shown as ^X")
        from .executed import NOTEBOOK_HELP, OUTPUT_HELP  # newuser39 N1: the executed notebook, from a terminal

        logs.add_argument("--notebook", action="store_true", help=NOTEBOOK_HELP)
        logs.add_argument("-o", "--output", default=None, metavar="FILE", help=OUTPUT_HELP)
    if want("definitions"):
        from .definitions import add_parser as add_definitions_parser  # job definitions (issue 19)

        add_definitions_parser(sub)
    if want("teams"):
        from .teams import add_parser as add_teams_parser  # teams move (hubadmin23 A9)

        add_teams_parser(sub)
    if want("users"):
        from .users import add_parser as add_users_parser  # users rename (hubadmin26 B10)

        add_users_parser(sub)
    if want("nodes"):
        from .nodes import add_parser as add_nodes_parser  # nodes cordon|drain|uncordon (hubadmin24)

        add_nodes_parser(sub)
    views: list[str] = []
    if any(want(name) for name in ADMIN_VIEW_NAMES):
        from .admin_views import add_parsers as add_admin_views  # usage, audit, quotas (hubadmin22 H10)

        views = add_admin_views(sub, want)
    for name in ("status", "submit", "queue", "wait", "cancel", *changes, "jobs", "logs", "definitions", "teams", "users", "nodes",
                 *views):
        if want(name):
            _common_options(_subparser(parser, name))
            _exit_status_said(_subparser(parser, name))
    for name, text in (
            ("serve", "run the central service for a JupyterHub (jupyter-sched serve --help)"),
            ("simulate", "replay a trace or scenario through the scheduler (jupyter-sched simulate --help)"),
            ("fetch-traces", "download public GPU cluster traces (jupyter-sched fetch-traces --help)"),
            ("doctor", "admin, on the store itself: find, repair or remove rows that cannot be read; list and "
                       "correct jobs' suspect ends (ends, correct-end); migrate the schema; rotate the job-token "
                       "secret (jupyter-sched doctor --help)")):
        if want(name):
            sub.add_parser(name, help=text, add_help=False)
    return parser


def _add_submit(sub: Any) -> None:
    submit = sub.add_parser(
        "submit", help="submit a job; the command follows --",
        usage=f"{PROG} submit [options] (-- COMMAND [ARGS ...] | --script FILE [ARGS ...] | --notebook FILE)",
        description="Submit a job. Say what to run with a command after -- (e.g. -- python train.py --epochs 3), "
                    "--script or --notebook.")
    from .run_options import add_run_options  # one definition with definitions create/edit (newuser42 n4)

    add_run_options(submit, lambda text, default: f"{text} ({default})",
                    workdir_default="default: the current directory; for --notebook, the notebook's folder, as "
                                    "Jupyter starts its kernel")
    submit.add_argument("--name", help="job name")
    submit.add_argument("--no-preempt", dest="no_preempt", action="store_true",
                        help="free GPUs only: never preempt or reclaim another's running job (another team's borrowed "
                        "GPUs included); it waits for a free GPU instead")
    submit.add_argument("-q", "--quiet", action="store_true",
                        help="leave out the notes on stderr (which program the command runs, what the server noted "
                             "about the request): for scripts that submit many jobs")
    submit.add_argument("--dry-run", action="store_true",
                        help="would it fit, where and when — said without submitting (as %%schedule dryrun and the "
                             "panel's Check fit)")
    submit.add_argument("--wait", action="store_true",
                        help="then wait for the job to end, with a progress bar; exits as `wait` does "
                             f"({EXIT_OK} succeeded, {EXIT_JOB_FAILED} ended otherwise: see `{PROG} wait --help`)")
    what = submit.add_mutually_exclusive_group()
    what.add_argument("--script", help="Python script to run")
    what.add_argument("--notebook", help="notebook to execute headless, in its own folder unless --workdir")
    submit.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                        help="a value for the notebook's cell tagged 'parameters' (papermill's convention; JSON where "
                             "it parses: -p days=3 -p region=eu), or the script's --NAME VALUE; repeatable")
    submit.add_argument("argv", nargs=argparse.REMAINDER, help="-- command and arguments (or script arguments)")
    # what a word after a command given without -- is checked against (newuser31 N9)
    submit.set_defaults(submit_options=tuple(o for o in submit._option_string_actions if o.startswith("--")),
                        submit_switches=tuple(o for o, a in submit._option_string_actions.items() if a.nargs == 0))


def _add_queue(sub: Any) -> None:
    queue = sub.add_parser(
        "queue", help="pending and running work with position, reason and ETA",
        description="The queue: the first pending jobs in queue order (--limit, default 50), then the work "
                    "holding GPUs — every user's work, as everyone reads it. --all lists every pending job, not "
                    "only the first 50 (with --json, every one unless --limit is given); it is not 'all users' "
                    "as in cancel --all and jobs --all. --user U / --team T: only that user's or team's work, "
                    "with its place in the whole queue.")
    lines = queue.add_mutually_exclusive_group()
    lines.add_argument("--limit", type=_queue_limit, metavar="N",
                       help=f"show at most N pending jobs (default 50, at most {QUEUE_LIMIT_MAX:,})")
    lines.add_argument("--all", dest="everything", action="store_true",
                       help="show every pending job, not only the first 50 (the queue lists every user's already)")
    whose = queue.add_mutually_exclusive_group()
    whose.add_argument("--mine", action="store_true",
                       help="only my jobs, with their place in the whole queue")
    whose.add_argument("--user", metavar="U", help="only this user's work, with its place in the whole queue")
    queue.add_argument("--team", metavar="T", help="only work charged to this team (with --user: that user's in it)")
    queue.add_argument("--summary", action="store_true",
                       help="one line per team: GPUs running of its guarantee and borrowing limit, borrowed, "
                            "pending jobs and GPUs, oldest wait")


def _add_cancel(sub: Any) -> None:
    cancel = sub.add_parser(
        "cancel", help="cancel jobs: by id or name, all of mine (--mine) or everyone's (--all, admins)",
        usage=f"{PROG} cancel (JOB [JOB ...] | --mine | --all [--user U | --team T]) [--state STATE] [--yes] [-q]",
        description="Cancel jobs. Pending jobs leave the queue at once; running jobs get SIGTERM, then SIGKILL "
                    "after the server's grace period. --mine and --all list what they would cancel and ask first; "
                    "kernel leases are left alone (release those with %gpu release).")
    cancel.add_argument("job_ids", nargs="*", metavar="JOB", help=LEASE_JOB_HELP)
    scope = cancel.add_mutually_exclusive_group()
    scope.add_argument("--mine", action="store_true", help="every job of mine that is pending or running")
    scope.add_argument("--all", dest="everyone", action="store_true",
                       help="every user's pending and running jobs (admins only; queue --all means every pending "
                            "job instead)")
    cancel.add_argument("--state", choices=["pending", "running"],
                        help="with --mine/--all: only jobs waiting (pending) or only those holding GPUs (running)")
    cancel.add_argument("--user", metavar="U", help="with --all: only this user's jobs (offboarding)")
    cancel.add_argument("--team", metavar="T", help="with --all: only this team's jobs (e.g. a renamed team's held work)")
    cancel.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    cancel.add_argument("-q", "--quiet", action="store_true",
                        help="print nothing when it works (errors still go to stderr and set the exit status): for "
                             "scripts (submit -q, unlike it, still prints the job's line: its id)")


def _add_jobs(sub: Any) -> None:
    jobs = sub.add_parser(
        "jobs", help="my jobs and leases, newest first, finished ones too (ids and names for logs, wait, cancel)",
        description="Your jobs and GPU leases, newest first, one line each: what runs, what waits and why, how "
                    "the finished ones ended. A lease (l-…) is released with `cancel l-…` or, in its notebook, "
                    "%gpu release (see %gpu in a notebook).")
    from .admin_views import WHEN_HELP, when_arg

    jobs.add_argument("--state", help="only these states, comma separated, e.g. running,pending, stopping or failed")
    jobs.add_argument("--limit", type=_jobs_limit, default=JOBS_LINES, metavar="N",
                      help=f"show at most N jobs (default {JOBS_LINES}); more than 1000 are read page by page")
    jobs.add_argument("--all", dest="all_users", action="store_true", help="everyone's jobs (admins only)")
    jobs.add_argument("--user", metavar="USER", help="this user's jobs (admins only)")
    jobs.add_argument("--team", metavar="TEAM", help="only work charged to this team (with --all: everyone's there)")
    jobs.add_argument("--since", metavar="WHEN", type=when_arg, help=f"only jobs submitted from then: {WHEN_HELP}")
    jobs.add_argument("--until", metavar="WHEN", type=when_arg,
                      help="only jobs submitted before then (a date: its midnight UTC, so --until 2026-12-01 ends "
                           "with November 30)")


UTC_HELP = ("show times in UTC (default: your time zone, from TZ or /etc/localtime, named after each time: "
            "'ends by 20:47 CET'; --json is always ISO UTC)")


def _common_options(command: argparse.ArgumentParser) -> None:
    """``--json``, ``--url``, ``--token`` and ``--timeout`` after the subcommand too (``jupyter-sched queue --json``,
    as people type them): the same destinations as the program's options, left alone when absent;
    also on each action of ``definitions``."""
    # listed in each command's --help (newuser27 n6: `status JOB --json` worked, `status --help` did not say it)
    command.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                         help="print the server's JSON instead of lines and tables (also before the command)")
    command.add_argument("--utc", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    command.add_argument("--url", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    command.add_argument("--token", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    command.add_argument("--token-file", dest="token_file", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    if "--timeout" not in command._option_string_actions:  # `wait --timeout` is its own (how long to wait)
        # `jupyter-sched jobs --timeout 60` was "unexpected arguments" (new user 23, N14)
        command.add_argument("--timeout", type=_seconds, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    for action in command._subparsers._group_actions if command._subparsers else ():
        for nested in (getattr(action, "choices", None) or {}).values():
            _common_options(nested)


def _exit_status_said(command: argparse.ArgumentParser) -> None:
    """:data:`SUBCOMMAND_EXIT_STATUS` as the epilog of ``command`` and of its own subcommands (``definitions create``),
    where none says its exit statuses already (``wait``'s, ``logs``'s own)."""
    if not command.epilog:
        command.epilog = SUBCOMMAND_EXIT_STATUS
    elif "Exit status" not in command.epilog:
        command.epilog = f"{command.epilog} {SUBCOMMAND_EXIT_STATUS}"
    for action in command._subparsers._group_actions if command._subparsers else ():
        for nested in (getattr(action, "choices", None) or {}).values():
            _exit_status_said(nested)


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and name in choices:
            return choices[name]  # type: ignore[no-any-return]
    return parser


_APP_PATHS = frozenset({"lab", "tree", "notebooks", "doc", "edit", "terminals", "api", "view", "voila"})
"""First path parts of pages and APIs under a Jupyter server's root (what a pasted URL may carry)."""


def elide_tokens(text: str) -> str:
    """``text`` with the value of every ``token=`` in it shown as ``…`` (new user 8, N14: a pasted
    URL's token was echoed to the terminal, and to any CI log that keeps stderr)."""
    return re.sub(r"(token=)[^&#\s'\"/]+", r"\1…", text) if "token=" in text else text


def server_url(text: str, name: str = "--url") -> tuple[str, str | None]:
    """The Jupyter server's root URL from what a person pastes, and the token it carries: the URL
    JupyterLab prints (``http://127.0.0.1:8888/lab?token=abc``), a host:port without ``http://``,
    a URL ending in ``api/sched/``; a hub user's ``/user/ana/lab`` keeps its ``/user/ana/`` prefix.

    Raises:
        ValueError: not an http(s) URL with a host (the message says so in words).
    """
    from urllib.parse import parse_qs, urlsplit

    raw = text.strip()
    if "://" not in raw:
        raw = "http://" + raw
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ValueError(elide_tokens(f"{name} {text!r} is not a server URL")) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(elide_tokens(f"{name} {text!r} is not a server URL"))
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in raw):
        # a space or control character inside (a paste with one): http.client refused it with a
        # traceback (new user 7, F13)
        raise ValueError(elide_tokens(f"{name} {text!r} is not a server URL (it has a space or control character "
                                      "in it)"))
    prefix: list[str] = []
    for part in parts.path.split("/"):
        if part in _APP_PATHS:
            break
        if part:
            prefix.append(part)
    tokens = parse_qs(parts.query).get("token") or []
    token = tokens[0] if tokens else None
    root = "/" + "".join(f"{part}/" for part in prefix)
    return f"{parts.scheme}://{parts.netloc}{root}", token


TOKEN_FILE_BYTES = 4096
"""Most of a ``--token-file`` read: a token is a line of ~50 characters (``--token-file /dev/zero``
read without end: new user 14, N24)."""


def _token_in(parser: argparse.ArgumentParser, path: str) -> str:
    """The token in ``--token-file FILE``: its first line, spaces around it dropped — read from the
    first :data:`TOKEN_FILE_BYTES` bytes only (a device or a huge file is refused, not read to its end)."""
    try:
        with open(path, "rb") as fh:  # a pipe too (--token-file <(pass show …)): read to the bound only
            head = fh.read(TOKEN_FILE_BYTES + 1)
        line, newline, _ = head.partition(b"\n")
        if not newline and len(head) > TOKEN_FILE_BYTES:
            parser.error(f"--token-file {path}: not a token file (no line end in its first "
                         f"{TOKEN_FILE_BYTES // 1024} KiB) — give the file whose first line is the token")
        token = line.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a text file"
        parser.error(f"--token-file {path}: {why[:1].lower()}{why[1:]}")
    if not token or any(ch.isspace() or not ch.isprintable() for ch in token):
        parser.error(f"--token-file {path}: its first line must be the token alone (the text after token= in "
                     "the URL JupyterLab printed)")
    return token


def _empty_option(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse ``--url ''``, ``--token ''`` and ``--token-file ''`` (new user 14, N24: an empty ``--url``,
    often a script's unset variable, was read as "discover", and ``--token ''`` was sent and refused as
    the token in JUPYTER_SCHED_TOKEN) — each saying what leaving it out does."""
    for option, name, without in (("--url", "url", "to find the server (JUPYTER_SCHED_URL, then the running ones)"),
                                  ("--token", "token", "to use JUPYTER_SCHED_TOKEN or the server's runtime file"),
                                  ("--token-file", "token_file", "to use JUPYTER_SCHED_TOKEN")):
        value = getattr(args, name, None)
        if value is not None and not value.strip():
            parser.error(f"{option} is empty — give it a value, or leave {option} out {without}")


def _command_in(raw: Sequence[str]) -> str | None:
    """The subcommand ``raw`` names, for :func:`build_parser` to build only its parser; None when
    the whole parser is needed: no known command, or ``-h``/``--help`` before it (the program's
    help lists every command); :data:`_NO_COMMAND` when ``-V``/``--version`` comes first (it
    exits while parsed, before any command or error is looked at)."""
    words = iter(raw)
    for word in words:
        if word in ("--url", "--token", "--token-file", "--timeout"):
            next(words, None)  # the option's value, whatever it reads
        elif word in ("-h", "--help") or word == "--":
            return None
        elif word in ("-V", "--version"):
            return _NO_COMMAND
        elif not word.startswith("-"):
            return word if word in COMMAND_NAMES or word in ADMIN_VIEW_NAMES else None
    return None


class _Offline(NamedTuple):
    """How a command that asks no server takes the program's options (:data:`OFFLINE_COMMANDS`)."""

    passed: frozenset[str]
    """Its own options of the same name: passed on, after the command's name (``doctor --json``)."""
    ignored: frozenset[str]
    """Options that change nothing it says, taken and left out (``--utc`` where its times are UTC already)."""
    why: str
    """Why any other is refused, and the fix (``{option}``: the option typed)."""


OFFLINE_COMMANDS: dict[str, _Offline] = {
    "doctor": _Offline(frozenset({"--json"}), frozenset({"--utc"}),  # its times are ISO UTC
                       "doctor works on the store's database itself, not through a server — name the store with "
                       "--db URL (or $JUPYTER_SCHED_DB_URL) and leave {option} out"),
    "serve": _Offline(frozenset(), frozenset(),
                      "serve runs the hub's scheduler service and asks no server — its own address is --ip/--port "
                      "(default: from $JUPYTERHUB_SERVICE_URL); leave {option} out"),
    "simulate": _Offline(frozenset(), frozenset({"--utc"}),  # simulated time has no zone
                         "simulate runs offline and asks no server (its results are the CSV files and figures in "
                         "--out) — leave {option} out"),
    "fetch-traces": _Offline(frozenset(), frozenset({"--utc"}),
                             "fetch-traces downloads public traces and asks no server — leave {option} out"),
}
"""The commands that ask no jupyter_sched server, each dispatched apart before the server commands' parser
(:func:`main`), and what each does with the program's options (:func:`offline_words`)."""


def offline_words(raw: Sequence[str], command: str) -> tuple[list[str], str]:
    """``(words from the command on, refusal)`` for ``raw``, a command line of ``command``, one of
    :data:`OFFLINE_COMMANDS`. The program's options typed before the command — or after it: none of these
    commands has them but as :attr:`_Offline.passed` says — are passed on after the command's name, left out
    (:attr:`_Offline.ignored`) or refused: ``refusal`` is one line naming the option as typed (``--url=…`` as
    ``--url``), "" when none is. A ``-h``/``--help`` after the command is answered whatever the options (a help
    asks nothing). Words after ``--`` are left as they are (newuser36 N4: ``--json doctor`` was a KeyError)."""
    known = build_parser(_NO_COMMAND)._option_string_actions  # the program's options: a new one is covered
    valued = {flag for flag, action in known.items() if action.nargs != 0}
    rule = OFFLINE_COMMANDS[command]
    at = list(raw).index(command)
    kept: list[str] = []
    passed: list[str] = []
    refused = ""
    words = iter(enumerate(raw))
    for i, word in words:
        flag = word.split("=", 1)[0]
        if i == at:
            continue
        if word == "--" and i > at:
            kept.extend(raw[i:])
            break
        if flag not in known or flag in ("-h", "--help", "-V", "--version"):
            kept.append(word)  # the command's own (before it, _command_in found none of these)
            continue
        value = [] if flag not in valued or "=" in word else [next(words, (0, ""))[1]]
        if flag in rule.passed:
            passed += [word, *value]
        elif flag not in rule.ignored and not refused:
            refused = f"{PROG} {command}: {flag}: {rule.why.format(option=flag)} [usage_error]"
    if refused and any(word in ("-h", "--help") for word in kept):
        refused = ""
    return [command, *passed, *kept], refused


def _check_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, with the subcommand's usage line, what argparse alone cannot express (exits 2)."""
    _empty_option(parser, args)
    if getattr(args, "token_file", None) is not None:
        if args.token is not None:
            parser.error("give --token or --token-file, not both")
        args.token, args.token_from_file = _token_in(parser, args.token_file), True
    if getattr(args, "url", None) is not None:
        try:
            args.url, token = server_url(args.url)
        except ValueError as exc:
            parser.error(f"{exc} — give e.g. http://127.0.0.1:8888/ (the address JupyterLab printed)")
        if token and not args.token:
            args.token, args.token_from_url = token, True
    elif os.environ.get("JUPYTER_SCHED_URL", "").strip():
        # read as --url is (new user 8, N14): the URL JupyterLab printed (/lab?token=…) works here too,
        # its token used when JUPYTER_SCHED_TOKEN is not set (and not noted: `ps` does not show it)
        try:
            args.url, args.env_url_token = server_url(os.environ["JUPYTER_SCHED_URL"], "JUPYTER_SCHED_URL")
        except ValueError as exc:
            parser.error(f"{exc} — set it to e.g. http://127.0.0.1:8888/ (the address JupyterLab printed)")
        args.url_from_env = True
    if args.command in ("submit", "definitions"):  # one refusal, exit 2, for every empty value (new user 15, N2)
        from ..wording.flags import empty_option

        action = getattr(args, "action", None)
        where = _subparser(parser, "submit") if args.command == "submit" else \
            _subparser(_subparser(parser, "definitions"), action) if action in ("create", "edit") else None
        blank = next((d for d in _VALUED_OPTIONS if isinstance(getattr(args, d, None), str)
                      and not getattr(args, d).strip()), None)
        if where is not None and blank is not None:
            where.error(empty_option("--" + blank.replace("_", "-"), edit=action == "edit"))
    if args.command == "submit":
        from ..wording.flags import stray_before_command

        if not (args.script or args.notebook) and (stray := stray_before_command(args.argv, _Parser.typed)):
            _subparser(parser, "submit").error(stray)  # `--time-limit 5 minutes -- true` (newuser22 N2)
        argv = [a for a in args.argv if a != "--"] if args.argv[:1] == ["--"] else list(args.argv)
        if not (args.script or args.notebook or argv):
            _subparser(parser, "submit").error(f"say what to run: {WHAT_TO_RUN}")
        names = [item.partition("=")[0] for item in args.env]
        if twice := next((n for n in names if n and names.count(n) > 1), None):  # the last won, said nowhere (N11)
            given = ", ".join(item for item in args.env if item.partition("=")[0] == twice)
            _subparser(parser, "submit").error(f"--env {twice} is given twice ({given}): give it once")
        _check_parameters(_subparser(parser, "submit"), args, argv)
        for option, path in (("--script", args.script), ("--notebook", args.notebook)):
            folder = args.workdir or os.getcwd()
            problem = file_problem(path, folder) if path else None  # the job would fail at its start
            if problem:  # missing, a folder, or not readable by this account (new user 8, N7), as the magics say it
                from ..wording.files import path_refusal  # on a refusal only: wording/ costs each call

                _subparser(parser, "submit").error(" — ".join(path_refusal(option, path, problem, option[2:], "cli")))
            if path:  # the other kind of file fails only at its start, after waiting for a GPU (new user 4)
                notebook = _looks_like_notebook(os.path.join(folder, path))
                if option == "--notebook" and not notebook:
                    _subparser(parser, "submit").error(f"--notebook {path}: not a notebook (not JSON) — a Python "
                                                       f"file runs with --script {path}")
                if option == "--script" and notebook:
                    _subparser(parser, "submit").error(f"--script {path}: this is a notebook — run it with "
                                                       f"--notebook {path}")
                if wrong := _content_refusal(option[2:], os.path.join(folder, path), path):  # REST's rule (N23)
                    _subparser(parser, "submit").error(wrong)
    if args.command == "cancel":
        sub = _subparser(parser, "cancel")
        if args.job_ids and (args.mine or args.everyone):
            sub.error(f"give JOB ... or --mine / --all, not both — e.g. {PROG} cancel train, or {PROG} cancel --mine")
        if not args.job_ids and not (args.mine or args.everyone or args.user or args.team):
            sub.error("say which jobs: JOB ... (each a job's id or name), --mine (all of yours) or --all (everyone's, "
                      f"admins) — e.g. {PROG} cancel train; `{PROG} jobs` lists yours")
        if args.state and not (args.mine or args.everyone):
            sub.error("--state goes with --mine or --all")
        if (args.user or args.team) and not args.everyone:  # hubadmin24 B17
            sub.error(f"--user and --team narrow --all — e.g. {PROG} cancel --all --user ha24e")
        if args.user and args.team:
            sub.error("give --user or --team, not both")
    if getattr(args, "job_ids", None):  # `cancel j-1 j-1` said the same twice (new user 13, N11): each once
        args.job_ids = list(dict.fromkeys(args.job_ids))
    for job_id in [*(getattr(args, "job_ids", None) or ()), getattr(args, "job_id", None)]:
        if isinstance(job_id, str) and not job_id.strip():  # `cancel ""` answered with a REST routing error
            _subparser(parser, args.command).error(f"JOB must not be empty — give a job's id or name (`{PROG} jobs` "
                                                   "lists yours)")
        if isinstance(job_id, str) and _meant_as_id(job_id) and not _ID.fullmatch(job_id.strip()):
            # "j-…:" copied from a `jobs` line reached a hub's forwarder as an encoded path and came back
            # as "not a scheduler route" (new user 5, finding 15): said here, naming the id. Any other
            # word is a job name, looked up among the caller's jobs (client.job_id_of): a name with a
            # space or a non-ASCII letter ("a b c", "🚀 run") was refused here as "not a job id" (new user 20, N15)
            trimmed = job_id.strip().strip(_ID_EDGE_JUNK)
            guess = f"; did you mean {trimmed}?" if _ID.fullmatch(trimmed) else ""
            shown = repr(job_id) if len(job_id) <= 60 else f"{job_id[:40]!r}… ({len(job_id)} characters)"
            # a long id of good characters broke the length rule, not the letters one (new user 16, N7)
            rule = (f"ids are at most {_ID_MAX} characters" if len(trimmed) > _ID_MAX and _ID_CHARS.fullmatch(trimmed)
                    else "ids are letters, digits and '-'")
            _subparser(parser, args.command).error(
                f"{shown} is not a job id: {rule}{guess} (`{PROG} jobs` lists yours)")


def _check_parameters(submit: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> None:
    """``-p`` read as ``definitions -p`` and the magics read it (one parser), into ``args.parameters``;
    refused, naming the rule, where the job has no parameters cell (new user 14, N27); a word after
    ``--notebook FILE`` refused, not dropped."""
    from ..definitions.parameters import NOTEBOOK_ARGUMENT, NOTEBOOK_VALUES_HINT, PARAMETERS_RULE, parse_parameter_words

    if args.notebook and argv:
        submit.error(f"{NOTEBOOK_ARGUMENT.format(word=argv[0])} — {NOTEBOOK_VALUES_HINT}")
    if args.parameter and not (args.notebook or args.script):
        submit.error(f"{PARAMETERS_RULE} (or a --script's --NAME arguments); a command after -- takes its values as "
                     "its own arguments — e.g. --notebook report.ipynb -p days=3, or -- python train.py --days 3")
    try:
        args.parameters = parse_parameter_words(args.parameter)
    except ValidationError as err:
        submit.error(f"{err.message} — {err.hint}")


_ID_MAX = 128
_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{_ID_MAX - 1}}}")
"""What a job, lease or definition id can be (``j-1m8veekaw-mfrjt2``); anything else never names one."""
_ID_CHARS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""An id's characters, of any length: a longer one breaks only the length rule."""
_ID_EDGE_JUNK = ":,;.'\"()[]<>` "
"""Punctuation a copy from a listing picks up at an id's ends (``job j-…: succeeded``)."""


def _meant_as_id(ref: str) -> bool:
    """Whether ``ref`` is meant as a job or lease id (``j-…``/``l-…``, in any case, maybe with a
    listing's punctuation around it): only those are checked against the id rule; anything else is
    a job name (the client looks it up and never puts it in a path)."""
    return ref.strip().lstrip(_ID_EDGE_JUNK).lower().startswith(("j-", "l-"))


def _content_refusal(kind: str, full: str, path: str) -> str:
    """The server's refusal of a ``kind`` file that cannot run (:func:`~jupyter_sched.userfiles.content_problem`,
    new user 14, N23), with the option as typed (``--notebook 'bad.ipynb' cannot be read: it is not JSON``),
    or ""."""
    from ..userfiles import CHECKED_BYTES, content_problem, content_refusal

    try:
        head = read_head(full, CHECKED_BYTES + 1)
    except OSError:
        return ""
    problem = content_problem(kind, head, full) if len(head) <= CHECKED_BYTES else None
    if problem is None:
        return ""
    message, hint = content_refusal(kind, path, problem)
    return f"--{message} — {hint.replace(' as a command', ' after --')}"


def _looks_like_notebook(path: str) -> bool:
    """Whether ``path`` holds a notebook: JSON text (its first character ``{``), whatever its name."""
    try:
        return read_head(path, 4096).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
    except OSError:
        return False


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None,
         stdin: TextIO | None = None) -> int:
    """Run the CLI; return the exit code (see the module docstring).

    Args:
        argv: arguments without the program name (default ``sys.argv[1:]``).
        out / err / stdin: streams (tests pass their own; the confirmation of a bulk cancel reads
            ``stdin`` and refuses when it is not a terminal and ``--yes`` is absent).
    """
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    raw = list(sys.argv[1:] if argv is None else argv)
    if not raw or raw[0] == "help":
        # `jupyter-sched` alone, `jupyter-sched help [COMMAND]`: the help, as git, pip and kubectl answer (newuser32
        # n10: "COMMAND: missing" and "'help' is not one of …")
        raw = [raw[1], "--help"] if len(raw) > 1 and raw[1] in COMMAND_NAMES else ["--help"]
    if (offline := _command_in(raw)) in OFFLINE_COMMANDS:
        # the program's options before (or after) a command that asks no server (newuser36 N4: `--json doctor`
        # fell through to the server commands' table: a KeyError traceback): its own are passed on, the
        # others refused naming the option
        raw, refused = offline_words(raw, offline)
        if refused:
            print(refused, file=stderr)
            return EXIT_USAGE
    if raw[:1] == ["serve"]:  # hub mode: runs a server, not a client (see jupyter_sched.hub.serve)
        import importlib.util

        from ..extras import install_extra

        missing = (f"{PROG} serve: hub mode needs JupyterHub, which comes with the [hub] extra: "
                   f"{install_extra('hub')}")
        if any(a in ("-h", "--help") for a in raw[1:]):  # the help needs no JupyterHub (new user 5)
            import contextlib

            from ..hub.serve_args import parser as serve_parser  # argparse alone (newuser29 n13: 2-3 s before)

            with contextlib.redirect_stdout(stdout), contextlib.suppress(SystemExit):
                serve_parser().parse_known_args(raw[1:])
            if importlib.util.find_spec("jupyterhub") is None:
                print(f"\n{missing}", file=stdout)
            return EXIT_OK
        if importlib.util.find_spec("jupyterhub") is None:  # said first, not a traceback after other fixes (new user 4)
            print(missing, file=stderr)
            return EXIT_REFUSED
        from ..hub.serve import main as serve_main

        return serve_main(raw[1:], err=stderr)
    if raw[:1] == ["doctor"]:  # admin tool on the database itself: works when the server cannot
        from .doctor_args import parse as doctor_parse  # --help and usage errors without the store (newuser37 n5)

        doctor_args = doctor_parse(raw[1:], out=stdout, err=stderr)
        if isinstance(doctor_args, int):
            return doctor_args
        from .doctor import run as doctor_run

        return doctor_run(doctor_args, out=stdout, err=stderr)
    if raw[:1] in (["simulate"], ["fetch-traces"]):  # offline tools: no server needed (jupyter_sched.sim)
        from ..sim.cli import main as sim_main  # argparse alone: --help loads no pandas/numpy (newuser29 n13)

        return sim_main(raw, out=stdout, err=stderr)  # a slim install's missing [sim] extra: one line, said there
    if _command_in(raw) == "update":  # `--time-limit -30m` is update's own example (newuser29 N3)
        from ..wording.flags import relative_values_joined

        raw = relative_values_joined(raw)
    parser = build_parser(_command_in(raw))
    _Parser.typed = tuple(raw)
    try:
        args = parser.parse_args(raw)
        _check_usage(parser, args)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    from ..client import NoServerError, ServerUnreachableError, connect
    from ..client.sync import NotSchedServerError
    from .commands import COMMANDS

    if args.token is not None and not getattr(args, "token_from_file", False):
        # always, terminal or not: a script's --token is as readable in `ps` as a person's, and for as
        # long as it runs (`wait --for 2h`); new user 7, F17 (the note was said at a terminal only)
        where = "the token in --url" if getattr(args, "token_from_url", False) else "--token"
        print(f"{PROG}: note: other local accounts can read {where} in `ps` while this runs; JUPYTER_SCHED_TOKEN=… "
              "in the environment or --token-file FILE is not shown there", file=stderr)
    try:
        token = args.token if args.token is not None else \
            os.environ.get("JUPYTER_SCHED_TOKEN") or getattr(args, "env_url_token", None)
        client = connect(args.url, token, timeout_s=args.timeout)
    except NoServerError as exc:  # the hint in the CLI's terms, not the Python API's
        from ..client.discovery import HUB_SERVICE_HINT, SLOW_SERVER_HINT

        # it runs, but was slow: not "start JupyterLab" (new user 23, N14); it is the hub's service (newuser33 n5)
        if exc.hint == SLOW_SERVER_HINT or (exc.hint or "").startswith(HUB_SERVICE_HINT.partition(":")[0]):
            print(failure(args, f"{PROG}: {_clause(exc.message)} — {exc.hint}", exc), file=stderr)
            return EXIT_NO_SERVER
        print(failure(args, f"{PROG}: {_clause(exc.message)} — start JupyterLab on this machine (jupyter lab), or set "
              "JUPYTER_SCHED_URL and JUPYTER_SCHED_TOKEN (on a JupyterHub: JUPYTER_SCHED_HUB_URL=HUB/services/jupyter-sched/ "
              "and JUPYTER_SCHED_TOKEN=a token from HUB/hub/token), or pass --url URL --token TOKEN (which other "
              "local accounts can read in `ps`)", exc), file=stderr)
        return EXIT_NO_SERVER
    except SchedError as exc:  # the hub token's mint, a squatted address: one line, not a traceback (red31 N1)
        from ..client._http import AddressTaken
        from ..client.hub_token import HubAddressError

        print(failure(args, elide_tokens(error_line(command_said(args), exc)), exc), file=stderr)
        # a wrong or taken address is an address mistake (3), as the others; a hub refusing a token is a refusal (1)
        return EXIT_NO_SERVER if isinstance(exc, AddressTaken | HubAddressError) else EXIT_REFUSED
    io = Streams(out=stdout, err=stderr, stdin=stdin or sys.stdin)
    if client.connection.others:  # several servers answered: say which one this talks to (new user 4)
        print(several_servers_note(client.connection.url, client.connection.root, client.connection.others,
                                   os.getcwd()), file=stderr)
    try:
        from ..client.local_zone import caller_zone
        from .local_when import resolve_local_times

        zone = None if args.utc else caller_zone(lambda said: print(f"{PROG}: note: {said}", file=stderr))
        resolve_local_times(args, zone)  # --since 2026-12-07: the reader's midnight (newuser41 n9)
        with client, shown_in(zone):
            return COMMANDS[args.command](client, args, io)
    except NotSchedServerError as exc:
        print(failure(args, elide_tokens(f"{PROG}: {exc.message} — {exc.hint}"), exc), file=stderr)
        return EXIT_NO_SERVER
    except ServerUnreachableError as exc:
        from ..client.sync import HUB_DOWN_HINT, NO_SUCH_HOST_HINT

        fix = ("check the host name given with --url, e.g. http://127.0.0.1:8888/ (what `jupyter server list` "
               "prints)" if exc.hint == NO_SUCH_HOST_HINT
               else HUB_DOWN_HINT if exc.hint == HUB_DOWN_HINT  # nothing to start, no --url to give (hubadmin22 H1)
               else "is the Jupyter server still running? Start it again, or pass --url for another one")
        said = exc.message
        if getattr(args, "url_from_env", False) and exc.hint != HUB_DOWN_HINT:
            said, fix = stale_url_env(said, client.connection.url)  # newuser30 N3: say where the address came from
        print(failure(args, elide_tokens(f"{PROG}: {said} — {fix}"), exc), file=stderr)
        return EXIT_NO_SERVER
    except AuthenticationError as exc:
        print(failure(args, token_refused_line(args, client.connection.url, source=client.connection.source), exc),
              file=stderr)
        return EXIT_REFUSED
    except SchedError as exc:
        line = error_line(command_said(args), exc)
        print(failure(args, line, exc), file=stderr)
        from ..client.ride_out import no_server_answered

        # the hub's proxy (503) or a user's server (502) answered for a scheduler that did not:
        # "no server answered", as the help says, not "refused" (hubadmin23 A18)
        return EXIT_NO_SERVER if no_server_answered(exc) else refused_status(exc)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit as exc:  # a command's own usage error (parser.error): its status, returned as parsing's is
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE


def stale_url_env(message: str, url: str) -> tuple[str, str]:
    """``(message, fix)`` for a server that did not answer at the address ``$JUPYTER_SCHED_URL`` gave: the
    message names the variable as the address's source, and the fix is the server of this account that
    runs now (its runtime file; a restarted ``jupyter lab`` often moves port) when there is one —
    ``unset JUPYTER_SCHED_URL`` finds it — else to start the server again or fix the variable
    (newuser30 N3: a stale variable read as "is the Jupyter server still running?")."""
    from ..client.discovery import another_running_server

    said = f"{message} (the address in JUPYTER_SCHED_URL)"
    if here := another_running_server(url):
        return said, (f"a Jupyter server of yours runs at {here}: unset JUPYTER_SCHED_URL (and "
                      "JUPYTER_SCHED_TOKEN) and the CLI finds it, or set JUPYTER_SCHED_URL to it")
    return said, "is the Jupyter server still running? Start it again, or set JUPYTER_SCHED_URL to the address it prints"


def command_said(args: argparse.Namespace) -> str:
    """The command as typed, for an error line's prefix: ``definitions create``, ``teams move``, ``nodes drain``
    — only a subcommand's action, never an option's value (hubadmin25 B14: ``audit --action nosuch`` was said
    ``jupyter-sched audit nosuch:``)."""
    dest = {"definitions": "action", "teams": "teams_command", "users": "users_command", "nodes": "nodes_command"}.get(str(args.command))
    action = getattr(args, dest, None) if dest else None
    return f"{args.command} {action}" if isinstance(action, str) else str(args.command)


def failure(args: argparse.Namespace, line: str, exc: SchedError) -> str:
    """What the CLI prints on stderr for a failed request: ``line`` (its one line, in the CLI's
    syntax), or with ``--json`` one JSON object a script can read, the server's error body with that
    line beside it — ``{"error": {"code", "message", "field", "hint", "details"?, "text"}}`` (new
    user 13, N17: ``--json cancel J`` answered a text line)."""
    if not getattr(args, "json", False):
        return line
    import json

    body: dict[str, Any] = {"code": exc.code, "message": exc.message, "field": exc.field, "hint": exc.hint}
    if exc.details:
        body["details"] = exc.details
    body["text"] = line
    return json.dumps({"error": body}, sort_keys=True, default=str)


def several_servers_note(url: str, root: str, others: Sequence[str], cwd: str) -> str:
    """``jupyter-sched: 2 Jupyter servers with jupyter_sched run here; using http://…:8888/ (root
    /srv/a: it serves this directory) — pass --url to use another: http://…:18841/``."""
    inside = root and (cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep))
    why = "it serves this directory" if inside else "the one started last"
    return (f"{PROG}: {len(others) + 1} Jupyter servers with jupyter_sched run here; using {url} (root {root}: {why}) "
            f"— pass --url to use another: {', '.join(others)}")


class Streams:
    """Where a command writes and reads (stdout for results, stderr for prompts and progress)."""

    def __init__(self, *, out: TextIO, err: TextIO, stdin: TextIO) -> None:
        self.out = out
        self.err = err
        self.stdin = stdin


def job_of(client: Any, ref: str, command: str, io: Streams) -> str:
    """The id of the job ``ref`` names (``client.job_named``): an id as given, a name of mine its job's
    — of several of that name (a rerun), the live one, else the newest, said on stderr (newuser22 N4:
    ``jupyter-sched: wait: note: waiter2 is j-… (running), the live one of 2 jobs named waiter2; the
    other ended 05:09 UTC``)."""
    from ..client._wire import name_refusal

    try:  # the command goes with the name: the server refuses (and audits) another user's in its words (n6)
        found = client.job_named(ref, f"{PROG} {command}")
    except (ValidationError, AuthorizationError) as err:  # several live of that name: the commands to type
        # (newuser28 n13); only another user's work has it: whose, in this command's words (newuser32 n3)
        raise name_refusal(err, f"{PROG} {command}") from None
    except NotFoundError as err:  # a definition's own name, no job of it: its runs' command (newuser42 N4)
        raise definition_named_instead(client, ref) or err from None
    if found.note:
        print(f"{PROG} {command}: note: {found.note}", file=io.err)
    return str(found.id)


def definition_named_instead(client: Any, ref: str) -> NotFoundError | None:
    """The refusal of ``ref`` as a job's name where it is one of the caller's definitions' names and no job's:
    its runs are the jobs (``nb-def @ 2026-12-07 23:59 UTC``, ``nb-def, run now``), listed with their ids and
    names by ``definitions runs`` (newuser42 N4: ``status nb-def`` said only "none of your jobs is named
    'nb-def'"). None where no definition of mine has that name, or they cannot be read."""
    import shlex

    if not ref or ref.startswith(("j-", "l-", "d-")):
        return None
    try:
        named = [d for d in client.definitions() if d.get("name") == ref]
    except SchedError:
        return None
    if not named:
        return None
    return NotFoundError(f"{ref[:80]!r} is a job definition, not a job: its runs are the jobs, named "
                         f"'{ref[:80]} @ DATE TIME ZONE' (or '{ref[:80]}, run now')", field="job_id",
                         hint=f"`{PROG} definitions runs {shlex.quote(ref)}` lists its runs with their ids and names")


def _own_token_instead(args: argparse.Namespace, url: str, what: str, fix: str) -> str:
    """The refusal of a token typed (``--token``, or in the ``--url``) for a server of this account whose runtime file
    holds another: the fix is to leave it out, as for a stale JUPYTER_SCHED_TOKEN (newuser32 n2: it was told to set
    JUPYTER_SCHED_TOKEN=TOKEN or give --token-file); "" when no running server of this account is at ``url``."""
    from ..client.discovery import runtime_server

    own = runtime_server(url)
    if own is None or own[1] == args.token:
        return ""
    return (f"{PROG} {args.command}: the server at {url} {what} (an older server's?) — {fix}: this server's own "
            "token is found without it, in its runtime file [forbidden]")


def token_refused_line(args: argparse.Namespace, url: str, *, source: str = "") -> str:
    """The server's auth refused the request: which token was sent (and where it came from, since
    an explicit one wins over the discovered server's), and how to give the right one — on a
    JupyterHub (its service or a user's server: ``url``; ``source`` how the connection was found),
    a token from the hub's token page, not the one JupyterLab prints (new user 13, N13)."""
    from ..wording.tokens import token_page_for, token_source, unset_token

    if getattr(args, "token_from_file", False):
        what = f"refused the token in --token-file {args.token_file}"
    elif getattr(args, "token_from_url", False):
        what = "refused the token in the --url"
        if said := _own_token_instead(args, url, what, "leave the token out of the --url"):
            return said
    elif args.token:
        what = "refused the token given with --token"
        if said := _own_token_instead(args, url, what, "leave --token out"):
            return said
    elif os.environ.get("JUPYTER_SCHED_TOKEN"):
        what = "refused the token in JUPYTER_SCHED_TOKEN"
        from ..client.discovery import runtime_server

        own = None if getattr(args, "url_from_env", False) or args.url else runtime_server(url)
        if own is not None and own[1] != os.environ["JUPYTER_SCHED_TOKEN"]:
            # the server was found by its runtime file, whose token works: the variable is an older server's
            # (newuser30 N3: "set JUPYTER_SCHED_TOKEN=TOKEN" while unsetting it was the one-step fix)
            return (f"{PROG} {args.command}: the server at {url} {what} (an older server's?) — unset "
                    "JUPYTER_SCHED_TOKEN: this server's own token is found without it, in its runtime file "
                    "[forbidden]")
    elif getattr(args, "env_url_token", None):
        what = "refused the token in JUPYTER_SCHED_URL"
    elif source.startswith("hub") and os.environ.get("JUPYTERHUB_API_TOKEN"):
        what = "refused the token in JUPYTERHUB_API_TOKEN"
    elif args.url and not getattr(args, "url_from_env", False):
        what = "needs a token (none was given with --url)"
    elif os.environ.get("JUPYTER_SCHED_URL"):
        what = f"needs a token ({unset_token('JUPYTER_SCHED_URL')})"
    elif source == "hub-service":  # a hub service has no runtime file (new user 14, N8): nothing was sent
        what = f"needs a token ({unset_token('JUPYTER_SCHED_HUB_URL')})"
    elif source == "runtime-file":
        what = "refused the token of its runtime file"
    else:
        what = "needs a token (none was found)"
    # the environment first: a --token stays readable by every local account in `ps` while the command
    # runs (new user 7, F17: hours, for `wait --for 2h`; the token opens the whole Jupyter server)
    # the `ps` warning once: the note before the request said it already when --token was typed (new user 11, N13)
    noted = args.token is not None and not getattr(args, "token_from_file", False)
    ps = "" if noted else "; --token TOKEN works too, but other local accounts can read it in `ps`"
    page = token_page_for(url, source)  # a hub service at an address of its own: HUB/hub/token
    return (f"{PROG} {args.command}: the server at {url} {what} — set JUPYTER_SCHED_TOKEN=TOKEN "
            f"({token_source(page)}) or give --token-file FILE{ps} [forbidden]")


def error_line(command: str, exc: SchedError) -> str:
    """One line for a refusal, in the CLI's own syntax: the option to change, not the JSON field.

    ``jupyter-sched submit: --mem-per-gpu must be at most 1 PiB per GPU — use e.g. 40GiB [validation_error]``
    """
    from ..wording import refusal_line, refusal_text
    from ..wording.flags import in_surface_terms, where_listed

    message, hint = refusal_text(exc.message, exc.hint, exc.details, exc.field)
    # the field as the option typed, said once: the renderer the magics use too (new user 13, N19)
    message, hint = in_surface_terms(message, hint, exc.field, details=exc.details)
    hint = where_listed(exc.code, exc.field, message, hint)  # "no job 'j-x' visible to you": where ids are
    if exc.field == "working_dir" and hint:  # the CLI sends --workdir made absolute against this folder (N20)
        from ..wording.workdir import caller_workdir_hint

        here = os.getcwd()  # without --workdir submit sends this folder, not the server's (new user 16, N6)
        hint = caller_workdir_hint(hint, relative_in=f"this shell's folder, {here}",
                                   starts_in=f"this shell's folder, {here}; a notebook's in its own folder"
                                   if command == "submit" else None)
    if exc.field in ("command", "args") and (not hint or re.search(r"[\[{]", hint)):
        # a hint in JSON terms (["python", "train.py"]) is said as the CLI's options; a hint in words
        # (a program not on the job's PATH: give its full path) stays (new user 14, N5: it was dropped)
        hint = f"say what to run: {WHAT_TO_RUN}"
    if hint:  # a REST request in a hint is said as the command that sends it (new user 7, F16)
        hint = re.sub(r"PATCH definitions/([\w-]+)", rf"`{PROG} definitions edit \1 …`", hint)
    return f"{PROG} {command}: {refusal_line(message, hint)} [{exc.code}]"  # one shape (newuser32 n1)


def _clause(text: str) -> str:
    """:func:`jupyter_sched.wording.reasons.as_clause` (the REST refusal's message is cut the same way)."""
    from ..wording.reasons import as_clause

    return as_clause(text)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
