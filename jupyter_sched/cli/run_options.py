"""What a run asks for, as options: ONE definition of ``submit``'s resource, limit, environment and
working-directory options, which ``definitions create`` and ``edit`` take too (newuser42 n4: a nightly
job that needed ``--memory 64GiB`` or an ``--env`` could not be defined from the CLI).

Only the standard library is imported (the CLI's start-up rule).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["RUN_OPTIONS", "add_run_options", "env_words", "run_fields", "workdir_path"]

Said = Callable[[str, str], str]
"""``(text, default) → help``: submit and create say the default, edit says a left-out option keeps its value."""

RUN_OPTIONS: tuple[tuple[tuple[str, ...], str, str, str], ...] = (
    (("--gpus",), "gpus", "GPUs: whole number, or a fraction below 1", "default 1"),
    (("--model",), "model", "acceptable GPU model(s), comma separated, e.g. A100,H100", "default: any"),
    (("--mem-per-gpu",), "mem_per_gpu", 'minimum memory per GPU, e.g. "40GiB"', "default: any"),
    (("--cpu",), "cpu", "CPU cores per worker, e.g. 8 or 0.5", "default: not reserved"),
    (("--memory",), "memory", 'host memory per worker, e.g. "64GiB"', "default: not reserved"),
    # no argparse choices: the server's rule says a wrong class in the words REST and the magics say
    # (model.validation.parse_priority), not as the whole usage line (new user 14, N2)
    (("--priority",), "priority", "priority class", "default normal; high needs an admin's grant"),
    (("--time-limit",), "time_limit", 'wall-clock limit, e.g. "2h" or seconds; 0 for no limit at all',
     "left out: the queue's default, else none"),
    (("--profile",), "profile", "admin-defined template, e.g. bert-finetune", "default: none"),
)
"""``(flags, dest, help, default words)`` of the options whose value goes to the server as typed
(``--gpus`` and ``--cpu`` as the number they spell: :func:`run_fields`)."""

ENV_HELP = "an environment variable for the job; NAME alone passes this shell's value (as docker run -e); repeatable"


def add_run_options(p: argparse.ArgumentParser, said: Said, *, workdir_default: str, edit: bool = False) -> None:
    """Add what a run asks for to ``p``: :data:`RUN_OPTIONS`, ``--team``, ``--nvlink``, ``--env`` and
    ``--workdir``. ``edit``: ``--no-nvlink`` undoes ``--nvlink``, ``--unset-env NAME`` removes a
    variable (``--env`` then sets the named ones over the kept ones)."""
    from .aliases import OneSetting

    for flags, dest, text, default in RUN_OPTIONS:
        extra: dict[str, Any] = {"metavar": "{high,normal,low}"} if dest == "priority" else {}
        p.add_argument(*flags, dest=dest, help=said(text, default), **extra)
    p.add_argument("--team", "--queue", dest="team", action=OneSetting,
                   help=said("team charged (--queue is another name)", "default: your first team"))
    nvlink = "require NVLink-connected GPUs"
    if edit:
        group = p.add_mutually_exclusive_group()
        group.add_argument("--nvlink", dest="nvlink", action="store_const", const=True, help=said(nvlink, ""))
        group.add_argument("--no-nvlink", dest="nvlink", action="store_const", const=False,
                           help="its runs no longer require NVLink (undoes --nvlink)")
    else:
        p.add_argument("--nvlink", action="store_true", help=nvlink)
    p.add_argument("--env", action="append", default=[], metavar="NAME[=VALUE]",
                   help=ENV_HELP + (" (sets the ones named; the others are unchanged)" if edit else ""))
    if edit:
        p.add_argument("--unset-env", dest="unset_env", action="append", default=[], metavar="NAME",
                       help="remove an environment variable from its runs; repeatable")
    p.add_argument("--workdir", default=None, help=said("working directory", workdir_default))


def env_words(items: list[str], *, field: str = "env") -> dict[str, str]:
    """``--env`` words → the variables (``NAME`` alone: this shell's value; :func:`~.commands.env_pair`).

    Raises:
        ValidationError: a word that is no variable, naming ``--env`` and the fix."""
    from .commands import env_pair

    return dict(env_pair(item, field=field, environ=os.environ, here="this shell", setter="export") for item in items)


def workdir_path(workdir: str) -> str:
    """A ``--workdir`` as the server reads it: a relative one is this shell's folder's (new user 11, N20);
    a quoted ``~/…`` stays the owner's home, for the server."""
    return workdir if workdir.startswith("~") else os.path.abspath(workdir)


def run_fields(args: argparse.Namespace, *, edit: bool = False,
               current_env: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The request fields of :func:`add_run_options`' options that were given (``--workdir`` aside: where a
    run starts depends on what it runs). ``edit``: ``--no-nvlink`` is sent; ``current_env``: an edit's stored variables, which ``--env`` and
    ``--unset-env`` change by name (the whole set is sent).

    Raises:
        ValidationError: a bad ``--env`` word (field env)."""
    from .commands import number_or_text

    body: dict[str, Any] = {}
    for _flags, dest, _text, _default in RUN_OPTIONS:
        value = getattr(args, dest, None)
        if value is not None:
            # a word for --gpus goes as typed: the server's refusal (case 019's 'must be an integer (got "two")')
            body[dest] = number_or_text(value) if dest in ("gpus", "cpu") else value
    if getattr(args, "team", None) is not None:
        body["team"] = args.team
    nvlink = getattr(args, "nvlink", None)
    if nvlink is True or (nvlink is False and edit):
        body["nvlink"] = nvlink
    unset = list(getattr(args, "unset_env", None) or [])
    if args.env or unset:
        given = env_words(args.env)
        env = {**{str(k): v for k, v in (current_env or {}).items()}, **given}
        for name in unset:
            env.pop(name, None)
        body["env"] = env
    return body
