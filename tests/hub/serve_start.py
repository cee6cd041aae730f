"""A ``jupyter-sched serve`` started as JupyterHub starts its service (or an embedded ``jupyter server``
with the extension), read until a start-up line.

Real parts: the service process, its store, its log. No hub runs: the hub's URLs point at free
ports, which is enough for the start-up checks these tests read (they run before the first
request to the hub).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def serve_env(folder: Path, db_url: str, **extra: str) -> dict[str, str]:
    """The environment JupyterHub gives its service (URLs, token, prefix) in ``folder``, store ``db_url``."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8",
           "JUPYTERHUB_API_URL": f"http://127.0.0.1:{_free_port()}/hub/api", "JUPYTERHUB_API_TOKEN": "t",
           "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{_free_port()}", "JUPYTERHUB_SERVICE_PREFIX": "/services/s/",
           "JUPYTER_SCHED_DB_URL": db_url, "JUPYTER_DATA_DIR": str(folder / "data"),
           "JUPYTER_CONFIG_DIR": str(folder / "config"), "JUPYTER_RUNTIME_DIR": str(folder / "runtime"), **extra}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if ENV_REGISTRY in os.environ:  # the session's registry (tests/conftest.py), not the host's /tmp one other runs share
        env[ENV_REGISTRY] = os.environ[ENV_REGISTRY]
    return env


def serve_start_up_log(folder: Path, env: dict[str, str], until: str, *settings: str, wait_s: float = 90.0) -> str:
    """Start ``jupyter-sched serve --allow-root`` (simulated GPUs, ``settings`` after) in ``folder``;
    the text of its log once ``until`` is in it (or it ended, or ``wait_s`` seconds passed); the
    process is stopped (SIGTERM, SIGKILL after 20 s) before this returns."""
    return start_up_log(folder, env, until, ["-m", "jupyter_sched.cli.main", "serve", "--allow-root",
                                             "--allow-unprivileged-port",  # a free port (verify25 V7)
                                             "--SchedApp.inventory_source=simulated", *settings], wait_s=wait_s)


def embedded_start_up_log(folder: Path, env: dict[str, str], until: str, *settings: str,
                          wait_s: float = 90.0) -> str:
    """:func:`serve_start_up_log` for an embedded server: ``jupyter server`` with the extension
    (``jupyter lab`` loads it the same way), on a free loopback port, simulated GPUs, ``settings`` after."""
    return start_up_log(folder, env, until, [
        "-m", "jupyter_server", "--allow-root", "--no-browser", "--ip=127.0.0.1", f"--port={_free_port()}",
        "--ServerApp.port_retries=0", "--ServerApp.jpserver_extensions={'jupyter_sched': True}",
        "--SchedApp.inventory_source=simulated", *settings], wait_s=wait_s)


def start_up_log(folder: Path, env: dict[str, str], until: str, argv: list[str], *, wait_s: float = 90.0) -> str:
    """Run ``python argv`` in ``folder`` with ``env``; its log once ``until`` is in it (or it ended, or
    ``wait_s`` seconds passed); the process is stopped (SIGTERM, SIGKILL after 20 s) before this returns."""
    log_path = folder / "serve.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, *argv], env=env, cwd=folder, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + wait_s
        while until not in log_path.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
    return log_path.read_text()
