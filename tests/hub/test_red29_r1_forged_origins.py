"""red29 R1: a forged ``X-Forwarded-For`` on direct connections dodged the per-origin check queue.

verify28 V6 bounded the checks of credentials not seen before at 32 per origin and 256 in all, the origin being the
last ``X-Forwarded-For`` address whatever the peer. Anyone who reached the service's port sent made-up tokens each
with a different forged address: 8 forged origins took all 256 and every new token's first request — also through
the hub's proxy — was answered 429 for as long as the flood ran. Now the header is believed only from
``c.FrontDoor.trusted_proxies`` (:mod:`jupyter_sched.hub.forwarded`; default loopback, where the hub's proxy
connects from on its host) and the checks waiting behind one peer are bounded together
(:data:`~jupyter_sched.hub.check_queue.CHECKS_WAITING_PER_PEER`), so another peer's first request is queued and
answered, never 429.

Real parts: verify28 V6's front door on a real TCP port with a hub check held on a gate; raw sockets; the other peer
connects from 127.0.0.2 (loopback, but not a trusted proxy by default).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import tornado.web
from traitlets import TraitError
from traitlets.config import Config

from jupyter_sched.hub.check_queue import CHECKS_WAITING_PER_ORIGIN, CHECKS_WAITING_PER_PEER, CheckQueue
from jupyter_sched.hub.fair_share import share_key
from jupyter_sched.hub.forwarded import TrustedProxies
from jupyter_sched.hub.front_door import CHECKS_AT_ONCE, FrontDoor, GuardedHTTPServer

from .test_verify26_v11_fresh_made_up_tokens import fresh_token_flood
from .test_verify28_v6_check_flood import _CheckDoor, _refused_429, queued_then_answered

FORGED = [f"10.9.{k}.1" for k in range(10)]


class _UntrustingDoor(_CheckDoor):
    """The same door with ``trusted_proxies`` naming a proxy elsewhere: 127.0.0.1 is not one."""

    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        guarded = super().server(app)
        guarded.trusted = TrustedProxies(["10.1.0.0/16"])
        return guarded


def _door(kind: type[_CheckDoor]) -> Iterator[_CheckDoor]:
    running = kind()
    try:
        yield running
    finally:
        running.open_gate()
        running.stop()


@pytest.fixture
def door() -> Iterator[_CheckDoor]:
    yield from _door(_CheckDoor)


@pytest.fixture
def untrusting_door() -> Iterator[_CheckDoor]:
    yield from _door(_UntrustingDoor)


def _from(door: _CheckDoor, source: str, token: str) -> socket.socket:
    """One whole ``GET /echo`` with ``token`` on a connection from ``source`` (another peer than 127.0.0.1)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", door.port))
    sock.sendall(f"GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: {token}\r\nConnection: close\r\n\r\n".encode())
    return sock


def _forged_flood(door: _CheckDoor, credentials: int) -> list[socket.socket]:
    """``credentials`` connections from 127.0.0.1, each one request with a fresh made-up token, spread over the 10
    :data:`FORGED` ``X-Forwarded-For`` values (red29's p1_checkq.py)."""
    socks: list[socket.socket] = []
    for k, forged in enumerate(FORGED):
        socks += fresh_token_flood(door, credentials // len(FORGED) + (k < credentials % len(FORGED)), 1, "/echo",
                                   forged)
    return socks


def _settle_flood(door: _CheckDoor, socks: list[socket.socket], waiting: int) -> list[dict[str, object]]:
    """Wait until the flood is answered 429 past its ``waiting`` checks and the 16 under way; the 429s' errors."""
    return _refused_429(socks, len(socks) - CHECKS_AT_ONCE - waiting)


def test_red29_r1_forged_origins_of_one_peer_hold_at_most_the_peer_bound_and_another_peers_first_request_answers(
        door: _CheckDoor) -> None:
    socks = _forged_flood(door, 300)
    try:
        errors = _settle_flood(door, socks, CHECKS_WAITING_PER_PEER)
        queue = door.guarded._queue
        assert queue.waiting_behind("127.0.0.1") == CHECKS_WAITING_PER_PEER, queue.waiting()
        assert queue.waiting() == CHECKS_WAITING_PER_PEER < queue.total
        assert len(door.asked) == CHECKS_AT_ONCE
        assert all(error["field"] == "credential" for error in errors)
        assert any(f"{CHECKS_WAITING_PER_PEER} from 127.0.0.1" in str(error["message"])
                   and f"{CHECKS_WAITING_PER_PEER} per connecting address" in str(error["message"])
                   for error in errors), errors[:2]
        # eve's fresh real token from another peer: queued (not 429) while the flood holds the hub
        eve = _from(door, "127.0.0.2", "token real-eve")
        queued_then_answered(door, eve, "127.0.0.2", socks)
    finally:
        for sock in socks:
            sock.close()
    assert door.asked[-1] == "token real-eve"


def test_red29_r1_a_forged_forwarded_for_from_an_untrusted_peer_counts_as_the_peer(
        untrusting_door: _CheckDoor) -> None:
    door = untrusting_door
    socks = _forged_flood(door, 300)
    try:
        errors = _settle_flood(door, socks, CHECKS_WAITING_PER_ORIGIN)
        queue = door.guarded._queue
        assert queue.waiting("127.0.0.1") == CHECKS_WAITING_PER_ORIGIN  # one origin: the peer, not 10 forged ones
        assert queue.waiting() == CHECKS_WAITING_PER_ORIGIN
        assert all(queue.waiting(f"{forged} via 127.0.0.1") == 0 for forged in FORGED)
        message = str(errors[0]["message"])
        assert message.startswith(f"{CHECKS_WAITING_PER_ORIGIN} requests from 127.0.0.1 with tokens not seen "
                                  "before"), message
        assert "10.9." not in message
    finally:
        for sock in socks:
            sock.close()


def test_red29_r1_share_key_believes_forwarded_for_only_from_a_trusted_proxy() -> None:
    made_up = "unproven 127.0.0.1"
    headers = {"X-Forwarded-For": "10.9.3.1"}
    assert share_key(made_up, headers) == "unproven 10.9.3.1 via 127.0.0.1"  # the default: the proxy on this host
    assert share_key("unproven 10.0.0.5", headers) == "unproven 10.0.0.5"  # a peer elsewhere is its own origin
    assert share_key("unproven 127.0.0.2", headers) == "unproven 127.0.0.2"
    elsewhere = TrustedProxies(["10.0.0.0/24", "fd00::1"])
    assert share_key("unproven 10.0.0.5", headers, elsewhere) == "unproven 10.9.3.1 via 10.0.0.5"
    assert share_key("unproven ::ffff:10.0.0.7", headers, elsewhere) == "unproven 10.9.3.1 via ::ffff:10.0.0.7"
    assert share_key("unproven fd00::1", headers, elsewhere) == "unproven 10.9.3.1 via fd00::1"
    assert share_key(made_up, headers, elsewhere) == made_up  # loopback left out: not believed
    assert share_key("unproven unknown", headers, elsewhere) == "unproven unknown"
    assert share_key(made_up, headers, TrustedProxies([])) == made_up


def test_red29_r1_check_queue_bounds_all_origins_of_one_peer_together() -> None:
    queue: CheckQueue[str] = CheckQueue(lambda item: True, per_origin=3, total=10, per_peer=5)
    taken = [queue.offer(f"10.9.{k % 4}.1 via 127.0.0.1", f"c{k}") for k in range(12)]
    assert taken.count(True) == 5 and queue.waiting_behind("127.0.0.1") == 5
    assert queue.offer("127.0.0.2", "other")  # another peer: queued
    assert queue.offer("10.0.0.8 via 10.0.0.5", "proxied")
    assert queue.waiting() == 7
    item, _ = queue.take()
    assert item == "c0" and queue.waiting_behind("127.0.0.1") == 4
    assert queue.offer("10.9.3.1 via 127.0.0.1", "again")  # room again behind 127.0.0.1
    while queue.take()[0] is not None:
        pass
    assert queue.waiting() == 0 and queue.waiting_behind("127.0.0.1") == 0


def test_red29_r1_trusted_proxies_setting_refuses_a_non_address_naming_the_setting_and_the_fix() -> None:
    config = Config()
    config.FrontDoor.trusted_proxies = ["10.0.0.5", "10.1.0.0/16", "::1"]
    assert FrontDoor(config=config).trusted_proxies == ["10.0.0.5", "10.1.0.0/16", "::1"]
    assert FrontDoor().trusted_proxies == ["127.0.0.1", "::1"]
    with pytest.raises(TraitError) as raised:
        FrontDoor(trusted_proxies=["proxy.example.org"])
    assert "c.FrontDoor.trusted_proxies: 'proxy.example.org' is not an IP address or CIDR block" in str(raised.value)
    assert "Fix:" in str(raised.value)
