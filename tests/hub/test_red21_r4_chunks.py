"""Red team 21, R4: a body sent in 1-byte chunks (legal chunked encoding, under ``max_body_bytes``).

Tornado spends ~16 µs of the IO loop on each chunk whatever its size (a ``read_until`` and a
``read_bytes`` per chunk), so a 400 KB body of 1-byte chunks held the central service's loop ~26 s
and slowed every other user's request ~5x; nothing bounded the chunk count and nothing was audited.
Now the front door refuses a chunked body whose chunks, after the first :data:`FREE_CHUNKS`, average
under ``c.FrontDoor.min_chunk_bytes``: a JSON 400 naming ``body`` and the fix, the audit hook told
once, at most :data:`DRAIN_CHUNKS` more chunks read before the connection closes. Ordinary chunked
clients (a generator's KiB pieces, a small body in a few small chunks) are served as before.

Real parts: :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real TCP port (its own
tornado loop in a thread, tests/hub/test_red20_r1_chunked.py's :class:`Door`), raw sockets and httpx as
callers. The whole service: tests/hub/test_red17_front_door.py; audited on a real hub:
tests/hub/test_red19_r5_body.py.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest
import tornado.web
from tornado.httputil import HTTPHeaders

from jupyter_sched.hub.chunking import CHUNKING_HINT, FREE_CHUNKS, chunking_message
from jupyter_sched.hub.front_door import GuardedHTTPServer

from .test_red20_r1_chunked import Door

LEAST = 512
"""The test server's min_chunk_bytes (the default)."""


class ChunkDoor(Door):
    """:class:`Door` with ``min_chunk_bytes`` :data:`LEAST` and a chunking hook."""

    def __init__(self) -> None:
        self.chunking: list[tuple[HTTPHeaders, str, int, int, int]] = []
        super().__init__()

    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        return GuardedHTTPServer(app, max_body_bytes=100_000, body_timeout=30.0, min_chunk_bytes=LEAST,
                                 on_too_large=lambda *told: self.told.append(told),
                                 on_chunking=lambda *told: self.chunking.append(told))


@pytest.fixture
def door() -> Iterator[ChunkDoor]:
    running = ChunkDoor()
    try:
        yield running
    finally:
        running.stop()


def _chunked(body: bytes, size: int) -> bytes:
    """``body`` as chunks of ``size`` bytes, with the last chunk."""
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                    for i in range(0, len(body), size)) + b"0\r\n\r\n"


def _post(port: int, wire: bytes, timeout_s: float = 20) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: token abc\r\n"
                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + wire)
        sock.settimeout(timeout_s)
        data = b""
        try:
            while piece := sock.recv(65536):
                data += piece
                if b"\r\n\r\n" in data and b"Connection: keep-alive" not in data and data.endswith(b"}"):
                    break
        except (TimeoutError, ConnectionError):
            pass
        return data


def test_red21_r4_a_body_in_one_byte_chunks_gets_a_json_400_naming_body_and_the_fix_and_is_told_once(
        door: ChunkDoor) -> None:
    # fails before the fix: all 1,200 chunks were read (16 µs each on the loop) and the handler ran (200)
    body = json.dumps({"gpus": 0, "pad": "y" * 1_150}).encode()
    answer = _post(door.port, _chunked(body, 1))
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    assert HTTPHeaders.parse(head.partition(b"\r\n")[2].decode())["Content-Type"] == "application/json"
    error = json.loads(text)["error"]
    assert error["field"] == "body" and error["code"] == "validation_error", error
    assert error["message"] == chunking_message(FREE_CHUNKS + 1, FREE_CHUNKS + 1, LEAST), error
    assert "Content-Length" in error["hint"] and "c.FrontDoor.min_chunk_bytes" in error["hint"], error
    assert error["hint"] == CHUNKING_HINT
    assert door.ran == [] and door.told == []  # the handler never ran; no 413
    assert len(door.chunking) == 1, door.chunking
    headers, target, pieces, size, least = door.chunking[0]
    assert (target, pieces, size, least) == ("POST /echo", FREE_CHUNKS + 1, FREE_CHUNKS + 1, LEAST)
    assert headers["Authorization"] == "token abc"  # what the hub hook audits the caller by
    assert httpx.post(door.url, content=b"{}", timeout=30).json() == {"received": 2}  # the door still answers


def test_red21_r4_a_never_ending_stream_of_tiny_chunks_is_cut_after_a_bounded_number_more(door: ChunkDoor) -> None:
    # after the 400 at most DRAIN_CHUNKS more chunks are read, then the connection closes (not the whole body)
    sent = 0
    with socket.create_connection(("127.0.0.1", door.port), timeout=10) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"1\r\nx\r\n" * 4096
        with pytest.raises(ConnectionError):  # reset or broken pipe once the service closed (not a timeout)
            while sent < (32 << 20):  # after the refusal only the drop bound (64 MiB) would stop it before R4's
                sock.sendall(piece)
                sent += len(piece)
    # the sockets' buffers (a few MB on loopback), not the 32 MiB tried
    assert sent < (12 << 20), sent
    assert door.ran == [] and len(door.chunking) == 1 and door.told == []


@pytest.mark.parametrize(("size", "chunk"), [
    pytest.param(100_000, 16_384, id="a generator's 16 KiB pieces"),
    pytest.param(60_000, 600, id="600-byte chunks, above the mean"),
    pytest.param(200, 1, id="a small body in 1-byte chunks, under the free chunks"),
    pytest.param(20_000, 8, id="small chunks first, then one big one"),
])
def test_red21_r4_ordinary_chunked_bodies_reach_the_handler_whole(door: ChunkDoor, size: int, chunk: int) -> None:
    body = b"x" * size
    if chunk == 8:  # 200 chunks of 8 bytes, then the rest at once: the mean is what counts
        wire = _chunked(body[:1_600], 8).removesuffix(b"0\r\n\r\n") + _chunked(body[1_600:], size)
    else:
        wire = _chunked(body, chunk)
    answer = _post(door.port, wire)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert json.loads(answer.partition(b"\r\n\r\n")[2]) == {"received": size}
    assert door.ran == [size] and door.chunking == [] and door.told == []


def test_red21_r4_httpx_sending_a_generator_is_served(door: ChunkDoor) -> None:
    def pieces() -> Iterator[bytes]:  # no Content-Length: httpx sends it chunked
        for _ in range(10):
            yield b"y" * 5_000

    answer = httpx.post(door.url, content=pieces(), timeout=30)
    assert answer.status_code == 200 and answer.json() == {"received": 50_000}
    assert door.chunking == []


def test_red21_r4_min_chunk_bytes_zero_turns_the_check_off() -> None:
    class Off(ChunkDoor):
        def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
            return GuardedHTTPServer(app, max_body_bytes=100_000, body_timeout=30.0, min_chunk_bytes=0,
                                     on_chunking=lambda *told: self.chunking.append(told))

    running = Off()
    try:
        answer = _post(running.port, _chunked(b"z" * 2_000, 1))
        assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
        assert running.ran == [2_000] and running.chunking == []
    finally:
        running.stop()
