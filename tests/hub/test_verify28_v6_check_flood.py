"""verify28 V6: a flood of made-up tokens starved every first request through the first-credential check.

verify26 V11's fix asks the hub who a credential not seen before names before counting its request, 16 checks at
once. They waited in one first-come queue, unbounded, and went on for requests whose clients had left: 6,000
pipelined requests with fresh random tokens made a new real token's first request wait 33-37 s, 30 s of bursts
answered every bystander 503, and minutes later the service still asked the hub ~150 lookups a second for tokens
nobody waited for (RSS 228 → 903 MiB). Now (:mod:`jupyter_sched.hub.check_queue`): a waiting check whose askers
all closed is dropped unasked; at most 32 wait per origin (256 in all) and the flood's tail is answered 429 at once
(field ``credential``), without asking the hub; origins are served in turn; and the credentials learned are kept
across a restart (a 0600 file of digests), so a known user never joins the queue.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (its own loop in a thread,
as tests/hub/test_red20_r1_chunked.py's doors) with a credential check that stands for the hub's (it waits on a
gate the test opens: a hub busy with the flood), raw sockets sending what configurable-http-proxy sends.
"""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tornado.web
from tornado.httputil import HTTPHeaders

from jupyter_sched.hub import front_door
from jupyter_sched.hub.check_queue import CHECKS_WAITING_PER_ORIGIN, CheckQueue
from jupyter_sched.hub.fair_share import CallerKeys
from jupyter_sched.hub.front_door import CHECKS_AT_ONCE, LEARNED_KEEP_S, GuardedHTTPServer

from .test_red20_r1_chunked import Door, _answer
from .test_verify24_v3_ceiling_burst import _request, _status
from .test_verify26_v11_fresh_made_up_tokens import fresh_token_flood

REAL = {"token real-eve": "eve", "token real-alice": "alice"}
FLOOD_ORIGIN, EVE_ORIGIN = "10.0.0.66", "10.0.0.7"


class _Identity(tornado.web.RequestHandler):
    """What the identity provider does once the hub answered: tell the front door who the token named."""

    async def get(self) -> None:
        user = REAL.get(self.request.headers.get("Authorization", ""))
        if user is None:
            front_door.note_refused(self.request)
            self.set_status(403)
            self.write({"error": {"code": "forbidden"}})
            return
        front_door.note_caller(self.request, user)
        self.write({"user": user})


class _CheckDoor(Door):
    """A front door whose hub check waits on :meth:`open_gate` for made-up tokens (a hub busy with the flood)."""

    keys_file: str | None = None

    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        self.asked: list[str] = []
        self.gate: asyncio.Event | None = None

        async def check(kind: str, headers: HTTPHeaders, target: str) -> str | None:
            token = headers.get("Authorization", "")
            self.asked.append(token)
            if token in REAL:
                return REAL[token]
            if self.gate is None:
                self.gate = asyncio.Event()
            await self.gate.wait()
            return None

        self.guarded = GuardedHTTPServer(tornado.web.Application([("/echo", _Identity)]), idle_connection_timeout=60.0,
                                         check_credential=check, keys_file=self.keys_file)
        return self.guarded

    def open_gate(self) -> None:
        assert self._loop is not None

        def opened() -> None:
            if self.gate is None:
                self.gate = asyncio.Event()
            self.gate.set()

        self._loop.call_soon_threadsafe(opened)

    def settled(self) -> None:
        """Wait until no check waits or runs."""
        for _ in range(1000):
            if self.guarded._queue.waiting() == 0 and self.guarded._running == 0:
                return
            time.sleep(0.01)
        raise AssertionError("checks still waiting")


@pytest.fixture
def door() -> Iterator[_CheckDoor]:
    running = _CheckDoor()
    try:
        yield running
    finally:
        running.open_gate()
        running.stop()


def _refused_429(socks: list[socket.socket], at_least: int) -> list[dict[str, Any]]:
    """Read the flood's sockets until ``at_least`` of them were answered (and closed); the 429s' errors."""
    selector = selectors.DefaultSelector()
    got: dict[socket.socket, bytes] = {}
    for sock in socks:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    closed = 0
    for _ in range(600):
        for key, _events in selector.select(timeout=0.1):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                chunk = sock.recv(65536)
            except (BlockingIOError, ConnectionError):
                chunk = b""
            if chunk:
                got[sock] = got.get(sock, b"") + chunk
            else:
                selector.unregister(sock)
                closed += 1
        if closed >= at_least:
            break
    selector.close()
    errors = []
    for data in got.values():
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429"), data[:300]
        assert b"Retry-After: 2" in head, head
        errors.append(json.loads(body)["error"])
    assert closed >= at_least, (closed, at_least)
    return errors


def queued_then_answered(door: _CheckDoor, eve: socket.socket, origin: str, socks: list[socket.socket]) -> None:
    """``eve``'s request (real-eve's token, from ``origin``) waits in the check queue behind the flood's checks; the
    flood's clients (``socks``) leave, the hub answers, and eve's is answered 200 as eve."""
    for _ in range(500):
        if door.guarded._queue.waiting(origin) == 1:
            break
        time.sleep(0.01)
    assert door.guarded._queue.waiting(origin) == 1
    for sock in socks:  # the flood's clients leave
        sock.close()
    door.open_gate()
    with eve:
        assert _status(_answer(eve, 30)) == (200, {"user": "eve"})
    door.settled()


def test_verify28_v6_a_made_up_token_flood_is_bounded_and_a_fresh_real_tokens_first_request_answers(
        door: _CheckDoor) -> None:
    connections, each = 200, 30  # 6,000 pipelined requests, each with a fresh made-up token, from one origin
    socks = fresh_token_flood(door, connections, each, "/echo", FLOOD_ORIGIN)  # verify28's flood1.py
    try:
        # the flood's tail is refused at once (the hub asked nothing for it): all but those under way or waiting
        errors = _refused_429(socks, connections - CHECKS_AT_ONCE - CHECKS_WAITING_PER_ORIGIN)
        assert errors and all(error["field"] == "credential" and error["code"] == "busy" for error in errors)
        assert (f"{CHECKS_WAITING_PER_ORIGIN} requests from {FLOOD_ORIGIN} (through 127.0.0.1) with tokens not seen "
                f"before wait for the hub") in errors[0]["message"], errors[0]
        assert len(door.asked) == CHECKS_AT_ONCE  # the hub is busy with 16; 32 more wait; nothing else asked
        # eve's fresh real token, from another host, while the flood's checks hold the hub
        eve = _request(door, "token real-eve", EVE_ORIGIN)
        queued_then_answered(door, eve, f"{EVE_ORIGIN} via 127.0.0.1", socks)
    finally:
        for sock in socks:
            sock.close()
    # the hub was asked for the 16 under way and for eve: the 32 waiting were dropped unasked, the rest refused
    assert len(door.asked) == CHECKS_AT_ONCE + 1, len(door.asked)
    assert door.asked[-1] == "token real-eve"
    counts = door.guarded._counts
    assert counts["refused 429: too many credentials not seen before waiting for the hub's check"] >= (
        connections - CHECKS_AT_ONCE - CHECKS_WAITING_PER_ORIGIN), counts
    assert counts["checks of credentials dropped unasked (every request carrying it had closed its connection)"] \
        == CHECKS_WAITING_PER_ORIGIN, counts


def test_verify28_v6_a_closed_connections_check_is_never_made(door: _CheckDoor) -> None:
    busy = [_request(door, f"token made-up-{i}", FLOOD_ORIGIN) for i in range(CHECKS_AT_ONCE)]
    try:
        for _ in range(500):
            if len(door.asked) == CHECKS_AT_ONCE:
                break
            time.sleep(0.01)
        gone = _request(door, "token gone-before-its-turn", "10.0.0.9")
        for _ in range(500):
            if door.guarded._queue.waiting() == 1:
                break
            time.sleep(0.01)
        assert door.guarded._queue.waiting() == 1
        gone.close()  # its client left while its check waited
        door.open_gate()
        door.settled()
        for sock in busy:
            assert _status(_answer(sock, 30))[0] == 403  # the checked ones: named nobody, answered
    finally:
        for sock in busy:
            sock.close()
    assert "token gone-before-its-turn" not in door.asked, door.asked
    assert len(door.asked) == CHECKS_AT_ONCE


def test_verify28_v6_waiting_checks_are_taken_in_turn_across_origins() -> None:
    queue: CheckQueue[str] = CheckQueue(lambda item: not item.endswith("gone"), per_origin=3, total=5)
    assert [queue.offer("a", f"a{i}") for i in range(4)] == [True, True, True, False]  # a's bound
    assert queue.offer("b", "b0") and queue.offer("c", "c0gone")
    assert queue.offer("d", "d0")  # the bound in all, once the dead were dropped
    assert not queue.offer("e", "e0")
    taken = [queue.take() for _ in range(6)]
    assert [item for item, _ in taken] == ["a0", "b0", "d0", "a1", "a2", None]
    assert [dropped for _, dropped in taken] == [["c0gone"], [], [], [], [], []]
    assert queue.waiting() == 0
    queue.offer("a", "a9gone")
    queue.offer("b", "b1")
    assert queue.take() == ("b1", ["a9gone"])


def test_verify28_v6_credentials_learned_before_a_restart_are_not_checked_again(tmp_path: Path) -> None:
    keys_file = str(tmp_path / "front_door_keys.json")
    first = type("_Kept", (_CheckDoor,), {"keys_file": keys_file})()
    try:
        with _request(first, "token real-alice", "10.0.0.5") as sock:
            assert _status(_answer(sock, 30)) == (200, {"user": "alice"})
        assert first.asked == ["token real-alice"]
    finally:
        first.stop()  # the service stops (its keys written)
    assert stat.S_IMODE(os.stat(keys_file).st_mode) == 0o600
    kept = Path(keys_file).read_text()
    assert "real-alice" not in kept and '"alice"' in kept  # digests, never the token
    again = type("_Kept", (_CheckDoor,), {"keys_file": keys_file})()  # restarted
    try:
        with _request(again, "token real-alice", "10.0.0.5") as sock:
            assert _status(_answer(sock, 30)) == (200, {"user": "alice"})
        assert again.asked == []  # known: never waited behind unknown ones
    finally:
        again.open_gate()
        again.stop()
    keys = CallerKeys()  # an expired row is not learned again
    assert keys.restore([("d1", "alice", 1000.0), ("d2", "bob", 5000.0)], now=2000.0, keep_s=LEARNED_KEEP_S) == 1
    assert keys.key(("token", "d2"), "p") == "user bob" and keys.key(("token", "d1"), "p") == "unproven p"
