"""New user 26 (session 26's first hour), the findings the lead fixed; each test fails before its fix.

- N1: ``jupyter-sched --version`` was "COMMAND: missing" (exit 2): the version was said only by a running
  server's ``status``. A bug report asks it first, with no server running.

Real parts: the installed ``jupyter-sched`` entry point in a subprocess, no server anywhere.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"PYTHONPATH": str(ROOT), "JUPYTER_SCHED_URL": "http://127.0.0.1:9/"})  # nothing listens there
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_newuser26_n1_version_is_said_without_a_server(flag: str) -> None:
    from jupyter_sched import __version__

    done = run(flag)
    assert done.returncode == 0, done
    line = done.stdout.strip()
    assert re.fullmatch(rf"jupyter-sched {re.escape(__version__)}(\+g[0-9a-f]{{7,}}(\.dirty)?)? "
                        rf"\(Python \d+\.\d+\.\d+, .+\)", line), line
    assert done.stderr == "", done.stderr


def test_newuser26_n1_version_as_a_command_points_at_the_flag() -> None:
    done = run("version")
    assert done.returncode == 2, done
    assert "`jupyter-sched --version` says it" in done.stderr, done.stderr
    assert "--version" in run("--help").stdout
