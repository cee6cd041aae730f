"""Hubadmin22 H5 in embedded mode: ``jupyter lab`` on a password-less local PostgreSQL says so at start.

Session 22 made the hub service (``jupyter-sched serve``) warn at start when its store's PostgreSQL on
this host let it log in without a password (``trust``: any job can log in the same way and rewrite every
job, quota and audit record) and when the role is a superuser. An embedded server — ``jupyter lab`` with
``c.SchedApp.db_url = "postgresql+psycopg://postgres@127.0.0.1:PORT/db"`` and the local executor, so its
jobs run on this host — said nothing. Both modes now say it from the same start-up step
(:mod:`jupyter_sched.extension.startup_checks`), once. Real parts: the server process (``jupyter server``
with the extension, as ``jupyter lab`` loads it), a real PostgreSQL (tests/pg.py: trust on loopback, as a
quick setup is), the log.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY
from jupyter_sched.store import sqlite_url
from tests.pg import skip_reason

from .serve_start import embedded_start_up_log, serve_env

RUNNING = "is running at"  # jupyter_server's line once it serves


def _env(folder: Path) -> dict[str, str]:
    """A user's shell: no hub variables, Jupyter's folders in ``folder``."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8", "JUPYTER_DATA_DIR": str(folder / "data"),
           "JUPYTER_CONFIG_DIR": str(folder / "config"), "JUPYTER_RUNTIME_DIR": str(folder / "runtime")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if ENV_REGISTRY in os.environ:  # the session's registry (tests/conftest.py), not the host's /tmp one other runs share
        env[ENV_REGISTRY] = os.environ[ENV_REGISTRY]
    return env


@pytest.mark.skipif(skip_reason() is not None, reason=f"PostgreSQL not available: {skip_reason()}")
def test_s23_hubadmin22_h5_embedded_server_warns_at_start_of_a_password_less_local_store(
        tmp_path: Path, pg_url: str) -> None:
    # before: the embedded server's start-up log had its "store postgresql+psycopg://…" line and nothing more
    text = embedded_start_up_log(tmp_path, _env(tmp_path), "database:", f"--SchedApp.db_url={pg_url}",
                                 f"--SchedApp.log_dir={tmp_path / 'jobs'}")
    said = [line for line in text.splitlines() if "jupyter_sched: database:" in line]
    port = pg_url.split("@127.0.0.1:", 1)[1].split("/", 1)[0]
    assert len(said) == 1 and said[0].startswith("[W "), text[-3000:]
    assert f"connected to 127.0.0.1:{port} as postgres without a password while users' jobs run on this host: " \
           "any job can log in the same way and rewrite every job, quota and audit record" in said[0], said
    assert "scram-sha-256" in said[0] and "PostgreSQL superuser" in said[0], said


def test_s23_hubadmin22_h5_embedded_server_on_sqlite_says_nothing_of_the_database(tmp_path: Path) -> None:
    text = embedded_start_up_log(tmp_path, _env(tmp_path), RUNNING,
                                 f"--SchedApp.db_url={sqlite_url(tmp_path / 'sched.sqlite')}",
                                 f"--SchedApp.log_dir={tmp_path / 'jobs'}")
    assert RUNNING in text and "jupyter_sched 0" in text, text[-3000:]  # it started, its store line said
    assert "database:" not in text, text[-3000:]


def test_s30_xdist_an_embedded_servers_shell_keeps_the_sessions_host_registry(tmp_path: Path) -> None:
    """Session 30 (xdist run1): the servers these tests start registered in the host's /tmp registry, where every
    other test process and run of the machine meets, and said "another jupyter_sched … runs on this host" about
    them; the session's own registry (tests/conftest.py ``host_registry``) goes with the shell now."""
    assert _env(tmp_path)[ENV_REGISTRY] == os.environ[ENV_REGISTRY]  # KeyError before
    assert serve_env(tmp_path, "sqlite://")[ENV_REGISTRY] == os.environ[ENV_REGISTRY]  # the service's shell too
