"""Red team 40, R6: stalled bodies of many callers crowded out an honest user's moving uploads.

16 hub users each sent all but 200 bytes of a 16 MiB body in the first second, then nothing: the slow rule judged a
body by its whole-life average (high: they would "finish at once"), and past the budget the cut went by bytes per
caller, so the honest user's second concurrent 10 MiB upload (20 MiB in all, more than any one attacker's 16 MiB)
was the one refused 503 "the service holds 250 MiB". Now the stalled bodies of others are cut first whatever their
size, the slow rule looks at a body's recent pace, and a refusal still needed says whose bodies the budget holds.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (its own loop in a thread) in
front of a small tornado application that tells the front door who a token authenticated as (as the hub's identity
provider does); raw sockets that send, stall and trickle bodies. The cut hook is the one ``hub.serve`` audits with.
The sizes are the repro's scaled down 180x (a 90 KB body for 16 MiB, the budget 16 of them).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import tornado.web

from jupyter_sched.hub import body_budget, front_door
from jupyter_sched.hub.front_door import GuardedHTTPServer

from .test_red20_r1_chunked import Door, _answer
from .test_red24_r1_body_budget import half_body, status_and_error

STALLERS = [f"s{n}" for n in range(16)]
LIMIT = 100_000
BIG = 90_000
"""Each staller's body: all but 200 bytes of it sent at once (the repro's 16 MiB)."""
HELD = 16 * BIG
"""The budget: the 16 stallers fill it."""
UPLOAD = 70_000
"""Each of the honest user's two uploads (the repro's 10 MiB): two of them hold more than one staller's body."""


class _Who(tornado.web.RequestHandler):
    def post(self) -> None:
        token = self.request.headers.get("Authorization", "")
        if token.startswith("token "):
            front_door.note_caller(self.request, token.removeprefix("token "))  # as hub.identity does
        self.application.settings["ran"].append(len(self.request.body))
        self.write({"received": len(self.request.body)})


class ManyDoor(Door):
    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        self.cuts: list[tuple[str, str, str, str, int]] = []
        self.guarded = GuardedHTTPServer(tornado.web.Application([("/echo", _Who)], ran=self.ran), body_timeout=30.0,
                                         max_body_bytes=LIMIT, max_body_bytes_held=HELD, log_interval_s=0.2,
                                         on_body_cut=lambda *told: self.cuts.append(told))
        return self.guarded


@pytest.fixture
def door() -> Iterator[ManyDoor]:
    running = ManyDoor()
    try:
        for user in [*STALLERS, "ann"]:  # each token authenticates once: its bodies count as its user's from then on
            answer = httpx.post(running.url, content=b"{}", headers={"Authorization": f"token {user}"}, timeout=30)
            assert answer.status_code == 200
        running.ran.clear()
        yield running
    finally:
        running.stop()


def _wait(what: str, check: object) -> None:
    for _ in range(400):
        if callable(check) and check():
            return
        time.sleep(0.025)
    raise AssertionError(what)


def _stall(door: ManyDoor, users: list[str]) -> list[socket.socket]:
    """Each of ``users`` sends all but 200 bytes of a :data:`BIG` body at once, then nothing."""
    before = door.guarded.bodies.held
    socks = [half_body(door, f"token {user}", BIG, BIG - 200) for user in users]
    _wait("the front door did not take the stalled bodies",
          lambda: door.guarded.bodies.held >= before + BIG * len(users)
          and all(body.received == BIG - 200 for body in list(door.guarded.bodies._bodies.values())))
    return socks


def _head(sock: socket.socket, size: int) -> None:
    sock.sendall(f"POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: token ann\r\nContent-Length: {size}\r\n"
                 f"Connection: close\r\n\r\n".encode())


def test_red40_r6_moving_uploads_are_not_refused_for_stalled_bodies_of_others(
        door: ManyDoor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 600.0)  # the budget's rule only (the sweep's: the next test)
    stalled = _stall(door, STALLERS)
    try:
        assert door.guarded.bodies.held == HELD  # the budget is full of stalled bodies
        time.sleep(body_budget.STALLED_S + 0.3)  # no byte of them for longer than a moving upload ever pauses
        answers = _upload_two(door)  # ann uploads two notebooks at once, steadily
        for answer in answers:  # both taken: neither is "holding most" against the stalled bodies
            assert answer.startswith(b"HTTP/1.1 200") and b'"received": 70000' in answer, answer[:400]
        assert door.ran == [UPLOAD, UPLOAD]
        # two stalled bodies (of two callers) were cut for them, each told why, named and audited; the rest held
        assert len(door.cuts) == 2 and {code for _user, _target, code, _message, _n in door.cuts} == {"busy"}
        assert all("no byte of it came for" in message for *_rest, message, _n in door.cuts), door.cuts
        cut = {user for user, *_rest in door.cuts}
        assert door.guarded.bodies.held == 14 * BIG <= HELD  # the memory bound held throughout
        assert all(door.guarded.bodies.holding(f"user {user}") == BIG for user in STALLERS if user not in cut)
        for user, sock in zip(STALLERS, stalled, strict=True):
            if user in cut:  # answered at once (its connection then drains what still comes)
                head, error = status_and_error(_answer(sock, 2))
                assert head.startswith(b"HTTP/1.1 503") and error["field"] == "body", (head, error)
                assert f"was cut after {BIG - 200:,} bytes: no byte of it came for" in error["message"], error
    finally:
        for sock in stalled:
            sock.close()


def test_red40_r6_a_body_that_came_fast_then_stopped_is_cut_408_by_its_recent_pace(
        door: ManyDoor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 0.5)
    monkeypatch.setattr(body_budget, "RECENT_S", 1.5)
    monkeypatch.setattr(front_door, "SLOW_CUT_CLOSE_S", 0.2)  # the wait for the close after the 408 (2 s): not tested here
    with half_body(door, "token s0", BIG, BIG - 200) as sock:  # its whole-life average stays high for ever
        head, error = status_and_error(_answer(sock, 15))
    assert head.startswith(b"HTTP/1.1 408"), head
    assert error["code"] == "slow_body" and error["field"] == "body", error
    assert f"came too slowly: {BIG - 200:,} bytes in" in error["message"], error
    assert ", none for the last" in error["message"] and "for ever" in error["message"], error
    assert door.guarded.bodies.held == 0 and door.ran == []
    assert [(user, code) for user, _target, code, _message, _n in door.cuts] == [("s0", "slow_body")]


def test_red40_r6_a_refusal_still_needed_says_whose_bodies_the_budget_holds(
        door: ManyDoor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 600.0)  # only the budget's rule here
    monkeypatch.setattr(body_budget, "STALLED_S", 3.0)
    monkeypatch.setattr(body_budget, "CRAWL_S", 3.0)  # the young bodies below are not crawling yet either
    old = _stall(door, STALLERS[:1])
    time.sleep(3.3)  # s0's body is stalled; the next 15 are young (still coming, as far as anyone can tell)
    young = _stall(door, STALLERS[1:])
    try:
        # ann's 100 KB body: cutting s0's stalled 90 KB is not enough, and nobody else holds more than ann would
        with half_body(door, "token ann", LIMIT, 100) as sock:
            sock.shutdown(socket.SHUT_WR)
            head, error = status_and_error(_answer(sock, 10))
        assert head.startswith(b"HTTP/1.1 503") and error["code"] == "busy" and error["field"] == "body", head
        message = error["message"]
        assert "the service holds" in message and "16 bodies of 16 other callers" in message, message
        assert "1 of them stalled (no byte for 3 s, or crawling; 1 caller)" in message, message
        assert "holding more than you would (0.1 MiB) does not make room" in message, message
        assert door.cuts == [] and door.guarded.bodies.held == HELD  # nothing was cut for a refused body
    finally:
        for sock in [*old, *young]:
            sock.close()


def _upload_two(door: ManyDoor) -> list[bytes]:
    """ann uploads two notebooks at once, steadily, the second 0.1 s after the first: both answers."""
    first = socket.create_connection(("127.0.0.1", door.port), timeout=10)
    second = socket.create_connection(("127.0.0.1", door.port), timeout=10)
    with first, second:
        _head(first, UPLOAD)
        first.sendall(b"x" * (UPLOAD // 10))
        time.sleep(0.1)
        _head(second, UPLOAD)
        for piece in range(10):
            if piece:
                first.sendall(b"x" * (UPLOAD // 10))
            second.sendall(b"x" * (UPLOAD // 10))
            time.sleep(0.1)
        return [_answer(first, 10), _answer(second, 10)]


def test_verify40_v4_bodies_trickling_a_byte_at_a_time_are_stalled_for_room_too(
        door: ManyDoor, monkeypatch: pytest.MonkeyPatch) -> None:
    """Verify 40, V4: the 16 stallers each send one byte every 0.4 s after their burst (never idle for STALLED_S):
    ann's second upload was refused 503 "the service holds …" until the slow rule cut them seconds later."""
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 600.0)  # the budget's rule only, not the sweep's 408
    stalled = _stall(door, STALLERS)
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(0.4):
            for sock in stalled:
                try:
                    sock.send(b"x")
                except OSError:
                    pass

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        time.sleep(body_budget.CRAWL_S + 1.5)  # each is older than CRAWL_S, a byte of each came within 0.4 s
        now = time.monotonic()
        bodies = list(door.guarded.bodies._bodies.values())
        assert len(bodies) == 16 and all(body.idle(now) < body_budget.STALLED_S for body in bodies)  # not idle
        answers = _upload_two(door)
        for answer in answers:  # both taken: a byte now and then does not make a body "moving"
            assert answer.startswith(b"HTTP/1.1 200") and b'"received": 70000' in answer, answer[:400]
        assert door.ran == [UPLOAD, UPLOAD]
        assert len(door.cuts) == 2 and {code for _user, _target, code, _message, _n in door.cuts} == {"busy"}
        assert all(f"bytes/s over the last {body_budget.CRAWL_S:g} s, far too slowly" in message
                   for *_rest, message, _n in door.cuts), door.cuts
        cut = {user for user, *_rest in door.cuts}
        assert door.guarded.bodies.held == 14 * BIG <= HELD  # the memory bound held throughout
        assert all(door.guarded.bodies.holding(f"user {user}") == BIG for user in STALLERS if user not in cut)
        stop.set()
        trickler.join(5)
        for user, sock in zip(STALLERS, stalled, strict=True):
            if user in cut:
                head, error = status_and_error(_answer(sock, 2))
                assert head.startswith(b"HTTP/1.1 503") and error["field"] == "body", (head, error)
                assert "far too slowly to be whole in time, and another caller's body needed room" in error["message"]
    finally:
        stop.set()
        for sock in stalled:
            sock.close()


def test_verify40_v4_a_refusal_counts_crawling_bodies_as_stalled(
        door: ManyDoor, monkeypatch: pytest.MonkeyPatch) -> None:
    """The census of a refusal says the crawling bodies are stalled (they are the ones cut first)."""
    monkeypatch.setattr(body_budget, "SLOW_GRACE_S", 600.0)
    stalled = _stall(door, STALLERS[:2])
    try:
        budget = door.guarded.bodies
        time.sleep(body_budget.CRAWL_S + 1.2)
        for sock in stalled:
            sock.send(b"x")
        time.sleep(0.2)
        now = time.monotonic()
        assert budget.census(now, "user ann") == (2, 2, 0, 0)  # no timeout said: only idle bodies count
        assert budget.census(now, "user ann", 30.0) == (2, 2, 2, 2)  # 1 byte in 2 s: crawling
        answer = body_budget.over_budget_answer(LIMIT, 0, budget.share, budget.held, budget.budget, "user ann",
                                                budget.census(now, "user ann", 30.0))
        assert b"2 of them stalled (no byte for 1 s, or crawling; 2 callers)" in answer, answer
    finally:
        for sock in stalled:
            sock.close()
