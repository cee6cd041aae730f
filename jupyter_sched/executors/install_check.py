"""Has jupyter_sched been reinstalled under this running server? (newuser31 N10)

A running server launches each job's wrapper from the files of the install it was started from
(``python …/jupyter_sched/executors/wrapper.py``; ``python -m jupyter_sched.executors.run_notebook``
inside it). Re-running ``pip install`` under a running ``jupyter lab`` moved or rewrote those files:
after a wheel → editable reinstall the wrapper's path was gone and every job failed "exit code 2"
(``can't open file …/wrapper.py``); a reinstall in place (a wheel over a wheel, a ``git pull`` of an
editable checkout) ran a new wrapper under the old server's code.

:class:`InstallWatch` remembers, when the server starts, its own version
(:func:`~jupyter_sched.buildinfo.version_string`) and the wrapper it launches (path and content).
Before launches it looks again, cheaply: the ``stat`` of a few files (the wrapper, the package's
``__init__.py`` and ``_build_commit.py``). Only when one of them changed does it read further — the
wrapper's content, and the version that the jobs' interpreter now imports (``python -c`` with the
server's environment, at most once per change). In an editable install from a git checkout only the
wrapper counts (gone, or other content): the checkout's commit moves with every commit and rebase made
in it — a developer's own tests failed while they committed — and a ``git pull`` that leaves the wrapper
as it was launches the same wrapper the server started with.
The answer is :class:`~jupyter_sched.scheduling.snapshot.Reinstall` (running → installed version),
or None while the install is the one the server runs: the engine then holds every batch job pending
with that reason (:func:`~jupyter_sched.scheduling.gates.held_gate`; a kernel's lease starts nothing and
is not held) until the server is restarted. The service log says it once per change (one ERROR).

Only the standard library is imported (and the package's own :mod:`~jupyter_sched.buildinfo`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from ..buildinfo import version_string
from ..scheduling.snapshot import Reinstall
from . import wrapper as _wrapper

__all__ = ["NOT_INSTALLED", "InstallWatch"]

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(_wrapper.__file__).resolve().parent.parent
"""The folder of the jupyter_sched package this server imported."""

NOT_INSTALLED = "not installed"
"""The installed version said when the jobs' interpreter no longer imports jupyter_sched at all."""

_ASK = ("import sys\ntry:\n    from jupyter_sched.buildinfo import version_string\nexcept Exception:\n"
        "    sys.exit(3)\nprint(version_string())\n")
"""What ``python -c`` runs to read the version an import finds now (exit 3: none)."""

_Signature = tuple[tuple[int, int, int] | None, ...]


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _commit(version: str) -> str:
    """``0.1.0+g3763618`` of ``0.1.0+g3763618.dirty``."""
    return version.removesuffix(".dirty")


def _git_files(checkout: Path) -> list[Path]:
    """The files whose change says a git checkout moved to another commit: its ``HEAD`` and, when
    ``HEAD`` names a branch, that branch's ref and ``packed-refs`` (a worktree's ``.git`` is a file
    naming its git folder, whose ``commondir`` holds the refs). [] outside a checkout."""
    dot = checkout / ".git"
    try:
        if dot.is_file():
            text = dot.read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir:"):
                return []
            gitdir = (checkout / text.removeprefix("gitdir:").strip()).resolve()
        elif dot.is_dir():
            gitdir = dot
        else:
            return []
        common = gitdir
        if (gitdir / "commondir").is_file():
            common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return []
    files = [gitdir / "HEAD"]
    if head.startswith("ref:"):
        files += [common / head.removeprefix("ref:").strip(), common / "packed-refs"]
    return files


class InstallWatch:
    """The install a server started from, and whether it is still there (module docstring). Thread-safe.

    Args:
        package_dir: the package folder the server imported (default: this one).
        python: the interpreter the jobs' wrapper runs with (whose import says the installed version).
        env: the environment it runs with (default: this process's).
        running: the server's own version (default :func:`~jupyter_sched.buildinfo.version_string`).

    Attributes:
        service: the server is a hub's scheduler service (``jupyter-sched serve``), not a ``jupyter lab``:
            the words say who restarts it.
    """

    def __init__(self, package_dir: Path = PACKAGE_DIR, *, python: str = sys.executable,
                 env: Mapping[str, str] | None = None, running: str | None = None) -> None:
        self.package_dir = package_dir
        self.wrapper = package_dir / "executors" / "wrapper.py"
        self.python = python
        self.env = env
        self.running = running or version_string()
        self.service = False
        self._wrapper_digest = _digest(self.wrapper)
        self._watched = [self.wrapper, package_dir / "__init__.py", package_dir / "_build_commit.py"]
        # an editable install in a git checkout: its commit moves with every commit and rebase of whoever works in it
        # (while the files the server runs may be the same), so there the wrapper's own file alone says it moved
        self.checkout = bool(_git_files(package_dir.parent))
        self._signature = self._stat()
        self._answer: Reinstall | None = None
        self._lock = threading.Lock()

    def _stat(self) -> _Signature:
        out: list[tuple[int, int, int] | None] = []
        for path in self._watched:
            try:
                info = os.stat(path)
            except OSError:
                out.append(None)
                continue
            out.append((info.st_ino, info.st_mtime_ns, info.st_size))
        return tuple(out)

    def check(self) -> Reinstall | None:
        """The reinstall under this server (running → installed version), None while its own install is
        in place. Costs a few ``stat`` calls; after a change, one read of the wrapper and one ``python -c``."""
        signature = self._stat()
        with self._lock:
            if signature == self._signature:
                return self._answer
            self._signature = signature
            before = self._answer
            self._answer = self._look()
            answer = self._answer
        if answer is not None and answer != before:
            state = "is gone" if answer.wrapper_gone else "changed" if answer.wrapper_changed else "is unchanged"
            log.error("jupyter_sched was reinstalled under this running %s (%s → %s; the job wrapper it launches, %s, "
                      "%s): batch jobs are held pending until it is restarted", "service" if self.service else "server",
                      answer.running, answer.installed, self.wrapper, state)
        elif answer is None and before is not None:
            log.warning("jupyter_sched's install under this running server is the one it started from again: "
                        "held jobs start")
        return answer

    def _look(self) -> Reinstall | None:
        digest = _digest(self.wrapper)
        if digest == self._wrapper_digest and self.checkout:
            return None  # a git checkout's commit is no install's (see __init__): its wrapper is the same
        installed = self._installed()
        # a checkout's ".dirty" comes and goes with any edit: the commit and the wrapper's content are what count
        if digest == self._wrapper_digest and _commit(installed) == _commit(self.running):
            return None
        return Reinstall(running=self.running, installed=installed, wrapper_gone=digest is None,
                         wrapper_changed=digest is not None and digest != self._wrapper_digest, service=self.service)

    def _installed(self) -> str:
        """The version the jobs' interpreter imports now (``not installed`` when none; the running one
        when it cannot be asked — then only the wrapper's content tells)."""
        try:
            done = subprocess.run([self.python, "-c", _ASK], capture_output=True, text=True, timeout=30,
                                  env=dict(self.env) if self.env is not None else None, cwd="/", check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("cannot ask %s which jupyter_sched it imports (%s)", self.python, exc)
            return self.running
        said = done.stdout.strip().splitlines()
        if done.returncode == 3:
            return NOT_INSTALLED
        if done.returncode != 0 or not said:
            return self.running
        return said[-1][:80]
