"""How a chunked request body is chunked: the front door's bound on chunks too small for their number (red team 21, R4).

Tornado spends ~16 µs of the IO loop on each chunk of a ``Transfer-Encoding: chunked`` body whatever
its size (a ``read_until`` of the size line, a ``read_bytes`` of the data, the CRLF), and since 6.6 it
coalesces small chunks before handing them on, so the delegate's ``data_received`` never sees how
many there were. A 400 KB body sent as 1-byte chunks (legal, under ``max_body_bytes``) so held the
central service's loop ~26 s, and every other user's request was ~5x slower meanwhile.

:class:`ChunkLines` sits on a connection's stream and reads each chunk-size line as tornado reads
it: the number of chunks and the bytes they declare. The front door (:mod:`.front_door`) refuses a
body whose chunks, after the first :data:`FREE_CHUNKS`, average under ``c.FrontDoor.min_chunk_bytes``
(:func:`too_finely_chunked`) with :func:`chunking_answer`, a JSON 400 naming ``body`` and the fix.
Pure tornado, no scheduler state.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from tornado.iostream import IOStream

__all__ = ["CHUNKING_HINT", "DRAIN_CHUNKS", "FREE_CHUNKS", "ChunkLines", "chunking_answer", "chunking_message",
           "too_finely_chunked"]

FREE_CHUNKS = 256
"""Chunks of a body taken before their mean size is checked (a small body in small chunks is cheap
whatever its shape)."""
DRAIN_CHUNKS = 1024
"""Most chunks of a body refused for its chunking read and dropped after the 400 (each costs the
loop what a refused one did), so a caller still sending reads the answer; then the connection closes."""
CHUNKING_HINT = ("send the body with a Content-Length (any HTTP client does for a body it holds), or in chunks of a "
                 "few KiB; an admin sets c.FrontDoor.min_chunk_bytes")


def too_finely_chunked(chunks: int, size: int, min_chunk_bytes: int) -> bool:
    """Whether ``chunks`` chunks declaring ``size`` bytes in all are too many: more than
    :data:`FREE_CHUNKS` plus one per ``min_chunk_bytes`` bytes (0: never)."""
    return min_chunk_bytes > 0 and chunks > FREE_CHUNKS + size // min_chunk_bytes


def chunking_message(chunks: int, size: int, min_chunk_bytes: int) -> str:
    """The words of the 400 (and of its audit row): a chunked body refused after ``chunks`` chunks of
    ``size`` bytes in all, below ``min_chunk_bytes`` bytes a chunk on average."""
    return (f"the request body (sent chunked) came in {chunks:,} chunks for {size:,} bytes; this service takes "
            f"chunks of at least {min_chunk_bytes:,} bytes on average after the first {FREE_CHUNKS}")


def chunking_answer(chunks: int, size: int, min_chunk_bytes: int) -> bytes:
    """The whole HTTP 400 answer (JSON error naming field ``body``; the connection closes after it)."""
    body = json.dumps({"error": {"code": "validation_error", "field": "body",
                                 "message": chunking_message(chunks, size, min_chunk_bytes),
                                 "hint": CHUNKING_HINT}}).encode()
    head = (f"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body


ChunkSeen = Callable[[int], None]
"""Told of each chunk-size line read: the size the chunk declares (bytes; 0 ends the body)."""


class ChunkLines:
    """Reads the chunk-size lines of ``stream`` as tornado reads them (its only ``read_until`` calls
    on a server connection: the head is read with ``read_until_regex``) and tells the watcher of the
    request being read, if any, each chunk's declared size. Installed once per connection.

    It holds its stream weakly: the stream holds it (its ``read_until``), and a strong reference back
    made each closed connection's stream a cycle freed only by a full garbage collection, which large
    bodies do not prompt; the stream's read buffer kept each body (7.5 MiB for a 7.5 MB notebook) until
    then: memory grew per large request, refused or not (verify 24, V2)."""

    def __init__(self, stream: IOStream) -> None:
        self._stream = weakref.ref(stream)
        self._read_until = type(stream).read_until
        self.watcher: ChunkSeen | None = None
        """The current request's watcher (None between requests or for a body not sent chunked)."""
        stream.read_until = self.read_until  # type: ignore[method-assign]  # one connection's stream only

    def read_until(self, delimiter: bytes, max_bytes: int | None = None) -> Awaitable[bytes]:
        """The stream's ``read_until``, its line told to the watcher once read."""
        stream = self._stream()
        if stream is None:  # not reached: only the stream itself calls this
            raise RuntimeError("jupyter_sched: read_until on a connection already gone")
        future: Any = self._read_until(stream, delimiter, max_bytes)
        if self.watcher is not None:
            if future.done():  # the line was in the buffer: told now, before tornado reads the chunk
                self._seen(future)
            else:
                future.add_done_callback(self._seen)
        return future  # type: ignore[no-any-return]

    def _seen(self, future: Any) -> None:
        watcher = self.watcher
        if watcher is None or future.cancelled() or future.exception() is not None:
            return
        line = bytes(future.result())
        try:
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
        except ValueError:  # tornado refuses it 400 ("invalid chunk size") itself
            return
        watcher(max(size, 0))
