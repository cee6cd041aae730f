"""Untrusted definition requests (REST, magics, CLI, jupyter-scheduler) → validated fields (pure).

A create body is flat, like a job submission, plus the definition's own keys::

    {"name": "daily-report", "notebook": "reports/daily.ipynb",
     "schedule": "0 12 * * 1-5", "timezone": "Europe/Berlin", "missed": "run_once", "overlap": "skip_waiting",
     "parameters": {"region": "eu"}, "gpus": 1, "model": "A100", "time_limit": "1h"}

Job keys (``gpus``, ``model``, ``mem_per_gpu``, ``time_limit``, ``priority``, ``profile``, ``team``,
``cpu``, ``memory``, ``working_dir``, ``env``, ...) are kept as each run's request and validated
like a submission when the definition is saved (so a bad GPU request is refused at once, not at
the first firing). An update body carries only the keys to change; ``null`` clears ``schedule``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError, shown
from .model import MissedPolicy, OverlapPolicy
from .parameters import NOTEBOOK_ARGS_HINT, notebook_args_text, validate_parameters
from .schedule import CronSchedule, parse_schedule

__all__ = ["DEFINITION_FIELDS", "JOB_FIELDS", "NOTEBOOK_ARGS_HINT", "OVERLAP_HINT", "DefinitionFields",
           "definition_fields", "notebook_args_text", "run_body"]

DEFINITION_FIELDS = frozenset({"name", "notebook", "script", "args", "parameters", "schedule", "timezone",
                               "paused", "missed", "overlap", "compute_type"})
JOB_FIELDS = frozenset({
    "team", "queue", "priority", "gpus", "gpu_milli", "gpu_models", "model", "min_memory_mib", "mem_per_gpu",
    "mig_profile", "nvlink", "cpu", "cpu_millis", "memory", "memory_mib", "workers", "node_selector",
    "tolerations", "time_limit", "time_limit_s", "working_dir", "env", "image", "profile", "checkpointable",
    "resources", "no_preempt",
})
"""Keys of a job submission a definition passes on to each run (not ``command``, ``kind``,
``port`` or ``kernel_id``: a run is a batch notebook or script)."""

DefinitionFields = dict[str, Any]
"""Validated fields: any of ``name, notebook, script, args, parameters, schedule (CronSchedule |
None), timezone, paused, missed (MissedPolicy), overlap (OverlapPolicy), compute_type, job (dict)``."""

OVERLAP_HINT = ("skip_waiting (the default): a firing while the previous run still waits to start is skipped; "
                "skip_unfinished: also while it runs; allow: every firing queues a run")


def _text(body: Mapping[str, Any], key: str, *, limit: int = 4096) -> str:
    value = body[key]
    if not isinstance(value, str) or not value.strip() or len(value) > limit or "\x00" in value:
        raise ValidationError(f"{key} must be a non-empty string of at most {limit} characters", field=key,
                              hint={"name": "give a short name, e.g. daily-report",
                                    "notebook": "give the notebook's path, e.g. reports/daily.ipynb",
                                    "script": "give the script's path, e.g. train.py"}.get(key, f"set {key}"))
    return value


def definition_fields(body: Any, *, partial: bool, min_interval_s: float = 60.0,
                      current_timezone: str = "UTC", current_schedule: str | None = None,
                      current_notebook: str | None = None, current_args: tuple[str, ...] = ()) -> DefinitionFields:
    """Validate a create (``partial=False``) or update (``partial=True``) body.

    Args:
        body: the untrusted JSON object.
        partial: an update: only the given keys are checked and returned.
        min_interval_s: the admin's shortest interval between firings (seconds).
        current_timezone / current_schedule: the stored values, so an update of only one of
            ``schedule`` / ``timezone`` is checked against the other.
        current_notebook / current_args: the stored notebook (None: a script) and arguments, so an update
            that gives a notebook arguments, or makes a definition with arguments a notebook, is refused.

    Returns:
        The validated fields; ``job`` holds the job keys (validated later against the
        inventory and profiles by the service, which knows them).

    Raises:
        ValidationError: naming the field and the fix.
    """
    if not isinstance(body, Mapping):
        raise ValidationError("request body must be a JSON object", field="body",
                              hint='send e.g. {"name": "daily", "notebook": "daily.ipynb", "schedule": "0 12 * * *"}')
    unknown = sorted(set(body) - DEFINITION_FIELDS - JOB_FIELDS)
    if unknown:
        raise ValidationError(f"unknown field {unknown[0]!r}", field=unknown[0],
                              hint="definition fields: " + ", ".join(sorted(DEFINITION_FIELDS))
                                   + "; and a job's resource fields (gpus, model, time_limit, ...)")
    out: DefinitionFields = {}
    if "name" in body or not partial:
        out["name"] = _text(body, "name", limit=200) if "name" in body else None
        if out["name"] is None:
            raise ValidationError("a definition needs a name", field="name", hint="give e.g. daily-report")
    for key in ("notebook", "script"):
        if key in body and body[key] is not None:
            out[key] = _text(body, key)
    if not partial or "notebook" in body or "script" in body:
        given = [k for k in ("notebook", "script") if out.get(k)]
        if len(given) != 1:
            raise ValidationError("give exactly one of notebook or script", field="notebook",
                                  hint="e.g. notebook: reports/daily.ipynb")
        if out.get("notebook") and not out["notebook"].endswith(".ipynb"):
            raise ValidationError(f"notebook {out['notebook']!r} is not a .ipynb file", field="notebook",
                                  hint="give the path of a notebook, or use script for .py files")
        out.setdefault("notebook", None)
        out.setdefault("script", None)
    if "args" in body:
        args = body["args"] or []
        if not isinstance(args, list) or not all(isinstance(a, str) and "\x00" not in a for a in args):
            raise ValidationError("args must be a list of strings", field="args", hint='e.g. ["--epochs", "3"]')
        out["args"] = tuple(args)
    _no_notebook_args(body, out, partial=partial, current_notebook=current_notebook, current_args=current_args)
    if "parameters" in body:
        out["parameters"] = validate_parameters(body["parameters"])
    timezone_name = current_timezone
    if "timezone" in body:
        timezone_name = body["timezone"] if body["timezone"] is not None else "UTC"
        if not isinstance(timezone_name, str):
            raise ValidationError("timezone must be an IANA time zone name", field="timezone",
                                  hint='e.g. "Europe/Berlin" or "UTC"')
        out["timezone"] = timezone_name
    expression = body["schedule"] if "schedule" in body else current_schedule
    if "schedule" in body or "timezone" in body or not partial:
        schedule: CronSchedule | None = None
        if expression is not None:
            schedule = parse_schedule(expression, timezone_name, min_interval_s=min_interval_s)
        else:
            parse_schedule("0 0 * * *", timezone_name)  # still check the zone name
        out["schedule"] = schedule
        out.setdefault("timezone", timezone_name)
    if "paused" in body:
        if not isinstance(body["paused"], bool):
            raise ValidationError("paused must be true or false", field="paused", hint="use true or false")
        out["paused"] = body["paused"]
    if "missed" in body:
        try:
            out["missed"] = MissedPolicy(body["missed"])
        except ValueError:
            raise ValidationError(f"missed must be run_once or skip (got {shown(body['missed'])})", field="missed",
                                  hint="run_once: one catch-up run after downtime; skip: none") from None
    if "overlap" in body:
        try:
            out["overlap"] = OverlapPolicy(body["overlap"])
        except ValueError:
            raise ValidationError(f"overlap must be skip_waiting, skip_unfinished or allow (got {shown(body['overlap'])})",
                                  field="overlap", hint=OVERLAP_HINT) from None
    if "compute_type" in body and body["compute_type"] is not None:
        out["compute_type"] = _text(body, "compute_type", limit=200)
    job = {k: v for k, v in body.items() if k in JOB_FIELDS}
    if job or not partial:
        out["job"] = job
    return out


def _no_notebook_args(body: Mapping[str, Any], out: DefinitionFields, *, partial: bool, current_notebook: str | None,
                     current_args: tuple[str, ...]) -> None:
    """Refuse arguments for a notebook (session 38: ``definitions create nb.ipynb --args "--epochs 3"`` was saved,
    and every run left them out — a notebook takes parameters, not argv). An update is checked as it would leave
    the definition (its notebook and its arguments after it), but only when it touches either: a stored notebook
    definition with arguments (saved before this check) still takes other edits, and is told so on read.

    Raises:
        ValidationError: field ``args``, naming them and the fix (parameters).
    """
    if partial and not ({"args", "notebook", "script"} & set(body)):
        return
    targets = "notebook" in body or "script" in body or not partial
    notebook = out.get("notebook") if targets else current_notebook
    args = out["args"] if "args" in out else current_args
    if notebook and args:
        kept = "" if "args" in out else " (the definition's own: send args [] with the notebook to drop them)"
        raise ValidationError(notebook_args_text(args) + kept, field="args", hint=NOTEBOOK_ARGS_HINT)


def run_body(*, name: str, notebook: str | None, script: str | None, args: tuple[str, ...],
             job: Mapping[str, Any], parameters: Mapping[str, Any], team: str) -> dict[str, Any]:
    """The job submission body of one run (validated by the jobs' own validation).

    ``team`` is the definition's resolved team ("" when not resolved yet: the jobs side picks
    the owner's team, as for any submission).
    """
    body: dict[str, Any] = {**job, "name": name}
    if team and not (job.get("team") or job.get("queue")):
        body["team"] = team  # the team resolved when the definition was saved
    if notebook:
        body["notebook"] = notebook
    else:
        body["script"] = script
        if args:
            body["args"] = list(args)
    if parameters:
        body["parameters"] = dict(parameters)
    return body
