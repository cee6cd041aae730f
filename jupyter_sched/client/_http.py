"""The sync client's HTTP, on the standard library: the CLI is a new process per command.

Importing httpx costs a process 0.1-0.4 s (0.45 s measured under a load average of 10 on two
cores, with rich and click installed, which its CLI module pulls in) — more than everything else
``jupyter-sched status`` does. The sync client's request/response calls need no more than one
kept-alive HTTP/1.1 connection per client, JSON bodies and a timeout. An ``http://`` server (every
local one) is spoken to over a plain socket (:class:`_PlainConnection`): ``http.client`` brings
``email`` and ``ssl`` with it, ~20 ms of CPU at every CLI start, more than the rest of the client.
``https://`` goes through ``http.client`` (it needs ``ssl`` anyway). The streaming route (``GET
events``) and tests that speak through an ``httpx.MockTransport`` still use httpx (:mod:`.sync`
loads it only then); the async client is httpx throughout.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, cast
from urllib.parse import urlencode, urlsplit

from ..errors import SchedError

if TYPE_CHECKING:
    from ..hub.peer import Refusal

__all__ = ["AddressTaken", "ConnectionGone", "HttpReply", "HttpUnreachable", "StdlibHttp", "connected_check"]

_RETRYABLE = frozenset({"GET", "HEAD", "DELETE", "PUT"})
"""Sent again, once, when a kept-alive connection turns out closed before any answer (idempotent)."""

_MAX_HEAD = 64 * 1024
"""Most bytes of status line and headers read before the answer is taken for something not HTTP."""


class AddressTaken(SchedError):
    """A loopback address answered from a socket of another account (not root, not this one, not one of
    ``$JUPYTER_SCHED_SERVICE_UIDS``): nothing was sent, the token least of all (verify26 V2, V5)."""

    code = "address_taken"


class ConnectionGone(ConnectionResetError):
    """The connection closed between connect and its first byte: no live socket on this host holds its other end
    (the service killed mid-restart, or a squatter toggling its listener). Nothing was sent; like any connection
    closed before an answer it is :class:`HttpUnreachable`, which a wait rides out (CI of session 26: a restart's
    dying listener took the connection and a ride-out failed at once with :class:`AddressTaken`)."""


def _taken(sock: socket.socket) -> Refusal | None:
    """Why nothing may be sent over the just-connected ``sock`` (:func:`jupyter_sched.hub.peer.connected_refusal`)."""
    from ..hub.peer import connected_refusal  # ipaddress: only when connecting

    allowed = {int(uid) for uid in os.environ.get("JUPYTER_SCHED_SERVICE_UIDS", "").replace(",", " ").split()
               if uid.isdigit()}
    return connected_refusal(sock, allowed_uids=allowed, what="your request nor its token")


_TAKEN_HINT = ("tell your hub admin (or whoever runs the scheduler) — nothing was sent; if the service runs as that "
               "uid, set JUPYTER_SCHED_SERVICE_UIDS")


def connected_check(sock: socket.socket) -> str | None:
    """The check every connection of a client passes before its first byte (httpx's too:
    :func:`jupyter_sched.hub.guarded.guarded_transport`; verify27 V2: ``connect_async()`` and ``events()``
    sent the token to a squatter). None: it may be sent; a string: the connection is gone (an unreachable
    server, which a wait rides out).

    Raises:
        AddressTaken: another account's socket accepted it (nothing sent).
    """
    said = _taken(sock)
    if said is None or said.gone:
        return said
    raise AddressTaken(said, hint=_TAKEN_HINT)


class HttpUnreachable(Exception):
    """No answer: refused, reset, timed out, or not HTTP. ``cause`` is the underlying error."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


class HttpReply(NamedTuple):
    """An answer: status code, ``Content-Type``, the body bytes and the ``Link`` header (RFC 8288;
    paged answers name their next page there; "" when none)."""

    status: int
    content_type: str
    body: bytes
    link: str = ""
    location: str = ""  # the ``Location`` header of a redirect ("" when none)
    total: str = ""  # the ``X-Total-Count`` header of a page of GET queue ("" when none)
    retry_after: str = ""  # the ``Retry-After`` header of a 429 (seconds; "" when none: .busy)

    @property
    def text(self) -> str:
        """The body as text (UTF-8, bad bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


def _not_http(what: str) -> Exception:
    """The error of an answer that is not HTTP/1.x (``http.client``'s class, so callers and
    :func:`~jupyter_sched.client.sync.why_unreachable` tell it as they always did; imported only
    on this path)."""
    import http.client

    return http.client.BadStatusLine(what[:200])


class _PlainConnection:
    """One kept-alive HTTP/1.1 connection over a plain socket: what :class:`StdlibHttp` needs of
    ``http.client.HTTPConnection`` (one request at a time; bodies by Content-Length, chunked, or
    until the server closes). A server that closes the connection before any byte of the answer
    raises ``ConnectionResetError`` (``http.client.RemoteDisconnected`` is one), which
    :meth:`StdlibHttp.request` retries once for an idempotent request on a reused connection."""

    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout_s
        self.sock: socket.socket | None = None
        self._buffer = b""
        literal = f"[{host}]" if ":" in host else host
        self._host_header = literal if port == 80 else f"{literal}:{port}"

    def exchange(self, method: str, target: str, body: bytes | None,
                 headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        """Send the request; return ``(status, headers (names lower-case, repeats joined with ", "),
        body)``."""
        if any(ch <= " " or ch == "\x7f" for ch in target) or any(
                ch in value for value in headers.values() for ch in "\r\n\0"):
            # refused as http.client refuses them (ValueError), never sent: a request line or header
            # split by a CR/LF would be another request
            raise ValueError(f"a URL or header with a space or control character in it: {target[:200]!r}")
        if self.sock is None:
            # an ASCII host as bytes, which getaddrinfo takes as well (typeshed says str only): a str is
            # encoded with the idna codec, whose import is ~2 ms more of every CLI call
            host = cast(str, self.host.encode("ascii")) if self.host.isascii() else self.host
            self.sock = socket.create_connection((host, self.port), timeout=self.timeout)
            said = _taken(self.sock)
            if said is not None:
                self.sock.close()
                self.sock = None
                if said.gone:
                    raise ConnectionGone(str(said))
                raise AddressTaken(said, hint=_TAKEN_HINT)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._buffer = b""
        self.sock.settimeout(self.timeout)
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._host_header}", "Accept-Encoding: identity"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
        while True:
            status, version, fields = self._head(first=True)
            if status >= 200 or status == 101:
                break
            # an interim answer (100 Continue) comes before the real one
        closing = fields.get("connection", "").lower() == "close" or (
            version == "HTTP/1.0" and fields.get("connection", "").lower() != "keep-alive")
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            data = b""
        elif "chunked" in fields.get("transfer-encoding", "").lower():
            data = self._chunked()
        elif fields.get("content-length", "").strip().isdigit():
            data = self._exactly(int(fields["content-length"].strip()))
        else:  # the body ends where the server closes the connection
            data, closing = self._until_closed(), True
        if closing:
            self.close()
        return status, fields, data

    def _recv(self) -> bytes:
        assert self.sock is not None
        return self.sock.recv(65536)

    def _line(self, *, first: bool = False) -> bytes:
        """One CRLF-terminated line (without it)."""
        while b"\r\n" not in self._buffer:
            if len(self._buffer) > _MAX_HEAD:
                raise _not_http("an answer line longer than 64 KiB")
            more = self._recv()
            if not more:
                if first and not self._buffer:
                    raise ConnectionResetError("the server closed the connection before an answer")
                raise _not_http(f"the answer ended inside a line: {self._buffer[:80]!r}")
            self._buffer += more
        line, _, self._buffer = self._buffer.partition(b"\r\n")
        return line

    def _head(self, *, first: bool) -> tuple[int, str, dict[str, str]]:
        status_line = self._line(first=first).decode("latin-1")
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise _not_http(status_line or "an empty status line")
        fields: dict[str, str] = {}
        size = len(status_line)
        while True:
            line = self._line().decode("latin-1")
            size += len(line)
            if not line:
                return int(code), version, fields
            if size > _MAX_HEAD:
                raise _not_http("headers longer than 64 KiB")
            name, sep, value = line.partition(":")
            if not sep:
                raise _not_http(f"a header line without a colon: {line[:80]!r}")
            key = name.strip().lower()
            fields[key] = f"{fields[key]}, {value.strip()}" if key in fields else value.strip()

    def _exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            more = self._recv()
            if not more:
                raise _not_http(f"the answer ended after {len(self._buffer)} of {size} bytes")
            self._buffer += more
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size_text = self._line().split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise _not_http(f"a chunk size that is not hexadecimal: {size_text[:40]!r}") from None
            if size == 0:
                while self._line():  # trailers, up to the empty line
                    pass
                return b"".join(parts)
            parts.append(self._exactly(size))
            if self._exactly(2) != b"\r\n":
                raise _not_http("a chunk not followed by CRLF")

    def _until_closed(self) -> bytes:
        parts: list[bytes] = [self._buffer]
        self._buffer = b""
        while more := self._recv():
            parts.append(more)
        return b"".join(parts)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self._buffer = b""


class _TlsConnection:
    """:class:`_PlainConnection`'s ``exchange`` over ``http.client.HTTPSConnection`` (https://)."""

    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        import http.client
        import ssl

        self._conn = http.client.HTTPSConnection(host, port, timeout=timeout_s, context=ssl.create_default_context())
        self.timeout = timeout_s

    def exchange(self, method: str, target: str, body: bytes | None,
                 headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        self._conn.timeout = self.timeout
        if self._conn.sock is not None:
            self._conn.sock.settimeout(self.timeout)
        self._conn.request(method, target, body=body, headers=dict(headers))
        response = self._conn.getresponse()
        data = response.read()
        fields = {name.lower(): response.getheader(name, "") or "" for name in ("Content-Type", "Link", "Connection",
                                                                             "Retry-After")}
        if fields["connection"].lower() == "close":
            self.close()
        return response.status, fields, data

    def close(self) -> None:
        self._conn.close()


def _http_exception(exc: BaseException) -> bool:
    """Whether ``exc`` is an ``http.client.HTTPException`` (never, unless http.client was loaded)."""
    import sys

    module = sys.modules.get("http.client")
    return module is not None and isinstance(exc, module.HTTPException)


class StdlibHttp:
    """Requests relative to one base URL over one kept-alive connection (module docstring).

    Args:
        base_url: absolute URL every path is relative to (``http://host:port/prefix/api/sched/``).
        headers: sent with every request (the token, ``Accept``).
        timeout_s: default seconds per request (connect and each read).
    """

    def __init__(self, base_url: str, headers: Mapping[str, str], timeout_s: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path if parts.path.endswith("/") else parts.path + "/"
        self._base_url = base_url
        self._headers = dict(headers)
        self.timeout_s = timeout_s
        """Default seconds per request."""
        self._conn: _PlainConnection | _TlsConnection | None = None

    def speaks_as(self, base_url: str, headers: Mapping[str, str]) -> bool:
        """Whether this sends its requests to ``base_url`` with exactly ``headers``."""
        return self._base_url == base_url and self._headers == dict(headers)

    def _connection(self, timeout_s: float) -> _PlainConnection | _TlsConnection:
        if self._conn is None:
            self._conn = (_TlsConnection if self._https else _PlainConnection)(self._host, self._port, timeout_s)
        self._conn.timeout = timeout_s
        return self._conn

    def request(self, method: str, path: str, *, params: Mapping[str, str] | None = None, body: Any = None,
                timeout_s: float | None = None) -> HttpReply:
        """Send one request; return the answer (any status).

        Args:
            method: ``GET``, ``POST``, ...
            path: relative to the base URL (``jobs/j-1``).
            params: query parameters.
            body: JSON-serializable body, or None for none.
            timeout_s: seconds for this request (default: the client's).

        Raises:
            HttpUnreachable: no HTTP answer.
        """
        target = self._prefix + path.lstrip("/")
        if params:
            target += "?" + urlencode(params)
        headers = dict(self._headers)
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        timeout = self.timeout_s if timeout_s is None else timeout_s
        reused = self._conn is not None
        for attempt in (1, 2):
            conn = self._connection(timeout)
            try:
                status, fields, data = conn.exchange(method, target, payload, headers)
            except (BrokenPipeError, ConnectionResetError) as exc:  # http.client's RemoteDisconnected too
                self.close()
                if attempt == 1 and reused and method in _RETRYABLE:
                    continue  # the server closed the idle kept-alive connection: open a new one
                raise HttpUnreachable(exc) from None
            except OSError as exc:  # refused, timed out (TimeoutError)
                self.close()
                raise HttpUnreachable(exc) from None
            except BaseException as exc:
                # interrupted mid-exchange (Ctrl-C, a kernel's stop button): the answer may still be on
                # its way, so this connection cannot carry the next request (issue 20: the withdrawal
                # after an interrupted %gpu request read the old answer and reported "does not speak HTTP")
                self.close()
                if isinstance(exc, Exception) and _http_exception(exc):  # what answers is not HTTP
                    raise HttpUnreachable(exc) from None
                raise
            return HttpReply(status, fields.get("content-type", ""), data, fields.get("link", ""),
                             fields.get("location", ""), fields.get("x-total-count", ""),
                             fields.get("retry-after", ""))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def close(self) -> None:
        """Close the connection (the next request opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
