"""A real ``jupyter server`` with jupyter_sched in a subprocess, for chaos, load and fuzz tests.

``EmbeddedServer.start(workdir, db_url=...)`` runs ``python -m jupyter_server`` on a random
loopback port with its own Jupyter data/runtime/config dirs under ``workdir``, a simulated
inventory and the local executor; :meth:`EmbeddedServer.kill` sends SIGKILL to the server only
(jobs run in their own process groups and survive it, as after a real crash);
:meth:`EmbeddedServer.restart` starts a new server on the same store.

Identity: ``users`` maps tokens to user names through a real ``IdentityProvider`` subclass
written into the server's config file (hub-style per-user tokens: the double sits at the
authentication boundary). Without ``users`` the server uses jupyter_server's own token auth, so
the one token holder is the server owner (an admin), as in a personal server.

Shared by ``tests/reliability`` and ``benchmarks/load_bench.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
OWNER_TOKEN = "reliability-owner-token"
START_TIMEOUT_S = 60.0

_CONFIG = """\
# Written by tests/reliability/harness.py for one throw-away server.
import json
from jupyter_server.auth.identity import IdentityProvider, User

USERS = json.loads({users!r})


class TokenPerUser(IdentityProvider):
    \"\"\"Each token names one user (as a hub's per-user tokens do).\"\"\"

    async def get_user_token(self, handler):
        name = USERS.get(self.get_token(handler) or "")
        return User(username=name, name=name) if name else None


# Only jupyter_sched: the other server extensions of the venv cost seconds per (re)start.
c.ServerApp.jpserver_extensions = {{"jupyter_sched": True, "jupyterlab": False, "jupyter_lsp": False,
                                    "jupyter_server_terminals": False, "notebook_shim": False}}
c.ServerApp.reraise_server_extension_failures = True
c.IdentityProvider.token = {token!r}
if USERS:
    c.ServerApp.identity_provider_class = TokenPerUser
for key, value in json.loads({sched!r}).items():
    setattr(c.SchedApp, key, value)
"""


def free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


@dataclass
class EmbeddedServer:
    """One jupyter server process (see module docstring).

    Attributes:
        workdir: tmp dir holding config, data, runtime dirs, job logs and the server log.
        db_url: the store (SQLite file or PostgreSQL database), kept across restarts.
        sched: extra ``c.SchedApp`` settings.
        users: token → user name (empty: builtin token auth, one owner).
        name: tells servers sharing one workdir apart (their logs and dirs).
    """

    workdir: Path
    db_url: str
    sched: dict[str, Any] = field(default_factory=dict)
    users: dict[str, str] = field(default_factory=dict)
    name: str = "server"
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    owner_token: str = OWNER_TOKEN
    """The server's own token (builtin auth): set another before :meth:`restart` to restart it as a
    plain ``jupyter lab`` does, with a new token in its runtime file."""

    @classmethod
    def start(cls, workdir: Path, *, db_url: str | None = None, users: Mapping[str, str] | None = None,
              name: str = "server", **sched: Any) -> EmbeddedServer:
        """Write the config and start the server; return once ``GET api/sched/config`` answers 200.

        Raises:
            RuntimeError: the server did not come up within 60 s (its log tail is in the message).
        """
        workdir.mkdir(parents=True, exist_ok=True)
        settings = {"inventory_source": "simulated", "simulated_gpus": 4, "cycle_interval": 0.2,
                    "log_dir": str(workdir / "jobs"), **sched}
        server = cls(workdir=workdir, db_url=db_url or f"sqlite:///{workdir / 'sched.sqlite'}",
                     sched=settings, users=dict(users or {}), name=name)
        server._launch()
        return server

    @property
    def token(self) -> str:
        """The server token (the owner's; with ``users``, whoever it maps to)."""
        return self.owner_token

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/``."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def api(self) -> str:
        """Base of the REST API: ``http://127.0.0.1:PORT/api/sched/``."""
        return self.url + "api/sched/"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def _launch(self, port: int = 0) -> None:
        """Start the server process (on ``port``; 0: a free one)."""
        conf_dir = self.workdir / f"{self.name}-config"
        conf_dir.mkdir(exist_ok=True)
        config = conf_dir / "jupyter_server_config.py"
        config.write_text(_CONFIG.format(users=json.dumps(self.users), token=self.owner_token,
                                         sched=json.dumps({"db_url": self.db_url, **self.sched})))
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(conf_dir), "JUPYTER_DATA_DIR": str(self.workdir / "data"),
               "JUPYTER_RUNTIME_DIR": str(self.workdir / f"{self.name}-runtime"), "JUPYTER_PLATFORM_DIRS": "1",
               "PYTHONPATH": str(ROOT)}
        env.pop("JUPYTER_SCHED_HUB_URL", None)
        for _ in range(3):
            self.port = port or free_port()
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "jupyter_server", f"--config={config}", "--no-browser", "--allow-root",
                     "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
                     f"--ServerApp.root_dir={self.workdir}", "--ServerApp.open_browser=False"],
                    stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.workdir)
            self.starts += 1
            if self._wait_ready():
                return
            self.kill()
            if "already in use" not in self.log_tail(2000):  # only a port race is worth another try
                break
        raise RuntimeError(f"jupyter server did not start; log tail:\n{self.log_tail()}")

    def _wait_ready(self) -> bool:
        """Poll ``GET config`` every 50 ms until 200 (True) or the process ended or 60 s passed (False).

        One client for the whole wait (s41 speed): a bare ``httpx.get`` builds a client and its TLS context
        per call, ~25 ms of CPU each — seconds of this process's CPU per start, taken from the server it waits for.
        """
        deadline = time.monotonic() + START_TIMEOUT_S
        assert self.proc is not None
        with httpx.Client(timeout=2, headers=self.headers(self.token)) as probe:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    return False
                with contextlib.suppress(httpx.HTTPError):
                    if probe.get(self.api + "config").status_code == 200:
                        return True
                time.sleep(0.05)
        return False

    def headers(self, token: str | None = OWNER_TOKEN) -> dict[str, str]:
        """Request headers carrying ``token`` (None: no credentials)."""
        return {"Authorization": f"token {token}"} if token else {}

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """SIGKILL the server process (not its jobs) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def cli(self, *argv: str) -> tuple[int, str, str]:
        """``jupyter-sched ARGV`` in-process against this server, the token in a file (a ``--token``
        would be noted on stderr, which tests compare): (exit code, stdout, stderr)."""
        import io

        from jupyter_sched.cli.main import main
        token = Path(self.workdir) / "cli-token"
        token.write_text(self.token, encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        code = main(["--url", self.url, "--token-file", str(token), *argv], out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    def terminate(self) -> None:
        """Stop the server cleanly (SIGTERM; SIGKILL after 20 s)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None

    def restart(self, *, same_port: bool = False) -> None:
        """Start a new server process on the same store and config (after :meth:`kill`); ``same_port``:
        on the port it had, as a restart behind a fixed URL is (its clients' next request finds it)."""
        port = self.port if same_port else 0
        self.kill()
        self._launch(port)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def rss_bytes(self) -> int:
        """Resident memory of the server process, bytes."""
        return int(psutil.Process(self.pid).memory_info().rss)

    def client(self, token: str | None = OWNER_TOKEN, timeout_s: float = 30.0) -> httpx.Client:
        """An httpx client on the API base with ``token``."""
        return httpx.Client(base_url=self.api, headers=self.headers(token), timeout=timeout_s)

    def audit(self, **params: Any) -> list[dict[str, Any]]:
        """The audit log (owner token: admin in the builtin-auth mode)."""
        with self.client() as c:
            r = c.get("audit", params={"limit": 10000, **params})
            r.raise_for_status()
            rows: list[dict[str, Any]] = r.json()
            return rows

    def leads(self) -> int:
        """How many times an engine on this store took the leader lease (audit ``leader_acquired``)."""
        return len(self.audit(action="leader_acquired"))


def wait_until(predicate: Any, what: str, *, timeout_s: float = 60.0, poll_s: float = 0.2) -> Any:
    """Poll ``predicate()`` until truthy (returned); raise AssertionError naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what} (last: {last!r})")


def kill_strays(marker: Path) -> int:
    """SIGKILL every process (group) whose command line names ``marker`` (jobs left by a test). Returns the count."""
    killed = 0
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if proc.pid == os.getpid() or not any(str(marker) in part for part in cmdline):
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError, psutil.Error):
            group = os.getpgid(proc.pid)
            if group == os.getpgrp():
                os.kill(proc.pid, signal.SIGKILL)
            else:
                os.killpg(group, signal.SIGKILL)
            killed += 1
    return killed


@contextlib.contextmanager
def no_strays(marker: Path) -> Iterator[None]:
    """Kill what a test started under ``marker`` when the block ends, pass or fail."""
    try:
        yield
    finally:
        kill_strays(marker)


def overlapping_allocations(intervals: list[Any]) -> list[str]:
    """Moments when one GPU was held above 1 GPU in total, from usage intervals.

    Args:
        intervals: :class:`jupyter_sched.accounting.UsageInterval` rows (share in GPUs; open ones
            end "now").

    Returns:
        One sentence per GPU whose summed share exceeded 1.0 at some instant (empty: never).
    """
    problems = []
    by_gpu: dict[str, list[Any]] = {}
    for iv in intervals:
        by_gpu.setdefault(iv.gpu_uuid, []).append(iv)
    for uuid, rows in sorted(by_gpu.items()):
        edges = []
        for iv in rows:
            edges.append((iv.started_at.timestamp(), 1, iv.share, iv.job_id))
            if iv.ended_at is not None:
                edges.append((iv.ended_at.timestamp(), 0, iv.share, iv.job_id))
        held, holders = 0.0, set()
        for _, opening, share, job_id in sorted(edges):  # closes sort before opens at one instant
            held += share if opening else -share
            (holders.add if opening else holders.discard)(job_id)
            if held > 1.0 + 1e-9:
                problems.append(f"GPU {uuid} held {held:.3f} GPUs at once by {sorted(holders)}")
                break
    return problems
