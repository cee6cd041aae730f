"""New user 22, N13: ``jupyter-sched simulate SCENARIO --out DIR`` wrote its five generic file names
(``jobs.csv``, ``summary.csv``, …) into any existing folder, overwriting files of those names
without a word (``--out /etc/`` as root wrote ``/etc/jobs.csv``). Files of those names already in the
folder are now refused before the run, named, with both fixes (a new folder, or ``--force``); a link
of those names is never written through, even with ``--force``."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from jupyter_sched.cli.main import main as cli_main
from tests.sim.test_sim_cli import SCENARIO


def _simulate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["simulate", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def test_s22_newuser22_n13_existing_output_files_are_refused_before_the_run(tmp_path: Path, scenario: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "jobs.csv").write_text("my data\n")
    (folder / "queue.html").write_text("<p>mine</p>\n")
    code, out, err = _simulate(str(scenario), "--out", str(folder))
    assert code == 2 and out == "", out  # nothing ran; bad input is 2 (newuser38 n2)
    assert err.startswith(f"jupyter-sched simulate: --out {folder} already has jobs.csv and queue.html: "
                          "this run would overwrite them — give an empty or new folder"), err
    assert "--force" in err and err.rstrip().endswith("[validation_error]"), err
    assert (folder / "jobs.csv").read_text() == "my data\n"
    assert sorted(p.name for p in folder.iterdir()) == ["jobs.csv", "queue.html"]  # nothing else written


def test_s22_newuser22_n13_force_overwrites_and_other_files_stay(tmp_path: Path, scenario: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "jobs.csv").write_text("my data\n")
    (folder / "notes.txt").write_text("keep\n")
    code, out, err = _simulate(str(scenario), "--out", str(folder), "--force")
    assert code == 0, err
    assert (folder / "jobs.csv").read_text().startswith("job_id,name,"), (folder / "jobs.csv").read_text()[:80]
    assert (folder / "notes.txt").read_text() == "keep\n"
    assert f"wrote {folder}/jobs.csv, timeseries.csv, summary.csv, teams.csv, queue.html, utilization.html" in out, out
    code, _, err = _simulate(str(scenario), "--out", str(folder))  # its own earlier output too: --force again
    assert code == 2 and "already has jobs.csv, timeseries.csv, summary.csv, teams.csv, queue.html and utilization.html" in err


def test_s22_newuser22_n13_a_link_of_an_output_name_is_not_written_through(tmp_path: Path, scenario: Path) -> None:
    folder, victim = tmp_path / "shared", tmp_path / "victim.txt"
    folder.mkdir()
    victim.write_text("precious\n")
    os.symlink(victim, folder / "summary.csv")
    os.symlink(tmp_path / "nowhere", folder / "jobs.csv")  # a dangling link is a planted file too
    for extra in ((), ("--force",)):
        code, out, err = _simulate(str(scenario), "--out", str(folder), *extra)
        assert code == 2 and out == "", (extra, out)
        assert "jobs.csv and summary.csv are there but not a plain file" in err, err
    assert victim.read_text() == "precious\n" and not (tmp_path / "nowhere").exists()


def test_s22_newuser22_n13_openb_names_its_own_files(tmp_path: Path) -> None:
    (tmp_path / "pods.csv").write_text("mine\n")
    code, out, err = _simulate("--openb", "default", "--out", str(tmp_path))
    assert code == 2 and out == "", out  # refused before the trace is looked for
    assert f"--out {tmp_path} already has pods.csv: this run would overwrite it" in err, err
