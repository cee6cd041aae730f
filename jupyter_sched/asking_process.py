"""Which process asked for a lease, and whether it still runs: the same-host liveness of a lease of a kernel the
server did not start (newuser41 N1).

A lease asked by ``jupyter nbconvert --execute``, papermill, ``jupyter console`` or VS Code (``released_at_exit``)
was given back only by its kernel's exit hook; a kernel SIGKILLed or OOM-killed ran none, and its lease stayed
queued, was later granted to nobody and held a GPU for the idle window. The kernel now sends
``asking_process = {pid, started, host}`` with the request: its pid, its start time (clock ticks after boot, the
22nd field of ``/proc/<pid>/stat``: a pid reused by another process has another start) and its host's identity
(the boot id and the pid namespace: a kernel in a container or on another host has pids that mean nothing here).
A service whose :func:`host` is the same checks each cycle whether that process still runs (:func:`running`);
anywhere else the field is kept and not acted on.

The pid is the asker's word: a wrong one only ends or keeps the asker's own lease, which the idle rules end anyway
when unused. Standard library only (the kernel's client imports it); Linux only — elsewhere nothing is sent.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["MAX_HOST_CHARS", "asking_process", "host", "running", "start_ticks"]

MAX_HOST_CHARS = 200
"""Longest ``host`` a request may give (a boot id and a namespace's inode: ~50 characters)."""

_PROC = Path("/proc")


def host(proc: Path = _PROC) -> str | None:
    """This host's and pid namespace's identity, ``<boot id>/pid:[<inode>]``; None where it cannot be read."""
    try:
        boot = (proc / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(proc / "self/ns/pid")
    except OSError:
        return None
    return f"{boot}/{namespace}" if boot and namespace else None


def start_ticks(pid: int, proc: Path = _PROC) -> int | None:
    """Start time of ``pid`` in clock ticks after boot (``/proc/<pid>/stat`` field 22); None: no such process."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except (OSError, ValueError):
        return None
    try:  # the command's name (field 2) is in parentheses and may hold spaces or ')': split after the last ')'
        return int(stat[stat.rindex(")") + 2:].split()[19])
    except (ValueError, IndexError):
        return None


def asking_process() -> dict[str, object] | None:
    """``{pid, started, host}`` of this process, for a lease request; None where they cannot be read."""
    here, started = host(), start_ticks(os.getpid())
    if here is None or started is None:
        return None
    return {"pid": os.getpid(), "started": started, "host": here}


def running(pid: int, started: int, proc: Path = _PROC) -> bool:
    """Whether process ``pid`` started at ``started`` still runs (a zombie counts as ended: it runs no code)."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except (OSError, ValueError):
        return False
    after = stat[stat.rindex(")") + 2:].split() if ")" in stat else []
    if len(after) < 20 or after[0] in ("Z", "X"):
        return False
    return after[19] == str(started)
