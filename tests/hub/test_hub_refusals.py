"""Hub mode refuses to start when jobs could not run safely as their owners, with one line each
(issue 15, run-as): the service is not root (it cannot switch users), the job folder is out of the
accounts' reach, or the job interpreter cannot be run by them.

Real parts: ``jupyter-sched serve`` as a subprocess — as a real non-root account made with
``useradd`` (running the venv of tests/runas_env.py), or as root — with the hub's service
environment pointing at a closed port (the refusal comes before any hub call), SQLite store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY
from tests.accounts import Account, os_accounts, shared_dir, skip_reason
from tests.hub.serve_start import serve_env
from tests.runas_env import runas_venv


def serve_env_of(folder: Path, user: Account | None = None) -> dict[str, str]:
    """The hub's service environment in ``folder`` (:func:`tests.hub.serve_start.serve_env`: its URLs at free
    ports, a SQLite store, the session's host registry); another account's leaves out ``PYTHONPATH`` (it runs
    its own venv)."""
    env = serve_env(folder, f"sqlite:///{folder / 'store.sqlite'}")
    if user is not None:
        env.pop("PYTHONPATH", None)
    return env


def serve(folder: Path, *options: str, python: str = sys.executable, user: Account | None = None,
          allow_port: bool = True) -> tuple[int, str]:
    """Run ``jupyter-sched serve`` to its exit (the refusal ends it); its status and log. ``allow_port``: with
    ``--allow-unprivileged-port`` (the test's free port is one any account may bind: verify25 V7)."""
    done = subprocess.run([python, "-m", "jupyter_sched.cli.main", "serve", "--allow-root",
                           "--SchedApp.inventory_source=simulated",
                           *(["--allow-unprivileged-port"] if allow_port else []), *options],
                          env=serve_env_of(folder, user), cwd=folder, capture_output=True, text=True, timeout=120,
                          user=user.uid if user else None, group=user.gid if user else None,
                          extra_groups=[] if user else None)
    return done.returncode, done.stdout + done.stderr


def test_s31_flake_serve_keeps_the_sessions_host_registry(tmp_path: Path) -> None:
    """serve() gave its service an environment of its own making, without ``$JUPYTER_SCHED_HOST_REGISTRY``: a
    service that got as far as registering would have done so in the host's /tmp registry, where other test
    processes and runs meet (session 30's s30-xdist mended the other harnesses: tests/conftest.py ``host_registry``)."""
    assert serve_env_of(tmp_path)[ENV_REGISTRY] == os.environ[ENV_REGISTRY]  # KeyError before
    assert serve_env_of(tmp_path, Account("someone", 4242, 4242, "/nonexistent"))[ENV_REGISTRY] == os.environ[ENV_REGISTRY]
    assert "PYTHONPATH" not in serve_env_of(tmp_path, Account("someone", 4242, 4242, "/nonexistent"))


def refusal(log: str) -> str:
    lines = [line for line in log.splitlines() if "bad configuration, not starting" in line]
    assert len(lines) == 1, log[-3000:]
    return lines[0]


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_a_service_that_cannot_switch_users_refuses_hub_mode_with_the_local_executor() -> None:
    with os_accounts(1) as (someone,), shared_dir() as folder:
        folder.chmod(0o1777)  # the account writes its store and runtime files here (sticky: R16-7)
        code, log = serve(folder, f"--SchedApp.log_dir={folder / 'jobs'}",
                          python=str(runas_venv() / "bin" / "python"), user=someone)
    line = refusal(log)
    assert code != 0
    assert "c.SchedApp.executor" in line and "needs root" in line and f"uid {someone.uid}" in line
    assert "kubernetes" in line  # what else to configure


@pytest.mark.skipif(os.geteuid() != 0, reason="the refusals below are those of a root service")
def test_a_job_folder_other_accounts_cannot_reach_is_refused(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    code, log = serve(tmp_path, f"--SchedApp.log_dir={private / 'jobs'}")
    line = refusal(log)
    assert code != 0 and "c.SchedApp.log_dir" in line and "mode 700" in line


@pytest.mark.skipif(os.geteuid() != 0, reason="the refusals below are those of a root service")
def test_an_interpreter_other_accounts_cannot_run_is_refused(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    python = private / "python"
    python.symlink_to(sys.executable)
    with shared_dir() as folder:
        code, log = serve(folder, f"--SchedApp.log_dir={folder / 'jobs'}", f"--HubSchedApp.job_python={python}")
    line = refusal(log)
    assert code != 0 and "c.HubSchedApp.job_python" in line and "/usr/bin/python3" in line


def test_verify20_v2_a_setting_given_twice_stops_serve_naming_it(tmp_path: Path) -> None:
    """Verify 20, V2: ``--SchedApp.inventory_source=static`` after the harness's ``=simulated`` made
    the extension fail to link with a [W] line only, and the service started on defaults — every
    command-line setting dropped (log_dir, cycle_interval…). Now one line names it and nothing starts."""
    code, log = serve(tmp_path, "--SchedApp.inventory_source=static")  # serve() already passes =simulated
    line = refusal(log)
    assert code == 2, log[-2000:]
    assert "inventory_source only accepts one value" in line, line
    assert "error linking extension" not in log and "store sqlite" not in log, log[-2000:]
