"""Real OS accounts for multi-user tests, created with ``useradd`` and removed after.

Usage (any test package may reuse it)::

    from tests.accounts import os_accounts, skip_reason, shared_dir

    with os_accounts(2) as (alice, bob):      # unique names, own homes (useradd -m)
        ...                                   # alice.uid, alice.gid, alice.home, alice.name
                                              # leaving: their processes are killed, userdel -r

Only root can do this (sessions and CI run as root, ENVIRONMENT.md); :func:`skip_reason` says why
not otherwise. Names are ``jst`` + 6 hex digits, so parallel test runs never collide. A process
started as such an account must be able to read its interpreter and working folders: /root is
mode 0700, so :func:`shared_dir` makes a 0755 temporary folder outside it, and
:func:`account_python` finds an interpreter every account can run (Debian's ``/usr/bin/python3``).

``useradd``/``userdel`` refuse at once ("cannot lock /etc/passwd; try again later") while another process
of the host changes the account files — another test run making its own accounts: they are tried again
(:func:`_account_tool`, session 21: a targeted run failed so beside another agent's run).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

__all__ = ["Account", "account_python", "os_accounts", "runs_for_others", "shared_dir", "skip_reason"]


@dataclass(frozen=True)
class Account:
    """A real OS account made for a test."""

    name: str
    uid: int
    gid: int
    home: str


def skip_reason() -> str | None:
    """Why real accounts cannot be made here (None when they can)."""
    if os.geteuid() != 0:
        return "creating OS accounts needs root (useradd)"
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        return "useradd/userdel are missing (apt-get install -y passwd)"
    if account_python() is None:
        return "no Python interpreter that other accounts can run (/usr/bin/python3 is missing)"
    return None


def runs_for_others(path: str) -> bool:
    """True when accounts other than root can execute ``path`` (every folder on the way
    searchable, the file itself readable and executable by others)."""
    real = Path(os.path.realpath(path))
    try:
        if not real.stat().st_mode & stat.S_IXOTH or not real.stat().st_mode & stat.S_IROTH:
            return False
        return all(folder.stat().st_mode & stat.S_IXOTH for folder in real.parents)
    except OSError:
        return False


def account_python() -> str | None:
    """An interpreter every account can run: Debian's ``/usr/bin/python3`` (the default python3
    here is pyenv's under /root, mode 0700)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(candidate) and runs_for_others(candidate):
            return candidate
    return None


@contextlib.contextmanager
def shared_dir(prefix: str = "jsched-shared-") -> Iterator[Path]:
    """A temporary folder under /tmp with mode 0755 (pytest's own tmp folders are 0700)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def remove_group_when_empty(group: Path, *, tries: int = 50) -> None:
    """Remove an account's cgroup folder once its processes (killed with the account) have left it: ``rmdir``
    retried 0.1 s apart while it is busy; a group already gone is fine."""
    for _ in range(tries):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)


def _kill_processes_of(uid: int) -> None:
    """SIGKILL every process of ``uid`` until none is left. A zombie is left: it holds nothing, and one whose parent
    died waits for this machine's init to reap it (every ~2 s here, session 41) — each account's removal waited that
    out after a hub test's teardown had ended the servers' parent."""
    for _ in range(50):
        left = [p for p in psutil.process_iter(["uids", "status"]) if p.info.get("uids") and p.info["uids"].real == uid
                and p.info.get("status") != psutil.STATUS_ZOMBIE]
        if not left:
            return
        for proc in left:
            with contextlib.suppress(psutil.Error, ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGKILL)
        time.sleep(0.05)


LOCK_TRIES = 200
"""How many times an account tool refused for a held lock of the account files is run (every 0.05 s: 10 s)."""


def _account_tool(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``useradd``/``userdel`` ``argv``; again while it is refused because another process holds the
    account files' lock (shadow-utils gives up at once, "try again later"), at most :data:`LOCK_TRIES` times."""
    for _ in range(LOCK_TRIES - 1):
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode == 0 or "cannot lock" not in done.stderr:
            return done
        time.sleep(0.05)
    return subprocess.run(argv, capture_output=True, text=True)


@contextlib.contextmanager
def os_accounts(count: int, *, prefix: str = "jst") -> Iterator[list[Account]]:
    """Create ``count`` fresh accounts (own group, own home, /bin/bash); remove them after.

    Raises:
        RuntimeError: useradd failed (its message attached).
    """
    made: list[Account] = []
    try:
        for _ in range(count):
            name = f"{prefix}{secrets.token_hex(3)}"
            done = _account_tool(["useradd", "-m", "-U", "-s", "/bin/bash", name])
            if done.returncode != 0:
                raise RuntimeError(f"useradd {name} failed: {done.stderr.strip()}")
            entry = pwd.getpwnam(name)
            made.append(Account(name=name, uid=entry.pw_uid, gid=entry.pw_gid, home=entry.pw_dir))
        yield made
    finally:
        left = []
        for account in made:
            _kill_processes_of(account.uid)
            _account_tool(["userdel", "-r", "-f", account.name])
            with contextlib.suppress(KeyError):
                pwd.getpwnam(account.name)
                left.append(account.name)
        if left:  # never an account left behind silently
            raise RuntimeError(f"userdel failed for {', '.join(left)}: remove them with userdel -r -f")
