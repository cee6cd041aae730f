"""REST field names as the CLI and the magics spell them, so their errors speak their own syntax.

The server names the field at fault in JSON terms (``mem_per_gpu``, ``command``); a person at a
terminal typed ``--mem-per-gpu`` or ``-- python train.py``. Both the CLI and the magics pass
the server's field through :func:`flag_for` before printing it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["FLAGS", "flag_for", "typed_option", "usage_error_line", "with_dash_hint"]

FLAGS: dict[str, str] = {
    "gpus": "--gpus", "gpu_milli": "--gpus",
    "model": "--model", "gpu_models": "--model",
    "mem_per_gpu": "--mem-per-gpu", "min_memory_mib": "--mem-per-gpu",
    "cpu": "--cpu", "cpu_millis": "--cpu",
    "memory": "--memory", "memory_mib": "--memory",
    "priority": "--priority",
    "team": "--team", "queue": "--team",
    "name": "--name",
    "time_limit": "--time-limit", "time_limit_s": "--time-limit",
    "profile": "--profile",
    "nvlink": "--nvlink",
    "env": "--env",
    "working_dir": "--workdir",
    "script": "--script",
    "notebook": "--notebook",
    "port": "--port",
    "job_id": "JOB_ID",
    "state": "--state", "limit": "--limit",
    # job definitions (`jupyter-sched definitions create` and `%schedule define` both say --cron / --tz / -p)
    "schedule": "--cron", "timezone": "--tz", "parameters": "-p", "missed": "--missed",
}
"""REST field → the option that sets it in ``jupyter-sched submit`` and in ``%%schedule`` / ``%gpu``."""


def flag_for(field: str | None, *, command_hint: str = "-- python train.py") -> str | None:
    """The option a person typed for ``field`` (``mem_per_gpu`` → ``--mem-per-gpu``); ``command``
    becomes ``command_hint`` (how this surface says what to run); unknown fields come back as they are."""
    if field is None:
        return None
    if field in ("command", "args"):
        return command_hint
    return FLAGS.get(field, field)


def typed_option(options: str, typed: Sequence[str] = ()) -> str:
    """Of argparse's ``--for/--timeout`` (one option's names), the one the person typed in ``typed``
    (``--for`` or ``--for=…``), else the last (new user 13, N11: ``wait J --for -1s`` was answered
    about ``--timeout``)."""
    names = options.split("/")
    return next((n for n in names for word in typed if word == n or word.startswith(f"{n}=")), names[-1])


def with_dash_hint(message: str, typed: Sequence[str] = ()) -> str:
    """argparse's ``argument --time-limit: expected one argument`` with how to pass a value that starts
    with "-" (``--time-limit -5m`` reads -5m as an option): ``… — a value starting with "-" is joined to
    its option: --time-limit=VALUE`` (new user 9; the CLI's and the magics' parsers both say it).
    ``typed``: the words typed, to name the option as typed (:func:`typed_option`)."""
    if not (message.startswith("argument -") and message.endswith(": expected one argument")):
        return message
    option = typed_option(message[len("argument "):].split(":", 1)[0], typed)
    return f'{message} — a value starting with "-" is joined to its option: {option}=VALUE'


def usage_error_line(prog: str, message: str, usage: str, typed: Sequence[str] = ()) -> str:
    """A command-line mistake in the CLI's own one-line style, as a refused request is said
    (``jupyter-sched queue: --limit: 'x' is not a whole number, e.g. 20 — usage: jupyter-sched queue
    [--limit N | --all] [--mine] [usage_error]``): what was typed wrong first, then how to fix it —
    the message's own hint, else the command's usage — and a code in brackets. argparse said the same
    in its own two-line shape (``usage: …`` then ``jupyter-sched queue: error: argument --limit: …``):
    two styles of error from one tool (new users 9 and 10). ``typed``: the words typed, so that of an
    option's several names the one typed is said (:func:`typed_option`)."""
    import re

    message = with_dash_hint(" ".join(message.split()), typed)
    text, _, hint = message.partition(" — ")
    field, syntax = "", True
    if argument := re.fullmatch(r"argument ([^:]+): (.+)", text):
        field, text = typed_option(argument.group(1), typed), argument.group(2)
    elif extras := re.fullmatch(r"unrecognized arguments: (.+)", text):
        words = extras.group(1).split()
        option = words[0].split("=", 1)[0]
        field, text = (option, f"not an option of {prog}") if len(words) == 1 and option.startswith("-") \
            else ("", f"unexpected arguments: {extras.group(1)}")
    elif required := re.fullmatch(r"the following arguments are required: (.+)", text):
        field, text = required.group(1), "missing"
    else:  # the CLI's own checks: the words name what was typed and the fix already
        syntax = False
    if choice := re.fullmatch(r"invalid choice: '([^']*)' \(choose from (.+)\)", text):
        import difflib

        choices = [c.strip(" '") for c in choice.group(2).split(",")]
        text = f"{choice.group(1)!r} is not one of {', '.join(choices)}"
        close = difflib.get_close_matches(choice.group(1), choices, n=1)
        hint = hint or (f"did you mean {close[0]}?" if close else "")
    if not hint and syntax:  # argparse's: the command's usage says how to write it
        hint = " ".join(usage.split()) or f"`{prog} --help` says how to call it"
    tail = f" — {hint}" if hint else ""
    return f"{prog}: {f'{field}: ' if field else ''}{text}{tail} [usage_error]"
