"""``jupyter-sched --url URL`` without a token never sends the runtime file's token to another account.

Red-team 5 finding 5: ``--url`` without ``--token`` reuses the token of this account's runtime
file whose server is at URL, with localhost, 127.0.0.1 and ::1 taken as one host (new user 5,
finding 12) — and the CLI then connected to the URL as typed. A server listening on 127.0.0.1
only (JupyterHub's local spawner starts them with ``--ip=127.0.0.1``) leaves [::1] on its port
free for anyone: eve listened there and received alice's server token (``localhost`` resolves to
::1 first where /etc/hosts names it so).

Real parts: the CLI as a subprocess, "alice's" server as a real HTTP listener on 127.0.0.1 with
its runtime file, and eve's listener on [::1] running as a real OS account (tests/accounts.py).
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from tests.accounts import account_python, os_accounts, shared_dir, skip_reason

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]

EVE_LISTENER = """
import http.server, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write(f"{self.path} {self.headers.get('Authorization')}\\n")
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *a): pass
class S(http.server.HTTPServer):
    address_family = socket.AF_INET6
S(("::1", int(sys.argv[1])), H).serve_forever()
"""


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


class _AliceServer(http.server.BaseHTTPRequestHandler):
    """Alice's server: answers the CLI's reads as a jupyter_sched server would (enough for status)."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).seen.append(str(self.headers.get("Authorization")))
        body = {"user": "alice", "is_admin": False} if self.path.endswith("/me") else \
            {"version": "0", "api": "v1", "mode": "embedded"} if self.path.endswith("/config") else []
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def alice_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AliceServer)  # IPv4 only, as a hub's spawner
    _AliceServer.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback (::1) on this machine")
def test_a_url_naming_the_other_loopback_never_carries_the_servers_token_to_another_account(
        alice_server: int, tmp_path: Path) -> None:
    port = alice_server
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / f"jpserver-{os.getpid()}.json").write_text(json.dumps(
        {"url": f"http://127.0.0.1:{port}/", "base_url": "/", "token": "alice-server-token", "pid": os.getpid(),
         "root_dir": "/"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(runtime), "PYTHONPATH": str(ROOT)})
    python = account_python()
    assert python is not None
    with os_accounts(1) as (eve,), shared_dir() as shared:
        script, caught = shared / "listen.py", shared / "caught.txt"
        script.write_text(EVE_LISTENER)
        caught.write_text("")
        caught.chmod(0o666)
        listener = subprocess.Popen([python, str(script), str(port), str(caught)], user=eve.uid, group=eve.gid,
                                    extra_groups=[], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not any(f"{port:04X}" in line for line in Path("/proc/net/tcp6").read_text().splitlines()):
                assert time.monotonic() < deadline and listener.poll() is None, "eve's listener did not start"
                time.sleep(0.05)
            done = subprocess.run([CLI, "--url", f"http://[::1]:{port}/", "status"], env=env, capture_output=True,
                                  text=True, timeout=120)
        finally:
            listener.kill()
            listener.wait(10)
        assert "alice-server-token" not in caught.read_text(), caught.read_text()  # was: 4 requests with it
    assert "token alice-server-token" in _AliceServer.seen, (done.stdout, done.stderr)  # it reached alice's own
