"""New user 20, N12: ``jupyter-sched simulate SCENARIO --out /etc/passwd`` ran the whole simulation,
printed its summary, then failed "file exists" — a public trace's minutes of CPU thrown away.
``--out`` is now checked (a folder, created if missing, writable) before anything runs, and said as
the CLI's other refusals are: ``jupyter-sched simulate: --out … is a file; give a folder …``."""

from __future__ import annotations

import io
from pathlib import Path

from jupyter_sched.cli.main import main as cli_main
from tests.sim.test_sim_cli import SCENARIO


def _simulate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["simulate", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_newuser20_n12_out_naming_a_file_is_refused_before_the_run(tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(SCENARIO)
    a_file = tmp_path / "taken.txt"
    a_file.write_text("keep me\n")
    code, out, err = _simulate(str(scenario), "--out", str(a_file))
    assert code == 2 and out == "", out  # nothing ran: no summary printed
    assert err.startswith(f"jupyter-sched simulate: --out {a_file} is a file; give a folder"), err
    assert a_file.read_text() == "keep me\n"


def test_newuser20_n12_an_out_that_cannot_be_created_is_refused_before_the_run(tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(SCENARIO)
    a_file = tmp_path / "taken.txt"
    a_file.write_text("")
    code, out, err = _simulate(str(scenario), "--out", str(a_file / "sub"))  # a folder under a file: even root fails
    assert code == 2 and out == "", out
    assert err.startswith(f"jupyter-sched simulate: --out {a_file / 'sub'}: cannot create the folder"), err


def test_newuser20_n12_a_missing_out_folder_is_created_and_written(tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(SCENARIO)
    code, out, err = _simulate(str(scenario), "--out", str(tmp_path / "new" / "results"))
    assert code == 0, err
    assert (tmp_path / "new" / "results" / "summary.csv").exists(), out
