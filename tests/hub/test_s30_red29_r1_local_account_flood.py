"""red29 R1 on a same-host hub: a local account connecting straight to the service took the proxy's first checks.

s29-door (c3ae94c9) believed ``X-Forwarded-For`` only from ``c.FrontDoor.trusted_proxies`` (default loopback,
where configurable-http-proxy connects from on the hub's host) and bounded all origins of one peer at 128 waiting
checks. Every local account shares that loopback address with the proxy: a local user's flood of made-up tokens
straight to the service's port (forging client addresses, as the proxy's requests carry) filled the loopback peer's
128 and every new token's first request through the proxy was answered 429 for as long as it ran. Now the front door
asks the kernel (``sock_diag``) which account opened each loopback connection: the proxy's accounts (root, the
service's own, ``c.FrontDoor.proxy_uids``) are the loopback address, any other account is a peer of its own
(``"127.0.0.1 (uid N)"``) whose header is never believed and whose checks wait as one origin (32).

Real parts: verify28 V6's front door on a real TCP port (this process, root: the proxy's account) with a hub check
held on a gate; a real second OS account (``useradd``, prefix ``s30d``) running its flood in its own process.
Answers are counted, never timed.
"""

from __future__ import annotations

import subprocess
import textwrap
import time
from collections.abc import Iterator

import pytest
from traitlets import TraitError
from traitlets.config import Config

from jupyter_sched import sock_diag
from jupyter_sched.cli import doctor
from jupyter_sched.hub import front_door
from jupyter_sched.hub.check_queue import CHECKS_WAITING_PER_ORIGIN
from jupyter_sched.hub.forwarded import PROXY_UIDS_SETTING, peer_name, proxy_uids
from jupyter_sched.hub.front_door import CHECKS_AT_ONCE, FrontDoor
from tests.accounts import account_python, os_accounts, skip_reason

from .test_verify24_v3_ceiling_burst import _request
from .test_verify28_v6_check_flood import _CheckDoor, queued_then_answered

FLOOD = 300
FORGED = [f"10.9.{k}.1" for k in range(10)]
REFUSED = "refused 429: too many credentials not seen before waiting for the hub's check"

_FLOOD_SCRIPT = textwrap.dedent("""
    import secrets, socket, sys
    port, count = int(sys.argv[1]), int(sys.argv[2])
    socks = []
    for k in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall((f"GET /echo HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: token {secrets.token_hex(16)}\\r\\n"
                      f"X-Forwarded-For: 10.9.{k % 10}.1\\r\\n\\r\\n").encode())
        socks.append(sock)
    print("sent", flush=True)
    sys.stdin.read()
""")


@pytest.fixture
def door() -> Iterator[_CheckDoor]:
    running = _CheckDoor()
    try:
        yield running
    finally:
        running.open_gate()
        running.stop()


def _settled(door: _CheckDoor, origin: str) -> None:
    """Wait (bounded, never timed) until the flood's tail was refused and ``origin``'s checks wait."""
    queue = door.guarded._queue
    for _ in range(3000):
        if (door.guarded._counts.get(REFUSED, 0) >= FLOOD - CHECKS_AT_ONCE - CHECKS_WAITING_PER_ORIGIN
                and queue.waiting(origin) == CHECKS_WAITING_PER_ORIGIN):
            return
        time.sleep(0.01)
    raise AssertionError((door.guarded._counts, queue.waiting(origin), queue.waiting()))


@pytest.mark.skipif(skip_reason() is not None or not sock_diag.available(),
                    reason=skip_reason() or "the kernel's sock_diag cannot be asked here")
def test_s30_red29_r1_a_local_accounts_flood_from_loopback_does_not_429_the_proxys_first_requests(
        door: _CheckDoor, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="jupyter_sched.front_door")
    python = account_python()
    assert python is not None
    with os_accounts(1, prefix="s30d") as (mallory,):
        flood = subprocess.Popen([python, "-c", _FLOOD_SCRIPT, str(door.port), str(FLOOD)], user=mallory.uid,
                                 group=mallory.gid, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                 cwd="/")
        try:
            assert flood.stdout is not None and flood.stdout.readline().strip() == "sent"
            own = f"127.0.0.1 (uid {mallory.uid})"
            _settled(door, own)
            queue = door.guarded._queue
            # mallory's loopback connections are a peer of her own: her forged addresses are not believed, her
            # checks wait as one origin, and nothing waits as the proxy's (127.0.0.1)
            assert queue.waiting() == CHECKS_WAITING_PER_ORIGIN, queue.waiting()
            assert queue.waiting_behind(own) == CHECKS_WAITING_PER_ORIGIN
            assert queue.waiting_behind("127.0.0.1") == 0
            assert all(queue.waiting(f"{forged} via 127.0.0.1") == 0 for forged in FORGED)
            # first requests of new real tokens through the proxy (this process: root) from several clients: each
            # queued behind the flood's checks under way, never 429
            alice = _request(door, "token real-alice", "10.0.0.8")
            for _ in range(500):
                if queue.waiting("10.0.0.8 via 127.0.0.1") == 1:
                    break
                time.sleep(0.01)
            assert queue.waiting("10.0.0.8 via 127.0.0.1") == 1
            refused_before = door.guarded._counts.get(REFUSED, 0)
            eve = _request(door, "token real-eve", "10.0.0.7")
            flood.stdin.close()  # type: ignore[union-attr]  # the flood's process leaves: its sockets close
            flood.wait(30)
            queued_then_answered(door, eve, "10.0.0.7 via 127.0.0.1", [])
        finally:
            if flood.poll() is None:
                flood.kill()
                flood.wait(30)
    with alice:
        answer = alice.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert door.guarded._counts.get(REFUSED, 0) == refused_before  # no proxied request was refused
    assert {"token real-alice", "token real-eve"} <= set(door.asked)
    # said once (not per request) that this account sends the proxy's header: a proxy to name, or a forger
    said = [r.getMessage() for r in caplog.records if "send X-Forwarded-For" in r.getMessage()]
    assert len(said) == 1, said
    assert said[0].startswith(f"jupyter_sched: front door: loopback connections of uid {mallory.uid} send "
                              "X-Forwarded-For, as the hub's proxy does, but uid"), said
    assert f"If configurable-http-proxy runs as uid {mallory.uid}, add it to {PROXY_UIDS_SETTING}" in said[0]


def test_s30_red29_r1_peer_name_tells_the_proxys_accounts_from_other_local_accounts() -> None:
    proxies = proxy_uids([1500], 1000)
    assert proxies == {0, 1000, 1500}
    assert peer_name("127.0.0.1", 0, proxies) == "127.0.0.1"  # root's proxy
    assert peer_name("127.0.0.1", 1000, proxies) == "127.0.0.1"  # the service's own account (the hub's)
    assert peer_name("::1", 1500, proxies) == "::1"  # c.FrontDoor.proxy_uids
    assert peer_name("127.0.0.1", 1022, proxies) == "127.0.0.1 (uid 1022)"
    assert peer_name("127.0.0.1", False, proxies) == "127.0.0.1 (account not known)"  # never uid 0 (False == 0)
    assert peer_name("127.0.0.1", None, proxies) == "127.0.0.1"  # the kernel cannot be asked: as before
    from jupyter_sched.hub.fair_share import share_key

    # the header is believed from the proxy's account only
    headers = {"X-Forwarded-For": "10.9.3.1"}
    assert share_key("unproven 127.0.0.1", headers) == "unproven 10.9.3.1 via 127.0.0.1"
    assert share_key("unproven 127.0.0.1 (uid 1022)", headers) == "unproven 127.0.0.1 (uid 1022)"


def test_s30_red29_r1_without_sock_diag_loopback_is_the_address_and_doctor_and_the_start_say_so(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(front_door, "connecting_uid", lambda sock: None)
    monkeypatch.setattr(sock_diag, "available", lambda: False)
    door = FrontDoor()
    with caplog.at_level("WARNING"):
        server = door.http_server(object())
    assert server.peer_of(object(), ("127.0.0.1", 5000)) == "127.0.0.1"  # today's bound kept
    assert server.peer_of(object(), ("10.0.0.5", 5000)) == "10.0.0.5"
    said = caplog.text
    assert "sock_diag cannot be asked here" in said and "modprobe inet_diag" in said, said
    assert "root" in said and PROXY_UIDS_SETTING in said
    line = doctor._front_door()
    assert line.startswith("front door: the kernel's sock_diag cannot be asked here"), line
    assert PROXY_UIDS_SETTING in line
    monkeypatch.setattr(sock_diag, "available", lambda: True)
    assert doctor._front_door() == ""


def test_s30_red29_r1_proxy_uids_setting_is_checked() -> None:
    assert FrontDoor(config=Config({"FrontDoor": {"proxy_uids": [1500]}})).proxy_uids == [1500]
    with pytest.raises(TraitError, match=r"c\.FrontDoor\.proxy_uids = \[-3\]: -3 is not a uid.*id -u"):
        FrontDoor(config=Config({"FrontDoor": {"proxy_uids": [-3]}}))

