"""A fresh clone (no ``../shared`` beside it) runs the trace tests on the committed slices.

Issue 20, finding 1: ``bash scripts/test-all`` failed in a user's clone because tests read
``../shared/data/traces``, and the "trace data folder not found" message named one folder twice.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.errors import NotFoundError
from jupyter_sched.sim import traces
from jupyter_sched.sim.cli import main
from tests.trace_data import FIXTURES, full_traces, requires_full_traces

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_missing_data_message_names_each_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the checkout, "beside the source" and "beside the current folder" are one folder."""
    monkeypatch.delenv("JUPYTER_SCHED_DATA", raising=False)
    monkeypatch.chdir(ROOT)
    tried = traces.candidate_dirs()
    assert len(tried) == len(set(tried)) == 1
    monkeypatch.chdir(tmp_path)
    assert len(traces.candidate_dirs()) == 2  # elsewhere, both places are real and distinct
    monkeypatch.setenv("JUPYTER_SCHED_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(NotFoundError) as caught:
        traces.data_dir()
    assert caught.value.message.count(str(tmp_path / "nowhere")) == 1
    assert "jupyter-sched fetch-traces" in (caught.value.hint or "")


def test_a_clone_without_shared_data_says_where_it_looked_once_and_how_to_fetch(tmp_path: Path) -> None:
    """The real command from a copy of the package with nothing beside it (a user's clone)."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "jupyter_sched", clone / "jupyter_sched",
                    ignore=shutil.ignore_patterns("labextension", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_SCHED_DATA"}
    env["PYTHONPATH"] = str(clone)
    done = subprocess.run([sys.executable, "-m", "jupyter_sched.sim.cli", "simulate", "--openb", "default"],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    line = done.stderr.strip()
    assert line.startswith("jupyter-sched simulate: trace data folder not found (looked in "), line
    places = line.split("(looked in ", 1)[1].split(")", 1)[0].split(", ")
    assert places == [str(tmp_path / "shared" / "data" / "traces")], line
    assert "jupyter-sched fetch-traces" in line


@pytest.mark.parametrize("argv, field", [
    (["--openb="], "--openb needs a workload name"),
    (["--openb", "  "], "--openb needs a workload name"),
    (["--tiresias="], "--tiresias needs a cluster spec name"),
], ids=["empty workload", "blank workload", "empty cluster spec"])
def test_an_empty_trace_name_is_refused_naming_the_argument_with_or_without_data(
        argv: list[str], field: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_DATA", str(tmp_path / "no-data-here"))
    code, out, err = run("simulate", *argv)
    assert code == 2 and not out and err.startswith(f"jupyter-sched simulate: {field}"), err


def test_the_tiresias_trace_replays_from_the_committed_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    """``JUPYTER_SCHED_DATA`` pointing at the fixture folder works like the fetched traces."""
    monkeypatch.setenv("JUPYTER_SCHED_DATA", str(FIXTURES))
    code, out, err = run("simulate", "--tiresias", "n32g4", "--speedup", "8")
    assert code == 0, err
    summary = dict(line.split(None, 1) for line in out.splitlines())
    assert int(summary["jobs"]) == 60
    assert float(summary["avg_jct_s"]) > 0


@requires_full_traces
@pytest.mark.parametrize("name, rows", [
    ("openb/openb_node_list_gpu_node.csv", lambda lines: lines[:1] + lines[1::20]),
    ("openb/openb_pod_list_default.csv", lambda lines: lines[:201]),
    ("tiresias/60_job.csv", lambda lines: lines),
    ("tiresias/n32g4.csv", lambda lines: lines),
], ids=["every 20th GPU node", "first 200 default pods", "whole 60-job trace", "whole n32g4 spec"])
def test_each_fixture_is_an_unmodified_slice_of_the_public_trace(name: str, rows) -> None:  # type: ignore[no-untyped-def]
    full = full_traces()
    assert full is not None
    want = rows((full / name).read_text(encoding="utf-8").splitlines())
    assert (FIXTURES / name).read_text(encoding="utf-8").splitlines() == want


def test_an_installed_package_does_not_look_for_data_inside_the_venv(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """New user 5, finding 19: after the README's (non-editable) install, the first place named was
    ``<venv>/lib/python3.11/shared/data/traces`` — "beside the checkout" resolved from site-packages."""
    monkeypatch.delenv("JUPYTER_SCHED_DATA", raising=False)
    installed = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "jupyter_sched" / "sim" / "traces.py"
    monkeypatch.setattr(traces, "__file__", str(installed))
    monkeypatch.chdir(tmp_path)
    assert traces.candidate_dirs() == [tmp_path.parent / "shared" / "data" / "traces"]
