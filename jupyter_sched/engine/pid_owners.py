"""Who a GPU process belongs to, from the OS (psutil): the job whose process tree it is in, and its
account and start time — the telemetry monitor's pid registry reads them (moved out of
:mod:`.telemetry` to keep it under the engine's module cap)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone

import psutil

__all__ = ["owner_job", "process_about"]


def owner_job(pid: int, roots: Mapping[int, str]) -> str | None:
    """The job of ``pid``: its own or its nearest ancestor's entry in ``roots`` (None: no job's, or
    gone; pids from another pid namespace, e.g. a container's, match nothing)."""
    if pid in roots:
        return roots[pid]
    try:
        for parent in psutil.Process(pid).parents():
            if parent.pid in roots:
                return roots[parent.pid]
    except psutil.Error:
        return None
    return None


def process_about(pid: int) -> tuple[str, datetime | None] | None:
    """``(user, start time)`` of ``pid`` from the OS, or None when it cannot be read."""
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            return process.username(), datetime.fromtimestamp(process.create_time(), tz=timezone.utc)
    except (psutil.Error, KeyError):  # KeyError: a uid with no account name
        return None
