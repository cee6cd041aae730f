"""New user 28, N3: the README's "(or type ``.venv/bin/jupyter-sched``)" route — the CLI run by path, its
venv not active — ran ``python`` as the shell's Python, without jupyter_sched: every job that calls
``report_progress`` failed at once, and with ``-q`` nothing was said (54 sweep jobs). The submit now warns,
even under ``-q``, when the job's ``python`` is not this CLI's interpreter, cannot import jupyter_sched,
and the job's code uses it; a job that fails on ``No module named 'jupyter_sched'`` names the Python it
ran and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.client.submitter_env import foreign_python_warning
from jupyter_sched.executors.outcome import describe_exit
from tests.onboarding.test_cli_firsthour import clear, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu28n3", USERS)


def _shell_python(tmp_path: Path) -> Path:
    """A folder standing for pyenv's shims: a ``python`` that is a real Python without jupyter_sched
    (``-I``: no user site, no PYTHONPATH), as the shell's was."""
    shims = tmp_path / "shims"
    shims.mkdir()
    python = shims / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.base_prefix}/bin/python3 -I "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    return python


def _project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "progress.py").write_text("from jupyter_sched import report_progress\nreport_progress(0.5)\n",
                                      encoding="utf-8")
    (proj / "plain.py").write_text("print('no scheduler here')\n", encoding="utf-8")
    return proj


def test_newuser28_n3_the_warning_rule(tmp_path: Path) -> None:
    python, proj = _shell_python(tmp_path), _project(tmp_path)
    said = foreign_python_warning(["python", "progress.py", "2"], str(python), str(proj), own=sys.executable)
    assert said == (f"python here is {python}, not this jupyter-sched's {sys.executable}: the job cannot import "
                    f"jupyter_sched (its code does) — activate that environment ({Path(sys.executable).parent}/activate), "
                    f"or run -- {sys.executable} progress.py …"), said
    # its code does not use jupyter_sched; or the python is this CLI's own: nothing to say
    assert foreign_python_warning(["python", "plain.py"], str(python), str(proj), own=sys.executable) is None
    assert foreign_python_warning(["python", "progress.py"], sys.executable, str(proj), own=sys.executable) is None
    assert foreign_python_warning(["python", "-c", "import jupyter_sched"], str(python), str(proj),
                                  own=sys.executable) is not None


def test_newuser28_n3_a_quiet_submit_by_path_warns_once_on_stderr(server: EmbeddedServer, tmp_path: Path) -> None:
    python, proj = _shell_python(tmp_path), _project(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "VIRTUAL_ENV", "CONDA_PREFIX"))}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT),
                "PATH": f"{python.parent}:{os.environ.get('PATH', '')}"})
    done = subprocess.run([CLI, "submit", "-q", "--gpus", "0", "--time-limit", "1m", "--", "python", "progress.py"],
                          env=env, cwd=proj, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert said.count("warning: python here is") == 1, said
    assert f"python here is {python}, not this jupyter-sched's {sys.executable}" in said, said
    # without -q: the job's PATH (this shell's, sent with it) finds the same python — no note (newuser42 n3) — and
    # plain.py does not use jupyter_sched — no warning
    noted = subprocess.run([CLI, "submit", "--gpus", "0", "--time-limit", "1m", "--", "python", "plain.py"],
                           env=env, cwd=proj, capture_output=True, text=True, timeout=120)
    said = " ".join(noted.stderr.split())
    assert "note: runs python as" not in said and "warning: python here is" not in said, said
    # a job PATH that finds another: the note, each sentence with its capital (newuser28 nit n3: "…run another. runs …")
    (tmp_path / "nopython").mkdir()
    noted = subprocess.run([CLI, "submit", "--gpus", "0", "--time-limit", "1m", "--env", f"PATH={tmp_path / 'nopython'}",
                            "--", "python", "plain.py"], env=env, cwd=proj, capture_output=True, text=True, timeout=120)
    said = " ".join(noted.stderr.split())
    assert f"note: runs python as {python} (the one on your PATH; the job's PATH finds no python); give a full path " \
           "to run another. Your shell's other variables are not passed" in said, said
    clear(server)


def test_newuser28_n3_a_job_failing_on_no_jupyter_sched_names_its_python_and_the_fix(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_text("Traceback (most recent call last):\n  File \"progress.py\", line 1, in <module>\n"
                   "ModuleNotFoundError: No module named 'jupyter_sched'\n", encoding="utf-8")
    said = describe_exit(1, log=log, python="/root/.pyenv/shims/python")
    assert said.startswith("exited with code 1: ModuleNotFoundError: No module named 'jupyter_sched' (progress.py, line "
                           "1) — its Python, /root/.pyenv/shims/python, has no jupyter_sched: activate the environment "
                           "jupyter-sched is installed in before submitting, or give that environment's Python by its "
                           "full path (-- /path/to/venv/bin/python …); last lines: "), said  # the error first: newuser33 N2
    assert "has no jupyter_sched" not in describe_exit(1, log=log.with_name("none.log"))
