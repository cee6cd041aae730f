"""Red team 25, R5: while ``jupyter-sched serve`` was down, any local account bound its unprivileged loopback
port and received every running user server's requests — each with that server's hub token, which opened
the user's Jupyter server. The forwarder now checks who holds a loopback address before sending anything
(:mod:`jupyter_sched.hub.listener`: /proc/net/tcp's uid of the listening socket), refuses plain http to a
non-loopback address unless the admin trusts the network, and ``jupyter-sched serve`` warns at start when
it listens on a port any account may bind.

Real parts: a real OS account (tests/accounts.py) runs the squatter, a socket server that records what it
receives; the "service" is a root process listening on the same port, killed first; the user server's
:class:`~jupyter_sched.hub.forward.ForwardingService` runs its kernel reports and activity polls against
the real network, as in a user's server; ``serve`` is the installed command (tests/hub/test_hub_refusals.py).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from jupyter_sched.hub.forward import ForwardingService, HubServiceUnreachable
from jupyter_sched.hub.listener import ListenerRefused, listener_uids, refusal
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason

from .hub_harness import _free_port
from .test_hub_refusals import serve

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
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "python").symlink_to(sys.executable)
    with shared_dir() as folder:
        (folder / "config").mkdir()
        lines = [f"c.SchedApp.log_dir = {str(folder / 'jobs')!r}",
                 f"c.HubSchedApp.job_python = {str(private / 'python')!r}"]  # refused after the warnings: it stops
        (folder / "config" / "jupyter_sched_serve_config.py").write_text("\n".join(lines) + "\n")
        port = 1010 if privileged else _free_port()
        code, log = serve(folder, "--ip=127.0.0.1", f"--port={port}")
    assert code != 0 and "c.HubSchedApp.job_python" in log, log[-2000:]
    if privileged:
        assert WARNING not in log, log[-2000:]
    else:
        said = next(line for line in log.splitlines() if WARNING in line)
        assert f"listens on 127.0.0.1:{port}" in said and "port below 1024" in said, said
        assert "JUPYTER_SCHED_HUB_URL" in said and "c.SchedApp.hub_service_uids" in said, said
