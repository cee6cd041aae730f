"""Our jobs and definitions in jupyter-scheduler's vocabulary, and back (pure functions on JSON dicts).

jupyter-scheduler (https://github.com/jupyter-server/jupyter-scheduler) describes a job by its input
file, runtime environment, compute type, parameters (strings), status and millisecond times; a
job definition adds a cron schedule, a time zone and ``active``. Our wire shapes are
:func:`jupyter_sched.model.codec.job_to_dict` and
:class:`jupyter_sched.services.models.definitions.Definition`. The functions here return plain
dicts in jupyter-scheduler's field names; the scheduler class wraps them in its models.

Status (ours → theirs): pending, preempted and admitted → ``QUEUED`` (the queue's pending reason
is the ``status_message``); running → ``IN_PROGRESS`` (``STOPPING`` once a stop was asked);
succeeded → ``COMPLETED``; failed, lost and rejected → ``FAILED`` (the message names the failing
cell or the dead kernel); cancelled → ``STOPPED``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any

__all__ = [
    "ENVIRONMENT_NAME",
    "NO_PROFILE_COMPUTE_TYPES",
    "compute_request",
    "definition_fields",
    "describe_definition",
    "describe_job",
    "job_status",
    "millis",
    "parameters_as_text",
]

ENVIRONMENT_NAME = "jupyter_sched"
"""The one runtime environment offered: this server's Python, with our GPU profiles as compute types."""
NO_PROFILE_COMPUTE_TYPES: dict[str, dict[str, Any]] = {"1 GPU": {"gpus": 1}, "CPU only": {"gpus": 0}}
"""Compute types offered when the admin defined no profiles (c.SchedApp.profiles)."""

_STATUS = {"pending": "QUEUED", "preempted": "QUEUED", "admitted": "QUEUED", "running": "IN_PROGRESS",
           "succeeded": "COMPLETED", "failed": "FAILED", "lost": "FAILED", "rejected": "FAILED",
           "cancelled": "STOPPED"}


def millis(iso: str | None) -> int | None:
    """ISO 8601 (UTC) → milliseconds since the epoch, as jupyter-scheduler keeps times."""
    if not iso:
        return None
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def job_status(job: Mapping[str, Any]) -> str:
    """jupyter-scheduler's status of one of our jobs (see the module docstring)."""
    if job.get("state") == "running" and job.get("stop_requested"):
        return "STOPPING"
    return _STATUS.get(str(job.get("state")), "QUEUED")


def _status_message(job: Mapping[str, Any]) -> str:
    reason = job.get("reason")
    if job.get("state") in ("pending", "preempted") and isinstance(reason, Mapping):
        text = reason.get("text")
        if isinstance(text, Mapping) and text.get("line"):
            return str(text["line"])
        return str(reason.get("message") or job.get("message") or "")
    return str(job.get("message") or "")


def parameters_as_text(parameters: Mapping[str, Any] | None) -> dict[str, str]:
    """jupyter-scheduler's parameters are strings: text stays, other JSON values are written as JSON."""
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in (parameters or {}).items()}


def _compute_type(spec: Mapping[str, Any]) -> str | None:
    if spec.get("compute_type"):
        return str(spec["compute_type"])
    if spec.get("profile"):
        return str(spec["profile"])
    resources = spec.get("resources")
    gpus = resources.get("gpus") if isinstance(resources, Mapping) else spec.get("gpus")
    if gpus == 0:
        return "CPU only"
    return "1 GPU" if gpus == 1 else None


def compute_request(compute_type: str | None, profiles: Mapping[str, Any]) -> dict[str, Any]:
    """Request fields for a compute type: a profile's name selects the profile; without profiles,
    ``1 GPU`` / ``CPU only``; None leaves the server's defaults.

    Raises:
        ValueError: an unknown compute type (the message lists the known ones).
    """
    if compute_type is None or compute_type == "":
        return {}
    if compute_type in profiles:
        return {"profile": compute_type}
    if not profiles and compute_type in NO_PROFILE_COMPUTE_TYPES:
        return {**NO_PROFILE_COMPUTE_TYPES[compute_type], "profile": None}
    known = ", ".join(sorted(profiles) or NO_PROFILE_COMPUTE_TYPES)
    raise ValueError(f"unknown compute type {compute_type!r}; this server offers: {known}")


def describe_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of jupyter-scheduler's ``DescribeJob`` for one of our notebook jobs (no job_files)."""
    notebook = str(job.get("notebook") or "")
    created = millis(job.get("submitted_at")) or 0
    updated = max(t for t in (created, millis(job.get("started_at")), millis(job.get("finished_at"))) if t)
    return {
        "job_id": job["id"], "name": job.get("name") or os.path.basename(notebook),
        "input_filename": os.path.basename(notebook), "runtime_environment_name": ENVIRONMENT_NAME,
        "runtime_environment_parameters": None, "output_formats": ["ipynb"], "idempotency_token": None,
        "job_definition_id": job.get("definition_id"), "parameters": parameters_as_text(job.get("parameters")),
        "tags": [], "compute_type": _compute_type(job), "url": f"/jobs/{job['id']}",
        "create_time": created, "update_time": updated, "start_time": millis(job.get("started_at")),
        "end_time": millis(job.get("finished_at")), "status": job_status(job),
        "status_message": _status_message(job), "package_input_folder": False, "packaged_files": [],
    }


def describe_definition(d: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of jupyter-scheduler's ``DescribeJobDefinition`` for one of our definitions."""
    target = str(d.get("notebook") or d.get("script") or "")
    return {
        "job_definition_id": d["id"], "name": d["name"], "input_filename": os.path.basename(target),
        "runtime_environment_name": ENVIRONMENT_NAME, "runtime_environment_parameters": None,
        "output_formats": ["ipynb"], "parameters": parameters_as_text(d.get("parameters")), "tags": [],
        "compute_type": d.get("compute_type") or _compute_type(d.get("job") or {}),
        "schedule": d.get("schedule"), "timezone": d.get("timezone"),
        "create_time": millis(d.get("created_at")) or 0, "update_time": millis(d.get("updated_at")) or 0,
        "active": not d.get("paused"), "package_input_folder": False, "packaged_files": [],
    }


def definition_fields(fields: Mapping[str, Any], *, root_dir: str, profiles: Mapping[str, Any]) -> dict[str, Any]:
    """Our create/update body from jupyter-scheduler's ``CreateJobDefinition`` / ``UpdateJobDefinition``
    fields (only those set). ``input_uri`` is relative to the server's root.

    Raises:
        ValueError: an unknown compute type.
    """
    body: dict[str, Any] = {}
    if fields.get("name") is not None:
        body["name"] = fields["name"]
    if fields.get("input_uri"):
        path = os.path.join(root_dir, str(fields["input_uri"]))
        body["notebook"] = path
        body["working_dir"] = os.path.dirname(path)
    if "schedule" in fields:
        body["schedule"] = fields["schedule"] or None
    if fields.get("timezone"):
        body["timezone"] = fields["timezone"]
    if fields.get("parameters") is not None:
        body["parameters"] = dict(fields["parameters"])
    if fields.get("active") is not None:
        body["paused"] = not fields["active"]
    if fields.get("compute_type"):
        body.update(compute_request(fields["compute_type"], profiles))
        body["compute_type"] = fields["compute_type"]
    return body
