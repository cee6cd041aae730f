"""verify25 V7: red team 25's port squat (R5) was closed for user servers only. A call THROUGH THE HUB'S PROXY
(``<hub>/services/jupyter-sched/…``: the CLI's, the Python client's and the magics' usual
``JUPYTER_SCHED_HUB_URL``) still reached whoever held the service's port while it was down, with the user's
whole hub token (eve's, twice, in the verifier's run). Fixed as a kind:

1. every client of ours calling a hub's service sends a token the hub minted scoped to that service only
   (:mod:`jupyter_sched.client.hub_token`; kept in the runtime dir, minted again when the hub drops it; a hub
   that gives none leaves the user's own token, said once as a WARNING) — so a captured token cannot open the
   user's server (real hub: ``/user/<u>/api/contents`` with it → 403);
2. ``jupyter-sched serve`` (hub mode, local executor) does not start on a port any account may bind unless
   the admin says so (``c.HubSchedApp.allow_unprivileged_port`` / ``--allow-unprivileged-port``); the test
   hubs say so (tests/hub/hub_harness.py).

Real parts: a real JupyterHub with CHP (tests/hub/hub_harness.py), its service killed and its port taken by
the test's listener (as in tests/hub/test_red25_r5_squat.py); the installed CLI; the installed ``serve``; a
hub API double on a real socket for the client's own rules.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from jupyter_sched.client import connect
from jupyter_sched.client.discovery import Connection
from jupyter_sched.client.hub_token import CACHE_FILE, HubTokenError, scoped
from jupyter_sched.errors import SchedError
from jupyter_sched.hub.spawn_token import SERVICE_TOKEN_ENV
from tests.accounts import Account

from .hub_harness import Hub, _free_port, amy_and_eve, amy_and_eve_hub
from .test_hub_refusals import refusal
from .test_red15_serve_warning import serve_to_its_warnings
from .test_red25_r5_squat import _capture_one_token, capture_listener, capture_token

CLI = str(Path(sys.executable).parent / "jupyter-sched")
FULL = "amys-whole-hub-token"
SCOPE = "access:services!service=jupyter-sched"


# ---- 1. the clients send a scoped token (hub API double) ---------------------------------------------------
class _Hub(BaseHTTPRequestHandler):
    """The hub's REST API (``/hub/api``) and the scheduler service behind the same proxy (``/services/…``)."""

    calls: ClassVar[list[tuple[str, str, str]]] = []
    minted: ClassVar[dict[str, list[str]]] = {}  # token -> its scopes
    mint_status: ClassVar[int] = 201
    made: ClassVar[int] = 0

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _token(self) -> str:
        return self.headers.get("Authorization", "").removeprefix("token ")

    def do_GET(self) -> None:
        token = self._token()
        _Hub.calls.append(("GET", self.path, token))
        if self.path == "/hub/api/user":
            if token == FULL:
                self._answer(200, {"name": "amy", "scopes": ["access:servers!server=amy/", "self", SCOPE]})
            elif token in _Hub.minted:
                self._answer(200, {"name": "amy", "scopes": _Hub.minted[token]})
            else:
                self._answer(403, {"status": 403, "message": "Forbidden"})
        elif self.path.startswith("/services/jupyter-sched/api/sched/"):
            ok = token == FULL or SCOPE in _Hub.minted.get(token, [])
            self._answer(200 if ok else 403, {"user": "amy"} if ok else {"error": {"code": "forbidden"}})
        else:
            self._answer(404, {})

    def do_POST(self) -> None:
        token = self._token()
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        _Hub.calls.append(("POST", self.path, token))
        if self.path != "/hub/api/users/amy/tokens" or token != FULL or _Hub.mint_status != 201:
            self._answer(_Hub.mint_status if token == FULL else 403, {"status": 403})
            return
        _Hub.made += 1
        new = f"scoped-{_Hub.made}"
        _Hub.minted[new] = [*body["scopes"], "read:users:name!user=amy", "read:users:groups!user=amy"]
        self._answer(201, {"token": new, "id": f"a{_Hub.made}", "expires_at": "2099-01-01T00:00:00Z",
                           "scopes": _Hub.minted[new]})


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    """The double's service URL; the environment of a shell with ``JUPYTER_SCHED_HUB_URL`` and ``JUPYTER_SCHED_TOKEN``."""
    _Hub.calls, _Hub.minted, _Hub.mint_status, _Hub.made = [], {}, 201, 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/services/jupyter-sched/"
    for name in ("JUPYTER_SCHED_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL", "JUPYTERHUB_SERVICE_URL",
                 "JUPYTER_SCHED_KERNEL_ID", "JUPYTER_SCHED_SERVICE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_SCHED_HUB_URL", url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", FULL)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _sent_to_service() -> list[str]:
    return [token for method, path, token in _Hub.calls if path.startswith("/services/")]


def test_verify25_v7_the_client_calls_the_hub_service_with_a_token_scoped_to_it(fake_hub: str, tmp_path: Path) -> None:
    with connect() as client:
        client.config()
    assert _sent_to_service() == ["scoped-1"], _Hub.calls  # never the whole token to the service
    assert _Hub.minted["scoped-1"][0] == SCOPE
    assert [c[:2] for c in _Hub.calls[:2]] == [("GET", "/hub/api/user"), ("POST", "/hub/api/users/amy/tokens")]
    kept = tmp_path / "runtime" / CACHE_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert FULL not in kept.read_text() and "scoped-1" in kept.read_text()

    # the next process (a CLI command each) takes the kept one: no new token at the hub
    _Hub.calls.clear()
    with connect() as client:
        client.config()
    assert _Hub.calls == [("GET", "/services/jupyter-sched/api/sched/config", "scoped-1")], _Hub.calls

    # the hub dropped it (deleted on the token page): the refused call is sent again with a new one
    del _Hub.minted["scoped-1"]
    _Hub.calls.clear()
    with connect() as client:
        client.config()
    assert _sent_to_service() == ["scoped-1", "scoped-2"], _Hub.calls
    assert FULL not in _sent_to_service()


def test_verify25_v7_the_cli_sends_the_scoped_token_too(fake_hub: str, tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    done = subprocess.run([CLI, "status"], capture_output=True, text=True, timeout=120,
                          env={**clean, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
                               "JUPYTER_SCHED_HUB_URL": fake_hub, "JUPYTER_SCHED_TOKEN": FULL,
                               "JUPYTER_RUNTIME_DIR": str(tmp_path / "cli-runtime")})
    assert _sent_to_service() and set(_sent_to_service()) == {"scoped-1"}, (_Hub.calls, done.stderr)


def test_verify25_v7_a_hub_that_gives_none_gets_nothing_sent(fake_hub: str) -> None:
    """verify26 V3: no fallback to the caller's own token (it opens the user's server)."""
    _Hub.mint_status = 403
    for _ in range(2):
        with pytest.raises(HubTokenError) as refused:
            connect()
        assert "your own hub token opens your Jupyter server too" in str(refused.value), refused.value
        assert "JUPYTER_SCHED_SERVICE_TOKEN" in str(refused.value), refused.value
    assert _sent_to_service() == [], _Hub.calls


def test_verify25_v7_a_token_already_scoped_to_the_service_is_sent_as_it_is(fake_hub: str) -> None:
    _Hub.minted["narrow"] = [SCOPE, "read:users:name!user=amy"]
    connection = scoped(Connection(url=fake_hub, token="narrow", source="hub-service"), {})
    assert connection.token == "narrow" and connection.hub_token == ""
    assert not [c for c in _Hub.calls if c[0] == "POST"], _Hub.calls
    # any other URL (a user's own server, a Jupyter server) is not the hub's service: nothing asked
    _Hub.calls.clear()
    other = Connection(url="http://127.0.0.1:8888/user/amy/", token=FULL, source="hub-user")
    assert scoped(other, {}) == other and _Hub.calls == []


# ---- 2. serve refuses a port any account may bind ----------------------------------------------------------
@pytest.mark.skipif(os.geteuid() != 0, reason="hub mode with the local executor runs as root")
def test_verify25_v7_serve_does_not_start_on_a_port_any_account_may_bind_unless_allowed(tmp_path: Path) -> None:
    port = _free_port()
    from tests.accounts import shared_dir

    from .test_hub_refusals import serve

    with shared_dir() as folder:
        code, log = serve(folder, "--ip=127.0.0.1", f"--port={port}", allow_port=False)
    assert code != 0, log[-2000:]
    said = refusal(log)
    assert f"c.HubSchedApp.allow_unprivileged_port: not starting on 127.0.0.1:{port}" in said, said
    assert "each with its user's token" in said and "port below 1024" in said, said
    assert "unix socket" in said and "internal_ssl" in said and "--allow-unprivileged-port" in said, said
    # allowed by the admin: it goes on (to the job interpreter the test refuses), warning at start
    log = serve_to_its_warnings(tmp_path, "--ip=127.0.0.1", f"--port={port}")
    assert "allow_unprivileged_port: not starting" not in log
    assert "a port any local account may take while the service is down" in log, log[-2000:]


# ---- the real hub: its service killed, the port taken ------------------------------------------------------
@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "verify25v7")


class _Capture:
    """The first token that reaches a listener on the service's port THROUGH THE PROXY (an X-Forwarded-For
    header: CHP's; amy's own server's direct kernel reports are red team 25's test), caught in a thread."""

    def __init__(self, port: int) -> None:
        self.token: str | None = None
        listener = capture_listener(port)  # bound before the call is made
        self.thread = threading.Thread(target=self._run, args=(listener,), daemon=True)
        self.thread.start()

    def _run(self, listener: socket.socket) -> None:
        self.token = capture_token(listener, 90, through_proxy=True)


def _opens_the_server(hub: Hub, user: str, token: str) -> int:
    return httpx.get(f"{hub.url}/user/{user}/api/contents", headers={"Authorization": f"token {token}"},
                     timeout=30, follow_redirects=False).status_code


@pytest.mark.slow
def test_verify25_v7_what_the_cli_and_client_send_through_the_proxy_cannot_open_the_users_server(
        hub: Hub, users: dict[str, Account], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    amy = users["amy"].name
    hub.start_servers(amy)
    whole = hub.token_for(amy)  # what the hub's token page gives: all of amy's permissions
    assert _opens_the_server(hub, amy, whole) == 200  # not vacuous: this one opens her server
    hub.kill_service()  # a crash: whoever takes the port gets what the proxy forwards

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    capture = _Capture(hub.service_port)
    subprocess.run([CLI, "jobs"], capture_output=True, text=True, timeout=120,
                   env={**clean, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
                        "JUPYTER_SCHED_HUB_URL": hub.service_url, "JUPYTER_SCHED_TOKEN": whole,
                        "JUPYTER_RUNTIME_DIR": str(tmp_path / "cli")})
    capture.thread.join(100)
    assert capture.token, hub.log_tail()
    assert capture.token != whole
    assert _opens_the_server(hub, amy, capture.token) == 403
    scopes = hub.api("GET", "user", token=capture.token).json()["scopes"]
    assert [s for s in scopes if s.startswith(("access:", "tokens", "admin", "servers"))] == [SCOPE], scopes

    # the Python client (and the magics, which use it) in another shell
    for name in ("JUPYTER_SCHED_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL", "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_SCHED_HUB_URL", hub.service_url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", whole)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "client"))
    capture = _Capture(hub.service_port)
    with connect(timeout_s=30) as client, pytest.raises(SchedError):  # the squatter's 503 (then the proxy's)
        client.config()
    capture.thread.join(100)
    assert capture.token and capture.token != whole
    assert _opens_the_server(hub, amy, capture.token) == 403


@pytest.mark.slow
def test_red25_r5_what_a_users_server_sends_the_scheduler_cannot_open_that_server(
        hub: Hub, users: dict[str, Account]) -> None:
    """Red team 25, R5's real-hub test (tests/hub/test_red25_r5_squat.py says the rest), on this module's hub: the
    test above left the service killed, so it starts again here first."""
    amy = users["amy"].name
    if hub.service is None:
        hub.start_service()
    hub.start_servers(amy)
    mine = hub.token_for(amy)
    # the scheduler takes the scoped token: amy's requests through her server are answered as ever
    answer = httpx.get(f"{hub.server_url(amy)}api/sched/jobs", headers={"Authorization": f"token {mine}"}, timeout=30)
    assert answer.status_code == 200, answer.text

    hub.kill_service()  # a crash: whoever takes the port gets what amy's server sends (kernel reports, 1 s)
    captured = _capture_one_token(hub.service_port, timeout_s=30)
    assert captured, hub.log_tail()

    opened = httpx.get(f"{hub.url}/user/{amy}/api/contents", headers={"Authorization": f"token {captured}"},
                       timeout=30, follow_redirects=False)
    assert opened.status_code == 403, (opened.status_code, opened.text[:300])
    kernels = httpx.get(f"{hub.url}/user/{amy}/api/kernels", headers={"Authorization": f"token {captured}"},
                        timeout=30, follow_redirects=False)
    assert kernels.status_code == 403, (kernels.status_code, kernels.text[:300])
    model = hub.api("GET", "user", token=captured).json()
    assert model["name"] == amy
    assert [s for s in model["scopes"] if s.startswith(("access:", "tokens", "admin", "servers"))] == \
        ["access:services!service=jupyter-sched"], model["scopes"]


def _server_environ(user: str) -> dict[str, str]:
    """The environment of ``user``'s single-user server process (what a terminal of it inherits)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "environ").read_bytes()
        except OSError:
            continue
        env = dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)
        if env.get("JUPYTERHUB_USER") == user and env.get("JUPYTERHUB_API_TOKEN") and "JUPYTERHUB_SERVICE_URL" in env:
            return env
    raise AssertionError(f"no server process of {user}")


@pytest.mark.slow
def test_verify26_v3_a_server_token_mints_nothing_and_the_scheduler_still_works(
        hub: Hub, users: dict[str, Account]) -> None:
    """verify26 V3 on a real hub (tests/hub/test_verify26_v3_spawn_token.py says the rest), on this module's hub: the
    test above left the service killed, so it starts again here first."""
    amy = users["amy"].name
    if hub.service is None:
        hub.start_service()
    hub.start_servers(amy)
    env = _server_environ(amy)
    own = env["JUPYTERHUB_API_TOKEN"]
    # the server's own token may mint no token any more (201 before: the user's whole scopes, no expiry)
    minted = hub.api("POST", f"users/{amy}/tokens", {}, token=own)
    assert minted.status_code == 403, (minted.status_code, minted.text[:300])
    narrowed = hub.api("POST", f"users/{amy}/tokens", {"scopes": [SCOPE]}, token=own)
    assert narrowed.status_code == 403, (narrowed.status_code, narrowed.text[:300])
    # the hub gave the server a scheduler-only token at spawn, with an expiry
    spawned = env[SERVICE_TOKEN_ENV]
    model = hub.api("GET", "user", token=spawned).json()
    assert model["name"] == amy
    assert [s for s in model["scopes"] if s.startswith(("access:", "tokens", "admin", "servers"))] == [SCOPE], model
    tokens = hub.api("GET", f"users/{amy}/tokens").json()["api_tokens"]
    ours = [t for t in tokens if t.get("note") == "jupyter-sched: server (default)"]
    assert len(ours) == 1 and ours[0]["expires_at"], tokens
    # and the scheduler works for amy: through her server (the forwarder) and from her terminal (the CLI)
    mine = hub.token_for(amy)
    answer = httpx.get(f"{hub.server_url(amy)}api/sched/jobs", headers={"Authorization": f"token {mine}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    done = subprocess.run([str(hub.venv / "bin" / "jupyter-sched"), "status"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert amy in done.stdout, done.stdout
