"""The doctor's log-disk line: can the disk of ``c.SchedApp.log_dir`` hold every user's job logs at their cap?

One user's job logs are bounded (``c.SchedApp.max_user_log_mib``, default 4096 MiB; verify27 V3), but twenty
users may then keep 20 x 4 GiB = 80 GiB, and the log folder often sits on the disk of the store itself
(closing note 27: "README sizing advice, not a cap"). :func:`log_disk_text` says the sum against what the disk
can give the logs (free now plus what the logs use now); :func:`log_disk_line` reads those from the service's
config file (``jupyter_sched_serve_config.py`` in the Jupyter config path), the disk and the store.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..safefd import open_fd

__all__ = ["DEFAULT_USER_LOG_MIB", "log_disk_fit", "log_disk_line", "log_disk_text"]

DEFAULT_USER_LOG_MIB = 4096
"""``c.SchedApp.max_user_log_mib``'s default."""
_MOST_FILES = 200_000
"""Files the walk of the log folder counts at most (their sizes then are a lower bound, said so)."""


def _size(count: float) -> str:
    """``80 GiB``, ``3.5 GiB``, ``512 MiB`` (binary units, as the setting's MiB)."""
    gib = count / (1 << 30)
    if gib >= 1:
        return f"{gib:.0f} GiB" if gib >= 10 or gib.is_integer() else f"{gib:.1f} GiB"
    return f"{count / (1 << 20):.0f} MiB"


def log_disk_text(folder: str, users: int, cap_mib: int, free_bytes: int, logs_bytes: int, *,
                  logs_at_least: bool = False) -> tuple[bool, str]:
    """``(fits, sentence)`` of ``users`` users' job logs at ``cap_mib`` each against the disk of ``folder``:
    ``free_bytes`` free on it now plus ``logs_bytes`` the logs use now (``logs_at_least``: counted partly).

    A cap of 0 (no total per user) fits nothing: each user's logs are bounded by retention only.
    """
    now = f"{_size(free_bytes)} free + {'at least ' if logs_at_least else ''}{_size(logs_bytes)} of job logs now"
    if cap_mib <= 0:
        return False, (f"log disk: {folder}: c.SchedApp.max_user_log_mib = 0, so one user's job logs have no total "
                       f"({now}) — set it, e.g. {DEFAULT_USER_LOG_MIB} (MiB per user), and give the disk users x it")
    need = users * (cap_mib << 20)
    said = (f"{users} user{'' if users == 1 else 's'} x max_user_log_mib {cap_mib} MiB = {_size(need)} of job logs "
            "at most")
    if need <= free_bytes + logs_bytes:
        return True, f"log disk: {folder} can hold {said} ({now})"
    fit = (free_bytes + logs_bytes) // max(1, users) >> 20
    return False, (f"log disk: {folder} cannot hold {said}: it has {now} — give the log folder a disk of "
                   f"{_size(need)} or more (c.SchedApp.log_dir), or lower c.SchedApp.max_user_log_mib to {fit} or "
                   "less")


def _logs(folder: Path) -> tuple[int, bool, set[str]]:
    """Bytes of the files under ``folder`` (at most :data:`_MOST_FILES` counted: then True), and the
    accounts with a folder under ``folder/users`` (a hub's layout)."""
    from ..executors.wrapper import tree_size  # walked with a stack, never by recursion (red29 R5)

    try:
        seen, total = tree_size(open_fd(folder, os.O_RDONLY | os.O_DIRECTORY, kind="dir"), most=_MOST_FILES, files_only=True)
    except OSError:
        seen, total = 0, 0
    cut = seen > _MOST_FILES
    try:
        accounts = {p.name for p in (folder / "users").iterdir() if p.is_dir()}
    except OSError:
        accounts = set()
    return total, cut, accounts


def log_disk_line(config: Any | None, owners: int) -> str:
    """The doctor's line for the service whose config is ``config`` (a traitlets config: its ``SchedApp``
    ``log_dir`` and ``max_user_log_mib``); "" when no config sets ``log_dir`` or the folder does not exist
    here (the doctor runs where the service runs). Users: ``owners`` (those the store has jobs of) or those
    with a log folder, whichever is more."""
    return log_disk_fit(config, owners)[1]


def log_disk_fit(config: Any | None, owners: int) -> tuple[bool, str]:
    """:func:`log_disk_line` with whether the logs fit the disk (``doctor --json``'s status); ``(True, "")`` where
    it says nothing."""
    sched = config.SchedApp if config is not None and "SchedApp" in config else {}
    folder = sched.get("log_dir") if hasattr(sched, "get") else None
    if not isinstance(folder, str) or not folder or not os.path.isdir(folder):
        return True, ""
    cap = sched.get("max_user_log_mib", DEFAULT_USER_LOG_MIB)
    cap = int(cap) if isinstance(cap, int) and not isinstance(cap, bool) else DEFAULT_USER_LOG_MIB
    logs, cut, accounts = _logs(Path(folder))
    disk = os.statvfs(folder)
    return log_disk_text(folder, max(owners, len(accounts), 1), cap, disk.f_bavail * disk.f_frsize, logs,
                         logs_at_least=cut)
