"""Red team 25, R5: while ``jupyter-sched serve`` was down, any local account bound its unprivileged loopback
port and received every running user server's requests — each with that server's hub token, which opened
the user's Jupyter server. Both faults are fixed:

1. least privilege (:mod:`jupyter_sched.hub.narrow_token`): a user's server asks the hub at start for a
   token of its owner whose only scope is ``access:services!service=jupyter-sched`` and sends that one, so
   what anyone captures cannot open the server (real hub: ``GET /user/<u>/api/contents`` with it → 403);
2. an address no user can take (:mod:`jupyter_sched.hub.listener`): before each request to a loopback
   address the forwarder checks who listens there (/proc/net/tcp's uid) and sends nothing to another
   account's socket, said once; plain http off the host needs the admin's word; ``jupyter-sched serve``
   warns at start when it listens on a port any account may bind.

Real parts: a real OS account (tests/accounts.py) runs the squatter, a socket server that records what it
receives; the "service" is a root process listening on the same port, killed first; the user server's
:class:`~jupyter_sched.hub.forward.ForwardingService` runs its kernel reports and activity polls against
the real network, as in a user's server; ``serve`` is the installed command (tests/hub/test_hub_refusals.py);
the real-hub test (a JupyterHub, tests/hub/hub_harness.py, its service killed and its port taken) runs in
tests/hub/test_verify25_v7_proxy_squat.py, on that module's hub (session 41: this module's own hub, ~20 s a run,
served that one test).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from jupyter_sched.hub.forward import ForwardingService, HubServiceUnreachable
from jupyter_sched.hub.listener import ListenerRefused, listener_uids, refusal
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason

from .hub_harness import _free_port
from .test_red15_serve_warning import serve_to_its_warnings

TOKEN = "amys-server-token-r25"

# records every connection and the bytes it brought to a file (one line per connection, hex)
_LISTENER = textwrap.dedent("""
    import socket, sys
    port, out = int(sys.argv[1]), sys.argv[2]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    print("listening", flush=True)
    while True:
        conn, _ = server.accept()
        conn.settimeout(2)
        data = b""
        try:
            while b"\\r\\n\\r\\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 2\\r\\n"
                         b"Connection: close\\r\\n\\r\\n{}")
        except OSError:
            pass
        conn.close()
        with open(out, "a") as f:
            f.write(data.hex() + "\\n")
""")


def _listen(folder: Path, port: int, out: Path, uid: int | None = None, gid: int | None = None) -> subprocess.Popen[str]:
    script = folder / "listener.py"
    script.write_text(_LISTENER)
    script.chmod(0o644)
    python = account_python() if uid is not None else sys.executable
    proc = subprocess.Popen([str(python), str(script), str(port), str(out)], stdout=subprocess.PIPE, text=True,
                            user=uid, group=gid, extra_groups=[] if uid is not None else None, cwd=folder)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def _received(out: Path) -> list[bytes]:
    return [bytes.fromhex(line) for line in out.read_text().splitlines()] if out.exists() else []


async def _run(service: ForwardingService, seconds: float) -> None:
    await service.start()
    atexit.unregister(service._release_at_exit)
    await asyncio.sleep(seconds)
    service._stopped.set()  # the loops end; stop()'s lease release would be one more refused request
    for task in (service._task, service._report_task):
        if task is not None:
            task.cancel()
    await service.link.stop()


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_red25_r5_forwarder_sends_nothing_to_a_port_another_account_took(caplog: pytest.LogCaptureFixture) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/services/jupyter-sched/"
    with os_accounts(1, prefix="r25s") as (mal,), shared_dir() as folder:
        folder.chmod(0o1777)
        # the service (root) answers; the server's reports reach it with the token (not vacuous)
        real_out = folder / "service.txt"
        service_proc = _listen(folder, port, real_out)
        first = ForwardingService(url, TOKEN, kernel_ids=lambda: ["k1"], poll_interval_s=0.2,
                                  kernel_report_interval_s=0.2)
        asyncio.run(_run(first, 1.0))
        assert any(TOKEN.encode() in data for data in _received(real_out)), _received(real_out)
        assert listener_uids("127.0.0.1", port) == [0]

        # the service crashes; mal takes its port at once
        _stop(service_proc)
        squat_out = folder / "squat.txt"
        squatter = _listen(folder, port, squat_out, uid=mal.uid, gid=mal.gid)
        try:
            assert listener_uids("127.0.0.1", port) == [mal.uid]
            caplog.set_level(logging.WARNING, logger="jupyter_sched.hub.forward")
            server = ForwardingService(url, TOKEN, kernel_ids=lambda: ["k1"], poll_interval_s=0.2,
                                       kernel_report_interval_s=0.2)
            asyncio.run(_run(server, 2.0))  # ten kernel reports and activity polls

            async def a_user_request() -> None:
                with pytest.raises(HubServiceUnreachable) as refused:
                    await server.forward("GET", "jobs", "", None, None)
                assert "not the scheduler service" in refused.value.message, refused.value.message
                with pytest.raises(ListenerRefused):
                    await server.report_kernels()
                await server.client.aclose()

            asyncio.run(a_user_request())
            server._release_at_exit()  # the exit hook too
        finally:
            _stop(squatter)
        assert _received(squat_out) == []  # not one connection, so no token
        said = [r.getMessage() for r in caplog.records if "held by uid" in r.getMessage()]
        assert len(said) == 1, said  # once, not once per report
        assert (f"the scheduler's address 127.0.0.1:{port} is held by uid {mal.uid}, not the service: "
                "not sending the token") in said[0], said[0]
        assert "c.SchedApp.hub_service_uids" in said[0]


def test_red25_r5_an_admitted_uid_and_the_servers_own_account_may_hold_the_address(tmp_path: Path) -> None:
    """``c.SchedApp.hub_service_uids`` admits the service's own account; the server's own uid (it has the
    token anyway) and root always; listeners on a wildcard address count too (/proc/net format)."""
    port = 10101
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    loopback = "0100007F" if sys.byteorder == "little" else "7F000001"
    (tmp_path / "tcp").write_text(header + f"   0: {loopback}:{port:04X} 00000000:0000 0A 00000000:00000000 "
                                            "00:00000000 00000000  1003        0 1 1 0 100 0 0 10 0\n")
    (tmp_path / "tcp6").write_text(header + f"   0: {'0' * 32}:{port:04X} {'0' * 32}:0000 0A 00000000:00000000 "
                                             "00:00000000 00000000  1004        0 2 1 0 100 0 0 10 0\n")
    url = httpx.URL(f"http://localhost:{port}/services/jupyter-sched/")
    assert listener_uids("localhost", port, proc_net=tmp_path) == [1003, 1004]
    said = refusal(url, allowed_uids=(), network_trusted=False, proc_net=tmp_path)
    assert said is not None and f"localhost:{port} is held by uid 1003" in said, said
    said = refusal(url, allowed_uids=(1003,), network_trusted=False, proc_net=tmp_path)
    assert said is not None and "uid 1004" in said, said  # [::] takes IPv4 connections too
    assert refusal(url, allowed_uids=(1003, 1004), network_trusted=False, proc_net=tmp_path) is None
    if os.geteuid() in (1003, 1004):
        return
    other = httpx.URL(f"http://127.0.0.1:{port + 1}/")  # another port: nobody holds it
    assert refusal(other, allowed_uids=(), network_trusted=False, proc_net=tmp_path) is None


def test_red25_r5_plain_http_off_the_host_needs_the_admins_word() -> None:
    url = httpx.URL("http://hub.example.org:8000/services/jupyter-sched/")
    said = refusal(url, allowed_uids=(), network_trusted=False)
    assert said is not None and "plain http on the network: not sending the token" in said, said
    assert "c.SchedApp.hub_service_network_trusted" in said
    assert refusal(url, allowed_uids=(), network_trusted=True) is None
    assert refusal(httpx.URL("https://hub.example.org/services/jupyter-sched/"), allowed_uids=(),
                   network_trusted=False) is None

    async def forwarded() -> None:
        server = ForwardingService(str(url), TOKEN, kernel_ids=list)
        with pytest.raises(HubServiceUnreachable):  # refused before any name is looked up or connection made
            await server.forward("GET", "jobs", "", None, None)
        await server.client.aclose()

    asyncio.run(forwarded())


WARNING = "a port any local account may take while the service is down"


@pytest.mark.skipif(os.geteuid() != 0, reason="hub mode with the local executor runs as root")
@pytest.mark.parametrize("privileged", [False, True], ids=["port 1024+: warned", "port below 1024: not warned"])
def test_red25_r5_serve_warns_when_its_port_is_one_any_account_may_bind(tmp_path: Path, privileged: bool) -> None:
    port = 1010 if privileged else _free_port()
    log = serve_to_its_warnings(tmp_path, "--ip=127.0.0.1", f"--port={port}")
    if privileged:
        assert WARNING not in log, log[-2000:]
    else:
        said = next(line for line in log.splitlines() if WARNING in line)
        assert f"listens on 127.0.0.1:{port}" in said and "port below 1024" in said, said
        assert "JUPYTER_SCHED_HUB_URL" in said and "c.SchedApp.hub_service_uids" in said, said


def capture_listener(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (as root: the servers' listener check lets it have what they send,
    as a squatter would get it were the check not there), for :func:`capture_token`."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    server.settimeout(1.0)
    return server


def capture_token(server: socket.socket, timeout_s: float, *, through_proxy: bool = False) -> str | None:
    """Answer 503 to what reaches ``server`` until a request with a token arrives (``through_proxy``: one the hub's
    proxy forwarded, with its ``X-Forwarded-For``); that token (None after ``timeout_s``). ``server`` is closed."""
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                with contextlib.suppress(OSError):
                    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                        data += chunk
                    conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            fields = {name.strip().lower(): value.strip() for name, _, value in
                      (line.partition(":") for line in data.decode("latin-1").split("\r\n")[1:] if line)}
            if through_proxy and "x-forwarded-for" not in fields:
                continue
            if fields.get("authorization", "").lower().startswith("token "):
                return fields["authorization"][len("token "):]
        return None
    finally:
        server.close()


def _capture_one_token(port: int, timeout_s: float) -> str | None:
    """The first token a listener on 127.0.0.1:``port`` receives (:func:`capture_token`)."""
    return capture_token(capture_listener(port), timeout_s)


@pytest.mark.parametrize("hub_says", [201, 403], ids=["minted: sent, deleted at stop", "refused: nothing sent, said"])
def test_red25_r5_the_server_sends_a_token_scoped_to_the_scheduler_or_says_why_not(
        hub_says: int, caplog: pytest.LogCaptureFixture) -> None:
    """The server's own token asks the hub for a scheduler-only token at start, sends it, deletes it at
    stop; a hub whose "server" role may make no token (403, as it should: verify26 V3) gets nothing sent, said
    once with the fix (the hub's pre_spawn_hook)."""
    from jupyter_sched.hub.narrow_token import NarrowTokens

    hub_calls: list[tuple[str, str, str, bytes]] = []
    sent: list[str] = []

    def hub(request: httpx.Request) -> httpx.Response:
        hub_calls.append((request.method, request.url.path, request.headers["Authorization"], request.content))
        if request.method == "POST":
            return httpx.Response(hub_says, json={"token": "scoped-r25", "id": "a42"} if hub_says == 201 else {})
        return httpx.Response(204)

    def central(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers["Authorization"])
        return httpx.Response(200, json=[] if request.method == "GET" else {})

    narrow = NarrowTokens("http://127.0.0.1:8081/hub/api", "amy", TOKEN, "jupyter-sched",
                          transport=httpx.MockTransport(hub))
    server = ForwardingService("http://127.0.0.1:1010/services/jupyter-sched/", TOKEN, kernel_ids=lambda: ["k1"],
                               kernel_report_interval_s=0, poll_interval_s=3600,
                               transport=httpx.MockTransport(central), narrow=narrow)
    caplog.set_level(logging.INFO, logger="jupyter_sched.hub.forward")

    async def lifetime() -> None:
        await server.start()
        with contextlib.suppress(httpx.ConnectError):  # refused (TokenWithheld) when the hub gave no scoped token
            await server.report_kernels()
        await server.stop()

    asyncio.run(lifetime())
    method, path, auth, body = hub_calls[0]
    assert (method, path, auth) == ("POST", "/hub/api/users/amy/tokens", f"token {TOKEN}")
    assert json.loads(body)["scopes"] == ["access:services!service=jupyter-sched"]
    said = " ".join(r.getMessage() for r in caplog.records)
    if hub_says == 201:
        assert sent and set(sent) == {"token scoped-r25"}, sent
        assert hub_calls[1][:2] == ("DELETE", "/hub/api/users/amy/tokens/a42")
        assert "may only call it (access:services!service=jupyter-sched)" in said, said
    else:  # verify26 V3: the server's own token opens the server, so nothing is sent at all
        assert sent == [], sent
        assert len(hub_calls) == 1
        assert said.count("this server sends the scheduler nothing") == 1, said
        assert "jupyter_sched.hub.spawn_token.scheduler_token_hook" in said, said
