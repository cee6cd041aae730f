"""newuser40 n1: ``serve``, ``simulate`` and ``fetch-traces`` --help say their exit statuses, as every other subcommand's;
and Ctrl-C of a long ``simulate`` (found beside it) is one line and 130, not a KeyboardInterrupt traceback.

Real parts: the ``jupyter-sched`` CLI as a subprocess; a real SIGINT to a running simulation.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "jupyter_sched.cli.main", *argv]


@pytest.mark.parametrize("command", ["serve", "simulate", "fetch-traces"])
def test_newuser40_n1_own_programs_help_says_their_exit_statuses(command: str) -> None:
    run = subprocess.run(_cli(command, "--help"), capture_output=True, text=True, timeout=120)
    said = " ".join(run.stdout.split())
    assert run.returncode == 0, run.stderr
    assert "Exit status: 0 " in said and "2 bad input" in said, said  # was no exit status at all


def test_newuser40_ctrl_c_of_a_long_simulation_is_one_line_and_130(tmp_path: Path) -> None:
    jobs = "".join(f"  - {{name: j{i}, gpus: {1 + i % 4}, submit: {i % 600}m, runtime: {10 + i % 50}m, time_limit: 60m}}\n"
                   for i in range(3000))
    scenario = tmp_path / "long.yaml"
    scenario.write_text(f"name: long\ncluster: {{nodes: 20, gpus_per_node: 8}}\njobs:\n{jobs}", encoding="utf-8")
    out = tmp_path / "out"
    # as from a shell's Ctrl-C: SIGINT at its default (a parallel run's worker may ignore it, and an ignored SIGINT is
    # inherited: Python then installs no KeyboardInterrupt and the CLI never hears the Ctrl-C — CI's whole run)
    proc = subprocess.Popen(_cli("simulate", str(scenario), "--out", str(out)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 180
        while not out.is_dir() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # --out is made once the run has begun (its checks come first)
        assert proc.poll() is None, "the simulation ended before it could be interrupted"
        os.kill(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, stderr)
    assert "Traceback" not in stderr and stderr.strip() == "jupyter-sched simulate: interrupted", stderr
