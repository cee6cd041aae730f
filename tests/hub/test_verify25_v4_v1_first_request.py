"""verify25 V4 and V1: a new real token's first request paid for other callers' garbage at the front door.

V4: made-up tokens were counted per origin address as "tokens not yet seen authenticated", the share a new real
token's first request falls in. On a LocalProcessSpawner hub every account reaches the proxy from 127.0.0.1, so
a flood of made-up tokens from one account held the share of every other account's first request: eve's fresh
token was answered 429. Now a credential the hub refused (made up, revoked) is remembered
(:meth:`~jupyter_sched.hub.fair_share.CallerKeys.refuse`, told by the identity provider): its later requests
count as "refused PEER", apart from the tokens not yet checked, and its bodies are bounded as a tokenless
caller's.

V1: a first request's body refused because the unproven share was full said "you already have 64.0 MiB of
unfinished request bodies here" to a user who held nothing; it now says whose the share is and what to do.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (tests/hub/
test_verify24_v3_ceiling_burst.py's doors) in front of a tornado application that tells the front door what the
hub said of each token, as :mod:`jupyter_sched.hub.identity` does; raw sockets sending what
configurable-http-proxy sends.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
import tornado.web

from jupyter_sched.hub import front_door
from jupyter_sched.hub.front_door import GuardedHTTPServer

from .test_red20_r1_chunked import _answer
from .test_red24_r1_body_budget import LIMIT, BudgetDoor, half_body, reserved, status_and_error
from .test_verify24_v3_ceiling_burst import WideDoor, _request, _status

USERS = {"token alice": "alice", "token dan": "dan", "token eve": "eve"}


class _HubSays(tornado.web.RequestHandler):
    """Who a token is, as the hub says it: a made-up token is refused after ``slow_s`` (told to the front door)."""

    slow_s: ClassVar[float] = 0.0

    async def get(self) -> None:
        user = USERS.get(self.request.headers.get("Authorization", ""))
        if user is None:
            await asyncio.sleep(type(self).slow_s)
            front_door.note_refused(self.request)  # as hub.identity does when the hub names nobody
            self.set_status(403)
            self.write({"error": {"code": "forbidden"}})
            return
        front_door.note_caller(self.request, user)
        self.write({"user": user})


class _FloodDoor(WideDoor):
    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        self.guarded = GuardedHTTPServer(tornado.web.Application([("/echo", _HubSays)]), max_connections=self.ceiling,
                                         idle_connection_timeout=60.0)
        return self.guarded


@pytest.fixture
def door() -> Iterator[_FloodDoor]:
    _HubSays.slow_s = 0.0
    running = _FloodDoor()
    try:
        yield running
    finally:
        running.stop()


def _count(door: _FloodDoor, prefix: str, at_least: int) -> None:
    for _ in range(500):
        if sum(1 for who in door.guarded.fair._answering.values() if who.startswith(prefix)) >= at_least:
            return
        time.sleep(0.01)
    raise AssertionError(f"{door.guarded.fair._answering}")


def test_verify25_v4_made_up_tokens_from_the_same_host_do_not_429_a_new_real_tokens_first_request(
        door: _FloodDoor) -> None:
    share = door.guarded.fair.share
    made_up = [f"token made-up-{i}" for i in range(share)]
    for token in made_up:  # mal's made-up tokens, each tried once: the hub refuses them
        with _request(door, token, "127.0.0.1") as sock:
            assert _status(_answer(sock, 10))[0] == 403
    _HubSays.slow_s = 5.0  # then sent again and again (a slow hub: they hold their connections meanwhile)
    flood = [_request(door, token, "127.0.0.1") for token in made_up]
    try:
        _count(door, "", share)  # the flood's requests are being answered
        flood += [socket.create_connection(("127.0.0.1", door.port), timeout=10) for _ in range(24)]
        for _ in range(300):  # the ceiling is pressed (at least 75 % of it open)
            if len(door.guarded._connections) >= 0.75 * door.ceiling:
                break
            time.sleep(0.01)
        # eve's new token, from the same host (every account of a LocalProcessSpawner hub): its first request
        with _request(door, "token eve", "127.0.0.1") as sock:
            assert _status(_answer(sock, 10)) == (200, {"user": "eve"})
        with _request(door, made_up[0], "127.0.0.1") as sock:  # the flood stays bounded, said truly
            status, error = _status(_answer(sock, 10))
        assert status == 429, (status, error)
        assert "the callers at 127.0.0.1 with tokens the hub refused have" in error["error"]["message"], error
    finally:
        for sock in flood:
            sock.close()


def test_verify25_v4_a_refused_token_sends_no_large_body() -> None:
    """A token the hub refused is no better than none for bodies: over 64 KiB, 401 from the head, unread."""
    running = BudgetDoor()
    try:
        keys = running.guarded.keys
        keys.refuse(front_door.credential_digest({"Authorization": "token made-up"}, "/echo")[1])  # type: ignore[index]
        with half_body(running, "token made-up", LIMIT - 1, 1000) as sock:
            head, error = status_and_error(_answer(sock, 10))
        assert head.startswith(b"HTTP/1.1 401"), head
        assert "came with a token or cookie the hub refused" in error["message"], error
        assert error["details"] == {"credentials": "refused"} and "hub/token" in error["hint"], error
        assert running.guarded.bodies.held == 0 and running.ran == []
    finally:
        running.stop()


def test_verify25_v1_a_first_requests_body_refused_in_the_unproven_share_says_whose_share_it_is() -> None:
    running = BudgetDoor()
    held = []
    try:
        # bodies of tokens not yet checked (made up, never answered yet) hold the share of this address
        held.append(half_body(running, "token never-checked", 90_000, 50_000))
        reserved(running, 90_000)
        with half_body(running, "token eve", 70_000, 1000) as sock:  # eve's real token, its very first request
            sock.shutdown(socket.SHUT_WR)
            head, error = status_and_error(_answer(sock, 10))
        assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 5" in head, head
        message = error["message"]
        assert "you already have" not in message, message
        assert ("a request body of 70,000 bytes was not taken: the share of requests from 127.0.0.1 whose tokens are "
                "not yet authenticated holds 0.1 MiB of unfinished request bodies (at most 0.1 MiB for them together) "
                "— requests of other callers, not necessarily yours") in message, message
        assert "retry in 5 s" in error["hint"] and "GET api/sched/me" in error["hint"], error
    finally:
        for sock in held:
            sock.close()
        running.stop()
