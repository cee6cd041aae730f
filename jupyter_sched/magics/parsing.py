"""Argument parsing of ``%gpu`` and ``%schedule`` / ``%%schedule``, without IPython or a server.

Every parser returns a frozen command object or raises
:class:`~jupyter_sched.errors.ValidationError` whose ``field`` is the argument at fault
(``--gpus``, ``--time-limit``, ``JOB``...) and whose message is one line, so the magic can show
``jupyter_sched: --gpus must be >= 0 (got -1)`` instead of a traceback. Units: GPUs, MiB, seconds.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ..asking_process import asking_process
from ..cli.aliases import OneSetting
from ..cli.commands import env_pair, number_or_text
from ..definitions.parameters import NOTEBOOK_ARGUMENT, NOTEBOOK_VALUES_HINT, PARAMETERS_RULE, parse_parameter_words
from ..errors import ValidationError
from ..model.resources import MAX_MEMORY_MIB
from ..model.units import parse_duration, parse_memory_mib
from ..model.validation import (
    TOO_MANY_GPUS,
    empty_field,
    lease_gpus_range,
    parse_gpus,
    parse_priority,
    parse_time_limit,
)
from ..wording.flags import (
    TAIL_OPTIONS,
    bare_seconds_note,
    close_option,
    line_count,
    meant_option,
    relative_values_joined,
    spaced_value,
    typed_option,
    unit_split,
    with_dash_hint,
)

__all__ = [
    "GPU_SUBCOMMANDS", "HELP_FLAGS", "PRIORITIES", "SCHEDULE_SUBCOMMANDS", "GpuCommand", "JobOptions", "ScheduleCommand",
    "check_model", "command_parser", "help_text", "job_body", "lease_body", "parameters_of", "parse_gpu_line", "parse_schedule_line",
    "passed_on_note",
]

HELP_FLAGS = ("--help", "-h")
"""What asks a magic for its help, as every argparse tool takes it (new user 5: ``%gpu --help``
was an unknown subcommand and ``%schedule run --help`` "missing SCRIPT")."""


def help_text(doc: str, magic: str, topic: str = "") -> str:
    """The help a ``--help`` asks for: the magic's whole docstring (what ``%gpu?`` shows) for
    ``topic`` "", else the lines of its usage and examples for that subcommand (``%schedule run
    ...`` with the indented lines under it; ``cell``: the ``%%schedule`` lines) and where the rest is."""
    import inspect
    import textwrap

    text = inspect.cleandoc(doc)
    if not topic:
        return text
    lead = f"%{magic}" if topic == "cell" else f"{magic} {topic}"
    picked: list[str] = []
    keep = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or not line.startswith(" "):
            keep = False
            continue
        if stripped.startswith("%"):
            keep = stripped == lead or stripped.startswith(lead + " ")
        if keep:
            picked.append(line)
    if not picked:
        return text
    said = textwrap.dedent("\n".join(picked))
    if "[options]" in said and (options := _cell_options(text)):  # newuser37 n9: the note said "--help lists its
        # options" and the help listed none — a subcommand's [options] are the %%schedule options
        said += "\n\n[options], as %%schedule takes them:\n" + options
    return said + f"\n\n{magic}? shows the whole help."


def _cell_options(text: str) -> str:
    """The option lines of ``%%schedule``'s usage in a magic's help ``text`` (from ``%%schedule [`` to the line
    before ``<cell body>``), dedented; "" where it has none."""
    import textwrap

    lines = text.splitlines()
    start = next((at for at, line in enumerate(lines) if line.strip().startswith("%%schedule [")), None)
    if start is None:
        return ""
    end = next((at for at in range(start, len(lines)) if "<cell body>" in lines[at]), start + 1)
    block = lines[start:end]
    block[0] = block[0].replace("%%schedule ", " " * len("%%schedule "), 1)
    return textwrap.dedent("\n".join(block))


PRIORITIES = ("high", "normal", "low")
GPU_SUBCOMMANDS = ("status", "request", "release", "watch", "keepalive")
SCHEDULE_SUBCOMMANDS = ("run", "notebook", "serve", "queue", "jobs", "status", "logs", "wait", "cancel",
                        "hold", "release", "update", "top", "dryrun", "profiles", "usage", "define")  # define: jupyter_sched.magics.define


_PLAIN_WORD = re.compile(r"[\w./=:+-]+")
"""A typed word said as it is in a refusal; any other is quoted (its own punctuation would read as ours)."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises ValidationError (one line, naming the argument) instead of exiting."""

    def __init__(self, prog: str, magic: str, *, abbrev: bool = False) -> None:
        # abbrev: a prefix of one option is that option, as `jupyter-sched submit` takes it (`--gpu 1`), and a
        # prefix of two is "ambiguous", named as the CLI names it (new user 24, N5); off where words after a
        # script are the script's own (run, notebook, serve: `train.py --e 3` is no --env)
        super().__init__(prog=prog, add_help=False, allow_abbrev=abbrev)
        self.magic = magic
        self.typed: list[str] = []

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self.typed = list(args or ())  # what error() names the option by (new user 16, N3)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        message = with_dash_hint(message, self.typed)  # `--time-limit -5m` (new user 9), as typed (16, N3)
        field = "arguments"
        if message.startswith("argument "):
            names, _, said = message[len("argument "):].partition(": ")
            # the option opens the line, as every refusal of an option's value does (new user 14, N4:
            # "%gpu request: --mem-per-gpu: expected one argument", two prefixes) — the one typed of its names
            # (newuser36 n6: `-n -3` was answered "-n/--tail: …")
            field = typed_option(names, self.typed)
            raise ValidationError(f"{field}: {said}", field=field, hint=f"see {self.magic}? for usage")
        elif message.startswith("unrecognized arguments:"):
            field = message.split(":", 1)[1].split()[0]
            # a word with its own punctuation is quoted (newuser35 n8: "unknown argument (the. See …", a pasted
            # "j-… (the newest)"); a plain one reads as typed
            message = f"unknown argument {field if _PLAIN_WORD.fullmatch(field) else repr(field)}"
            if field in ("--help", "-h"):  # a common reflex: answer with the usage (new user 4)
                raise ValidationError(f"{self.format_usage().strip()}", field=field,
                                      hint=f"{self.magic}? shows the whole help")
            # `--time-limit 5 minutes`, `--name my job`: what the CLI says of the same words (verify22 V3)
            at = self.typed.index(field) if field in self.typed else -1
            if fix := unit_split(self.typed, at) or spaced_value(self.typed, at):
                raise ValidationError(f"{self.prog}: {message}: {fix}", field=field, hint=f"see {self.magic}? for usage")
            if field.startswith("-") and (meant := close_option(field, "", list(self._option_string_actions))):
                # `%gpu request 1 --modle A100`: the option meant, as the CLI says it (newuser30 N1)
                raise ValidationError(f"{self.prog}: {message} — {meant}", field=field,
                                      hint=f"see {self.magic}? for usage")
        elif message.startswith("ambiguous option: "):  # the CLI's words: "--mem could match --mem-per-gpu, --memory"
            field = message[len("ambiguous option: "):].split(" ", 1)[0].split("=", 1)[0]
            raise ValidationError(f"{self.prog}: {message}", field=field, hint="type more of the option's name")
        elif "required:" in message:
            field = message.split("required:", 1)[1].strip().split(",")[0].upper()
            message = f"missing {field}"
        raise ValidationError(f"{self.prog}: {message}", field=field, hint=f"see {self.magic}? for usage")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise ValidationError(f"{self.prog}: {message or 'invalid arguments'}", field="arguments",
                              hint=f"see {self.magic}? for usage")


def comment_start(line: str) -> int:
    """Where the comment of a magic's ``line`` starts (``len(line)`` when it has none): at an unquoted ``#`` that
    begins a word, as in a POSIX shell — ``%gpu request 1   # sets CUDA_VISIBLE_DEVICES`` reads ``request 1``
    (newuser36 N3: the README's own magic lines, each with a trailing comment, failed with "unknown argument '#'"
    or, after an apostrophe in the comment, "No closing quotation"). A ``#`` inside a word (``--name run#3``),
    in quotes (``--name '#3'``) or escaped (``\\#3``) is the argument's, as the shell keeps it."""
    quote, word_start, i = "", True, 0
    while i < len(line):
        char = line[i]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif quote == '"':
            if char == "\\":
                i += 1  # `"a \\" # b"`: the escaped quote does not end the quoted part
            elif char == '"':
                quote = ""
        elif char.isspace():
            word_start = True
        elif char == "#" and word_start:
            return i
        else:
            word_start = False
            if char == "\\":
                i += 1
            elif char in "'\"":
                quote = char
        i += 1
    return len(line)


def _split(line: str, magic: str) -> list[str]:
    """The words of a magic's line as a shell splits them, its trailing ``# comment`` left out (:func:`comment_start`).

    Raises:
        ValidationError: (field ``arguments``) an unbalanced quote before the comment.
    """
    try:
        return shlex.split(line[:comment_start(line)])
    except ValueError as exc:  # unbalanced quotes
        raise ValidationError(f"{magic}: cannot parse the line ({exc})", field="arguments",
                              hint="check the quotes") from None


# --- shared request options -----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class JobOptions:
    """Request options common to leases and jobs; ``None`` means "not given" (profile/server default).

    Attributes:
        gpus: the GPU count as typed (``2`` or ``0.5``), validated.
        model: GPU model substring (``A100``), checked against the inventory by :func:`check_model`.
        min_memory_mib: minimum memory per GPU in MiB.
        mem_per_gpu: ``--mem-per-gpu`` as typed (``20GiB``, ``20``): sent as typed, so the server's note
            on a bare number under 1024 (read as MiB) reaches the notebook as it reaches the CLI (new
            user 20, N8: ``%gpu request 2 --mem-per-gpu 20`` was sent as 20 MiB, said nowhere).
        priority: ``high``, ``normal`` or ``low``.
        time_limit_s: wall-clock limit in seconds; 0 for no limit at all (the server says so in its answer).
        name: job name.
        team: the team (queue) charged; ``--team`` as in the CLI and REST, ``--queue`` still accepted.
        profile: admin-defined request template.
        timeout_s: (leases) seconds to wait for a grant before withdrawing the request.
        time_limit_note: what a bare ``--time-limit`` number was taken as (``--time-limit 5 is 5 seconds
            …``), said after the submission as the CLI says it (verify22 V3); "" when it had a unit.
        cpu: ``--cpu`` CPU cores per worker (a number, or the word as typed: the server's refusal names it).
        memory: ``--memory`` host memory per worker as typed (``64GiB``; the server reads and checks it).
        nvlink: ``--nvlink``: NVLink-connected GPUs only.
        workdir: ``--workdir`` as typed: the job's working directory, relative to the kernel's
            (``~/…`` is the owner's home, for the server), as ``jupyter-sched submit --workdir`` takes it.
        no_preempt: ``--no-preempt``: free GPUs only — the request never preempts nor reclaims another's
            running work; it waits instead (newuser36 N6).

    ``--cpu``, ``--memory``, ``--nvlink`` and ``--workdir`` are the CLI's submit options the magics
    lacked (new user 24, N5); a lease takes all but ``--workdir`` (its kernel runs where it is).
    """

    gpus: float | None = None
    model: str | None = None
    min_memory_mib: int | None = None
    mem_per_gpu: str | None = None
    priority: str | None = None
    time_limit_s: float | None = None
    name: str | None = None
    team: str | None = None
    profile: str | None = None
    timeout_s: float | None = None
    env: tuple[tuple[str, str], ...] = ()
    time_limit_note: str = ""
    cpu: float | str | None = None
    memory: str | None = None
    nvlink: bool = False
    workdir: str | None = None
    no_preempt: bool = False


def _add_request_options(parser: argparse.ArgumentParser, *, gpus_flag: bool = True, lease: bool = False,
                         env: bool = False, resources: bool = False) -> None:
    """Add the request options; ``resources``: also the CLI submit's ``--cpu``, ``--memory``,
    ``--nvlink`` and (not for a lease) ``--workdir`` (new user 24, N5)."""
    if env:  # as `jupyter-sched submit --env` (new user 8, N1: it went to the script as two arguments)
        parser.add_argument("--env", dest="env", action="append", default=[])
    if gpus_flag:
        parser.add_argument("--gpus", dest="gpus")
    parser.add_argument("--model", dest="model")
    parser.add_argument("--mem-per-gpu", dest="mem_per_gpu")
    if resources:  # in the CLI's order: an ambiguous prefix lists them as it does
        parser.add_argument("--cpu", dest="cpu")
        parser.add_argument("--memory", dest="memory")
        parser.add_argument("--nvlink", dest="nvlink", action="store_true")
        # free GPUs only: nobody's running work is stopped for it (newuser36 N6), as `jupyter-sched submit --no-preempt`
        parser.add_argument("--no-preempt", dest="no_preempt", action="store_true")
        if not lease:
            parser.add_argument("--workdir", dest="workdir")
    parser.add_argument("--priority", dest="priority")
    parser.add_argument("--name", dest="name")
    parser.add_argument("--profile", dest="profile")
    # --team as REST and the CLI say it (issue 20); --queue, the old spelling, still works; a lease too
    # (new user 20, N7: a member of two teams could not lease GPUs of the second from a kernel)
    parser.add_argument("--team", "--queue", dest="team", action=OneSetting)
    if lease:
        # --for as %schedule wait and `jupyter-sched wait` say a wait's length (issue 20); --timeout, its first name
        parser.add_argument("--timeout", "--for", dest="timeout", action=OneSetting)
    else:
        parser.add_argument("--time-limit", dest="time_limit")
        # refused below: a submission returns its id at once (issue 20: --wait went to the script, which failed)
        parser.add_argument("--wait", "--no-wait", dest="job_wait", action="store_const", const=True,
                            help=argparse.SUPPRESS)  # SUPPRESS: never offered (tab completion)
        # refused below too: the CLI's --dry-run after a script went to it and a real job ran (newuser32 N3)
        parser.add_argument("--dry-run", "--dryrun", dest="job_dryrun", action="store_const", const=True,
                            help=argparse.SUPPRESS)


# --- the parsers: one source of each subcommand's words -------------------------------------

def command_parser(magic: str, head: str = "") -> argparse.ArgumentParser | None:
    """The argument parser of ``magic``'s subcommand ``head`` (``%gpu``, ``%schedule``; ``%%schedule`` with
    ``head`` "" for a cell's header), or None for one that takes no words. One source: the words
    :func:`parse_gpu_line` and :func:`parse_schedule_line` read are the words tab completion offers
    (:mod:`.completion`, newuser41 n1)."""
    if magic == "%gpu":
        return _gpu_parser(head) if head in ("request", "watch") else None
    if magic == "%%schedule":
        return _cell_parser()
    return _schedule_parser(head) if head in _SCHEDULE_PARSED else None


def _cell_parser() -> _Parser:
    parser = _Parser("%%schedule", "%%schedule", abbrev=True)
    _add_request_options(parser, env=True, resources=True)
    parser.add_argument("-p", "--parameter", action="append", default=[])
    return parser


def _gpu_parser(head: str) -> _Parser:
    if head == "request":
        parser = _Parser("%gpu request", "%gpu", abbrev=True)
        parser.add_argument("count", nargs="?")
        _add_request_options(parser, lease=True, resources=True)
        wait = parser.add_mutually_exclusive_group()
        wait.add_argument("--wait", dest="wait", action="store_true", default=True)
        wait.add_argument("--no-wait", dest="wait", action="store_false")
        return parser
    parser = _Parser("%gpu watch", "%gpu")
    parser.add_argument("--seconds", default="30")
    parser.add_argument("--interval", default="1")
    return parser


_SCHEDULE_PARSED = ("run", "notebook", "serve", "dryrun", "cancel", "hold", "release", "update", "top", "jobs",
                    "queue", "status", "logs", "wait")
"""The ``%schedule`` subcommands that take words (:func:`_schedule_parser`); the others take none."""


def _schedule_parser(head: str) -> _Parser:
    prog = f"%schedule {head}"
    if head in ("run", "notebook", "serve"):
        parser = _Parser(prog, "%schedule")
        _add_request_options(parser, env=True, resources=True)
        if head == "serve":
            parser.add_argument("--port")
        if head == "notebook":  # its parameters cell's values, as definitions take them (new user 14, N27)
            parser.add_argument("-p", "--parameter", action="append", default=[])
    elif head == "dryrun":
        parser = _Parser(prog, "%schedule", abbrev=True)
        _add_request_options(parser, resources=True)
    elif head == "cancel":
        parser = _Parser(prog, "%schedule")
        parser.add_argument("jobs", metavar="JOB", nargs="*")  # several ids, as `jupyter-sched cancel` takes
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--mine", dest="scope", action="store_const", const="mine")
        scope.add_argument("--all", dest="scope", action="store_const", const="all")
        parser.add_argument("--state", choices=("pending", "running"))
        parser.add_argument("--yes", "-y", action="store_true")
    elif head in ("hold", "release", "update", "top"):
        parser = _Parser(prog, "%schedule")
        parser.add_argument("jobs", metavar="JOB", nargs="+")
        if head == "update":
            parser.add_argument("--time-limit", dest="time_limit")
            parser.add_argument("--priority", "--priority-class", dest="priority")
        if head == "top":
            parser.add_argument("--undo", action="store_true")
    elif head in ("jobs", "queue"):
        parser = _Parser(prog, "%schedule")
        if head == "jobs":
            parser.add_argument("--state")
        else:
            parser.add_argument("--mine", action="store_true")
            # every pending entry, as `jupyter-sched queue --all` (new user 8, N5: refused here)
            parser.add_argument("--all", dest="everything", action="store_true")
            # one line per team, as `jupyter-sched queue --summary` (new user 25, n3: "unknown argument")
            parser.add_argument("--summary", action="store_true")
        parser.add_argument("--limit")
    else:  # status, logs, wait
        parser = _Parser(prog, "%schedule")
        # `%schedule status` alone is the summary `jupyter-sched status` prints (new user 12, N4)
        parser.add_argument("job", metavar="JOB", nargs="?" if head == "status" else None)
        if head == "logs":
            parser.add_argument("-f", "--follow", action="store_true")
            # the last N lines, as `jupyter-sched logs -n N` (newuser36 n6: "unknown argument -n")
            parser.add_argument(*TAIL_OPTIONS, dest="tail", type=line_count)
            # the executed notebook, saved here as `jupyter-sched logs JOB --notebook` saves it (newuser41 n11)
            parser.add_argument("--notebook", action="store_true")
            parser.add_argument("-o", "--output")
        if head == "wait":
            # --for as `jupyter-sched wait` says it; --timeout, the magic's first spelling, still works (issue 20)
            parser.add_argument("--for", "--timeout", dest="timeout", action=OneSetting)
            parser.add_argument("--no-raise-error", dest="raise_error", action="store_false")
    return parser


GPU_COUNT = "N"
"""The field of ``%gpu request N``'s count: what the magic's refusals carry (a placeholder nobody types)."""


def _gpu_count(value: str, field: str, *, minimum: int = 0) -> float:
    """:func:`_count_of` with ``%gpu request N``'s refusals said as the server's and the CLI's rule for
    ``gpus``, after the magic's name: ``%gpu request: gpus must be an integer (got "abc")``, not ``N must
    be …`` (new user 15, N12 / new user 16: the user typed no ``N``; the words are REST's, case 019's)."""
    if field != GPU_COUNT:
        return _count_of(value, field, minimum=minimum)
    try:
        return _count_of(value, "gpus", minimum=minimum)
    except ValidationError as err:
        raise ValidationError(f"%gpu request: {err.message}", field=GPU_COUNT, hint=err.hint,
                              details=err.details) from None


def _count_of(value: str, field: str, *, minimum: int = 0) -> float:
    """The server's rule and words (:func:`~jupyter_sched.model.validation.parse_gpus`), with the
    option as typed (``N``, ``--gpus``): one wording per kind of mistake (new user 14, N3/N4: ``N must
    be a number of GPUs``, prefixed ``%gpu request:``, beside ``must be an integer`` for the same
    word). A lease (``minimum`` 1) takes no 0: its range is said ``> 0`` (a share such as 0.5 is
    allowed, so not "at least 1": new user 8, N6). A count above any cluster's
    goes to the server, which says the largest node's."""
    try:
        whole, milli = parse_gpus(value, field=field)
    except ValidationError as err:
        if err.details.get("rule") == TOO_MANY_GPUS:
            text = value.strip()
            return int(text) if text.isdigit() else float(text)  # sent as typed, every digit
        if minimum > 0 and err.message.startswith(f"{field} must be >= 0 "):
            raise lease_gpus_range(field, value) from None
        raise
    if whole < minimum:
        raise lease_gpus_range(field, value)
    return whole if milli == 1000 else milli / 1000




def _nonempty(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    if not value.strip():
        raise empty_field(field)  # the words REST says for an empty field (new user 13, N7)
    if len(value) > 200:
        raise ValidationError(f"{field} is too long ({len(value)} characters)", field=field,
                              hint="use at most 200 characters")
    return value.strip()


def _options(ns: argparse.Namespace, *, gpus: str | None, min_gpus: int, gpus_field: str = "--gpus",
             timeout_field: str = "--timeout") -> JobOptions:
    if getattr(ns, "job_wait", None):
        raise ValidationError("--wait: a submission returns the job's id at once; it has no --wait", field="--wait",
                              hint="follow it with %schedule wait <id> — the id the submission prints (a "
                                   "%%schedule cell's output: %schedule wait {_}), or job = %schedule run … then "
                                   "%schedule wait {job}; a script's own --wait goes after --")
    if getattr(ns, "job_dryrun", None):
        raise ValidationError("--dry-run: a submission here has no --dry-run (the CLI's submit has)", field="--dry-run",
                              hint="check the request first with %schedule dryrun and the same options (e.g. "
                                   "%schedule dryrun --gpus 1 --time-limit 1h); a script's own --dry-run goes after --")
    priority = getattr(ns, "priority", None)
    if priority is not None:  # the server's rule and words (new user 14, N2: the list was said twice here)
        priority = parse_priority(priority, field="--priority").value  # HIGH is high (new user 20, N27)
    mem = getattr(ns, "mem_per_gpu", None)
    min_memory = None
    if mem is not None:
        if not mem.strip():
            raise empty_field("--mem-per-gpu")
        min_memory = parse_memory_mib(mem, field="--mem-per-gpu")
        if min_memory <= 0:
            raise ValidationError(f"--mem-per-gpu must be above zero (got {mem!r})", field="--mem-per-gpu",
                                  hint="use e.g. 20GiB or 40960 (MiB)")
        if min_memory > MAX_MEMORY_MIB:  # the server's bound, said in the magic's own words
            raise ValidationError(f"--mem-per-gpu must be at most 1 PiB per GPU (got {mem!r})", field="--mem-per-gpu",
                                  hint="ask for the memory one GPU needs, e.g. 40GiB")
    time_limit = getattr(ns, "time_limit", None)
    timeout = getattr(ns, "timeout", None)
    env: list[tuple[str, str]] = []
    for item in getattr(ns, "env", None) or ():  # NAME alone: the kernel's value (newuser26 n2)
        env.append(env_pair(item, field="--env", environ=os.environ, here="this kernel", setter="%env"))
    return JobOptions(
        gpus=None if gpus is None else _gpu_count(gpus, gpus_field, minimum=min_gpus),
        model=_nonempty(getattr(ns, "model", None), "--model"),
        min_memory_mib=min_memory,
        mem_per_gpu=None if mem is None else mem.strip(),
        priority=priority,
        # the server's rule (0: no limit at all, said in the answer's warnings; at least 1 s), not a second
        # copy: --time-limit 0 was refused here while REST took it (new user 13, N1)
        time_limit_s=parse_time_limit(time_limit, field="--time-limit"),
        name=_nonempty(getattr(ns, "name", None), "--name"),
        team=_nonempty(getattr(ns, "team", None), "--team"),
        profile=_nonempty(getattr(ns, "profile", None), "--profile"),
        timeout_s=_timeout(timeout, timeout_field, "the GPUs are granted"),
        env=tuple(env),
        time_limit_note=bare_seconds_note(time_limit),
        cpu=None if (cpu := getattr(ns, "cpu", None)) is None else number_or_text(cpu),
        memory=_nonempty(getattr(ns, "memory", None), "--memory"),
        nvlink=bool(getattr(ns, "nvlink", False)),
        no_preempt=bool(getattr(ns, "no_preempt", False)),
        workdir=_nonempty(getattr(ns, "workdir", None), "--workdir"),
    )


def _no_script_to_dryrun(err: ValidationError, rest: Sequence[str]) -> None:
    """Refuse a script (or notebook) given to ``%schedule dryrun`` by what dryrun checks (newuser31 n10:
    ``%schedule dryrun train.py --gpus 3`` said only "unknown argument train.py"): the request's
    resources, the same options without the script. Returns when ``err`` is about something else.

    Raises:
        ValidationError: ``%schedule dryrun: train.py: dryrun checks a request, not a script — …``.
    """
    word = err.field or ""
    if word.startswith("-") or word not in rest or not re.search(r"\.(py|ipynb|sh)$|/", word):
        return
    kept = [t for t in rest if t != word]
    raise ValidationError(f"%schedule dryrun: {word}: dryrun checks a request, not a script — "
                          f"%schedule dryrun {shlex.join(kept) or '--gpus 1'}", field=word,
                          hint="it says whether the GPUs asked for would fit, where and when; %schedule run "
                               "SCRIPT [options] runs the script") from None


def check_model(model: str | None, inventory: Mapping[str, Any]) -> None:
    """Reject a ``--model`` (one model or a comma-separated list of acceptable ones) of which no
    model matches a GPU in the inventory (case-insensitive substring). A list is "any of these"
    (new user 19, N17): the server notes the absent ones in its warnings.

    Raises:
        ValidationError: field ``--model``, hint listing the models that exist.
    """
    if model is None:
        return
    models = sorted({str(g.get("model", "")) for g in inventory.get("gpus", ()) if isinstance(g, Mapping)})
    wanted = [m.strip() for m in model.split(",") if m.strip()] or [model]
    if not any(w.lower() in known.lower() for w in wanted for known in models):
        raise ValidationError(f"--model: unknown GPU model {model!r}", field="--model",
                              hint="models here: " + (", ".join(models) or "none"))


# --- %gpu -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GpuCommand:
    """A parsed ``%gpu`` line.

    Attributes:
        action: one of :data:`GPU_SUBCOMMANDS`.
        options: request options (``request``); ``options.gpus`` is the GPU count.
        wait: (request) wait for the grant (default True).
        seconds: (watch) how long to watch, seconds.
        interval_s: (watch) seconds between samples.
        changes: (hold, release, update, top) the ``PATCH jobs/{id}`` body: ``{"held": true}``,
            ``{"time_limit": "+1h", "priority": "low"}``, ``{"top": true}`` (hubadmin25 B18).
        topic: (``help``) the subcommand whose help was asked for; "" for the whole help.
    """

    action: str
    options: JobOptions = field(default_factory=JobOptions)
    wait: bool = True
    count_given: bool = False
    """(request) the GPU count came as ``N`` (``%gpu request 2``), not ``--gpus N``: refusals name it ``N``."""
    seconds: float = 30.0
    interval_s: float = 1.0
    topic: str = ""


def parse_gpu_line(line: str) -> GpuCommand:
    """Parse the text after ``%gpu``.

    Grammar::

        %gpu                       → status
        %gpu status
        %gpu request N [--model M] [--mem-per-gpu 20GiB] [--cpu C] [--memory 64GiB] [--nvlink]
                       [--no-preempt] [--priority P] [--name NAME]
                       [--team TEAM] [--profile NAME] [--wait | --no-wait] [--timeout 10m]
        %gpu N [...]               → request N (shorthand)
        %gpu release
        %gpu watch [--seconds S] [--interval S]
        %gpu keepalive
        %gpu help [SUBCOMMAND] | --help | SUBCOMMAND --help   → help (action "help", topic)

    Raises:
        ValidationError: naming the argument (``--gpus``, ``--timeout``, ``subcommand``...).
    """
    tokens = _split(line, "%gpu")
    if not tokens:
        return GpuCommand("status")
    head = tokens[0]
    if head in ("help", *HELP_FLAGS):
        return GpuCommand("help", topic=tokens[1] if len(tokens) > 1 and tokens[1] in GPU_SUBCOMMANDS else "")
    if any(t in HELP_FLAGS for t in tokens[1:]):  # %gpu takes no script arguments: --help is always ours
        return GpuCommand("help", topic=head if head in GPU_SUBCOMMANDS else "request")
    if head not in GPU_SUBCOMMANDS:
        if head[:1].isdigit() or (head.startswith(("-", ".")) and head[1:2].isdigit()):
            tokens = ["request", *tokens]
            head = "request"
        else:
            meant = close_option(head, "", GPU_SUBCOMMANDS)  # `%gpu reqest 1` (verify30: as the CLI's commands)
            raise ValidationError(f"%gpu: unknown subcommand {head!r}" + (f" — {meant}" if meant else ""),
                                  field="subcommand", hint="use one of: " + ", ".join(GPU_SUBCOMMANDS) + " (or %gpu N)")
    rest = tokens[1:]
    if head == "request":
        if any(t.split("=", 1)[0] == "--time-limit" for t in rest):  # issue 20: said why, not "unknown argument"
            raise ValidationError("%gpu request takes no --time-limit: a kernel's GPUs are never stopped at a time "
                                  "limit; they stay until %gpu release, the kernel stops, or idle reclaim takes them",
                                  field="--time-limit",
                                  hint="for work that should end by a deadline use %%schedule --time-limit 2h")
        if any(t.split("=", 1)[0] == "--workdir" for t in rest):  # a lease runs nothing of its own (N5)
            raise ValidationError("%gpu request takes no --workdir: the GPUs are this kernel's, which runs where it "
                                  "is", field="--workdir", hint="for a job in another folder use %%schedule --workdir DIR")
        ns = _gpu_parser(head).parse_args(rest)
        count = ns.count if ns.count is not None else ns.gpus
        if ns.count is not None and ns.gpus is not None:
            raise ValidationError("%gpu request: give the GPU count once (N or --gpus N)", field="--gpus",
                                  hint="e.g. %gpu request 2")
        timeout_field = typed_option("--timeout/--for", rest)  # as typed, never its other name (new user 16, N3)
        options = _options(ns, gpus=count if count is not None else "1", min_gpus=1,
                           gpus_field=GPU_COUNT if ns.count is not None else "--gpus", timeout_field=timeout_field)
        if not ns.wait and options.timeout_s is not None:  # it would be ignored without a word
            raise ValidationError(f"%gpu request: {timeout_field} is how long to wait, and --no-wait does not wait",
                                  field=timeout_field, hint="drop one of them")
        return GpuCommand("request", options=options, wait=bool(ns.wait), count_given=ns.count is not None)
    if head == "watch":
        ns = _gpu_parser(head).parse_args(rest)
        # each option's own advice, not a time limit's "leave it out for none" (new user 20, N24)
        seconds = parse_duration(ns.seconds, field="--seconds", hint="give how long to watch, e.g. 30 or 2m "
                                                                     "(left out: 30 s)")
        interval = parse_duration(ns.interval, field="--interval", hint="give the time between samples, e.g. 1 or 5s "
                                                                        "(left out: 1 s)")
        assert seconds is not None and interval is not None  # defaults are set
        return GpuCommand("watch", seconds=seconds, interval_s=interval)
    if rest:
        raise ValidationError(f"%gpu {head}: unexpected argument {rest[0]!r}", field=rest[0],
                              hint=f"%gpu {head} takes no arguments")
    return GpuCommand(head)


# --- %schedule ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ScheduleCommand:
    """A parsed ``%schedule`` line (or ``%%schedule`` cell header).

    Attributes:
        action: ``cell`` (the ``%%schedule`` body) or one of :data:`SCHEDULE_SUBCOMMANDS`.
        options: request options for submissions and ``dryrun``.
        target: script / notebook / app path (``run``, ``notebook``, ``serve``).
        args: arguments passed to the script (``run``, ``serve``).
        parameters: (notebook) ``-p NAME=VALUE`` values for its parameters cell (JSON-decoded where they parse).
        job_id: job id (``status``, ``logs``, ``wait``, ``cancel``).
        follow: (logs) stream until the job ends.
        tail: (logs) only the log's last this many lines (``-n``/``--tail``, as the CLI's), then ``follow`` from there.
        notebook: (logs) save the job's executed notebook instead (``--notebook``, as ``jupyter-sched logs``).
        output: (logs --notebook) where to save it (``-o FILE``; ``-``: print it); None: the executed copy's name.
        port: (serve) the port the service listens on.
        timeout_s: (wait) seconds to wait at most.
        raise_error: (wait) a job that ended otherwise than succeeded raises (a Run All stops there, as the CLI's
            ``wait`` exits 4); ``--no-raise-error`` (IPython's ``%%script`` spelling) only says it.
        scope: (cancel) ``mine`` or ``all`` (admins) instead of one job; None for ``job_id``;
            (queue) ``all``: every pending entry, not the server's first page.
        state: (cancel --mine/--all) ``pending`` or ``running`` only; None for both.
        yes: (cancel --mine/--all) go ahead; without it the magic only says what it would cancel.
        job_ids: (cancel, hold, release, update, top) every id given (``job_id`` is the first).
        mine: (queue) only the caller's work.
        summary: (queue) one line per team instead of the rows (``jupyter-sched queue --summary``).
        limit: (jobs, queue) at most this many rows (queue: pending ones; running work is always shown).
        topic: (``help``) the subcommand whose help was asked for (``cell`` for ``%%schedule``);
            "" for the whole help.
    """

    action: str
    options: JobOptions = field(default_factory=JobOptions)
    target: str | None = None
    args: tuple[str, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    job_id: str | None = None
    follow: bool = False
    tail: int | None = None
    notebook: bool = False
    output: str | None = None
    port: int | None = None
    timeout_s: float | None = None
    raise_error: bool = True
    scope: str | None = None
    state: str | None = None
    yes: bool = False
    job_ids: tuple[str, ...] = ()
    passed_on: tuple[str, ...] = ()
    """Option-looking words after one of our own options behind the script, given to the script (newuser37 n6)."""
    mine: bool = False
    limit: int | None = None
    topic: str = ""
    summary: bool = False
    changes: Mapping[str, Any] = field(default_factory=dict)


def parameters_of(words: Sequence[str], prog: str) -> dict[str, Any]:
    """``-p NAME=VALUE`` words → parameters, read as ``jupyter-sched submit -p`` and ``definitions -p``
    read them (:func:`~jupyter_sched.definitions.parameters.parse_parameter_words`); a refusal opens
    with ``prog`` as every magic refusal does."""
    try:
        return parse_parameter_words(list(words))
    except ValidationError as err:
        raise ValidationError(f"{prog}: {err.message}", field=err.field, hint=err.hint) from None


def _no_parameters(prog: str, words: Sequence[str], instead: str, hint: str) -> None:
    """Refuse ``-p`` where the job has no parameters cell, naming the rule (new user 14, N27)."""
    if words:
        raise ValidationError(f"{prog}: {PARAMETERS_RULE}; {instead}", field="-p", hint=hint)


def _port(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        port = int(value)
    except ValueError:
        raise ValidationError(f"--port must be a number 1..65535 (got {value!r})", field="--port",
                              hint="use e.g. --port 8000") from None
    if not 1 <= port <= 65535:
        raise ValidationError(f"--port must be 1..65535 (got {port})", field="--port", hint="use e.g. --port 8000")
    return port


def _split_target(tokens: list[str], parser: _Parser, what: str) -> tuple[argparse.Namespace, str, tuple[str, ...]]:
    """Parse ``[opts] TARGET [script args and opts] [-- script args]``.

    Our options may appear before or after the target; anything else after the target is passed
    to the script, and everything after ``--`` is passed verbatim.
    """
    verbatim: list[str] = []
    if "--" in tokens:
        cut = tokens.index("--")
        tokens, verbatim = tokens[:cut], tokens[cut + 1:]
    ns, extra = parser.parse_known_args(tokens)
    target_index = next((i for i, t in enumerate(extra) if not t.startswith("-")), None)
    if target_index is None:
        raise ValidationError(f"{parser.prog}: missing {what.upper()}", field=what.upper(),
                              hint=f"e.g. {parser.prog} {'train.py' if what == 'script' else 'analysis.ipynb'}")
    if target_index > 0:
        flag = extra[0]
        if flag in ("-p", "--parameter") or flag.startswith(("-p=", "--parameter=")):
            # before the script -p is ours, and a script has no parameters cell; after it, it is the script's own
            _no_parameters(parser.prog, [flag], "a script takes its own arguments after its name",
                           f"e.g. {parser.prog} train.py --days 3, or %schedule notebook report.ipynb -p days=3")
        raise ValidationError(f"{parser.prog}: unknown argument {flag}", field=flag,
                              hint=f"see {parser.magic}? for the options; put script options after the {what}")
    target = extra[0]
    for at, word in enumerate(extra[1:], start=1):
        value = extra[at + 1] if at + 1 < len(extra) and not extra[at + 1].startswith("-") and "=" not in word else ""
        _refuse_near_option(parser, target, what, f"{word} {value}".strip())
    for at, word in enumerate(tokens):
        # `train.py --time-limit 1 hour 30 minutes`: "hour 30 minutes" went to the script and the limit was 1 second
        # (verify30 V2: a duration typed as words of its own is told how to write it, as the CLI says it)
        if not word.startswith("-") and (fix := unit_split(tokens, at)):
            said = tokens[at - 1] if "=" in tokens[at - 1] else f"{tokens[at - 2]} {tokens[at - 1]}"
            raise ValidationError(f"{parser.prog}: {word!r} after {said} is not read as part of the duration — {fix}",
                                  field=word, hint=f"see {parser.magic}? for usage")
    return ns, target, (*extra[1:], *verbatim)


def _passed_on(tokens: Sequence[str], parser: _Parser, target: str) -> tuple[str, ...]:
    """The option-looking words (with the value after each, if any) that go to the script although
    they sit behind one of our own options typed after it: ``train.py --steps 3 --gpus 1 --after J``
    gives ``("--after J",)`` — read as ours by the one who typed them, they went to the script and the
    job failed a second later on "unrecognized arguments", unsaid (newuser37 n6; the CLI refuses
    ``--after``). Words before our first option after the script (``train.py --lr 0.1 --gpus 1``) and
    after ``--`` are the script's as written, and not named."""
    words = list(tokens[:tokens.index("--")] if "--" in tokens else tokens)
    behind_target = ours_seen = False
    found: list[str] = []
    at = 0
    while at < len(words):
        word = words[at]
        action = parser._option_string_actions.get(word.split("=", 1)[0]) if word.startswith("-") else None
        takes_value = "=" not in word and at + 1 < len(words) and (
            not words[at + 1].startswith("-") or bool(_NUMBER.fullmatch(words[at + 1])))
        if action is not None:  # ours, with its value unless a switch or written --opt=value
            ours_seen = behind_target
            at += 2 if action.nargs != 0 and "=" not in word else 1
        elif not behind_target:
            behind_target = word == target  # the first word not ours is the script
            at += 1
        elif ours_seen and word.startswith("-") and len(word) > 1 and not _NUMBER.fullmatch(word):
            found.append(f"{word} {words[at + 1]}" if takes_value else word)
            at += 2 if takes_value else 1
        else:
            at += 1
    return tuple(found)


_NUMBER = re.compile(r"-\d+(\.\d*)?([eE][-+]?\d+)?")
"""A negative number: a value, not an option (``--offset -3``)."""


def passed_on_note(prog: str, target: str, words: Sequence[str]) -> str | None:
    """The note a submit says when ``words`` (:func:`_passed_on`) went to the script: each is named as
    the script's argument and not an option of ``prog``, and how to write script arguments so (newuser37 n6)."""
    if not words:
        return None
    said = ", ".join(words)
    one = len(words) == 1
    return (f"Note: {said} {'goes' if one else 'go'} to {target} as its argument{'' if one else 's'}: "
            f"not {'an option' if one else 'options'} of {prog} ({prog} --help lists its options); "
            f"to say they are the script's, put them after --: {prog} [OPTIONS] {target} -- ARGS.")


def _refuse_near_option(parser: _Parser, target: str, what: str, words: str) -> None:
    """Refuse a word after the script that is a typo or a prefix of one of our own options
    (``train.py --time-limt 1h``, ``train.py --gpu 2``): it would go to the script as its argument,
    and the job would start without the limit or with 1 GPU, unsaid (newuser31 N1; the same words
    before the script were refused, and ``jupyter-sched submit --gpu 2`` takes 2 GPUs). A script's
    own option of such a name goes after ``--``, which the hint says. ``words``: the option as typed
    with the value after it, if any (``--gpu 2``); ``what``: ``script`` or ``notebook``.

    Raises:
        ValidationError: naming the option (field) and the one meant.
    """
    flag = words.split(" ", 1)[0].split("=", 1)[0]
    if not flag.startswith("--") or len(flag) < 3:
        return
    option = meant_option(flag, [o for o in parser._option_string_actions if o.startswith("--")])
    if not option:
        return
    meant = f"did you mean {option}?"
    own = ("a notebook takes values with -p NAME=VALUE" if what == "notebook" else
           f"if {target} takes {flag} itself, put it after --: {parser.prog} {target} -- {words}")
    raise ValidationError(f"{parser.prog}: {flag} after {target} would go to {target} as its argument — {meant}",
                          field=flag, hint=f"write the option's full name; {own}")


def _help_wanted(tokens: list[str], *, cell: bool) -> str | None:
    """The help topic a ``%schedule`` line asks for (``help [SUB]``, ``--help``, ``SUB --help``;
    ``cell`` for ``%%schedule --help``), or None. A script's own ``--help`` — after the script,
    or after ``--`` — is the script's (``%schedule run train.py --help`` runs ``train.py --help``)."""
    ours = tokens[:tokens.index("--")] if "--" in tokens else tokens
    if cell:
        return "cell" if any(t in HELP_FLAGS for t in ours) else None
    if not ours:
        return None
    head = ours[0]
    if head in ("help", *HELP_FLAGS):
        return ours[1] if len(ours) > 1 and ours[1] in SCHEDULE_SUBCOMMANDS else ""
    if head not in SCHEDULE_SUBCOMMANDS or not any(t in HELP_FLAGS for t in ours[1:]):
        return None
    if head in ("run", "notebook", "serve"):
        # ours only before the target: skip our options (each but the switches takes a value)
        rest, i = ours[1:], 0
        while i < len(rest) and rest[i].startswith("-"):
            if rest[i] in HELP_FLAGS:
                return head
            i += 1 if "=" in rest[i] or rest[i] in ("--wait", "--no-wait", "--dry-run", "--dryrun") else 2
        return None
    return head


CLI_WORDS = {
    "submit": "in a notebook: %schedule run SCRIPT [ARGS] --gpus N (a notebook: %schedule notebook NB.ipynb; a cell: "
              "%%schedule --gpus N)",
}
"""Subcommands of ``jupyter-sched`` that are not ``%schedule``'s, and what says it in a notebook."""


def parse_schedule_line(line: str, *, cell: bool = False) -> ScheduleCommand:
    """Parse the text after ``%schedule`` (or the ``%%schedule`` header when ``cell``).

    Grammar::

        %%schedule [--gpus N] [--model M] [--mem-per-gpu 20GiB] [--cpu C] [--memory 64GiB] [--nvlink]
                   [--no-preempt] [--workdir DIR] [--name NAME] [--priority P]
                   [--time-limit 2h] [--team TEAM] [--profile NAME] [--env NAME[=VALUE] ...]
        %schedule run SCRIPT [ARGS...] [options]         (use -- before script args that clash)
        %schedule notebook NOTEBOOK [-p NAME=VALUE ...] [options]   (-p: its parameters cell's values)
        %schedule serve APP [ARGS...] --port P [options]
        %schedule queue [--mine] [--all | --limit N] | jobs [--state S] [--limit N] | profiles
        %schedule status [JOB] | logs JOB [-f] [-n N] | wait JOB [--for 10m] [--no-raise-error]   (--timeout: same as --for)
        %schedule logs JOB --notebook [-o FILE]     (the executed notebook, saved here)
        %schedule cancel JOB [JOB ...] | cancel --mine|--all [--state pending|running] [--yes]
        %schedule hold JOB [JOB ...] | release JOB [JOB ...] | top JOB [JOB ...] [--undo]
        %schedule update JOB [JOB ...] [--time-limit 4h|+1h|-30m] [--priority low]
        %schedule dryrun [options]

    Raises:
        ValidationError: naming the argument.
    """
    tokens = _split(line, "%%schedule" if cell else "%schedule")
    wanted = _help_wanted(tokens, cell=cell)
    if wanted is not None:
        return ScheduleCommand("help", topic=wanted)
    if cell:
        ns = _cell_parser().parse_args(tokens)
        _no_parameters("%%schedule", ns.parameter, "a %%schedule cell has none, it runs as a script",
                       "set the values in the cell itself, or run a notebook with them: "
                       "%schedule notebook report.ipynb -p days=3")
        return ScheduleCommand("cell", options=_options(ns, gpus=ns.gpus, min_gpus=0))
    if not tokens:
        raise ValidationError("%schedule: missing subcommand", field="subcommand",
                              hint="use one of: " + ", ".join(SCHEDULE_SUBCOMMANDS) + "; or %%schedule for a cell")
    head, rest = tokens[0], tokens[1:]
    if head not in SCHEDULE_SUBCOMMANDS:
        if head in CLI_WORDS:  # the CLI's word for it (newuser32 n12: `%schedule submit train.py` got no pointer)
            raise ValidationError(f"%schedule: {head!r} is the CLI's word — {CLI_WORDS[head]}", field="subcommand",
                                  hint="use one of: " + ", ".join(SCHEDULE_SUBCOMMANDS))
        meant = close_option(head, "", SCHEDULE_SUBCOMMANDS)  # `%schedule wiat J`
        raise ValidationError(f"%schedule: unknown subcommand {head!r}" + (f" — {meant}" if meant else ""),
                              field="subcommand", hint="use one of: " + ", ".join(SCHEDULE_SUBCOMMANDS))
    prog = f"%schedule {head}"
    if head in ("run", "notebook", "serve"):
        parser = _schedule_parser(head)
        what = "notebook" if head == "notebook" else "script"
        ns, target, args = _split_target(rest, parser, what)
        if head == "notebook" and args:
            raise ValidationError(f"{prog}: " + NOTEBOOK_ARGUMENT.format(word=args[0]), field=args[0],
                                  hint=NOTEBOOK_VALUES_HINT)
        if head == "notebook" and not target.endswith(".ipynb"):
            raise ValidationError(f"{prog}: NOTEBOOK {target!r} is not a notebook (.ipynb)", field="NOTEBOOK",
                                  hint="e.g. %schedule notebook analysis.ipynb")
        port = _port(getattr(ns, "port", None))
        if head == "serve" and port is None:
            raise ValidationError(f"{prog}: missing --port", field="--port",
                                  hint="say which port the service listens on, e.g. --port 8000")
        return ScheduleCommand(head, options=_options(ns, gpus=ns.gpus, min_gpus=0), target=target,
                               args=args, port=port, parameters=parameters_of(getattr(ns, "parameter", ()), prog),
                               passed_on=_passed_on(rest, parser, target) if head != "notebook" else ())
    if head == "dryrun":
        try:
            ns = _schedule_parser(head).parse_args(rest)
        except ValidationError as err:
            _no_script_to_dryrun(err, rest)
            raise
        ns.job_dryrun = None  # `%schedule dryrun --dry-run`: a dry run already
        return ScheduleCommand(head, options=_options(ns, gpus=ns.gpus, min_gpus=0))
    if head == "cancel":
        return _parse_cancel(rest)
    if head in ("hold", "release", "update", "top"):  # as jupyter-sched hold|release|update|top (hubadmin25 B18)
        return _parse_change(head, rest)
    if head in ("jobs", "queue"):  # the CLI's filters (issue 20: "takes no arguments")
        ns = _schedule_parser(head).parse_args(rest)
        if getattr(ns, "everything", False) and ns.limit is not None:
            raise ValidationError(f"{prog}: give --all or --limit N, not both", field="--all",
                                  hint="--all lists every pending job; --limit N the first N")
        return ScheduleCommand(head, state=_nonempty(getattr(ns, "state", None), "--state"),
                               mine=bool(getattr(ns, "mine", False)), limit=_limit(ns.limit),
                               scope="all" if getattr(ns, "everything", False) else None,
                               summary=bool(getattr(ns, "summary", False)))
    if head in ("status", "logs", "wait"):
        try:
            ns = _schedule_parser(head).parse_args(rest)
        except ValidationError as err:
            if err.field != "JOB":
                raise
            # which id, and where to find it (issue 20: `jupyter-sched status` needs none, this one does)
            # a name works too (new user 21, N9: "the job's id")
            raise ValidationError(f"{prog}: missing JOB: a job's id or name", field="JOB",
                                  hint=f"e.g. {prog} train; %schedule jobs lists your jobs with their names and ids") from None
        if ns.job is None:  # status without a job (the parser requires one for logs and wait)
            return ScheduleCommand(head)
        job_id = _nonempty(ns.job, "JOB")
        if head == "logs":
            _notebook_or_log(ns, rest)
        timeout = getattr(ns, "timeout", None)
        flag = next((t.split("=", 1)[0] for t in rest if t.split("=", 1)[0] in ("--for", "--timeout")), "--for")
        return ScheduleCommand(head, job_id=job_id, follow=bool(getattr(ns, "follow", False)), tail=getattr(ns, "tail", None),
                               timeout_s=_timeout(timeout, flag, "the job ends"),
                               raise_error=bool(getattr(ns, "raise_error", True)),
                               notebook=bool(getattr(ns, "notebook", False)), output=getattr(ns, "output", None))
    if rest:
        raise ValidationError(f"{prog}: unexpected argument {rest[0]!r}", field=rest[0],
                              hint=f"{prog} takes no arguments")
    return ScheduleCommand(head)


def _notebook_or_log(ns: argparse.Namespace, typed: Sequence[str]) -> None:
    """``%schedule logs``: ``--notebook [-o FILE]`` saves the executed notebook, ``-f``/``-n`` read the log — one
    or the other; ``-o`` only with ``--notebook`` (the CLI's refusal, newuser41 n11)."""
    if ns.output is not None and not ns.notebook:
        raise ValidationError("%schedule logs: -o FILE saves the executed notebook: add --notebook", field="-o",
                              hint="the log itself is printed here; %%capture keeps it in a variable")
    if ns.output == "":
        raise ValidationError("%schedule logs: -o: give a file name", field="-o",
                              hint="e.g. -o run.ipynb, or - to print it; leave -o out for the executed copy's name")
    if ns.notebook and (ns.follow or ns.tail is not None):
        flag = next(("-n" if t.startswith("-n") else t.split("=", 1)[0] for t in typed  # as typed, no value
                     if t in ("-f", "--follow") or t.split("=", 1)[0] == "--tail" or t.startswith("-n")), "-f")
        raise ValidationError(f"%schedule logs: --notebook saves the executed notebook; {flag} reads the log: give "
                              "one of them", field="--notebook",
                              hint="%schedule logs JOB --notebook saves it here; %schedule logs JOB -f follows the log")


def _limit(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        limit = int(value)
    except ValueError:
        limit = 0
    if limit < 1:
        raise ValidationError(f"--limit must be a whole number of at least 1 (got {value!r})", field="--limit",
                              hint="e.g. --limit 20, or leave it out for all")
    return limit


def _parse_change(head: str, rest: list[str]) -> ScheduleCommand:
    """``%schedule hold|release|top JOB…`` and ``%schedule update JOB… --time-limit L --priority P``: the
    ``PATCH jobs/{id}`` body each job gets (the server checks the values and who may change what)."""
    prog = f"%schedule {head}"
    ns = _schedule_parser(head).parse_args(relative_values_joined(rest) if head == "update" else rest)  # `-30m` (newuser29 N3)
    ids = tuple(str(_nonempty(job, "JOB")) for job in ns.jobs)
    changes: dict[str, Any] = {"hold": {"held": True}, "release": {"held": False}}.get(head) or (
        {"top": not ns.undo} if head == "top" else {})
    if head == "update":
        if ns.time_limit is not None:
            changes["time_limit"] = str(_nonempty(ns.time_limit, "--time-limit"))
        if ns.priority is not None:
            changes["priority"] = str(_nonempty(ns.priority, "--priority")).strip().lower()
        if not changes:
            raise ValidationError(f"{prog}: say what to change: --time-limit and/or --priority", field="--time-limit",
                                  hint=f"e.g. %schedule update {ids[0]} --time-limit +1h")
    return ScheduleCommand(head, job_id=ids[0], job_ids=ids, changes=changes)


def _parse_cancel(rest: list[str]) -> ScheduleCommand:
    """``%schedule cancel JOB`` or ``%schedule cancel --mine|--all [--state pending|running] [--yes]``."""
    ns = _schedule_parser("cancel").parse_args(rest)
    if ns.jobs and ns.scope:
        raise ValidationError(f"%schedule cancel: give job ids or --{ns.scope}, not both", field=f"--{ns.scope}",
                              hint="e.g. %schedule cancel train (a job's name or id), or %schedule cancel --mine")
    if not ns.jobs and not ns.scope:
        raise ValidationError("%schedule cancel: say which jobs: JOB, --mine (all of yours) or --all (everyone's, "
                              "admins)", field="JOB",
                              hint="e.g. %schedule cancel train — a job's name or id (%schedule jobs lists them)")
    if (ns.state or ns.yes) and not ns.scope:
        raise ValidationError(f"%schedule cancel: {'--state' if ns.state else '--yes'} goes with --mine or --all",
                              field="--state" if ns.state else "--yes", hint="e.g. %schedule cancel --mine --yes")
    ids = tuple(str(_nonempty(job, "JOB")) for job in ns.jobs)
    return ScheduleCommand("cancel", job_id=ids[0] if ids else None, job_ids=ids, scope=ns.scope, state=ns.state,
                           yes=bool(ns.yes))


def _timeout(value: str | None, flag: str, until: str) -> float | None:
    """A wait's longest duration in seconds, its errors said as a timeout (the shared duration
    parser speaks of a time limit: "give a shorter limit… or none for no limit", issue 20)."""
    try:
        return parse_duration(value, field=flag)
    except ValidationError as err:
        if "366 days" not in err.message:
            raise
        raise ValidationError(err.message, field=flag,
                              hint=f"give a shorter timeout, e.g. {flag} 10m, or leave {flag} out to wait until "
                                   f"{until}") from None


# --- request bodies -------------------------------------------------------------------------

def _resource_fields(options: JobOptions) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if options.gpus is not None:
        body["gpus"] = options.gpus
    if options.model is not None:
        body["model"] = options.model
    if options.mem_per_gpu is not None:  # as typed: the server notes a bare number under 1024 (N8)
        body["mem_per_gpu"] = options.mem_per_gpu
    elif options.min_memory_mib is not None:
        body["min_memory_mib"] = options.min_memory_mib
    if options.priority is not None:
        body["priority"] = options.priority
    if options.name is not None:
        body["name"] = options.name
    if options.profile is not None:
        body["profile"] = options.profile
    if options.team is not None:
        body["team"] = options.team
    if options.cpu is not None:
        body["cpu"] = options.cpu
    if options.memory is not None:
        body["memory"] = options.memory
    if options.nvlink:
        body["nvlink"] = True
    if options.no_preempt:
        body["no_preempt"] = True
    return body


def lease_body(options: JobOptions, *, kernel_id: str | None, notebook: str | None = None,
               parent_job_id: str | None = None) -> dict[str, Any]:
    """Body of ``POST leases`` for ``%gpu request``: the fields the user gave, ``kernel_id``, the
    notebook the kernel serves (``kernel_notebook``: private to its owner, so a job of theirs this
    lease blocks can say which notebook's ``%gpu release`` frees it), the job whose kernel this is
    (``parent_job_id``, from ``JUPYTER_SCHED_JOB_ID`` in a job's environment: the lease then ends
    with that job, even one killed by SIGKILL); without a kernel id, ``released_at_exit`` (the
    magic gives the lease back at the kernel's exit: new user 16, N1) with ``asking_process`` (this
    process, which a server on this host watches: newuser41 N1). No default name: the server names it ``notebook
    lease`` (new user 10, N11: ``kernel-<first 8 hex of the id>`` showed part of the kernel id in
    the shared queue); its owner's listings say which notebook (``wording.jobs.work_name``)."""
    body = _resource_fields(options)
    if parent_job_id:
        body["parent_job_id"] = parent_job_id
    if kernel_id:
        body["kernel_id"] = kernel_id
    else:  # a kernel the server did not start: the magic releases it at exit (new user 16, N1)
        body["released_at_exit"] = True
        if (asker := asking_process()) is not None:  # and a server on this host sees it killed (newuser41 N1)
            body["asking_process"] = asker
    if kernel_id and notebook:
        body["kernel_notebook"] = notebook
    return body  # no name unless given: the server's default says what it is, not part of the kernel id (N11)


def job_body(options: JobOptions, *, command: Sequence[str] = (), notebook: str | None = None,
             working_dir: str | None = None, kind: str | None = None, port: int | None = None,
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Body of ``POST jobs`` / ``POST dryrun`` (only the fields the user gave).

    Args:
        options: parsed request options.
        command: argv to run (absolute interpreter first).
        notebook: notebook path to run headless instead of a command.
        working_dir: absolute working directory of the job.
        kind: ``training`` (default on the server) or ``inference``.
        port: the service's port (inference).
        env: extra environment variables.
    """
    body = _resource_fields(options)
    if options.time_limit_s is not None:
        body["time_limit_s"] = options.time_limit_s
    if command:
        body["command"] = list(command)
    if notebook is not None:
        body["notebook"] = notebook
    if options.workdir is not None:  # relative: the kernel's folder's, as the CLI's is its shell's (N5)
        workdir = options.workdir
        body["working_dir"] = workdir if workdir.startswith("~") else os.path.abspath(workdir)
    elif working_dir is not None:
        body["working_dir"] = working_dir
    if kind is not None:
        body["kind"] = kind
    if port is not None:
        body["port"] = port
    # a service is told its port: $PORT, as hosting platforms do (new user 7, F9: --port 8765 reached
    # nothing the app could read, so it served on its own default while the port stayed silent)
    service_env = {"PORT": str(port)} if port is not None else {}
    if env or service_env or options.env:
        body["env"] = {**service_env, **dict(options.env), **dict(env or {})}
    return body
