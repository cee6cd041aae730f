"""Verify 24, V3 and session 25's made-up-token flood: the front door at a full ceiling, behind the hub's proxy.

V3: at a ceiling lowered to 30, one user's pipelined flood through JupyterHub's proxy (configurable-http-proxy)
still gave a bystander the proxy's HTML 503 for the first seconds. The proxy opens one connection to the service
per request in flight, so the flood arrived as thousands of new connections; the service accepted up to 128 at a
time before reading any, and each past the ceiling closed "the oldest without a whole request" — the one
accepted just before it, unread. A bystander's connection among them was closed before its request was read;
the proxy said 503. (Tornado also listened with a queue of 128: past it the kernel dropped new handshakes,
retried 1, 3, 7 s later.) Now a connection waiting less than ``HEAD_GRACE_S`` for its request is never closed
for a newcomer; at a full ceiling with nothing else to close, accepting pauses until a connection closes (the
newcomers wait in the kernel's queue, 4096 deep); a newcomer accepted at a full ceiling has its request head
looked at in the socket (unread) and, when its caller already has their share, is answered the JSON 429 at once.

The made-up-token flood: a request with a token not yet seen authenticated counted as "unproven" at its peer's
address — the hub proxy's, through the proxy — so a flood of made-up tokens from one host held that share and a
new real token's first request, from anywhere, was answered 429 until the flood stopped. Unproven tokens now
count per origin (the last ``X-Forwarded-For`` address, which the proxy appends), all origins behind one peer
bounded together at half the ceiling.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (its own loop in a
thread, tests/hub/test_red20_r1_chunked.py's ``Door``) in front of a small tornado application that tells the
front door who a token authenticated as (as the hub's identity provider does); raw sockets sending what
configurable-http-proxy sends (one whole request per connection, ``X-Forwarded-For`` appended).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
import tornado.web

from jupyter_sched.hub import front_door
from jupyter_sched.hub.fair_share import FairShare, over_share_message, share_key
from jupyter_sched.hub.front_door import GuardedHTTPServer

from .test_red17_front_door import _closed
from .test_red20_r1_chunked import Door, _answer

USERS = {"token alice": "alice", "token bob": "bob", "token carol": "carol", "token dan": "dan"}
SLOW_S = 1.5
"""How long alice's requests are answered in."""
HUB_SAYS_NO_S = 5.0
"""How long a made-up token's request is answered in (a slow hub: the flood holds its share meanwhile)."""


class _Who(tornado.web.RequestHandler):
    async def get(self) -> None:
        user = USERS.get(self.request.headers.get("Authorization", ""))
        if user is None:  # a made-up token: the hub says no, slowly
            await asyncio.sleep(HUB_SAYS_NO_S)
            self.set_status(401)
            self.write({"error": {"code": "unauthenticated"}})
            return
        front_door.note_caller(self.request, user)  # as hub.identity does once the token authenticated
        if user == "alice":
            await asyncio.sleep(SLOW_S)
        self.write({"user": user})


class CeilingDoor(Door):
    ceiling = 16

    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        self.guarded = GuardedHTTPServer(tornado.web.Application([("/echo", _Who)]), max_connections=self.ceiling,
                                         idle_connection_timeout=60.0)
        return self.guarded

    def block(self, seconds: float) -> None:
        """Hold the server's loop for ``seconds`` (connections meanwhile wait in the kernel's queue)."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(time.sleep, seconds)


class WideDoor(CeilingDoor):
    ceiling = 40


def _request(door: Door, token: str, forwarded_for: str | None = None) -> socket.socket:
    """A connection sending one whole ``GET`` as configurable-http-proxy does (``X-Forwarded-For`` appended)."""
    sock = socket.create_connection(("127.0.0.1", door.port), timeout=10)
    xff = f"X-Forwarded-For: {forwarded_for}\r\n" if forwarded_for else ""
    sock.sendall(f"GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: {token}\r\n{xff}Connection: close\r\n\r\n".encode())
    return sock


def _status(answer: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    if not head:
        return 0, {}  # closed without an answer: what the proxy turns into its HTML 503
    return int(head.split()[1]), json.loads(body) if body.strip() else {}


@pytest.fixture
def door() -> Iterator[CeilingDoor]:
    running = CeilingDoor()
    try:
        for token in ("token alice",):  # alice's token authenticated once: her requests count as hers
            with _request(running, token) as sock:
                assert _status(_answer(sock, 10))[0] == 200
        yield running
    finally:
        running.stop()


def test_verify24_v3_bystanders_amid_a_burst_of_one_users_new_connections_at_a_full_ceiling_are_answered(
        door: CeilingDoor) -> None:
    # fails before the fix: bob's connection (6th of 30 accepted at once) was closed unread at the ceiling
    door.block(1.0)
    socks = []
    for i in range(30):
        token = "token bob" if i == 5 else "token carol" if i == 25 else "token alice"
        socks.append(_request(door, token))
    try:
        answers = [_status(_answer(sock, 20)) for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    assert answers[5] == (200, {"user": "bob"}), answers[5]
    assert answers[25] == (200, {"user": "carol"}), answers[25]
    alice = [status for i, (status, _) in enumerate(answers) if i not in (5, 25)]
    # alice: about her share answered, most of the rest a JSON 429 naming the setting (at the full ceiling the
    # caller most over their share may also lose a connection being answered: 0, the V5 rule)
    assert alice.count(200) >= 8 and alice.count(429) >= 10, alice
    refused = next(error for status, error in answers if status == 429)["error"]
    assert refused["field"] == "connections" and "c.FrontDoor.max_connections_per_user" in refused["hint"], refused


def test_verify24_v3_a_connection_waiting_a_moment_is_never_closed_for_a_newcomer(door: CeilingDoor) -> None:
    # a full ceiling of connections that sent nothing yet: a newcomer waits (accepting pauses) until the oldest
    # of them has had HEAD_GRACE_S to send its request, then takes its place — it is never the newcomer's
    # arrival that closes a connection accepted a moment ago
    quiet = [socket.create_connection(("127.0.0.1", door.port), timeout=10) for _ in range(door.ceiling)]
    try:
        for _ in range(200):
            if len(door.guarded._connections) >= door.ceiling:
                break
            time.sleep(0.01)
        opened = time.monotonic()
        with _request(door, "token bob") as sock:
            assert _status(_answer(sock, 20)) == (200, {"user": "bob"})
        assert time.monotonic() - opened >= front_door.HEAD_GRACE_S * 0.9
        assert sum(1 for q in quiet if _closed(q)) == 1  # the oldest quiet one made room, only it
    finally:
        for q in quiet:
            q.close()


def test_s25_forged_token_flood_from_one_host_does_not_429_a_new_real_tokens_first_request() -> None:
    # fails before the fix: every unproven token through the proxy counted as "unproven 127.0.0.1", so the
    # made-up ones from 10.0.0.66 held the share and dan's first request (from 10.0.0.7) was answered 429
    door = WideDoor()
    flood: list[socket.socket] = []
    try:
        share = door.guarded.fair.share
        flood = [_request(door, f"token made-up-{i}", "10.0.0.66") for i in range(share)]
        for _ in range(300):  # the made-up tokens' requests are being answered (a slow hub)
            if sum(1 for who in door.guarded.fair._answering.values() if who.startswith("unproven ")) >= share:
                break
            time.sleep(0.01)
        quiet = [socket.create_connection(("127.0.0.1", door.port), timeout=10) for _ in range(24)]
        flood += quiet  # the ceiling is pressed (at least 75 % of it open)
        for _ in range(300):
            if len(door.guarded._connections) >= 0.75 * door.ceiling:
                break
            time.sleep(0.01)
        with _request(door, "token made-up-more", "10.0.0.66") as sock:  # the flooding host stays bounded
            status, error = _status(_answer(sock, 10))
        assert status == 429, (status, error)
        with _request(door, "token dan", "10.0.0.7") as sock:  # a real token's very first request, another host
            assert _status(_answer(sock, 10)) == (200, {"user": "dan"})
        assert "10.0.0.66 (through 127.0.0.1) with tokens not yet seen authenticated" in error["error"]["message"]
    finally:
        for sock in flood:
            sock.close()
        door.stop()


def test_s25_forged_token_flood_unproven_tokens_count_per_origin_and_all_origins_of_a_peer_stay_bounded() -> None:
    made_up = "unproven 127.0.0.1"
    assert share_key(made_up, {"X-Forwarded-For": "10.0.0.66"}) == "unproven 10.0.0.66 via 127.0.0.1"
    # the proxy appends the client it saw: only the last address counts (a client's own header is its word)
    assert share_key(made_up, {"X-Forwarded-For": "1.2.3.4, 10.0.0.66"}) == "unproven 10.0.0.66 via 127.0.0.1"
    assert share_key(made_up, {"X-Forwarded-For": "::ffff:10.0.0.9"}) == "unproven 10.0.0.9 via 127.0.0.1"
    assert share_key(made_up, {"X-Forwarded-For": "not an address"}) == made_up
    assert share_key(made_up, {}) == made_up
    assert share_key("user amy", {"X-Forwarded-For": "10.0.0.66"}) == "user amy"  # a proven user is the user
    assert share_key("address 127.0.0.1", {"X-Forwarded-For": "10.0.0.66"}) == "address 127.0.0.1"
    fair = FairShare(share=4, ceiling=20)
    assert fair.unproven_bound() == 10
    for i in range(10):  # ten origins behind one peer, one request each: together at the bound
        fair.answering(f"c{i}", f"unproven 10.0.0.{i} via 127.0.0.1")
    assert fair.over("new", "unproven 10.0.0.99 via 127.0.0.1", open_connections=15)
    assert not fair.over("new", "unproven 10.0.0.99 via 10.9.9.9", open_connections=15)  # another peer
    assert not fair.over("new", "user amy", open_connections=15)
    assert "the callers at 10.0.0.66 (through 127.0.0.1) with tokens not yet seen" in over_share_message(
        "unproven 10.0.0.66 via 127.0.0.1", 4, 4, 15, 20)
