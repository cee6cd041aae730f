"""Whether a job's paths exist where it would start, looked at as its owner (hub mode).

Embedded, the service runs jobs as its own account and checks a job's ``working_dir``, ``script``
and ``notebook`` itself, so a missing one is refused at submit (400) instead of failing at the
start after the job waited for GPUs. In hub mode the service is root and jobs run as their
owners' accounts: looking as root would tell one user which paths exist under another's account
(DESIGN *Who runs it*), so until now nothing was checked and such a job failed at its start
("exit code 126 … cannot enter the working directory", new user 7, F6). Here the check runs as
the owner — ``/bin/sh`` with the owner's uid, gid and groups, a clean environment, nothing else —
so it says only what the owner could find out with ``cd`` and ``test``: the same answer as
embedded, with the owner's home as the default directory (where their jobs start). A check that
cannot run (no ``/bin/sh``, a hung mount past :data:`CHECK_TIMEOUT_S`) says nothing: the job is
accepted and the wrapper finds out, as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import subprocess
import threading
from collections.abc import Iterator

from ..errors import ExecutorError
from ..model import JobSpec
from .runas import RunAs, as_account
from .wrapper import SHEBANG_BYTES

__all__ = ["CHECK_TIMEOUT_S", "CLOSED_FOLDER", "missing_as_owner", "read_as_owner"]

log = logging.getLogger(__name__)

CLOSED_FOLDER = " on this server (a folder on its path may be closed to you)"
"""How a problem ends when the owner cannot tell whether the path exists (the message says no more
"on this server" after it)."""

CHECK_TIMEOUT_S = 5.0
"""Longest a check may take (a path on an unresponsive network mount blocks ``cd``)."""

_busy: set[int] = set()
_busy_lock = threading.Lock()


@contextlib.contextmanager
def _one_at_a_time(who: RunAs) -> Iterator[bool]:
    """True while this is the only check running as ``who``'s account; False (check nothing) when one already runs.

    A check runs as the owner, who may SIGSTOP it (same uid): each of their submits then held one of the service's
    shared request threads for :data:`CHECK_TIMEOUT_S`, and eight at once slowed every user's calls 20 to 70 times (red32
    R8). With one check per account at a time, an account holds at most one thread so; its other submits are taken
    unchecked (a check that cannot run says nothing: the job's start tells, as before)."""
    uid = int(who.uid) if who.uid is not None else -1
    with _busy_lock:
        if uid in _busy:
            yield False
            return
        _busy.add(uid)
    try:
        yield True
    finally:
        with _busy_lock:
            _busy.discard(uid)

_SCRIPT = """\
hidden() {
  [ -L "$1" ] && return 0
  q=${1%/}
  case $q in */*) p=${q%/*}; p=${p:-/} ;; *) p=. ;; esac
  if [ -d "$p" ] && [ -x "$p" ]; then return 1; fi
  return 0
}
if ! cd -- "$1" 2>/dev/null; then
  if [ -e "$1" ] && [ ! -d "$1" ]; then exit 12; fi
  if [ -e "$1" ]; then exit 11; fi
  if hidden "$1"; then exit 13; fi
  exit 10
fi
shift
i=0
for path in "$@"; do
  i=$((i + 1))
  if [ ! -e "$path" ]; then echo "$i"; if hidden "$path"; then exit 23; fi; exit 20; fi
  if [ -d "$path" ]; then echo "$i"; exit 22; fi
  if [ ! -f "$path" ] || [ ! -r "$path" ]; then echo "$i"; exit 21; fi
done
case $PROGRAM in
  '') exit 0 ;;
  */*)
    if [ ! -e "$PROGRAM" ]; then if hidden "$PROGRAM"; then exit 34; fi; exit 30; fi
    if [ -d "$PROGRAM" ]; then exit 33; fi
    if [ ! -f "$PROGRAM" ] || [ ! -x "$PROGRAM" ]; then exit 31; fi
    exit 0 ;;
esac
set -f
IFS=:
for dir in $JOB_PATH; do
  if [ -f "${dir:-.}/$PROGRAM" ] && [ -x "${dir:-.}/$PROGRAM" ]; then exit 0; fi
done
exit 32
"""
"""``sh -c _SCRIPT sh START PATH…`` with ``PROGRAM`` and ``JOB_PATH`` in its environment: 10 START
does not exist (for the owner), 11 it cannot be entered, 12 it is a file, 13 the owner cannot tell
(see below); then for the first bad PATH (relative ones read in START), its number printed, 20 it
does not exist, 21 it cannot be read (or is not a regular file), 22 it is a directory, 23 the owner
cannot tell; then the command's program (none when ``PROGRAM`` is empty): a name with a ``/`` (read
in START) 30 does not exist, 33 is a directory, 31 is not an executable file, 34 the owner cannot
tell; any other name 32 is not an executable file in any folder of ``JOB_PATH`` the owner can
search — as ``exec`` looks for it when the job starts.

"Does not exist" is said only when it is true: the owner can search the folder that would hold the
path and it is not there. A path behind a folder closed to the owner (``/home/ana/priv/x`` for bob,
``priv`` 0700), or a link they cannot follow (``/proc/1/cwd``), may well exist: that is said as
"cannot be found or read as bob" (new user 15, N1), which is true either way and tells nothing about
another account's files."""


def missing_as_owner(spec: JobSpec, who: RunAs, search_path: str | None = None) -> tuple[str, str, str] | None:
    """``(field, path, problem)`` of the first path of ``spec`` its owner ``who`` cannot use where
    the job would start — ``problem`` reads after the path: ``does not exist``, ``cannot be
    entered as ana``, ``cannot be read as ana`` — or None (all fine, or the check could not run).

    The job starts in ``working_dir`` (``~`` = the owner's home), else the owner's home (else a
    directory made for it, where a relative script or notebook cannot already be). With
    ``search_path`` (the ``PATH`` the job's command is looked up on: its env's, else the clean
    environment's), a command job's program is checked too, field ``command`` (new user 13, N10):
    a name with a ``/`` must be an executable file (relative: in the start directory), any other
    name an executable file in a folder of ``search_path`` — as the owner, who may not be able to
    search every folder of it; ``problem`` then says ``as ana``."""
    start, files = _owner_files(spec, who)
    program = _program(spec, start) if search_path is not None else ""
    if program and (script := interpreted_script(spec)) is not None:  # `python nosuch.py` (newuser26 N3)
        full = (who.home or "/") + script[1:] if script.startswith("~/") else script
        if os.path.isabs(full) or start:
            files = [*files, ("command", full if os.path.isabs(full) else os.path.join(start, full))]
    if not spec.working_dir and not files and not program:
        return None
    with _one_at_a_time(who) as mine:
        if not mine:
            log.debug("a check of %s's paths already runs; this job's start will tell", who.account)
            return None
        try:
            done = subprocess.run(as_account(who, ["/bin/sh", "-c", _SCRIPT, "sh", start or "/",
                                                   *(path for _, path in files)]),  # never Popen(user=): red32 R7
                                  env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "PROGRAM": program,
                                       "JOB_PATH": search_path or ""}, cwd="/", stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError, ExecutorError) as exc:
            log.warning("could not check the paths of a job of %s as %s (%s); its start will tell", spec.user,
                        who.account, exc)
            return None
    account = who.account or spec.user
    # the words of local._path_problem (new user 14, N1: a file named as working_dir "does not exist")
    if done.returncode in (10, 11, 12, 13):
        return ("working_dir", start, {10: "does not exist", 12: "is a file, not a directory",
                                       13: f"cannot be found or entered as {account}{CLOSED_FOLDER}"}.get(
            done.returncode, f"cannot be entered as {account}"))
    if done.returncode in (20, 21, 22, 23):
        number = done.stdout.strip()
        field, path = files[int(number) - 1] if number.isdigit() and 0 < int(number) <= len(files) else files[0]
        return field, path, {20: "does not exist", 22: "is a directory, not a file",
                             23: f"cannot be found or read as {account}{CLOSED_FOLDER}"}.get(
            done.returncode, f"cannot be read as {account}")
    if done.returncode in (30, 31, 32, 33, 34):
        shown = program if done.returncode == 32 or program.startswith("/") else \
            os.path.normpath(os.path.join(start, program))
        return "command", shown, {30: "does not exist", 33: "is a directory, not a file",
                                  31: f"is not a file {account} can execute",
                                  32: f"is not a program {account} can run from the job's PATH ({search_path})",
                                  34: f"cannot be found or run as {account}{CLOSED_FOLDER}",
                                  }[done.returncode]
    return None


def _owner_files(spec: JobSpec, who: RunAs) -> tuple[str, list[tuple[str, str]]]:
    """Where the job of ``who`` starts (``working_dir``, ``~`` = the owner's home; else the owner's
    home; "" for a directory made for it) and ``(field, full path)`` of the script / notebook it
    names by path, relative ones in that start (left out when there is none yet)."""
    home = who.home or ""
    if spec.working_dir:
        wanted = spec.working_dir
        start = (home or "/") + wanted[1:] if wanted == "~" or wanted.startswith("~/") else wanted
    else:
        start = home if home and os.path.isdir(home) else ""
    files: list[tuple[str, str]] = []
    for field, path, carried in (("script", spec.script, spec.source), ("notebook", spec.notebook,
                                                                          spec.notebook_json)):
        if not path or carried is not None:
            continue
        full = (home or "/") + path[1:] if path == "~" or path.startswith("~/") else path
        if not os.path.isabs(full):
            if not start:
                continue  # it starts in a directory made for it: nothing to look in yet
            full = os.path.join(start, full)
        files.append((field, full))
    return start, files


def read_as_owner(spec: JobSpec, who: RunAs, limit: int) -> list[tuple[str, str, bytes]]:
    """``(field, path, first bytes)`` of the script / notebook ``spec`` names by path (and of a command's
    program named by a path: ``("command", program as named, its first SHEBANG_BYTES)``), read as its owner
    ``who`` (``head -c`` with the owner's uid, gid and groups: the service learns only what the owner
    may read), at most ``limit`` bytes each; a file the owner cannot read, or a read that cannot run
    or takes past :data:`CHECK_TIMEOUT_S`, is left out (the job's start tells, as before)."""
    heads = []
    start, named = _owner_files(spec, who)
    files = [(field, path, path, limit) for field, path in named]
    if (program := _program(spec, start)) and "/" in program:  # its #! line (newuser28 N1); a bare name: at the start
        files.append(("command", program, program if program.startswith("/") else os.path.join(start, program),
                      SHEBANG_BYTES))
    with _one_at_a_time(who) as mine:
        for field, shown, path, size in files if mine else ():
            try:
                done = subprocess.run(as_account(who, ["head", "-c", str(size), "--", path]),
                                      env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, cwd="/",
                                      stdin=subprocess.DEVNULL, capture_output=True, timeout=CHECK_TIMEOUT_S,
                                      check=False)
            except (OSError, subprocess.SubprocessError, ExecutorError) as exc:
                log.warning("could not read the %s of a job of %s as %s (%s); its start will tell", field,
                            spec.user, who.account, exc)
                continue
            if done.returncode == 0:
                heads.append((field, shown, done.stdout))
    return heads


def interpreted_script(spec: JobSpec) -> str | None:
    """The ``.py`` file a command job's Python interpreter is to run — ``nosuch.py`` of ``python
    nosuch.py`` (``python``, ``python3``, ``python3.11`` or a path to one) — or None: checked at
    submit as a missing program is, not found out when the job starts, maybe hours later (newuser26
    N3). ``-m``, ``-c`` and other options first are left alone."""
    command = spec.command
    if spec.script or spec.notebook or len(command) < 2:
        return None
    if not _INTERPRETER.fullmatch(command[0].rsplit("/", 1)[-1]):
        return None
    first = command[1]
    return first if first.endswith(".py") and not first.startswith("-") else None


_INTERPRETER = re.compile(r"python(\d+(\.\d+)?)?")


def _program(spec: JobSpec, start: str) -> str:
    """The program of a command job, as its start looks it up (``exec``, no ``~`` expansion), or
    "" when there is nothing to check: no command, a script or notebook (run with the job's
    Python), or a relative path in a directory made for the job at its start (nothing there yet)."""
    if spec.script or spec.notebook or not spec.command:
        return ""
    program = spec.command[0]
    if "/" in program and not program.startswith("/") and not start:
        return ""
    return program
