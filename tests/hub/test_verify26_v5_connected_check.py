"""verify26 V5 (HIGH) and V2's second half: who may get a token on a loopback port is checked on the CONNECTED
socket (:mod:`jupyter_sched.hub.peer`), not on the listener before connecting — a squatter toggling its listener
every few milliseconds passed the listener check and accepted the connection made right after it. The user
server's forwarder and the stdlib client (the CLI in a terminal) both check; the client says so instead of
printing a normal-looking status from the squatter's ``{}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jupyter_sched.client._http import AddressTaken, HttpUnreachable, StdlibHttp
from jupyter_sched.hub.forward import ForwardingService
from jupyter_sched.hub.peer import accepting_uid, connected_refusal
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason

from .hub_harness import _free_port

TOKEN = "amys-token-v26v5"

# bind + listen for ~3 ms, take what one accepted connection brings (1 s), close, 0.3 ms gap, again
# (verify26's /tmp/v26pub/toggle_listener.py); each accepted connection is one hex line (empty: nothing came)
_TOGGLER = textwrap.dedent("""
    import socket, sys, time
    port, out = int(sys.argv[1]), sys.argv[2]
    print("toggling", flush=True)
    while True:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            server.bind(("127.0.0.1", port))
        except OSError:
            server.close(); time.sleep(0.0003); continue
        server.listen(16)
        server.settimeout(0.003)
        try:
            conn, _ = server.accept()
        except OSError:
            conn = None
        server.close()
        if conn is not None:
            conn.settimeout(1)
            data = b""
            try:
                while b"\\r\\n\\r\\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\n{}")
            except OSError:
                pass
            conn.close()
            with open(out, "a") as f:
                f.write(data.hex() + "\\n")
        time.sleep(0.0003)
""")


def _toggle(folder: Path, port: int, out: Path, uid: int, gid: int) -> subprocess.Popen[str]:
    return squat(folder, port, out, uid, gid, source=_TOGGLER, ready="toggling")


# listens on the port as another account, answers `{}` and writes down what each connection brought (hex per line)
LISTENER = textwrap.dedent("""
    import socket, sys
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(sys.argv[1]))); server.listen(16); print("listening", flush=True)
    while True:
        conn, _ = server.accept(); conn.settimeout(1)
        try:
            data = conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 2\\r\\n"
                         b"Connection: close\\r\\n\\r\\n{}")
        except OSError:
            data = b""
        conn.close()
        open(sys.argv[2], "a").write(data.hex() + "\\n")
""")


def squat(folder: Path, port: int, out: Path, uid: int, gid: int, *, source: str = LISTENER,
          ready: str = "listening") -> subprocess.Popen[str]:
    """``source`` (default :data:`LISTENER`) run on ``port`` as account ``uid``; returns once it printed ``ready``."""
    script = folder / f"{ready}.py"
    script.write_text(source)
    script.chmod(0o644)
    proc = subprocess.Popen([str(account_python()), str(script), str(port), str(out)], stdout=subprocess.PIPE,
                            text=True, user=uid, group=gid, extra_groups=[], cwd=folder)
    assert proc.stdout is not None and proc.stdout.readline().strip() == ready
    return proc


def _received(out: Path) -> list[bytes]:
    return [bytes.fromhex(line) for line in out.read_text().splitlines()] if out.exists() else []


async def _forwarder_for(server: ForwardingService, seconds: float) -> None:
    await server.start()
    import atexit

    atexit.unregister(server._release_at_exit)
    end = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < end:
        with contextlib.suppress(Exception):
            await server.report_kernels()
        await asyncio.sleep(0.005)
    server._stopped.set()
    for task in (server._task, server._report_task):
        if task is not None:
            task.cancel()
    await server.link.stop()
    await server.client.aclose()


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_verify26_v5_a_toggling_listener_gets_no_token_from_the_forwarder_nor_the_client() -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/services/jupyter-sched/"
    with os_accounts(1, prefix="v26t") as (mal,), shared_dir() as folder:
        folder.chmod(0o1777)
        out = folder / "squat.txt"
        toggler = _toggle(folder, port, out, mal.uid, mal.gid)
        refused = 0
        try:
            server = ForwardingService(url, TOKEN, kernel_ids=lambda: ["k1"], poll_interval_s=0.02,
                                       kernel_report_interval_s=0)
            asyncio.run(_forwarder_for(server, 6.0))
            for _ in range(300):  # the CLI's HTTP (a terminal's jupyter-sched): no listener check before connecting
                http = StdlibHttp(url + "api/sched/", {"Authorization": f"token {TOKEN}"}, 2.0)
                try:
                    http.request("GET", "me")
                except AddressTaken as exc:
                    refused += 1
                    assert f"held by uid {mal.uid}" in exc.message or "not accepted by a live socket" in exc.message
                except HttpUnreachable:
                    pass
                finally:
                    http.close()
        finally:
            toggler.send_signal(signal.SIGKILL)
            toggler.wait(timeout=10)
        got = _received(out)
        assert got, "the toggler accepted no connection: the race was not reached"
        assert [data for data in got if TOKEN.encode() in data] == [], [d[:120] for d in got if d]
        assert all(data == b"" for data in got), [d[:120] for d in got if d]  # not one byte, not only no token
        assert refused > 0


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_verify26_v2_the_terminal_client_refuses_a_port_another_account_holds_and_says_so() -> None:
    port = _free_port()
    with os_accounts(1, prefix="v26c") as (mal,), shared_dir() as folder:
        folder.chmod(0o1777)
        out = folder / "squat.txt"
        squatter = squat(folder, port, out, mal.uid, mal.gid)
        try:
            done = subprocess.run([str(Path(sys.executable).parent / "jupyter-sched"), "status"], capture_output=True,
                                  text=True, timeout=120,
                                  env={"PATH": "/usr/bin:/bin", "HOME": str(folder),
                                       "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
                                       "JUPYTER_SCHED_HUB_URL": f"http://127.0.0.1:{port}/services/jupyter-sched/",
                                       "JUPYTER_SCHED_SERVICE_TOKEN": TOKEN, "JUPYTERHUB_API_TOKEN": "server-own",
                                       "JUPYTER_RUNTIME_DIR": str(folder / "rt")})
        finally:
            squatter.send_signal(signal.SIGKILL)
            squatter.wait(timeout=10)
        said = done.stdout + done.stderr
        assert done.returncode != 0, said
        assert f"is held by uid {mal.uid}, not the service: not sending your request nor its token" in said, said
        assert "[address_taken]" in said, said
        assert all(data == b"" for data in _received(out)), _received(out)  # connected, then nothing sent


def test_verify26_v5_the_connected_check_names_who_accepted() -> None:
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname()) as conn:
            import os

            assert accepting_uid(conn) == os.geteuid()
            assert connected_refusal(conn, allowed_uids=()) is None
            accepted, _ = server.accept()
            accepted.close()
            said = connected_refusal(conn, allowed_uids=())
            assert said is not None and "not accepted by a live socket on this host" in said, said
