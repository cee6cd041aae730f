"""red36 R4 (high): before EACH request a user's server forwards to the central service, the token guard asked the
kernel for every TCP socket listening on the service's PORT, whatever its address, and decoded them all in Python on
the server's IO loop (``listener_uids`` → ``sock_diag.listeners(port)``). Any account may listen on that port number
at the rest of 127/8 and, with ``IP_FREEBIND``, at any IPv6 address: 56,000 such listeners made each check 1.4-7 s
and froze every other user's Jupyter server (its own ``/api/status`` 0.02 → 3.9 s). The service's PostgreSQL guard
(``store/server_check``) paid the same per new connection.

Now the kernel is asked for the ONE listener it would hand a connection to that address and port (an exact lookup:
the address's own listener, else the wildcard one, dual stack and a socket bound to the loopback device included),
at most one socket decoded per address; and the forwarder asks on a worker thread, never on the server's loop.

Real sockets of another account (``nobody``, through ``/usr/bin/python3``): a crowd of 2,000 listeners on the port at
127.0.2.x-127.0.9.y, and squatters on 127.0.0.1, 0.0.0.0, ``[::]`` (dual stack), ``::ffff:127.0.0.1`` and 127.0.0.1
bound to ``lo``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_sched import sock_diag
from jupyter_sched.hub import forward
from jupyter_sched.hub.forward import ForwardingService
from jupyter_sched.hub.listener import listener_uids, refusal
from tests.accounts import account_python

NOBODY = 65534
CROWD = 2000
# another account's sockets: CROWD listeners on one port at 127.0.2.1.. (none on 127.0.0.1 until asked on stdin), and
# one squatter of each kind on a port of its own; their ports printed as JSON
SQUATTERS = """
import json, resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
count = int(sys.argv[1])
first = socket.socket(); first.bind(("127.0.2.1", 0)); first.listen()
port, held = first.getsockname()[1], [first]
for i in range(1, count):
    s = socket.socket(); s.bind((f"127.0.{2 + i // 250}.{i % 250 + 1}", port)); s.listen(); held.append(s)
def server(family, address, *, dual=None, device=False):
    s = socket.socket(family)
    if dual is not None:  # said either way: the host's net.ipv6.bindv6only is not the test's
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if dual else 1)
    if device:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
    s.bind((address, 0)); s.listen(); held.append(s)
    return s.getsockname()[1]
ports = {"crowd": port, "any4": server(socket.AF_INET, "0.0.0.0"),
         "dual": server(socket.AF_INET6, "::", dual=True), "mapped": server(socket.AF_INET6, "::ffff:127.0.0.1"),
         "v6only": server(socket.AF_INET6, "::", dual=False)}
try:
    ports["lo"] = server(socket.AF_INET, "127.0.0.1", device=True)
except PermissionError:  # SO_BINDTODEVICE needs CAP_NET_RAW before Linux 5.7: no account can make such a squatter
    pass
print(json.dumps(ports), flush=True)
sys.stdin.readline()
s = socket.socket(); s.bind(("127.0.0.1", port)); s.listen(); held.append(s)
print("held", flush=True)
time.sleep(600)
"""


@pytest.fixture(scope="module")
def squatters() -> Iterator[tuple[dict[str, int], subprocess.Popen[bytes]]]:
    python = account_python()
    if os.geteuid() != 0 or python is None:
        pytest.skip("needs root and an interpreter another account can run")
    if not sock_diag.available():
        pytest.skip("the kernel's sock_diag cannot be asked here")
    proc = subprocess.Popen([python, "-c", SQUATTERS, str(CROWD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            user=NOBODY, group=NOBODY, extra_groups=[])
    try:
        assert proc.stdout is not None
        yield json.loads(proc.stdout.readline()), proc
    finally:
        proc.kill()
        proc.wait(30)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many sockets :mod:`jupyter_sched.sock_diag` decodes from now on (one count each)."""
    count = [0]
    real = sock_diag._decoded

    def counted(family: int, body: bytes) -> Any:
        count[0] += 1
        return real(family, body)

    monkeypatch.setattr(sock_diag, "_decoded", counted)
    return count


def test_red36_r4_listener_check_decodes_one_socket_per_address_whatever_listens_at_others(
        squatters: tuple[dict[str, int], subprocess.Popen[bytes]], decoded: list[int]) -> None:
    """Failed before: the check decoded all 2,000 of the crowd's listeners (56,000: seconds, on the server's loop).
    Now at most one socket per address asked, and still right once the crowd's account takes 127.0.0.1 itself."""
    ports, proc = squatters
    crowd = ports["crowd"]
    assert len(sock_diag.listening_sockets(crowd) or ()) == CROWD  # not vacuous: the kernel has them all
    decoded[0] = 0
    assert listener_uids("127.0.0.1", crowd) == []
    assert listener_uids("localhost", crowd) == []
    assert decoded[0] == 0, decoded
    assert refusal(httpx.URL(f"http://127.0.0.1:{crowd}/"), allowed_uids=(), network_trusted=False) is None
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"take\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == b"held\n"
    decoded[0] = 0
    assert listener_uids("127.0.0.1", crowd) == [NOBODY]
    assert decoded[0] == 1, decoded
    said = refusal(httpx.URL(f"http://127.0.0.1:{crowd}/"), allowed_uids=(), network_trusted=False)
    assert said is not None and f"is held by uid {NOBODY}, not the service" in said, said
    assert decoded[0] <= 2, decoded


@pytest.mark.parametrize(("kind", "host", "held"), [
    ("any4", "127.0.0.1", True), ("any4", "::1", False),
    ("dual", "127.0.0.1", True), ("dual", "::1", True), ("dual", "localhost", True),
    ("mapped", "127.0.0.1", True), ("mapped", "::1", False),
    ("v6only", "127.0.0.1", False), ("v6only", "::1", True),
    ("lo", "127.0.0.1", True), ("lo", "127.0.0.5", False),
])
def test_red36_r4_listener_check_names_every_squatter_that_takes_the_connection(
        squatters: tuple[dict[str, int], subprocess.Popen[bytes]], decoded: list[int], kind: str, host: str,
        held: bool) -> None:
    """The one lookup is the kernel's own choice of listener for the connection: a wildcard squatter (IPv4, a
    dual-stack ``[::]``, a v4-mapped address) and one bound to the loopback device are found, one that cannot take
    the connection (IPv6-only for an IPv4 address; IPv4 for ``::1``) is not — as the dump of every listener said."""
    ports, _ = squatters
    if kind not in ports:
        pytest.skip("this kernel lets no account bind a socket to a device")
    assert listener_uids(host, ports[kind]) == ([NOBODY] if held else [])
    assert decoded[0] <= (2 if host == "localhost" else 1), decoded


def test_red36_r4_the_forwarders_listener_check_runs_off_the_servers_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: ``_guard`` (httpx's request hook) called the check on the server's IO loop. Now on a worker
    thread; a refusal is still raised (and logged) before anything is sent."""
    asked: list[threading.Thread] = []
    answers: list[str | None] = [None, "held by uid 4242"]

    def looked(url: httpx.URL, **_: Any) -> str | None:
        asked.append(threading.current_thread())
        return answers.pop(0)

    monkeypatch.setattr(forward, "refusal", looked)
    server = ForwardingService("http://127.0.0.1:9/services/jupyter-sched/", "t", kernel_ids=list)
    request = httpx.Request("GET", "http://127.0.0.1:9/services/jupyter-sched/me")

    async def twice() -> threading.Thread:
        await server._guard(request)
        with pytest.raises(forward.ListenerRefused):
            await server._guard(request)
        return threading.current_thread()

    loop_thread = asyncio.run(twice())
    assert len(asked) == 2 and all(thread is not loop_thread for thread in asked), asked
