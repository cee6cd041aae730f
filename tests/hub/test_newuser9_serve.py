"""New user 9, N5: ``jupyter-sched serve`` given a list setting on the command line stopped with
traitlets' raw text ("The 'quotas' trait of a HubSchedApp instance contains a Dict of a List which
expected a dict, not the str …") and no fix; ``serve --help`` named no config file. Real parts: the
``serve`` subprocess of tests/hub/test_hub_refusals.py (hub environment at a closed port, SQLite)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.accounts import shared_dir

from .test_hub_refusals import refusal, serve


@pytest.mark.skipif(os.geteuid() != 0, reason="hub mode with the local executor runs as root")
def test_newuser9_n5_a_list_setting_as_text_names_the_setting_and_the_config_file() -> None:
    with shared_dir() as folder:
        code, log = serve(folder, f"--SchedApp.log_dir={folder / 'jobs'}",
                          "--SchedApp.quotas=[{'team': 'vision', 'guaranteed': 2}]")
    line = refusal(log)
    assert code != 0 and "trait of a" not in line, line
    assert "c.SchedApp.quotas" in line and "jupyter_sched_serve_config.py" in line, line


@pytest.mark.skipif(os.geteuid() != 0, reason="hub mode with the local executor runs as root")
def test_newuser9_n5_serve_reads_its_config_file_from_the_jupyter_config_folder(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "python").symlink_to(sys.executable)
    with shared_dir() as folder:
        (folder / "config").mkdir()
        (folder / "config" / "jupyter_sched_serve_config.py").write_text(
            f"c.SchedApp.log_dir = {str(folder / 'jobs')!r}\nc.HubSchedApp.job_python = {str(private / 'python')!r}\n")
        code, log = serve(folder)  # JUPYTER_CONFIG_DIR=folder/config: the file's job_python is refused
    line = refusal(log)
    assert code != 0 and "c.HubSchedApp.job_python" in line, line
    shown = subprocess.run([sys.executable, "-m", "jupyter_sched.cli.main", "serve", "--help"], capture_output=True,
                           text=True, timeout=60, env={**os.environ})
    assert "jupyter_sched_serve_config.py" in shown.stdout and "--config=FILE" in shown.stdout, shown.stdout
