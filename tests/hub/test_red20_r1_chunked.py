"""Red team 20, R1: a body sent *chunked* (no Content-Length) over ``c.FrontDoor.max_body_bytes``.

Before the fix tornado's own cap raised ``HTTPInputError("chunked body too large")`` in the middle of
the body: the service logged "Malformed HTTP message" and closed the connection with the body unread
(a reset straight at the port; JupyterHub's proxy answered its HTML 503), and nothing was audited.
Now the front door counts a chunked body as it arrives and answers the same JSON 413 naming ``body``
as for a Content-Length head, tells the audit hook, and drops the rest (bounded) before closing.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (its own
tornado loop in a thread) in front of a small tornado application; httpx and raw sockets as callers.
The whole service and the hub's proxy: tests/hub/test_red17_front_door.py and test_red19_r5_body.py.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import tornado.web
from tornado.httputil import HTTPHeaders

from jupyter_sched.hub import front_door
from jupyter_sched.hub.front_door import GuardedHTTPServer, too_large_message

LIMIT = 100_000
"""The test server's max_body_bytes."""
TOKEN = {"Authorization": "token abc"}
"""A credential: a body over 64 KiB without one is refused 401 before this cap applies (red team 24, R1)."""


class _Echo(tornado.web.RequestHandler):
    def post(self) -> None:
        self.application.settings["ran"].append(len(self.request.body))
        self.write({"received": len(self.request.body)})


class Door:
    """A GuardedHTTPServer (max_body_bytes :data:`LIMIT`) on 127.0.0.1, served by a thread's loop."""

    def __init__(self) -> None:
        self.ran: list[int] = []
        self.told: list[tuple[HTTPHeaders, str, int | None, int]] = []
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(30), "the test server did not start"
        self.url = f"http://127.0.0.1:{self.port}/echo"

    def _serve(self) -> None:
        async def main() -> None:
            server = self.server(tornado.web.Application([("/echo", _Echo)], ran=self.ran))
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sock.listen(64)
            sock.setblocking(False)
            self.port = sock.getsockname()[1]
            server.add_sockets([sock])
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self._ready.set()
            await self._stop.wait()
            server.stop()

        asyncio.run(main())

    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        """The server under test (red team 21, R4's tests give it a chunking bound)."""
        return GuardedHTTPServer(app, max_body_bytes=LIMIT, body_timeout=30.0,
                                 on_too_large=lambda *told: self.told.append(told))

    def stop(self) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


@pytest.fixture
def door() -> Iterator[Door]:
    running = Door()
    try:
        yield running
    finally:
        running.stop()


def _pieces(total: int, size: int = 16_384) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        piece = b"x" * min(size, total - sent)
        sent += len(piece)
        yield piece


def _answer(sock: socket.socket, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionError):
        pass
    return data


def _the_413(status: int, content_type: str, text: str) -> dict[str, Any]:
    assert status == 413, (status, text[:300])
    assert content_type.startswith("application/json"), content_type
    error: dict[str, Any] = json.loads(text)["error"]
    assert error["code"] == "too_large" and error["field"] == "body", error
    assert f"{LIMIT:,}" in error["message"] and "chunked" in error["message"], error
    assert "c.FrontDoor.max_body_bytes" in error["hint"], error
    return error


def test_red20_r1_a_chunked_body_over_the_cap_gets_the_json_413_naming_body_and_is_told_for_the_audit(
        door: Door) -> None:
    # fails before the fix: tornado's "chunked body too large" closed the connection mid-body (a reset or a bare 400)
    answer = httpx.post(door.url, content=_pieces(3 * LIMIT), timeout=30,
                        headers={"Authorization": "token abc", "Content-Type": "application/json"})
    error = _the_413(answer.status_code, answer.headers["content-type"], answer.text)
    assert error["message"] == too_large_message(None, LIMIT)
    assert door.ran == []  # the handler never ran on a cut body
    assert len(door.told) == 1, door.told
    headers, target, length, limit = door.told[0]
    assert (target, length, limit) == ("POST /echo", None, LIMIT)
    assert headers["Authorization"] == "token abc"  # what the hub hook audits the caller by
    # the service still answers, on a new connection
    assert httpx.post(door.url, content=b"{}", timeout=30).json() == {"received": 2}


def test_red20_r1_a_chunked_body_under_the_cap_reaches_the_handler_whole(door: Door) -> None:
    answer = httpx.post(door.url, content=_pieces(LIMIT), timeout=30, headers=TOKEN)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json() == {"received": LIMIT} and door.ran == [LIMIT] and door.told == []


def test_red20_r1_one_chunk_declaring_more_than_the_cap_gets_the_413_too(door: Door) -> None:
    # fails before the fix: tornado refused the chunk's declared size at once with a bare "400 Bad Request"
    with socket.create_connection(("127.0.0.1", door.port), timeout=10) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: token abc\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"%x\r\n" % (1 << 30) + b"x" * (2 * LIMIT))
        sock.shutdown(socket.SHUT_WR)  # the caller gives up after 2 x the cap: the service closes after the 413
        answer = _answer(sock, 20)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer[:300]
    content_type = HTTPHeaders.parse(head.partition(b"\r\n")[2].decode())["Content-Type"]
    _the_413(413, content_type, body.decode())
    assert door.ran == [] and [told[2] for told in door.told] == [None]


def test_red20_r1_a_refused_chunked_body_is_dropped_until_it_ends_then_the_connection_closes(door: Door) -> None:
    # the rest of the body is read (not left unread: a reset) and the connection then closes after the 413
    with socket.create_connection(("127.0.0.1", door.port), timeout=10) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: token abc\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in _pieces(4 * LIMIT, 10_000):
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        sock.sendall(b"0\r\n\r\n")
        answer = _answer(sock, 20)  # ends at the service's close (EOF), not at the timeout
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"Connection: close" in head, answer[:300]
    assert json.loads(body)["error"]["field"] == "body"
    assert door.ran == []


def test_red20_r1_a_refused_chunked_body_is_dropped_at_most_drain_bytes(door: Door,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # a caller that never stops sending is cut once DRAIN_BYTES were dropped after the 413
    monkeypatch.setattr(front_door, "DRAIN_BYTES", 1 << 20)
    sent = 0
    with socket.create_connection(("127.0.0.1", door.port), timeout=10) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: token abc\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
        with pytest.raises(ConnectionError):  # reset or broken pipe once the service closed (not a timeout)
            while sent < (256 << 20):
                sock.sendall(piece)
                sent += len(piece)
    assert sent < (64 << 20), sent  # the cap + 1 MiB dropped + the sockets' buffers, not the 256 MiB tried
    assert door.ran == [] and len(door.told) == 1
