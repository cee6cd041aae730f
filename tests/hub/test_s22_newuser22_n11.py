"""Newuser22, N11: a hub service started with a ``c.HubSchedApp.job_python`` that has no ``jupyter_sched``
(a fresh venv from /usr/bin/python3, as the refusal of a private interpreter advises) said nothing, and
every notebook job and every ``jupyter_sched.report_progress`` in a job then failed with
``No module named 'jupyter_sched'``. The start-up check now tries the import there, as a job would,
and logs one WARNING with the fix.

Real parts: a venv made here (no pip: seconds), the interpreter run as a job runs it; the ``serve``
subprocess of tests/hub/test_hub_refusals.py, stopped once its start-up checks have spoken.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.hub.job_python import job_python_warning, missing_jupyter_sched
from tests.accounts import shared_dir

from .serve_start import serve_env, serve_start_up_log

WARNING = "cannot import jupyter_sched"


def _bare_venv(folder: Path) -> str:
    """A venv from /usr/bin/python3 without jupyter_sched (nor pip), its python."""
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    return str(folder / "bin" / "python")


@pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="needs a system python3 to make a bare venv")
def test_s22_newuser22_n11_the_import_check_finds_a_job_python_without_jupyter_sched(tmp_path: Path) -> None:
    python = _bare_venv(tmp_path / "jpy")
    problem = missing_jupyter_sched(python)
    assert problem == "not installed there", problem
    said = job_python_warning(python, problem)
    assert said.startswith(f"c.HubSchedApp.job_python {python} cannot import jupyter_sched (") and \
        f"{tmp_path / 'jpy' / 'bin' / 'pip'} install <this repository>" in said, said
    assert "report_progress" in said and "notebook jobs fail" in said, said
    # the service's own interpreter has it; a folder holding a jupyter_sched package where the service runs is
    # not on the job's path (the check starts in /)
    assert missing_jupyter_sched(sys.executable) is None
    assert missing_jupyter_sched(str(tmp_path / "nosuch" / "python")) is not None


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="hub mode with the local executor runs as root")
def test_s22_newuser22_n11_serve_warns_at_start_up_of_a_job_python_without_jupyter_sched() -> None:
    # before: "jobs run as their owners' accounts ({username}), interpreter /…/jpy/bin/python3, …" and nothing more
    with shared_dir() as folder:
        python = _bare_venv(folder / "jpy")
        (folder / "config").mkdir()
        (folder / "config" / "jupyter_sched_serve_config.py").write_text(
            f"c.SchedApp.log_dir = {str(folder / 'jobs')!r}\nc.HubSchedApp.job_python = {python!r}\n")
        env = serve_env(folder, f"sqlite:///{folder / 'store.sqlite'}")
        text = serve_start_up_log(folder, env, WARNING)
    said = [line for line in text.splitlines() if WARNING in line]
    assert len(said) == 1 and said[0].startswith("[W "), text[-3000:]  # logged once, as a WARNING
    assert f"c.HubSchedApp.job_python {python} cannot import jupyter_sched (not installed there): " in said[0], said
    assert "install <this repository>" in said[0], said


@pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="needs a system python3 to make a bare venv")
def test_s22_newuser22_n11_doctor_says_the_same_of_the_configured_job_python(tmp_path: Path) -> None:
    # before: the doctor's scan said the store, isolation and command lines, nothing of the job interpreter
    from jupyter_sched.store import Store, sqlite_url
    from tests.reliability.test_newuser13_doctor import _doctor

    python = _bare_venv(tmp_path / "jpy")
    config = tmp_path / "config"
    config.mkdir()
    (config / "jupyter_sched_serve_config.py").write_text(f"c.HubSchedApp.job_python = {python!r}\n")
    Store(sqlite_url(tmp_path / "hub.sqlite")).close()  # the hub's store (the doctor opens only one that exists)
    run = _doctor(tmp_path, "--db", sqlite_url(tmp_path / "hub.sqlite"), JUPYTER_CONFIG_DIR=str(config))
    said = [line for line in run.stdout.splitlines() if line.startswith("job python: ")]
    assert said == [f"job python: {job_python_warning(python, 'not installed there')} (set in "
                    f"{config / 'jupyter_sched_serve_config.py'})"], run.stdout + run.stderr
    (config / "jupyter_sched_serve_config.py").write_text(f"c.HubSchedApp.job_python = {sys.executable!r}\n")
    run = _doctor(tmp_path, "--db", sqlite_url(tmp_path / "hub.sqlite"), JUPYTER_CONFIG_DIR=str(config))
    assert f"job python: {sys.executable} (set in " in run.stdout and "imports jupyter_sched" in run.stdout, run.stdout
