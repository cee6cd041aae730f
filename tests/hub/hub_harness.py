"""A real JupyterHub for the hub-mode integration test.

Starts ``jupyterhub`` (PyPI) with ``configurable-http-proxy`` (npm), the dummy authenticator,
the simple local process spawner and ``jupyter-sched serve`` as a managed hub service on a
real PostgreSQL database, all on random loopback ports in a temporary directory.

``configurable-http-proxy`` is taken from ``$PATH``, else from the cache prefix
``~/.cache/jupyter_sched/chp`` (``$XDG_CACHE_HOME`` respected), else installed there once with
``npm install -g --prefix <that prefix> configurable-http-proxy``. :func:`skip_reason` says why
the test cannot run (no jupyterhub, no npm/CHP).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = ["Hub", "chp_command", "skip_reason"]

SERVICE = "jupyter-sched"
VENV_BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _chp_prefix() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "jupyter_sched" / "chp"


def chp_command() -> str | None:
    """Path of ``configurable-http-proxy``; installs it into the cache prefix when npm can."""
    found = shutil.which("configurable-http-proxy")
    if found:
        return found
    cached = _chp_prefix() / "bin" / "configurable-http-proxy"
    if cached.exists():
        return str(cached)
    npm = shutil.which("npm")
    if npm is None:
        return None
    done = subprocess.run([npm, "install", "-g", "--prefix", str(_chp_prefix()), "configurable-http-proxy"],
                          capture_output=True, text=True, timeout=300)
    return str(cached) if done.returncode == 0 and cached.exists() else None


def skip_reason() -> str | None:
    """Why a real hub cannot run here (None when it can)."""
    if not (VENV_BIN / "jupyterhub").exists() or not (VENV_BIN / "jupyterhub-singleuser").exists():
        return f"jupyterhub is not installed in {VENV_BIN.parent} (pip install jupyterhub)"
    if chp_command() is None:
        return "configurable-http-proxy is missing and npm could not install it (npm install -g configurable-http-proxy)"
    return None


_CONFIG = """
import json
c = get_config()  # noqa: F821
s = json.loads({settings!r})
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = s["proxy_port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = s["hub_port"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:%d" % s["chp_api_port"]
c.ConfigurableHTTPProxy.command = [s["chp"]]
c.JupyterHub.db_url = "sqlite:///" + s["base"] + "/hub.sqlite"
c.JupyterHub.cookie_secret_file = s["base"] + "/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.Authenticator.admin_users = set(s["admins"])
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = s["base"] + "/home/{{username}}"
c.Spawner.cmd = [s["singleuser"]]
c.Spawner.args = ["--allow-root"]
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
c.Spawner.poll_interval = 1
c.Spawner.environment = {{"JUPYTER_SCHED_HUB_URL": s["service_url"] + "/services/jupyter-sched/",
                          "JUPYTER_CONFIG_DIR": s["base"] + "/user-config",
                          "JUPYTER_DATA_DIR": s["base"] + "/user-data",
                          "JUPYTER_RUNTIME_DIR": s["base"] + "/user-runtime"}}
c.JupyterHub.load_groups = {{g: {{"users": u}} for g, u in s["groups"].items()}}
c.JupyterHub.custom_scopes = {{"custom:jupyter-sched:admin": {{"description": "administer jupyter-sched"}}}}
c.JupyterHub.services = [
    {{"name": "jupyter-sched", "url": s["service_url"], "command": s["service_command"],
      "environment": s["service_env"], "oauth_no_confirm": True, "display": False}},
    {{"name": "test-driver", "api_token": s["driver_token"]}},
]
c.JupyterHub.load_roles = [
    {{"name": "user", "scopes": ["self", "access:services!service=jupyter-sched"]}},
    {{"name": "server", "scopes": ["users:activity!user", "access:servers!server",
                                  "access:services!service=jupyter-sched"]}},
    {{"name": "jupyter-sched-service", "scopes": ["read:users", "list:users", "read:servers", "users:activity"],
      "services": ["jupyter-sched"]}},
    {{"name": "test-driver", "scopes": ["admin:users", "admin:servers", "admin:server_state", "tokens", "list:users"],
      "services": ["test-driver"]}},
]
"""


@dataclass
class Hub:
    """A running JupyterHub (see module docstring); ``url`` is the proxy's public URL."""

    base: Path
    db_url: str
    admins: tuple[str, ...]
    groups: dict[str, list[str]]
    gpus: int = 2
    proxy_port: int = 0
    service_port: int = 0
    driver_token: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port}"

    @property
    def service_url(self) -> str:
        """The central service's public URL (through the proxy), ending in ``/``."""
        return f"{self.url}/services/{SERVICE}/"

    def server_url(self, user: str) -> str:
        return f"{self.url}/user/{user}/"

    def start(self) -> None:
        """Write the config and start the hub; return when the hub API and the service answer.

        Raises:
            RuntimeError: the hub or the service did not come up (log tail included).
        """
        chp = chp_command()
        assert chp is not None
        self.proxy_port, self.service_port = _free_port(), _free_port()
        user_config = self.base / "user-config"
        user_config.mkdir(parents=True, exist_ok=True)
        # user servers load only jupyter_sched (fast start on a busy CI machine)
        (user_config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"jpserver_extensions": {
            "jupyterlab": False, "jupyter_lsp": False, "notebook_shim": False, "jupyter_server_terminals": False,
            "jupyter_sched": True}}}))
        (self.base / "home").mkdir(exist_ok=True)
        settings = {
            "base": str(self.base), "proxy_port": self.proxy_port, "hub_port": _free_port(),
            "chp_api_port": _free_port(), "chp": chp, "admins": list(self.admins), "groups": self.groups,
            "singleuser": str(VENV_BIN / "jupyterhub-singleuser"),
            "service_url": f"http://127.0.0.1:{self.service_port}", "driver_token": self.driver_token,
            "service_command": [str(VENV_BIN / "jupyter-sched"), "serve", "--allow-root",
                                "--SchedApp.inventory_source=simulated", f"--SchedApp.simulated_gpus={self.gpus}",
                                f"--SchedApp.log_dir={self.base / 'job-logs'}", "--SchedApp.cycle_interval=1",
                                "--SchedApp.activity_interval_s=1", "--HubSchedApp.hub_poll_interval_s=1", "--HubSchedApp.gpu_prices", "*=2.5"],
            "service_env": {"JUPYTER_SCHED_DB_URL": self.db_url, "JUPYTER_DATA_DIR": str(self.base / "svc-data"),
                            "JUPYTER_CONFIG_DIR": str(self.base / "svc-config"),
                            "JUPYTER_RUNTIME_DIR": str(self.base / "svc-runtime")},
        }
        config = self.base / "jupyterhub_config.py"
        config.write_text(_CONFIG.format(settings=json.dumps(settings)))
        env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        log = (self.base / "hub.log").open("wb")
        self.process = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(config)], cwd=self.base,
                                        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.wait_for(lambda: self.api("GET", "").status_code == 200, 60, "the hub API")
        self.wait_for(lambda: httpx.get(f"http://127.0.0.1:{self.service_port}/services/{SERVICE}/api/sched/config",
                                        timeout=5).status_code in (200, 403), 60, "the jupyter-sched service")

    def wait_for(self, ready: Any, timeout_s: float, what: str) -> None:
        """Poll ``ready()`` every 0.25 s until true.

        Raises:
            RuntimeError: not ready within ``timeout_s`` seconds or the hub exited (log tail attached).
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                break
            try:
                if ready():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"{what} did not become ready; hub log tail:\n{self.log_tail()}")

    def log_tail(self, chars: int = 6000) -> str:
        path = self.base / "hub.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else "(no log)"

    def api(self, method: str, path: str, body: Any = None, *, token: str | None = None) -> httpx.Response:
        """Call the hub REST API (default: as the admin test driver)."""
        return httpx.request(method, f"{self.url}/hub/api/{path}", json=body, timeout=30,
                             headers={"Authorization": f"token {token or self.driver_token}"})

    def token_for(self, user: str) -> str:
        """A new API token of ``user`` (with the user's own permissions)."""
        response = self.api("POST", f"users/{user}/tokens", {"note": "jupyter_sched hub test"})
        response.raise_for_status()
        return str(response.json()["token"])

    def start_servers(self, *users: str) -> None:
        """Spawn the users' servers (all at once) and wait until each is ready."""
        for user in users:
            response = self.api("POST", f"users/{user}/server")
            if response.status_code not in (201, 202, 400):
                raise RuntimeError(f"spawn of {user} failed: {response.status_code} {response.text}")
        for user in users:
            self.wait_for(lambda u=user: bool(self.api("GET", f"users/{u}").json().get("servers", {}).get("", {})
                                              .get("ready")), 90, f"{user}'s server")

    def stop_server(self, user: str) -> None:
        """Stop ``user``'s server and wait until the hub reports it gone."""
        response = self.api("DELETE", f"users/{user}/server")
        if response.status_code not in (202, 204):
            raise RuntimeError(f"stop of {user} failed: {response.status_code} {response.text}")
        self.wait_for(lambda: "" not in self.api("GET", f"users/{user}").json().get("servers", {}), 60,
                      f"{user}'s server to stop")

    def kill_server(self, user: str) -> None:
        """SIGKILL ``user``'s server process (no cleanup runs); wait until the hub notices."""
        state = self.api("GET", f"users/{user}").json()["servers"][""]["state"]
        os.kill(int(state["pid"]), signal.SIGKILL)
        self.wait_for(lambda: "" not in self.api("GET", f"users/{user}").json().get("servers", {}), 60,
                      f"the hub to notice that {user}'s server died")

    def stop(self) -> None:
        """SIGTERM the hub (it stops user servers and the managed service), SIGKILL leftovers:
        the hub's process group, then any process whose command line names this hub's
        temporary directory (job wrappers and jobs of a test that failed before cancelling)."""
        self._stop_hub()
        for pid in _pids_mentioning(str(self.base)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def _stop_hub(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.process = None


def _pids_mentioning(text: str) -> list[int]:
    """Pids (not this process) whose command line contains ``text``, and their descendants."""
    parents: dict[int, int] = {}
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.add(int(entry.name))
    grew = True
    while grew:
        children = {pid for pid, ppid in parents.items() if ppid in found} - found
        grew = bool(children)
        found |= children
    return sorted(found)
