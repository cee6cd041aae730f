"""Who on this host can read a local job's command line: ``/proc``'s ``hidepid`` mount option.

The REST API hides another user's ``command`` and ``env`` (the queue redacts them), but a local
job is a process of its owner's account, and by default ``/proc/PID/cmdline`` is readable by
every account: ``ps -eo user,args`` shows every job's arguments to every local user (new user 17,
N13). ``/proc/PID/environ`` is readable by the owner (and root) only, so secrets belong in a job's
``env``, never in its arguments. Mounting ``/proc`` with ``hidepid=2`` (``invisible``; ``1``/
``noaccess`` and ``4``/``ptraceable`` also hide other accounts' command lines) closes the gap.

``jupyter-sched doctor`` prints :func:`command_line_visibility`'s sentence, and the hub service
logs it at start-up (a warning while command lines are visible).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["PROC_MOUNTS", "CommandLineVisibility", "command_line_visibility"]

PROC_MOUNTS = Path("/proc/mounts")
"""The kernel's table of mounts (fstab format: device, mount point, type, options, …)."""

_HIDING = {"1", "2", "4", "noaccess", "invisible", "ptraceable"}
"""``hidepid`` values under which an account cannot read another account's ``/proc/PID/cmdline``."""


@dataclass(frozen=True)
class CommandLineVisibility:
    """What :func:`command_line_visibility` found: ``hidden`` is True only when ``/proc`` is
    mounted with a hiding ``hidepid``; ``options`` is its mount options as the table lists them
    ("" when no ``/proc`` mount was found); ``text`` the one line doctor and the start-up log say."""

    hidden: bool
    options: str
    text: str


def command_line_visibility(mounts: Path | str = PROC_MOUNTS) -> CommandLineVisibility:
    """Read the ``/proc`` line of ``mounts`` (a file in ``/proc/mounts`` format; tests pass their
    own) and say who can read local jobs' command lines. Never raises: an unreadable table is said
    as not knowing, which is treated as visible."""
    try:
        lines = Path(mounts).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        return CommandLineVisibility(False, "", f"command lines: cannot read {mounts} ({exc.strerror or exc}), so "
                                                "whether other accounts see local jobs' command lines is unknown — "
                                                "pass secrets to jobs through env, never in their arguments")
    options = ""
    for line in lines:  # the last /proc mount is the one in effect
        fields = line.split()
        if len(fields) >= 4 and fields[1] == "/proc" and fields[2] == "proc":
            options = fields[3]
    if not options:
        return CommandLineVisibility(False, "", f"command lines: no /proc mount in {mounts}: whether other accounts "
                                                "see local jobs' command lines is unknown — pass secrets to jobs "
                                                "through env, never in their arguments")
    hidepid = next((o.partition("=")[2] for o in options.split(",") if o.startswith("hidepid=")), "")
    if hidepid in _HIDING:
        return CommandLineVisibility(True, options, f"command lines: /proc is mounted hidepid={hidepid}: an account "
                                                    "cannot read another account's job command lines (ps shows only "
                                                    "its own); a job's env is readable by its owner only")
    said = f"hidepid={hidepid}" if hidepid else "without hidepid"
    return CommandLineVisibility(False, options, f"command lines: /proc is mounted {said} ({options}): every local "
                                                 "account can read every local job's command line (ps -eo user,args)"
                                                 " — pass secrets to jobs through env (readable by their owner "
                                                 "only), never in their arguments, or mount /proc with hidepid=2 "
                                                 "(mount -o remount,hidepid=2 /proc, and in /etc/fstab)")
