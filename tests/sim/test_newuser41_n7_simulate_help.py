"""newuser41 n7: ``jupyter-sched simulate --help`` said nothing of what it does, had no scenario format
and no example though the repository ships a scenario, and ``--openb`` with no data pointed at a
``../shared`` folder a newcomer never made. In-process (the parser and the command's ``main``); the one
run is the help's own example, exactly as written, from a folder laid out as the checkout."""

from __future__ import annotations

import contextlib
import io
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from jupyter_sched.sim import traces
from jupyter_sched.sim.cli import SHIPPED_SCENARIO, build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def _help() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args(["simulate", "--help"])
    return out.getvalue()


def test_newuser41_n7_simulate_help_says_what_it_does_the_format_and_examples() -> None:
    text = _help()
    assert "Replay a workload through the real scheduling core offline" in text, text
    assert "A scenario is YAML: name, cluster {nodes, gpus_per_node, model}" in text, text
    assert f"jupyter-sched simulate {SHIPPED_SCENARIO} --out sim/" in text, text
    assert "jupyter-sched usage --as-scenario" in text, text
    assert "jupyter-sched fetch-traces --dest DIR" in text and "JUPYTER_SCHED_DATA=DIR" in text, text
    assert "../shared" not in text and "Exit status: 0 done" in text, text
    assert max(len(line) for line in text.splitlines()) <= 100, text


def test_newuser41_n7_the_shipped_scenario_is_in_a_fresh_clone() -> None:
    assert (ROOT / SHIPPED_SCENARIO).is_file()
    if (ROOT / ".git").exists() and shutil.which("git"):
        done = subprocess.run(["git", "ls-files", "--error-unmatch", SHIPPED_SCENARIO], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{SHIPPED_SCENARIO} is not tracked: {done.stderr}"


def test_newuser41_n7_the_help_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = next(ln.strip() for ln in _help().splitlines() if SHIPPED_SCENARIO in ln)
    argv = shlex.split(line)
    assert argv[:2] == ["jupyter-sched", "simulate"], line
    (tmp_path / SHIPPED_SCENARIO).parent.mkdir(parents=True)
    shutil.copy(ROOT / SHIPPED_SCENARIO, tmp_path / SHIPPED_SCENARIO)
    monkeypatch.chdir(tmp_path)  # the checkout's layout, so the run writes sim/ here, not in the repository
    out, err = io.StringIO(), io.StringIO()
    code = main(argv[1:], out=out, err=err)
    assert code == 0, err.getvalue()
    assert " jobs: " in out.getvalue().splitlines()[0], out.getvalue()
    assert (tmp_path / "sim" / "jobs.csv").is_file() and (tmp_path / "sim" / "summary.csv").is_file()


def test_newuser41_n7_no_trace_data_says_fetch_then_name_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUPYTER_SCHED_DATA", raising=False)
    monkeypatch.setattr(traces, "candidate_dirs", lambda: [tmp_path / "shared" / "data" / "traces"])
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", "--openb", "default"], out=out, err=err) == 2
    line = err.getvalue()
    assert "JUPYTER_SCHED_DATA is not set" in line, line
    assert "jupyter-sched fetch-traces --dest DIR" in line, line
    assert "JUPYTER_SCHED_DATA=DIR jupyter-sched simulate --openb default" in line, line
