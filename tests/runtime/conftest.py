"""Fixtures of the runtime tests: real SQLite files, a real PostgreSQL server, builders.

PostgreSQL: ``pg_server`` / ``pg_url`` from ``tests/conftest.py`` (one server per session,
a fresh database per test).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    """URL of a fresh SQLite file in a temporary directory."""
    from jupyter_sched.store import sqlite_url

    return sqlite_url(tmp_path / "sched.sqlite")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of each kind: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        from jupyter_sched.store import sqlite_url

        return sqlite_url(tmp_path / "sched.sqlite")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture(autouse=True)
def _no_stray_jobs(tmp_path: Path) -> Iterator[None]:
    """After each test, kill the process groups of jobs it started (their command lines name its
    tmp_path) so that a failing test never leaves work running on the machine."""
    yield
    import os
    import signal

    import psutil

    marker = str(tmp_path)
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if any(marker in part for part in cmdline) and proc.pid != os.getpid():
            try:
                group = os.getpgid(proc.pid)
                if group == os.getpgrp():  # never signal the test run's own group
                    os.kill(proc.pid, signal.SIGKILL)
                else:
                    os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


NOBODY = 65534
"""uid and gid of ``nobody``: another account, for tests that need a process or file not ours (root only)."""


@pytest.fixture
def nobodys() -> Iterator[subprocess.Popen[bytes]]:
    """A live process of another account (its "jupyter server"), killed after the test."""
    proc = subprocess.Popen(["sleep", "120"], user=NOBODY, group=NOBODY)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(10)
