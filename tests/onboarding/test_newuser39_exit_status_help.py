"""newuser39 n2, n16, n17: every subcommand's --help says its exit statuses, and the doctor's "run it elsewhere" is 2.

- n17: the statuses (2 bad input / 1 refused / 3 no server) were only in ``jupyter-sched --help`` and ``wait --help``;
  a scripter reads ``submit --help``.
- n2: ``logs -f`` of a failed job exits 4 (as ``wait``), ``logs`` 0 — said nowhere, so ``logs -f JOB > out && next``
  stopped silently.
- n16: ``doctor`` in a hub user's terminal ($JUPYTER_SCHED_HUB_URL set, no store named) exited 3, which the CLI's help
  calls "no server answered", for what is a command to run elsewhere; its line had no ``[code]``.

Real parts: the CLI's own parser; ``jupyter-sched doctor`` as a subprocess in a fresh HOME.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from jupyter_sched.cli.doctor_args import doctor_parser
from jupyter_sched.cli.main import build_parser


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        for name, nested in (getattr(action, "choices", None) or {}).items():
            yield " ".join((*path, name)), nested
            yield from _commands(nested, (*path, name))


def test_newuser39_n17_every_subcommand_help_says_its_exit_statuses() -> None:
    commands = dict(_commands(build_parser()))
    assert {"submit", "cancel", "logs", "status", "queue", "jobs", "hold", "definitions create", "usage"} <= set(commands)
    own_help = {"serve", "simulate", "fetch-traces", "doctor"}  # their own programs: tested in their own files
    silent = [name for name, sub in commands.items()
              if name not in own_help and "Exit status: 0" not in " ".join(sub.format_help().split())]
    assert silent == [], silent  # was every one but wait
    said = " ".join(commands["submit"].format_help().split())
    assert "2 bad input (fix the command); 1 refused" in said and "3 no server answered" in said, said


def test_newuser39_n2_logs_help_says_follow_exits_as_wait() -> None:
    said = " ".join(dict(_commands(build_parser()))["logs"].format_help().split())
    assert "with -f, once the job ends: 0 it succeeded, 4 it ended otherwise" in said, said
    assert "without -f, whatever the job's state" in said, said


def test_newuser39_n16_doctor_on_a_hub_users_terminal_is_bad_input_with_its_code(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "JUPYTER_SCHED_HUB_URL": "http://127.0.0.1:9/services/jupyter-sched/",
           "JUPYTER_DATA_DIR": str(tmp_path / "data"), "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    run = subprocess.run([sys.executable, "-m", "jupyter_sched.cli.main", "doctor"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, (run.returncode, run.stderr)  # was 3: "no server answered"
    line = run.stderr.strip()
    assert line.startswith("jupyter-sched doctor: works on a store's database, not through a server;"), line
    assert "run it where the service runs" in line and line.endswith("[validation_error]"), line
    assert not (tmp_path / "data" / "jupyter_sched").exists()  # nothing made to check


def test_newuser39_n16_doctor_help_says_its_own_exit_statuses() -> None:
    said = " ".join(doctor_parser().format_help().split())
    assert "Exit status: 0 nothing to fix" in said and "2 bad input: fix the command" in said, said
    assert "3 no store at that URL" in said, said
