"""Red team 24, R1: bodies buffered before authentication had no bound on their sum.

Each body was capped (``c.FrontDoor.max_body_bytes``, 17 MiB) but tornado buffers it whole before
the handler runs and authenticates the caller: with no token, 30 connections each sending all but
the last byte of a 17 MiB body took the service 269 → 779 MiB in 2.7 s (1000 allowed ≈ 17 GiB).
Now a body over 64 KiB without a credential is answered 401 from its head, unread, and each body's
length is reserved against ``c.FrontDoor.max_body_bytes_held`` and the caller's share of it: past
either, 503 with ``Retry-After`` from the head.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (its own
loop in a thread) in front of a small tornado application that tells the front door who a token
authenticated as (as the hub's identity provider does); raw sockets that send half a body and wait.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import tornado.web
from traitlets import TraitError

from jupyter_sched.hub import front_door
from jupyter_sched.hub.body_budget import TOKENLESS_BODY_BYTES, caller_share
from jupyter_sched.hub.front_door import FrontDoor, GuardedHTTPServer

from .test_red20_r1_chunked import Door, _answer

LIMIT = 100_000
"""The test server's max_body_bytes."""
HELD = 250_000
"""The test server's max_body_bytes_held: a caller's share is one LIMIT (a quarter is less)."""
USERS = {"token amy": "amy", "token bob": "bob", "token cat": "cat", "token dan": "dan"}


class _Echo(tornado.web.RequestHandler):
    def post(self) -> None:
        if user := USERS.get(self.request.headers.get("Authorization", "")):
            front_door.note_caller(self.request, user)  # as hub.identity does once the token authenticated
        self.application.settings["ran"].append(len(self.request.body))
        self.write({"received": len(self.request.body)})


class BudgetDoor(Door):
    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        self.guarded = GuardedHTTPServer(tornado.web.Application([("/echo", _Echo)], ran=self.ran), body_timeout=30.0,
                                         max_body_bytes=LIMIT, max_body_bytes_held=HELD)
        return self.guarded


@pytest.fixture
def door() -> Iterator[BudgetDoor]:
    running = BudgetDoor()
    try:
        for token in USERS:  # each token authenticates once: its bodies count as its user's from then on
            assert httpx.post(running.url, content=b"{}", headers={"Authorization": token}, timeout=30).status_code == 200
        running.ran.clear()
        yield running
    finally:
        running.stop()


def half_body(door: Door, token: str | None, length: int, sent: int) -> socket.socket:
    """A connection that sent a POST head with ``Content-Length: length`` and ``sent`` bytes of the body."""
    sock = socket.create_connection(("127.0.0.1", door.port), timeout=10)
    auth = f"Authorization: {token}\r\n" if token else ""
    sock.sendall(f"POST /echo HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: {length}\r\n\r\n".encode() + b"x" * sent)
    return sock


def reserved(door: BudgetDoor, at_least: int) -> None:
    """Wait until the front door has read the heads sent so far (``at_least`` bytes reserved): a
    half body's head is read on the server's loop, after ``half_body`` returned."""
    for _ in range(200):
        if door.guarded.bodies.held >= at_least:
            return
        time.sleep(0.025)
    raise AssertionError(f"the front door reserved {door.guarded.bodies.held} bytes, not {at_least}")


def status_and_error(answer: bytes) -> tuple[bytes, dict[str, Any]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, json.loads(body)["error"]


def test_red24_r1_a_body_over_64_kib_without_a_token_is_answered_401_from_its_head_unread(door: BudgetDoor) -> None:
    with half_body(door, None, LIMIT - 1, 1000) as sock:  # the caller waits: the answer comes before the body
        answer = _answer(sock, 10)
    head, error = status_and_error(answer)
    assert head.startswith(b"HTTP/1.1 401"), answer[:300]
    assert error["field"] == "Authorization" and "token" in error["hint"], error
    assert f"{TOKENLESS_BODY_BYTES:,}" in error["message"], error
    assert door.ran == [] and door.guarded.bodies.held == 0
    # a small tokenless body still reaches the service (which answers it as its auth decides)
    assert httpx.post(door.url, content=b"x" * 1000, timeout=30).json() == {"received": 1000}


def test_red24_r1_a_chunked_body_without_a_token_is_cut_401_past_64_kib(door: BudgetDoor) -> None:
    with socket.create_connection(("127.0.0.1", door.port), timeout=10) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(8):  # 80 KB in 10 KB chunks, then the end
            sock.sendall(b"%x\r\n%s\r\n" % (10_000, b"x" * 10_000))
        sock.sendall(b"0\r\n\r\n")
        answer = _answer(sock, 20)
    head, error = status_and_error(answer)
    assert head.startswith(b"HTTP/1.1 401"), answer[:300]
    assert error["field"] == "Authorization" and door.ran == []


def test_red24_r1_unfinished_bodies_are_bounded_per_caller_and_in_all_503_with_retry_after(door: BudgetDoor) -> None:
    assert caller_share(HELD, LIMIT) == LIMIT
    held = [half_body(door, "token amy", 90_000, 50_000)]
    reserved(door, 90_000)
    try:
        # amy's second large body would pass her share: 503 from its head, unread
        with half_body(door, "token amy", 90_000, 1000) as sock:
            sock.shutdown(socket.SHUT_WR)  # the caller gives up on its body: the service closes after the answer
            head, error = status_and_error(_answer(sock, 10))
        assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 5" in head, head
        assert error["code"] == "busy" and error["field"] == "body" and "per caller" in error["message"], error
        assert "c.FrontDoor.max_body_bytes_held" in error["hint"], error
        held += [half_body(door, "token bob", 90_000, 50_000)]
        reserved(door, 180_000)
        # a third caller's large body would pass the service's budget (3 x 90 KB > 250 KB)
        with half_body(door, "token cat", 90_000, 1000) as sock:
            sock.shutdown(socket.SHUT_WR)  # the caller gives up on its body: the service closes after the answer
            head, error = status_and_error(_answer(sock, 10))
        assert head.startswith(b"HTTP/1.1 503"), head
        assert "the service holds" in error["message"], error
        # a small body still fits; what is reserved never passes the budget
        assert httpx.post(door.url, content=b"x" * 5000, headers={"Authorization": "token dan"},
                          timeout=30).json() == {"received": 5000}
        assert door.guarded.bodies.held <= HELD
    finally:
        for sock in held:
            sock.close()
    # the closed connections' reservations end: a large body of cat's is taken again

    def taken() -> bool:
        answer = httpx.post(door.url, content=b"x" * 90_000, headers={"Authorization": "token cat"}, timeout=30)
        return answer.status_code == 200

    for _ in range(100):
        if taken():
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the reservations of closed connections were not given back")
    assert door.guarded.bodies.held == 0


def test_red24_r1_max_body_bytes_held_below_zero_is_refused_naming_the_fix() -> None:
    with pytest.raises(TraitError, match=r"Fix: set e\.g\."):
        FrontDoor(max_body_bytes_held=-1)
    assert FrontDoor().max_body_bytes_held == 256 << 20
