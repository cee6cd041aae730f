"""REST field names as the CLI and the magics spell them, so their errors speak their own syntax.

The server names the field at fault in JSON terms (``mem_per_gpu``, ``command``); a person at a
terminal typed ``--mem-per-gpu`` or ``-- python train.py``. Both the CLI and the magics pass
the server's field through :func:`flag_for` before printing it.
"""

from __future__ import annotations

__all__ = ["FLAGS", "flag_for", "with_dash_hint"]

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


def with_dash_hint(message: str) -> str:
    """argparse's ``argument --time-limit: expected one argument`` with how to pass a value that starts
    with "-" (``--time-limit -5m`` reads -5m as an option): ``… — a value starting with "-" is joined to
    its option: --time-limit=VALUE`` (new user 9; the CLI's and the magics' parsers both say it)."""
    if not (message.startswith("argument -") and message.endswith(": expected one argument")):
        return message
    option = message[len("argument "):].split(":", 1)[0].split("/")[-1]
    return f'{message} — a value starting with "-" is joined to its option: {option}=VALUE'
