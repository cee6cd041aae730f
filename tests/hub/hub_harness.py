"""A real multi-user JupyterHub for the hub-mode integration tests.

Starts ``jupyterhub`` (PyPI) with ``configurable-http-proxy`` (npm), the dummy authenticator and
JupyterHub's ``LocalProcessSpawner``, which starts each user's server **as that user's OS account**
(real accounts made by the test with ``useradd``, tests/accounts.py); the central service
``jupyter-sched serve`` runs **as root** as an external hub service the harness starts and can
``kill -9`` and restart, on a PostgreSQL database started by the test; all on random loopback ports
in a 0755 temporary folder (pytest's own are 0700, out of the accounts' reach).

User servers, their kernels and the jobs (run as their owners by the central service) use the
venv of tests/runas_env.py — Debian's python3 with this checkout's jupyter_sched — because the
accounts cannot run the test session's interpreter under /root. The hub itself runs from the
session's environment (as root).

``configurable-http-proxy`` is taken from ``$PATH``, else from the cache prefix
``~/.cache/jupyter_sched/chp`` (``$XDG_CACHE_HOME`` respected), else installed there once with
``npm install -g --prefix <that prefix> configurable-http-proxy``. :func:`skip_reason` says why
the test cannot run (no jupyterhub, no npm/CHP, not root).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY
from tests import accounts
from tests.locks import file_lock

__all__ = ["HUB_CONFIG_HEAD", "Hub", "binaries_skip_reason", "chp_command", "skip_reason"]

SERVICE = "jupyter-sched"
VENV_BIN = Path(sys.executable).parent


def _free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (:func:`_free_port`)."""
    picked: list[int] = []
    while len(picked) < count:
        if (port := _free_port()) not in picked:
            picked.append(port)
    return picked


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


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
    # one install at a time: the test processes of a parallel run (pytest-xdist) get here at once on a fresh
    # machine, and two npm installs into one prefix break each other; the next holder finds it installed
    with file_lock(_chp_prefix().parent / ".chp-install.lock"):
        if not cached.exists():
            subprocess.run([npm, "install", "-g", "--prefix", str(_chp_prefix()), "configurable-http-proxy"],
                           capture_output=True, text=True, timeout=300)
    return str(cached) if cached.exists() else None


def binaries_skip_reason() -> str | None:
    """Why JupyterHub itself cannot start here — its package or its proxy missing (None when it can)."""
    if not (VENV_BIN / "jupyterhub").exists():
        return f"jupyterhub is not installed in {VENV_BIN.parent} (pip install jupyterhub)"
    if chp_command() is None:
        return "configurable-http-proxy is missing and npm could not install it (npm install -g configurable-http-proxy)"
    return None


def skip_reason() -> str | None:
    """Why a real multi-user hub, spawning servers as real OS accounts, cannot run here (None when it can)."""
    return accounts.skip_reason() or binaries_skip_reason()


# The start of every test hub's jupyterhub_config.py: loopback ports, the proxy and the hub's own
# files under ``base``, from the JSON ``settings`` that ``.format(settings=...)`` fills in.
HUB_CONFIG_HEAD = """
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
# JupyterHub 6 waits Service.timeout (30 s by default) at its start for each external service to answer before
# it routes /hub/ through the proxy; a test hub's service starts after the hub (it needs the hub's API), so
# every test hub waited the whole 30 s, the service never up. 1 s is JupyterHub 5's fixed wait (5 has no such
# field and refuses an unknown one). The hub routes the service either way (a warning in its log).
from jupyterhub.services.service import Service as _Service  # noqa: E402
SERVICE_WAIT = {{"timeout": 1}} if "timeout" in _Service.class_trait_names() else {{}}
# The hub polls a starting user server (and its proxy, and a stopping server's process) with a full-jitter backoff
# that grows to 5 s: a server up after ~6-10 s waited a random 0-5 s more to be seen (0.6-2.3 s measured, session
# 41). A test hub polls at most every 0.5 s; what is polled and every timeout stay JupyterHub's.
import jupyterhub.proxy as _proxy  # noqa: E402
import jupyterhub.spawner as _spawner  # noqa: E402
import jupyterhub.utils as _utils  # noqa: E402
_BACKOFF = _utils.exponential_backoff
async def _quick_backoff(*args, **kwargs):  # noqa: E302
    kwargs["max_wait"] = min(kwargs.get("max_wait", 5), 0.5)
    return await _BACKOFF(*args, **kwargs)
_utils.exponential_backoff = _proxy.exponential_backoff = _spawner.exponential_backoff = _quick_backoff  # noqa: E305
"""

_CONFIG = HUB_CONFIG_HEAD + """c.JupyterHub.api_page_default_limit = s["page_max"]
c.JupyterHub.api_page_max_limit = s["page_max"]
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.Authenticator.admin_users = set(s["admins"])
c.JupyterHub.spawner_class = s["spawner_class"]
c.Spawner.cmd = [s["python"], "-m", "jupyterhub.singleuser"]
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
c.Spawner.poll_interval = 1
c.Spawner.environment = {{"JUPYTER_SCHED_HUB_URL": s["service_url"] + "/services/jupyter-sched/",
                          "JUPYTER_CONFIG_DIR": s["base"] + "/user-config"}}
from jupyter_sched.hub.spawn_token import revoke_token_hook, scheduler_token_hook  # noqa: E402
c.Spawner.pre_spawn_hook = scheduler_token_hook
c.Spawner.post_stop_hook = revoke_token_hook
c.JupyterHub.load_groups = {{g: {{"users": u}} for g, u in s["groups"].items()}}
c.JupyterHub.custom_scopes = {{"custom:jupyter-sched:admin": {{"description": "administer jupyter-sched"}}}}
c.JupyterHub.services = [
    {{"name": "jupyter-sched", "url": s["service_url"], "api_token": s["service_token"],
      "oauth_no_confirm": True, "display": False, **SERVICE_WAIT}},
    {{"name": "test-driver", "api_token": s["driver_token"]}},
]
c.JupyterHub.load_roles = [
    {{"name": "user", "scopes": ["self", "access:services!service=jupyter-sched"]}},
    {{"name": "server", "scopes": ["users:activity!user", "access:servers!server",
                                  "access:services!service=jupyter-sched"]}},
    {{"name": "jupyter-sched-service", "scopes": ["read:users", "list:users", "read:groups", "read:servers",
                                                 "users:activity", "read:hub"],
      "services": ["jupyter-sched"]}},
    {{"name": "test-driver", "scopes": ["admin:users", "admin:servers", "admin:server_state", "tokens", "list:users", "shares",
                                       "read:servers", "admin:groups"],
      "services": ["test-driver"]}},
]
"""


@dataclass
class Hub:
    """A running JupyterHub with real accounts (see module docstring); ``url`` is the proxy's.

    Attributes:
        base: a 0755 folder for everything (hub database, config, job directories).
        db_url: the central service's store (PostgreSQL).
        venv: the venv other accounts can run (tests/runas_env.py).
        admins: hub admin user names (they need no OS account unless they spawn a server).
        groups: hub groups = scheduler teams, ``{group: [user names]}``.
        page_max: the hub's ``api_page_max_limit`` (and default page size).
    """

    base: Path
    db_url: str
    venv: Path
    admins: tuple[str, ...]
    groups: dict[str, list[str]]
    gpus: int = 2
    page_max: int = 200
    service_args: tuple[str, ...] = ()
    service_env: dict[str, str] = field(default_factory=dict)
    """More environment of the central service (tests/hub/test_s21_hub_idle_kernel_shutdown.py: the fake NVML)."""
    spawner_class: str = "localprocess"
    """``c.JupyterHub.spawner_class`` (tests/hub/test_red16_r1_fence.py: the fenced local spawner)."""
    proxy_port: int = 0
    hub_port: int = 0
    service_port: int = 0
    driver_token: str = field(default_factory=lambda: secrets.token_hex(16))
    service_token: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen[bytes] | None = None
    service: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port}"

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def service_url(self) -> str:
        """The central service's public URL (through the proxy), ending in ``/``."""
        return f"{self.url}/services/{SERVICE}/"

    @property
    def jobs_dir(self) -> Path:
        return self.base / "jobs"

    def server_url(self, user: str) -> str:
        return f"{self.url}/user/{user}/"

    def start(self) -> None:
        """Write the config, start the hub and the central service; return when both answer.

        Raises:
            RuntimeError: the hub or the service did not come up (log tail included).
        """
        chp = chp_command()
        assert chp is not None
        self.base.chmod(0o755)
        # four distinct ports: each pick alone may return one another pick returned, nothing being bound yet
        # (run 2 of session 31: the proxy's API and the service drew the same port, the service could not start)
        self.proxy_port, self.service_port, self.hub_port, chp_api_port = _free_ports(4)
        user_config = self.base / "user-config"
        user_config.mkdir(parents=True, exist_ok=True)
        # user servers load only jupyter_sched (fast start on a busy CI machine) and report their
        # kernels every second (the default is 30 s)
        (user_config / "jupyter_server_config.json").write_text(json.dumps({
            "ServerApp": {"jpserver_extensions": {"jupyterlab": False, "jupyter_lsp": False, "notebook_shim": False,
                                                  "jupyter_server_terminals": False, "jupyter_sched": True}},
            "SchedApp": {"kernel_report_interval_s": 1.0, "activity_interval_s": 1.0}}))
        config = self.base / "jupyterhub_config.py"  # holds the service and driver tokens: root's only
        _write_private(config, self.config_text(chp, chp_api_port).encode())
        # jupyter_core migrates IPython 3 config into JUPYTER_CONFIG_DIR unless this marker exists; the
        # folder is shared and read-only for the accounts
        (user_config / "migrated").write_text("jupyter_sched hub test\n")
        subprocess.run(["chmod", "-R", "o+rX", str(user_config)], check=True)
        env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        log = _private_log(self.base / "hub.log", append=False)
        self.process = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(config)], cwd=self.base,
                                        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        # the service starts once the hub's own API answers: the hub meanwhile waits its 1 s for the service and
        # routes itself through the proxy (each start waited that out before the service's ~5-8 s start, session 41)
        self.wait_for(lambda: self.api("GET", "", direct=True).status_code == 200, 60, "the hub API")
        (self.base / "hub.sqlite").chmod(0o600)  # the hub's tokens and cookie secret: no job may read them
        self.start_service()
        self.wait_for(lambda: self.api("GET", "").status_code == 200, 60, "the hub API through its proxy")

    def config_text(self, chp: str, chp_api_port: int) -> str:
        """The hub's ``jupyterhub_config.py`` (Python source) for this hub's ports, tokens, users and groups."""
        settings = {
            "base": str(self.base), "proxy_port": self.proxy_port, "hub_port": self.hub_port,
            "chp_api_port": chp_api_port, "chp": chp, "admins": list(self.admins), "groups": self.groups,
            "python": self.python, "service_url": f"http://127.0.0.1:{self.service_port}",
            "driver_token": self.driver_token, "service_token": self.service_token, "page_max": self.page_max,
            "spawner_class": self.spawner_class,
        }
        return _CONFIG.format(settings=json.dumps(settings))

    # ---- the central service ----------------------------------------------------------------
    def start_service(self) -> None:
        """Start ``jupyter-sched serve`` as root, as the hub's external service; wait until it answers."""
        env = {"PATH": f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
               "JUPYTERHUB_API_URL": f"http://127.0.0.1:{self.hub_port}/hub/api",
               "JUPYTERHUB_API_TOKEN": self.service_token, "JUPYTERHUB_SERVICE_NAME": SERVICE,
               "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{self.service_port}",
               "JUPYTERHUB_SERVICE_PREFIX": f"/services/{SERVICE}/", "JUPYTERHUB_CLIENT_ID": f"service-{SERVICE}",
               "JUPYTERHUB_HOST": "", "JUPYTER_SCHED_DB_URL": self.db_url,
               "JUPYTER_DATA_DIR": str(self.base / "svc-data"), "JUPYTER_CONFIG_DIR": str(self.base / "svc-config"),
               "JUPYTER_RUNTIME_DIR": str(self.base / "svc-runtime"),
               **{k: v for k, v in os.environ.items() if k == ENV_REGISTRY},  # the session's: tests/conftest.py
               **self.service_env}
        own_inventory = any(arg.startswith("--SchedApp.inventory_source=") for arg in self.service_args)
        # a free port is one any account may bind: allowed here by the admin's word (verify25 V7), as a test hub
        command = [str(self.venv / "bin" / "jupyter-sched"), "serve", "--allow-root", "--allow-unprivileged-port",
                   *(() if own_inventory else ("--SchedApp.inventory_source=simulated",)),
                   f"--SchedApp.simulated_gpus={self.gpus}",
                   f"--SchedApp.log_dir={self.jobs_dir}", "--SchedApp.cycle_interval=1",
                   "--SchedApp.activity_interval_s=1", "--HubSchedApp.hub_poll_interval_s=1",
                   f"--HubSchedApp.job_python={self.python}", "--HubSchedApp.gpu_prices", "*=2.5",
                   *self.service_args]
        log = _private_log(self.base / "service.log", append=True)
        self.service = subprocess.Popen(command, cwd=self.base, env=env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self.wait_for(self._service_ready, 60, "the jupyter-sched service")

    def _service_ready(self) -> bool:
        """The service answers on its port, and the process listening there is ours: restarted after a
        ``kill -9``, it binds the port it had, which another process on a shared host may have taken in
        between (another run's harness picks free ports too); then whatever listens there answered this
        check and the test went on against it (issue 17 run, "port 53685 is not available").

        Raises:
            RuntimeError: the service exited (its log tail says why).
        """
        assert self.service is not None
        if self.service.poll() is not None:
            raise RuntimeError(f"the jupyter-sched service exited ({self.service.returncode}); log tails:\n"
                               f"{self.log_tail()}")
        answer = httpx.get(f"http://127.0.0.1:{self.service_port}/services/{SERVICE}/api/sched/config", timeout=5)
        if answer.status_code not in (200, 403):
            return False
        ours = [self.service.pid] + [child.pid for child in psutil.Process(self.service.pid).children(recursive=True)]
        return any(conn.status == psutil.CONN_LISTEN and conn.laddr.port == self.service_port
                   for pid in ours for conn in psutil.Process(pid).net_connections("tcp"))

    def restart_service(self, *more_args: str) -> None:
        """Stop the central service (SIGTERM, as an admin's restart) and start it again with ``more_args`` added to
        its arguments (kept for later starts): a test that needs a setting the module's other tests must not
        have, without a second hub (tests/hub/test_s21_hub_idle_kernel_shutdown.py: a short kernel-shutdown wait)."""
        assert self.service is not None
        self.service.send_signal(signal.SIGTERM)
        try:
            self.service.wait(30)
        except subprocess.TimeoutExpired:
            self.service.kill()
            self.service.wait(10)
        self.service = None
        self.service_args = (*self.service_args, *more_args)
        self.start_service()

    def kill_service(self) -> None:
        """``kill -9`` the central service (no cleanup runs; its jobs keep running)."""
        assert self.service is not None
        self.service.send_signal(signal.SIGKILL)
        self.service.wait(30)
        self.service = None

    # ---- helpers ----------------------------------------------------------------------------
    def wait_for(self, ready: Any, timeout_s: float, what: str) -> None:
        """Poll ``ready()`` every 0.25 s until true.

        Raises:
            RuntimeError: not ready within ``timeout_s`` seconds or the hub exited (log tails attached).
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
        raise RuntimeError(f"{what} did not become ready; log tails:\n{self.log_tail()}")

    def log_tail(self, chars: int = 6000) -> str:
        out = []
        for name in ("hub.log", "service.log"):
            path = self.base / name
            out.append(f"--- {name}\n" + (path.read_text(errors="replace")[-chars:] if path.exists() else "(none)"))
        return "\n".join(out)

    def api(self, method: str, path: str, body: Any = None, *, token: str | None = None,
            direct: bool = False) -> httpx.Response:
        """Call the hub REST API through the proxy (``direct``: at the hub's own port), as the admin test driver
        unless ``token`` is given."""
        base = f"http://127.0.0.1:{self.hub_port}" if direct else self.url
        return httpx.request(method, f"{base}/hub/api/{path}", json=body, timeout=30,
                             headers={"Authorization": f"token {token or self.driver_token}"})

    def token_for(self, user: str) -> str:
        """A new API token of ``user`` (with the user's own permissions)."""
        response = self.api("POST", f"users/{user}/tokens", {"note": "jupyter_sched hub test"})
        response.raise_for_status()
        return str(response.json()["token"])

    def server_model(self, user: str) -> dict[str, Any]:
        servers: dict[str, Any] = self.api("GET", f"users/{user}").json().get("servers", {})
        return dict(servers.get("", {}))

    def start_servers(self, *users: str) -> None:
        """Spawn the users' servers (all at once) and wait until each is ready.

        The spawn requests go out together: the hub answers each only when its server is up (or after its 10-s
        ``slow_spawn_timeout``), so one after the other the second server's ~6-s start began after the first's.
        """
        with ThreadPoolExecutor(max_workers=max(1, len(users))) as pool:
            answers = list(pool.map(lambda user: self.api("POST", f"users/{user}/server"), users))
        for user, response in zip(users, answers, strict=True):
            if response.status_code not in (201, 202, 400):
                raise RuntimeError(f"spawn of {user} failed: {response.status_code} {response.text}\n{self.log_tail()}")
        for user in users:
            self.wait_for(lambda u=user: bool(self.server_model(u).get("ready")), 90, f"{user}'s server")

    def stop_server(self, user: str) -> None:
        """Stop ``user``'s server and wait until the hub reports it gone."""
        response = self.api("DELETE", f"users/{user}/server")
        if response.status_code not in (202, 204):
            raise RuntimeError(f"stop of {user} failed: {response.status_code} {response.text}")
        self.wait_for(lambda: not self.server_model(user), 60, f"{user}'s server to stop")

    def kill_server(self, user: str) -> None:
        """SIGKILL ``user``'s server process (no cleanup runs); wait until the hub notices."""
        os.kill(int(self.server_model(user)["state"]["pid"]), signal.SIGKILL)
        self.wait_for(lambda: not self.server_model(user), 60, f"the hub to notice that {user}'s server died")

    def stop(self) -> None:
        """End the service, the hub and all they started — the proxy, user servers, kernels, jobs — at once: each
        is frozen (SIGSTOP, so none starts another), then all are SIGKILLed. A module's hub goes with its test
        folder and accounts, and no test reads what a graceful stop writes; it waited the service's stop, then the
        hub stopping each user server in turn (2-6 s a hub, session 41). :meth:`_stop_hub` is the graceful stop
        a test may ask for. Found: the two processes' descendants and any process whose command line names this
        hub's folder (jobs), with theirs."""
        roots = [p.pid for p in (self.service, self.process) if p is not None and p.poll() is None]
        frozen: set[int] = set()
        while fresh := set(_pids_mentioning(str(self.base), roots)) - frozen:
            for pid in fresh:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGSTOP)
            frozen |= fresh
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for process in (self.service, self.process):
            if process is not None:
                process.wait(30)
        # a SIGKILL is delivered when the process next runs: on a loaded machine a frozen one can still be there a
        # moment later (the whole run of session 41: one of them, right after stop() returned)
        deadline = time.monotonic() + 30
        for pid in frozen:
            while time.monotonic() < deadline and _still_running(pid):
                time.sleep(0.01)
        self.service = self.process = None

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


def _still_running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has: only its parent's wait is left)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _pids_mentioning(text: str, roots: list[int] | tuple[int, ...] = ()) -> list[int]:
    """Pids (not this process) whose command line contains ``text``, the ``roots``, and their descendants."""
    parents: dict[int, int] = {}
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            if int(entry.name) in roots or text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                    errors="replace"):
                found.add(int(entry.name))
    grew = True
    while grew:
        children = {pid for pid, ppid in parents.items() if ppid in found} - found
        grew = bool(children)
        found |= children
    return sorted(found)


def _write_private(path: Path, data: bytes) -> None:
    """Write ``path`` readable by root only (0600), whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with open(fd, "wb") as fh:
        fh.write(data)


def _private_log(path: Path, *, append: bool) -> Any:
    """A log file only root can read: the hub's and the service's logs may carry tokens in URLs."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o600)
    os.fchmod(fd, 0o600)
    return open(fd, "ab" if append else "wb")


def amy_and_eve() -> Iterator[dict[str, Any]]:
    """Two real OS accounts, ``{"amy": Account, "eve": Account}``, for a module (skips naming why
    where the hub cannot run) — the body of the new-user hub modules' ``users`` fixtures."""
    reason = skip_reason()
    if reason:
        import pytest

        pytest.skip(reason)
    with accounts.os_accounts(2) as (amy, eve):
        yield {"amy": amy, "eve": eve}


def amy_and_eve_hub(pg_server: Any, users: dict[str, Any], name: str, **hub_args: Any) -> Iterator[Hub]:
    """A started hub on its own PostgreSQL database ``hub_NAME``: amy in group vision, eve in nlp,
    carol its admin, all three created — the body of the new-user hub modules' ``hub`` fixtures
    (``hub_args``: more :class:`Hub` fields, e.g. ``spawner_class``)."""
    from tests.runas_env import runas_venv

    names = [account.name for account in users.values()]
    with accounts.shared_dir(f"jsched-{name}-") as base:
        running = Hub(base=base, db_url=pg_server.create_database(f"hub_{name}"), venv=runas_venv(),
                      admins=("carol",), groups={"vision": [users["amy"].name], "nlp": [users["eve"].name]},
                      **hub_args)
        try:
            running.start()
            created = running.api("POST", "users", {"usernames": [*names, "carol"]})
            assert created.status_code in (201, 409), created.text
            yield running
        finally:
            running.stop()
