"""The sync client's HTTP, on the standard library: the CLI is a new process per command.

Importing httpx costs a process 0.1-0.4 s (0.45 s measured under a load average of 10 on two
cores, with rich and click installed, which its CLI module pulls in) — more than everything else
``jupyter-sched status`` does. The sync client's request/response calls need no more than
``http.client``: one kept-alive HTTP/1.1 connection per client, JSON bodies, a timeout. The
streaming route (``GET events``) and tests that speak through an ``httpx.MockTransport`` still use
httpx (:mod:`.sync` loads it only then); the async client is httpx throughout.
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

__all__ = ["HttpReply", "HttpUnreachable", "StdlibHttp"]

_RETRYABLE = frozenset({"GET", "HEAD", "DELETE", "PUT"})
"""Sent again, once, when a kept-alive connection turns out closed before any answer (idempotent)."""


class HttpUnreachable(Exception):
    """No answer: refused, reset, timed out, or not HTTP. ``cause`` is the underlying error."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


@dataclass(frozen=True, slots=True)
class HttpReply:
    """An answer: status code, ``Content-Type`` and the body bytes."""

    status: int
    content_type: str
    body: bytes
    link: str = ""
    """The ``Link`` header (RFC 8288; paged answers name their next page there), "" when none."""

    @property
    def text(self) -> str:
        """The body as text (UTF-8, bad bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


class StdlibHttp:
    """Requests relative to one base URL over a kept-alive ``http.client`` connection.

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
        self._headers = dict(headers)
        self._timeout_s = timeout_s
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._https:
                self._conn = http.client.HTTPSConnection(self._host, self._port, timeout=timeout_s,
                                                         context=ssl.create_default_context())
            else:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout_s)
        self._conn.timeout = timeout_s
        if self._conn.sock is not None:
            self._conn.sock.settimeout(timeout_s)
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
        timeout = self._timeout_s if timeout_s is None else timeout_s
        reused = self._conn is not None
        for attempt in (1, 2):
            conn = self._connection(timeout)
            try:
                conn.request(method, target, body=payload, headers=headers)
                response = conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if attempt == 1 and reused and method in _RETRYABLE:
                    continue  # the server closed the idle kept-alive connection: open a new one
                raise HttpUnreachable(exc) from None
            except (OSError, http.client.HTTPException) as exc:  # refused, timed out (TimeoutError), not HTTP
                self.close()
                raise HttpUnreachable(exc) from None
            except BaseException:
                # interrupted mid-exchange (Ctrl-C, a kernel's stop button): the answer may still be on
                # its way, so this connection cannot carry the next request (issue 20: the withdrawal
                # after an interrupted %gpu request read the old answer and reported "does not speak HTTP")
                self.close()
                raise
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return HttpReply(response.status, response.getheader("Content-Type", "") or "", data,
                             response.getheader("Link", "") or "")
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def close(self) -> None:
        """Close the connection (the next request opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
