"""red38 R5, the rest: ``jupyter-sched doctor`` could not tell whether the hub gives its servers and the service origins
of their own — it runs in an admin's shell, which has not the service's ``JUPYTERHUB_HOST``/``JUPYTERHUB_PUBLIC_URL``;
only the service's start-up log said it. Now each start of the service keeps what it found in its store (one
``service_origins`` audit row: the line, where and which process), and the doctor of that store says the newest one:
a ``warn`` check with the fix for one origin, ``ok`` for an origin of its own.

Real parts: ``jupyter-sched serve`` started twice as JupyterHub starts its service (tests/hub/serve_start.py), with the
environment JupyterHub gives it without and with ``subdomain_host``; its SQLite store; ``jupyter-sched doctor`` run as
a separate process whose environment has neither variable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.accounts import shared_dir

from .serve_start import serve_env, serve_start_up_log

ONE = "one origin for the hub, every user's server and this service (no c.JupyterHub.subdomain_host)"
OWN = "this service has an origin of its own (https://jupyter-sched.hub.example.org/services/jupyter-sched/"


def _doctor(folder: Path, db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTERHUB_")}  # an admin's shell
    env.update(JUPYTER_CONFIG_DIR=str(folder / "config"), JUPYTER_DATA_DIR=str(folder / "admin-data"))
    return subprocess.run([sys.executable, "-m", "jupyter_sched.cli.main", "doctor", "--db", db_url, *args],
                          env=env, cwd=folder, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="hub mode with the local executor runs as root")
def test_red38_r5_doctor_says_the_origins_the_service_found_at_its_start() -> None:
    with shared_dir() as folder:
        (folder / "config").mkdir()
        (folder / "config" / "jupyter_sched_serve_config.py").write_text(
            f"c.SchedApp.log_dir = {str(folder / 'jobs')!r}\nc.HubSchedApp.job_python = '/usr/bin/python3'\n")
        db_url = f"sqlite:///{folder / 'store.sqlite'}"
        log = serve_start_up_log(folder, serve_env(folder, db_url, JUPYTERHUB_HOST=""), "scheduler admins:")
        assert ONE in log, log[-3000:]
        assert log.count(ONE) == 1, "said once: the kept row is not logged again by the audit sink"

        done = _doctor(folder, db_url, "--json")
        report = json.loads(done.stdout)
        (origins,) = [c for c in report["checks"] if c["name"] == "origins"]
        assert origins["status"] == "warn", origins
        assert ONE in origins["message"] and "the service found at its start" in origins["message"], origins
        assert origins["fix"] and "subdomain_host" in origins["fix"], origins
        text = _doctor(folder, db_url).stdout
        assert any(line.startswith("origins: (the service found at its start") and ONE in line
                   for line in text.splitlines()), text

        serve_start_up_log(folder, serve_env(  # the hub now with subdomain_host: the newest start is said
            folder, db_url, JUPYTERHUB_HOST="https://hub.example.org",
            JUPYTERHUB_PUBLIC_URL="https://jupyter-sched.hub.example.org/services/jupyter-sched/"), "scheduler admins:")
        report = json.loads(_doctor(folder, db_url, "--json").stdout)
        (origins,) = [c for c in report["checks"] if c["name"] == "origins"]
        assert origins["status"] == "ok" and OWN in origins["message"] and origins["fix"] is None, origins
