"""Red team 39, R6: slow bodies of a few hub users spent the bodies' budget, and every other submit was 503.

Four hub users each opened 4 connections with ``Content-Length: 16777216`` and sent 100 bytes every 2 s: each body's
length was reserved from its head, the four quarters filled ``c.FrontDoor.max_body_bytes_held``, and every honest
submit, even 44 bytes, was answered 503 "the service holds 256 MiB of unfinished request bodies"; nobody said who held
it. Now a small body is outside the budget, a body too slow for ``body_timeout_s`` is cut 408, past the budget the
caller holding most loses its slowest body first, and whoever's bodies were cut is named in the line and audited.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (its own loop in a thread) in
front of a small tornado application that tells the front door who a token authenticated as (as the hub's identity
provider does); raw sockets that trickle bodies. The audit hook is the server's own (``hub.serve`` writes the row).
"""

from __future__ import annotations

import gc
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import tornado.web

from jupyter_sched.hub import body_budget, front_door
from jupyter_sched.hub.body_budget import SMALL_BODY_BYTES
from jupyter_sched.hub.front_door import GuardedHTTPServer

from .test_red20_r1_chunked import Door, _answer
from .test_red24_r1_body_budget import USERS, _Echo, half_body, status_and_error

LIMIT = 100_000
HELD = 250_000
"""The budget: three callers' 83 KB bodies (each over the small size) fill it."""
BIG = 83_000
CLOSE_S = 0.2
"""``front_door.SLOW_CUT_CLOSE_S`` in the tests of a body cut 408 for its pace: the rest of such a body is read and
dropped for that long before the close the test waits for (2 s in the product: 2 s a cut body here, session 41)."""


class SlowDoor(Door):
    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        self.cuts: list[tuple[str, str, str, str, int]] = []
        self.guarded = GuardedHTTPServer(tornado.web.Application([("/echo", _Echo)], ran=self.ran), body_timeout=30.0,
                                         max_body_bytes=LIMIT, max_body_bytes_held=HELD, log_interval_s=0.2,
                                         on_body_cut=lambda *told: self.cuts.append(told))
        return self.guarded


@pytest.fixture
def door() -> Iterator[SlowDoor]:
    running = SlowDoor()
    try:
        for token in USERS:  # each token authenticates once: its bodies count as its user's from then on
            assert httpx.post(running.url, content=b"{}", headers={"Authorization": token}, timeout=30).status_code == 200
        running.ran.clear()
        yield running
    finally:
        running.stop()


def _wait(what: str, check: Any) -> None:
    for _ in range(400):
        if check():
            return
        time.sleep(0.025)
    raise AssertionError(what)


def _holders(door: SlowDoor, users: list[str], sent: int = 100) -> list[socket.socket]:
    socks = [half_body(door, f"token {user}", BIG, sent) for user in users]
    _wait(f"the front door did not reserve {len(users)} bodies", lambda: door.guarded.bodies.held >= BIG * len(users))
    return socks


def test_red39_r6_small_submit_taken_while_others_hold_the_body_budget_with_slow_bodies(door: SlowDoor) -> None:
    held = _holders(door, ["amy", "bob", "cat"])
    try:
        assert door.guarded.bodies.held == 3 * BIG > HELD - 2000  # the budget is full
        for size in (44, 2000, SMALL_BODY_BYTES):  # a submit without a carried notebook: taken, never 503
            answer = httpx.post(door.url, content=b"x" * size, headers={"Authorization": "token dan"}, timeout=30)
            assert answer.status_code == 200 and answer.json() == {"received": size}, (size, answer.text[:300])
        assert door.guarded.bodies.held == 3 * BIG  # the small bodies were outside the budget
    finally:
        for sock in held:
            sock.close()


def test_red39_r6_past_the_budget_the_caller_holding_most_loses_its_slowest_body_and_is_audited(
        door: SlowDoor, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_budget, "STALLED_S", 600.0)  # all three still coming (stalled bodies: red team 40, R6)
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 600.0)  # and the sweep's pace rule (its own test) left out
    monkeypatch.setattr(body_budget, "CRAWL_S", 600.0)  # and crawling bodies (verify 40, V4): none is judged so
    amy = half_body(door, "token amy", BIG, 100)  # trickling
    others = _holders(door, ["bob", "cat"], sent=60_000)
    try:
        # dan's 70 KB body would pass the budget; amy, bob and cat each hold more than it: amy's, slowest, is cut
        with caplog.at_level(logging.WARNING, logger="jupyter_sched.front_door"):
            answer = httpx.post(door.url, content=b"x" * 70_000, headers={"Authorization": "token dan"}, timeout=30)
            assert answer.status_code == 200 and answer.json() == {"received": 70_000}, answer.text[:300]
            head, error = status_and_error(_answer(amy, 10))
            assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 5" in head, head
            assert error["code"] == "busy" and error["field"] == "body", error
            assert "was cut after 100 bytes" in error["message"] and "held the most" in error["message"], error
            assert "c.FrontDoor.max_body_bytes_held" in error["hint"], error
            # bob and cat, faster, keep theirs
            assert door.guarded.bodies.holding("user bob") == BIG and door.guarded.bodies.holding("user cat") == BIG
            _wait("the front door's line did not come", lambda: "bodies cut from user amy (1)" in caplog.text)
        assert [(user, target, code) for user, target, code, _message, _n in door.cuts] == [("amy", "POST /echo", "busy")]
        # a newcomer that would itself hold most is still refused 503, and nobody's body is cut for it
        with half_body(door, "token dan", LIMIT, 100) as sock:
            sock.shutdown(socket.SHUT_WR)
            head, error = status_and_error(_answer(sock, 10))
        assert head.startswith(b"HTTP/1.1 503") and "the service holds" in error["message"], error
        assert door.guarded.bodies.holding("user bob") == BIG and len(door.cuts) == 1
    finally:
        for sock in [amy, *others]:
            sock.close()


def test_red39_r6_a_slow_content_length_body_is_cut_408_naming_the_field_and_the_fix(
        door: SlowDoor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 0.5)
    monkeypatch.setattr(front_door, "SLOW_CUT_CLOSE_S", CLOSE_S)
    with half_body(door, "token amy", BIG, 100) as sock:
        head, error = status_and_error(_answer(sock, 15))  # never more of it: cut at the next sweep past the grace
    assert head.startswith(b"HTTP/1.1 408"), head
    assert error["code"] == "slow_body" and error["field"] == "body", error
    assert "came too slowly: 100 bytes in" in error["message"] and f"{BIG:,} bytes" in error["message"], error
    assert "c.FrontDoor.body_timeout_s" in error["hint"], error
    assert door.guarded.bodies.held == 0 and door.ran == []
    assert [(user, code) for user, _target, code, _message, _n in door.cuts] == [("amy", "slow_body")]
    # a body that comes at a steady pace is not cut
    with socket.create_connection(("127.0.0.1", door.port), timeout=10) as sock:
        sock.sendall(f"POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: token bob\r\n"
                     f"Content-Length: {BIG}\r\n\r\n".encode())
        for _ in range(8):  # ~1.2 s at about 70 KB/s
            sock.sendall(b"x" * (BIG // 8))
            time.sleep(0.15)
        sock.sendall(b"x" * (BIG - 8 * (BIG // 8)))
        answer = _answer(sock, 5)
    assert answer.startswith(b"HTTP/1.1 200") and b'"received": 83000' in answer, answer[:300]


def test_red39_r6_many_cut_bodies_leave_nothing_tracked(door: SlowDoor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 0.2)
    monkeypatch.setattr(front_door, "SLOW_CUT_CLOSE_S", CLOSE_S)
    for _round in range(5):
        socks = [half_body(door, f"token {user}", BIG, 100) for user in ("amy", "bob", "cat")]
        for sock in socks:
            status_and_error(_answer(sock, 15))
            sock.close()
    gc.collect()
    _wait("bodies stayed tracked", lambda: door.guarded.bodies.held == 0 and not list(door.guarded.bodies._bodies))
    assert front_door._REQUESTS is not None
