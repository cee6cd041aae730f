"""The central service's HTTP front door: timeouts, a connection ceiling, a body cap and one log line per interval.

The central service listens on a TCP port every local account can reach (JupyterHub's proxy and
the users' servers call it there). Tornado's defaults let any of them hold a connection with half a
request for an hour, without a token, so a few thousand idle sockets used up the service's file
descriptors: other users' requests then failed, and the accept loop logged one traceback per try
(red team 17, R6). :class:`FrontDoor` (settings ``c.FrontDoor.*``) builds the service's
``HTTPServer`` with:

* ``header_timeout_s`` — a connection must send a whole request head within it (also how long a
  kept-alive connection may sit idle between requests), ``body_timeout_s`` — likewise the body;
* ``max_connections`` — a ceiling on open connections (lowered to leave
  :data:`FD_RESERVE` descriptors of the process's ``RLIMIT_NOFILE`` to the engine, the store and the
  hub client). Past it, what one caller holds beyond fairness goes first (a pipelined request waiting
  for its caller to read the earlier answers, then a connection of a caller over
  ``max_connections_per_user``: verify 23, V5), then the connection that has waited longest *without a
  whole request* (half-sent head or body, or idle keep-alive; at least :data:`HEAD_GRACE_S`), then the
  answer read least (R2 below);
* ``max_body_bytes`` — the largest body (:data:`MAX_BODY_BYTES`, just above a carried notebook's
  limit); a longer ``Content-Length`` is answered 413 (field ``body``, the limit) from the head
  alone, before any of it is buffered or the caller authenticated (R11: tornado buffered 100 MB);
  the body still coming is then read and dropped (at most :data:`DRAIN_BYTES`, for at most
  ``body_timeout_s``) before the connection closes, so JupyterHub's proxy relays the 413 (R5).
  A body sent chunked (no ``Content-Length``) is counted as it arrives and answered the same 413
  once it passes the limit, then dropped the same way (red team 20, R1: tornado's own cap raised
  ``chunked body too large`` mid-body and closed the connection unanswered, a reset the proxy
  turned into its HTML 503, and nothing was audited);
* ``min_chunk_bytes`` — a chunked body's chunks must average at least this many bytes after its
  first :data:`~.chunking.FREE_CHUNKS`: tornado spends ~16 µs of the IO loop on each chunk whatever its
  size, so a body of 1-byte chunks (legal, under the byte cap) held the loop ~26 s for 400 KB and
  slowed every other user's request ~5x (red team 21, R4). Such a body is answered a JSON 400 naming
  ``body`` and the fix once it falls behind, told once to the audit hook, and the connection closed
  after at most :data:`~.chunking.DRAIN_CHUNKS` more chunks (:mod:`.chunking`);
* ``answer_timeout_s`` — an answer the caller does not read (bytes unsent and fewer than
  :data:`~.stalled_answers.MIN_ANSWER_RATE` a second read) is cut after it, and at the ceiling the
  longest-stalled answer (else any answer with bytes unsent) is cut before a newcomer is refused:
  whole requests whose answers were never read held a ceiling full of connections "being answered"
  for ever, with no token (red team 23, R2; :mod:`.stalled_answers`);
* pipelined requests — a connection's next request is taken only once its caller's side has
  acknowledged the earlier answers (:data:`PIPELINED_AHEAD_BYTES`: the kernel's send queue counts, not
  only tornado's buffer), and unacknowledged bytes count as unread for ``answer_timeout_s``: a caller
  that pipelined 200 small requests on each connection and read nothing had them all answered into the
  kernel's buffers, "being answered" the whole time and never stalled (verify 23, V5);
* ``max_body_bytes_held`` — bytes of unfinished bodies buffered at once, in all and per caller; a
  body over it is answered 503 (``Retry-After``) from its head, and a body over
  :data:`~.body_budget.TOKENLESS_BODY_BYTES` without a token or cookie 401, unread (red team 24, R1:
  1000 half-sent 17 MiB bodies took ~17 GiB, no token needed; :mod:`.body_budget`); a body of at most
  :data:`~.body_budget.SMALL_BODY_BYTES` is outside it, a body over it that comes too slowly for
  ``body_timeout_s`` is cut 408, and past the budget the caller holding most loses its slowest body first,
  named in the line and audited (red team 39, R6: four users' slow 16 MiB bodies had every submit answered 503);
* ``max_connections_per_user`` — while at least :data:`~.fair_share.PRESSURE_SHARE` of the ceiling is
  open, one caller (the hub user a request's token or cookie authenticated as, per request; else the
  peer address) may have this many connections being answered at once: a request beyond it is answered
  429 from its head (``Retry-After``, field ``connections``; the user audited once a minute) and at a
  full ceiling the caller most over it loses a connection before a newcomer is refused (verify 23, V5;
  :mod:`.fair_share`); made-up tokens count per origin host through the hub's proxy (session 25), whose ``X-Forwarded-For`` is believed
  only from ``trusted_proxies`` (default loopback; any other peer is its own origin: red team 29, R1) — and on
  loopback only from the proxy's accounts (``proxy_uids``): another local account connecting from loopback is a
  peer of its own, told by the account that opened the connection (the kernel's ``sock_diag``; red29 R1, session 30);
* ``check_credential`` — a request whose credential was neither authenticated nor refused before waits (its body
  unread) while the hub is asked who it names, :data:`CHECKS_AT_ONCE` checks at once, in turn, then counts as
  that user or as "refused PEER": a flood of made-up tokens, a fresh one per request, held the share of
  credentials not yet checked, and every honest first request of their host (after a restart, of every host)
  was answered 429 (verify 26, V11; the service's check is :mod:`.first_check`). Those waiting are bounded per
  origin, per peer (all its origins together) and in all, taken in turn across origins, and dropped unasked once their caller has gone; past the bound
  a request is answered 429 at once (field ``credential``, no hub call: verify 28, V6; :mod:`.check_queue`). The
  credentials learned are kept across a restart (``keys_file``: a 0600 JSON file of SHA-256 digest prefix → hub
  user with its expiry, :data:`LEARNED_KEEP_S` after it was learned; never a token), so after a restart every
  user's first request does not wait behind a flood's checks either. They only say who a request counts as here:
  the identity provider still authenticates every request with the hub;
* at a full ceiling a connection that waits less than :data:`HEAD_GRACE_S` for its request is never closed
  for a newcomer, accepting pauses (the newcomers wait in the kernel's queue, :data:`LISTEN_BACKLOG` deep)
  while nothing may be closed, and a newcomer's request head is looked at in its socket, unread: a caller
  who already has their share is answered the 429 at once (verify 24, V3: behind a flood of the hub proxy's
  new connections, a bystander's was closed unread and the proxy answered its HTML 503);
* accept errors (``EMFILE``/``ENFILE``) pause accepting for :data:`ACCEPT_PAUSE_S` instead of
  spinning, and what was closed or refused is logged as one summary line per ``log_interval_s``.

Pure tornado: no scheduler state; ``serve`` installs it (:meth:`FrontDoor.http_server`).
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import json
import logging
import os
import re
import resource
import socket
import struct
import termios
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from tornado import httputil
from tornado.http1connection import HTTP1Connection, HTTP1ServerConnection
from tornado.httpserver import HTTPServer, _HTTPRequestContext
from tornado.ioloop import IOLoop, PeriodicCallback
from tornado.iostream import IOStream, SSLIOStream, StreamClosedError
from traitlets import Float, Int, List, TraitError, Unicode, validate
from traitlets.config import LoggingConfigurable

from .. import sock_diag
from ..extension.background import fire_and_forget
from ..model.validation import MAX_NOTEBOOK_JSON_BYTES, MAX_SOURCE_BYTES
from ..safefd import open_fd
from .body_budget import (
    DEFAULT_HELD_BYTES,
    HELD_SETTING,
    SMALL_BODY_BYTES,
    STALLED_S,
    TOKENLESS_BODY_BYTES,
    BodyBudget,
    cut_answer,
    cut_message,
    over_budget_answer,
    slow_body_answer,
    slow_body_message,
    tokenless_answer,
)
from .check_queue import CheckQueue, checks_full_answer, checks_full_message, peer_of
from .chunking import DRAIN_CHUNKS, FREE_CHUNKS, ChunkLines, chunking_answer, too_finely_chunked
from .fair_share import (
    PRESSURE_SHARE,
    SHARE_FLOOR,
    SHARE_SETTING,
    CallerKeys,
    FairShare,
    credential_digest,
    default_share,
    over_share_answer,
    over_share_message,
    share_key,
    user_of,
)
from .forwarded import (
    DEFAULT_TRUSTED_PROXIES,
    PROXY_UIDS_SETTING,
    TrustedProxies,
    is_loopback,
    local_accounts_unknown,
    parse_trusted_proxies,
    peer_name,
)
from .forwarded import proxy_uids as _proxy_uids
from .peer import connecting_uid
from .stalled_answers import MIN_ANSWER_RATE, SWEEP_S, StalledAnswers

__all__ = ["ACCEPT_PAUSE_S", "CHECKS_AT_ONCE", "CHECK_PAUSE_S", "DRAIN_BYTES", "DRAIN_TIMEOUT_S", "FD_RESERVE",
           "HEAD_GRACE_S", "KEYS_SAVE_S", "LEARNED_KEEP_S", "MAX_BODY_BYTES", "PIPELINED_AHEAD_BYTES",
           "CredentialCheck", "FrontDoor", "GuardedHTTPServer", "Unchecked", "note_caller", "too_large_message"]

FD_RESERVE = 256
"""File descriptors kept out of the connection ceiling for the engine (job pipes, cgroup files),
the store and the hub client."""
MAX_BODY_BYTES = 2 * MAX_NOTEBOOK_JSON_BYTES + MAX_SOURCE_BYTES
"""The largest request body taken (17 MiB): the largest legitimate one carries a notebook
(``notebook_json``, at most 8 MiB of UTF-8) as a JSON string, whose escaping (every quote and
newline of the notebook's own JSON) can double it, and a script's ``source`` (at most 1 MiB)."""
_HEAD_BYTES = 64 << 10
"""Room for the request head in tornado's read buffer (its ``max_header_size`` default)."""
DRAIN_BYTES = 64 << 20
"""Most bytes of a refused (413) body read and dropped after the answer, so a proxy that is still
sending it reads the 413 rather than a reset connection (red team 19, R5); past it, the connection
is closed."""
DRAIN_TIMEOUT_S = 60.0
"""Longest a refused body is read and dropped (at most ``c.FrontDoor.body_timeout_s``)."""
ACCEPT_PAUSE_S = 0.5
"""How long accepting pauses after the process ran out of file descriptors."""
_FD_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
PIPELINED_AHEAD_BYTES = 0
"""Bytes of a connection's earlier answers that may still wait on its caller (in tornado's buffer or
the kernel's send queue, not yet acknowledged by the caller's side) when its next request is taken:
a pipelined request waits until the caller has them (verify 23, V5). A caller that sends its next
request after reading the last answer has acknowledged all of it by then (the request carries the ACK)."""
OVER_SHARE_CLOSE_S = 0.5
"""Longest a 429 over a caller's share may wait to be written before its connection closes (a caller
that does not read its answers would otherwise hold the descriptor, outside the ceiling's count)."""
LISTEN_BACKLOG = 4096
"""Connections the kernel keeps waiting to be accepted (capped by ``net.core.somaxconn``): past tornado's
128, a new connection's handshake was dropped and retried after 1, 3, 7 s — behind a flood of the hub proxy's
connections a bystander's request waited ~7 s, then was closed unread and answered the proxy's 503 (verify
24, V3). Waiting in the queue, its head is there when it is accepted, and read (:func:`_peeked_head`)."""
ROOM_POLL_S = 0.05
"""Longest a listening socket stays paused at a full ceiling before it looks again for a connection to close."""
HEAD_GRACE_S = 1.0
"""Least time a connection waits without a whole request before the ceiling may close it for a newcomer: one
accepted a moment ago has not been read yet (verify 24, V3: behind a flood of the hub proxy's new connections,
a bystander's was accepted and closed, unread, and the proxy answered its HTML 503)."""
DELIVERY_POLL_S = (0.005, 0.25)
"""First and longest pause between two looks at a held pipelined connection's undelivered bytes."""

CHECKS_AT_ONCE = 16
"""Checks of credentials not seen before (:meth:`GuardedHTTPServer.check_first`: the hub's token check) under way at
once; the others wait their turn, holding only their connection, per origin and bounded (:mod:`.check_queue`:
verify 28, V6). A flood of made-up tokens then costs the hub at most this many checks at once, and an honest first
request waits a turn among them instead of being refused 429 (verify 26, V11)."""
LEARNED_KEEP_S = 3600.0
"""Seconds a credential the hub named a user by stays known across a service restart (``keys_file``), from when it
was learned: the front door counts its requests as that user (the identity provider still asks the hub)."""
KEYS_SAVE_S = 10.0
"""Least seconds between two writes of ``keys_file`` (written when a credential was learned since)."""
CHECK_PAUSE_S = 5.0
"""After a check failed (the hub did not answer), credentials are not checked before being counted for this long:
their requests count among the unchecked, as before, and the identity provider answers them 503 (retry)."""

log = logging.getLogger("jupyter_sched.front_door")

BROKEN_HANDLER_LINE = "jupyter_sched: answered 500 to %s: its handler could not be built (once a minute; the summary counts the rest)"
"""The line of a request whose route's handler raised while being built (red40 R3), with its traceback."""

BROKEN_HANDLER_EVERY_S = 60.0
"""Seconds between two :data:`BROKEN_HANDLER_LINE` lines."""

_NO_CAP = 1 << 62
"""Tornado's own body cap on a chunked request: the front door counts that body itself (red team 20, R1)."""

TooLargeHook = Callable[[httputil.HTTPHeaders, str, int | None, int], None]
"""Told of each body refused 413: the request head's headers, ``"POST /path"``, the length its
``Content-Length`` claimed (None: sent chunked, refused once it passed the limit) and the limit in
bytes (``hub.serve`` audits the hub user its token names: red team 19, R5)."""
OverShareHook = Callable[[str, str, str, int], None]
"""Told of a request refused 429 over its caller's share (verify 23, V5), at most once per user per
:data:`~.fair_share.AUDIT_INTERVAL_S`: the hub user, ``"GET /path"``, the 429's words and how many of
the user's requests were refused since the last time (this one included)."""
ChunkedHook = Callable[[httputil.HTTPHeaders, str, int, int, int], None]
"""Told of each chunked body refused for its chunking (red team 21, R4): the headers, ``"POST /path"``,
the chunks read, the bytes they declared and the least mean size of a chunk (``min_chunk_bytes``)."""
BodyCutHook = Callable[[str, str, str, str, int], None]
"""Told of a hub user's body cut (red team 39, R6: too slow, 408 ``slow_body``; or to make room for another caller's,
503 ``busy``), at most once per user per :data:`~.fair_share.AUDIT_INTERVAL_S`: the user, ``"POST /path"``, the
code, the answer's words and how many of the user's bodies were cut since the last time (this one included)."""
SLOW_CUT_CLOSE_S = 2.0
"""Longest a body cut for its pace is read and dropped after the 408 before its connection closes (it comes slowly:
what is left of it would hold the connection until ``body_timeout_s``)."""


CredentialCheck = Callable[[str, httputil.HTTPHeaders, str], Awaitable[str | None]]
"""Asked who a request's credential names before the request is counted, when no earlier request carrying it
authenticated or was refused (verify 26, V11): its kind (``"token"``, ``"job"``, ``"cookie"``:
:func:`~.fair_share.credential_of`), the request's headers and target (path and query). Returns the hub user it
names (who it counts as from then on), or None when it names nobody (made up, revoked, forged: it counts as
``"refused PEER"``). Raises :class:`Unchecked` when it is not its to say (a genuine job token: the service checks
it), anything else when it could not tell (the hub did not answer). ``hub.first_check`` is the service's."""


class Unchecked(Exception):
    """A :data:`CredentialCheck` does not say who the credential names: it counts as not yet checked."""


def too_large_message(length: int | None, limit: int) -> str:
    """The words of a 413 (and of its audit row): a ``length``-byte body (None: a chunked body that
    passed the limit) over ``limit`` bytes."""
    said = (f"the request body is {length:,} bytes" if length is not None
            else f"the request body (sent chunked, without a Content-Length) passed {limit:,} bytes")
    return f"{said}; this service takes at most {limit:,} ({limit / (1 << 20):g} MiB)"


def _too_large_answer(length: int | None, limit: int) -> bytes:
    """The whole HTTP 413 answer (JSON error naming field ``body``; the connection closes after it)."""
    body = json.dumps({"error": {
        "code": "too_large", "field": "body", "message": too_large_message(length, limit),
        "hint": f"the largest body the API needs is a carried notebook (notebook_json, at most "
                f"{MAX_NOTEBOOK_JSON_BYTES >> 20} MiB); an admin sets c.FrontDoor.max_body_bytes"}}).encode()
    head = (f"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body


def _is_chunked(headers: httputil.HTTPHeaders) -> bool:
    """Whether tornado reads this request's body as chunks (``Transfer-Encoding: chunked`` and no
    ``Content-Length``; a head with both is refused 400 by tornado before any body is read)."""
    return "Content-Length" not in headers and headers.get("Transfer-Encoding", "").strip().lower() == "chunked"


class _Watched(httputil.HTTPMessageDelegate):
    """Tells the server when a connection's request is whole (it is then no longer evictable), and
    answers 413 a body over the server's ``max_body_bytes``: from a ``Content-Length`` head at once,
    a chunked one when the bytes received pass the limit, or 400 when its chunks are too small for
    their number (red team 21, R4; ``lines``: the connection's chunk-size lines)."""

    def __init__(self, inner: httputil.HTTPMessageDelegate, server: GuardedHTTPServer, conn: object,
                 request_conn: httputil.HTTPConnection, lines: ChunkLines | None = None) -> None:
        self._inner, self._server, self._conn, self._request_conn = inner, server, conn, request_conn
        self._lines = lines
        self._chunked_room: int | None = None
        """Bytes a chunked body may still send before it is refused (None: not a chunked body)."""
        self._chunks = self._declared = 0
        """Chunks of a chunked body read, and the bytes they declared."""
        self._refused: _Refused | None = None
        self._head: tuple[httputil.RequestStartLine | httputil.ResponseStartLine, httputil.HTTPHeaders] | None = None
        self._credential: tuple[str, str] | None = None
        """The request's credential (kind, digest), for :meth:`learned` (verify 23, V5)."""
        self._reserved = self._received = 0
        self._budget_key: str | None = None
        """Bytes of this body reserved in the server's :class:`~.body_budget.BodyBudget`, and for whom (red team 24, R1)."""
        self._caller = _Caller(server, conn)
        _REQUESTS[request_conn] = self._caller  # never ``self``: it holds request_conn (verify 24, V2)

    def headers_received(self, start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
                         headers: httputil.HTTPHeaders) -> Awaitable[None] | None:
        length = headers.get("Content-Length", "")
        limit = self._server.max_body_bytes
        if length.isdigit() and int(length) > limit and isinstance(self._request_conn, HTTP1Connection):
            self._too_large(int(length), limit)  # answered before one byte of it is read (red team 17, R11)
            self._tell(start_line, headers, int(length), limit)
            return None
        if not isinstance(start_line, httputil.RequestStartLine) or not isinstance(self._request_conn, HTTP1Connection):
            return self._admitted(start_line, headers)
        self._credential = self._caller.credential = credential_digest(headers, start_line.path)
        if self._tokenless_body(headers):
            return None
        if self._server.answers_ahead(self._conn):  # pipelined ahead of its answers' delivery (verify 23, V5)
            return self._after_delivery(start_line, headers)
        return self._checked_admit(start_line, headers)

    def _tokenless_body(self, headers: httputil.HTTPHeaders) -> bool:
        """Answer 401 from the head (True) a body over :data:`~.body_budget.TOKENLESS_BODY_BYTES` of a caller the
        API cannot identify (red team 24, R1), or with a credential the hub refused (verify 25, V4): never read."""
        length = headers.get("Content-Length", "")
        if self._identified() or not length.isdigit() or int(length) <= TOKENLESS_BODY_BYTES:
            return False
        self._refuse_head(tokenless_answer(int(length), refused=self._credential is not None), int(length),
                          f"refused 401: a body over {TOKENLESS_BODY_BYTES >> 10} KiB without a token or cookie")
        return True

    async def _after_delivery(self, start_line: httputil.RequestStartLine, headers: httputil.HTTPHeaders) -> None:
        """Take this pipelined request once the caller has read the earlier answers (verify 23, V5)."""
        if not await self._server.delivered(self._conn):
            if isinstance(self._request_conn, HTTP1Connection) and self._request_conn.stream is not None:
                self._request_conn.detach().close()  # closed (or cut) meanwhile: the request is dropped
            return
        pending = self._checked_admit(start_line, headers)
        if pending is not None:
            await pending

    def _checked_admit(self, start_line: httputil.RequestStartLine,
                       headers: httputil.HTTPHeaders) -> Awaitable[None] | None:
        """:meth:`_admit`, once the hub said who a credential not seen before names (verify 26, V11)."""
        if "X-Forwarded-For" in headers:
            self._server.forwarded_by(self._peer())
        if self._server.checks_first(self._credential):
            return self._after_check(start_line, headers)
        return self._admit(start_line, headers)

    async def _after_check(self, start_line: httputil.RequestStartLine, headers: httputil.HTTPHeaders) -> None:
        """Ask who this request's credential names (:meth:`GuardedHTTPServer.check_first`), then count it as that
        user — or, named nobody, as ``"refused PEER"`` with the tokenless bound on its body — never in the share of
        credentials not yet checked, which a flood of fresh made-up tokens held against every honest first
        request of their host (verify 26, V11). The body is not read meanwhile (tornado waits for this)."""
        assert self._credential is not None
        server = self._server
        server.fair.checking(self._conn)
        origin = share_key(f"unproven {self._peer()}", headers, server.trusted)[len("unproven "):]
        if not await server.check_first(self._credential, headers, start_line.path, origin, self._conn):
            assert isinstance(self._request_conn, HTTP1Connection)  # refused 429 at once: the flood's tail (verify 28, V6)
            server.answering(self._conn)
            server.refuse_check(self._request_conn.detach(), origin, headers)
            return
        stream = self._request_conn.stream if isinstance(self._request_conn, HTTP1Connection) else None
        if self._conn not in self._server._connections or stream is None or stream.closed():
            if stream is not None:  # closed (at the ceiling, by its caller) meanwhile: the request is dropped
                self._request_conn.detach().close()  # type: ignore[attr-defined]
            return
        if self._server.keys.refused(self._credential):
            self._server.count("requests whose credentials the hub names nobody by (checked before being counted)")
            if self._tokenless_body(headers):
                return
        pending = self._admit(start_line, headers)
        if pending is not None:
            await pending

    def _identified(self) -> bool:
        """Whether the request carries a credential the hub did not refuse before (verify 25, V4)."""
        return self._credential is not None and not self._server.keys.refused(self._credential)

    def _admit(self, start_line: httputil.RequestStartLine, headers: httputil.HTTPHeaders) -> Awaitable[None] | None:
        """Answer 429 a caller over their share of a pressed ceiling; else count the request as theirs."""
        server = self._server
        key = server.keys.key(self._credential, self._peer())
        caller = share_key(key, headers, server.trusted)  # an unproven credential counts per origin host (session 25)
        open_now = len(server._connections)
        if server.fair.over(self._conn, caller, open_now):
            self._over_share(start_line, headers, caller, open_now)
            return None
        length = headers.get("Content-Length", "")
        target = f"{start_line.method} {start_line.path.split('?', 1)[0]}"[:300]
        if length.isdigit() and int(length) > SMALL_BODY_BYTES:  # reserved before one byte is buffered (red24 R1)
            if not self._make_room(key, int(length)):
                self._refuse_head(self._over_budget(key, int(length)), int(length),
                                  f"refused 503: bodies held over {HELD_SETTING}")
                return None
            server.bodies.track(self, key, int(length), time.monotonic(), target)
            self._reserve(key, int(length))
        elif _is_chunked(headers):
            server.bodies.track(self, key, None, time.monotonic(), target)
        self._budget_key = key
        server.fair.answering(self._conn, caller)
        return self._admitted(start_line, headers)

    def _peer(self) -> str:
        """The connection's peer (:meth:`GuardedHTTPServer.peer_of`: its address — the hub's proxy, for requests it
        carries — with the account that opened it when that is another local account)."""
        context = getattr(self._request_conn, "context", None)
        peer = getattr(context, "peer", None)
        if isinstance(peer, str):
            return peer
        address = getattr(context, "address", None)
        return str(address[0] if isinstance(address, tuple) and address else address or "unknown")

    def _reserve(self, key: str, size: int) -> None:
        self._server.bodies.take(key, size)
        self._server.bodies.reserved_head(self, size)
        self._reserved += size

    def _make_room(self, key: str, size: int) -> bool:
        """Whether ``size`` more bytes of ``key`` fit its share and the budget, once the bodies of callers holding
        more than ``key`` would were cut, most first (red team 39, R6: a newcomer was refused while four callers
        trickled their quarters); False: ``key`` is refused (over its own share, or it would hold most)."""
        bodies = self._server.bodies
        if bodies.budget <= 0:
            return True
        if bodies.holding(key) + size > bodies.share:
            return False
        cut = bodies.room(key, size, time.monotonic(), self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S)
        if cut is None:
            return False
        for reader in cut:
            if isinstance(reader, _Watched):
                reader.cut_for_room()
        return bodies.fits(key, size)

    def cut_for_room(self) -> None:
        """Cut this body, whose caller holds most, for another caller's (503 ``busy``, named and audited)."""
        body, key = self._server.bodies.body(self), self._budget_key
        if body is None or key is None or self._refused is not None:
            return
        now, timeout_s = time.monotonic(), self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S
        holding, idle, pace = self._server.bodies.holding(key), body.idle(now), body.crawling(now, timeout_s)
        self._cut(cut_answer(body.length, body.received, holding, key, idle, pace), "busy",
                  cut_message(body.length, body.received, holding, key, idle, pace),
                  f"bodies cut: stalled (no byte for {STALLED_S:g} s, or crawling) and another's needed room"
                  if idle >= STALLED_S or pace is not None
                  else f"bodies cut: their caller held the most of {HELD_SETTING} and another's needed room",
                  min(self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S, DRAIN_TIMEOUT_S))

    def cut_slow(self, now: float, timeout_s: float) -> None:
        """Cut this body: it comes too slowly to be whole within ``body_timeout_s`` (408 ``slow_body``)."""
        body = self._server.bodies.body(self)
        if body is None or body.length is None or self._refused is not None:
            return
        elapsed, rate, idle = now - body.since, body.rate(now), body.idle(now)  # its recent pace (red team 40, R6)
        self._cut(slow_body_answer(body.length, body.received, elapsed, timeout_s, rate, idle), "slow_body",
                  slow_body_message(body.length, body.received, elapsed, timeout_s, rate, idle),
                  "bodies cut 408: too slow for c.FrontDoor.body_timeout_s", SLOW_CUT_CLOSE_S)

    def _cut(self, answer: bytes, code: str, message: str, what: str, close_s: float) -> None:
        """Cut this unfinished body (red team 39, R6): the handler is told the request is gone (what it kept is
        freed), the reservation ends, ``answer`` is written, the rest is dropped as it comes, the connection
        closes after ``close_s``; the caller is named in the front door's line and audited."""
        if not isinstance(self._request_conn, HTTP1Connection) or self._request_conn.stream is None:
            return
        key, body = self._budget_key or "", self._server.bodies.body(self)
        self._server.answering(self._conn)
        self._inner.on_connection_close()
        self._release()
        self._refused = _Refused(self._request_conn.stream, answer, close_s)
        self._server.body_cut(key, body.target if body is not None else "", code, message, what)

    def _release(self) -> None:
        """The body is whole (the request runs, authenticated) or gone: its reservation ends."""
        self._server.bodies.untrack(self)
        if self._budget_key is not None and self._reserved:
            self._server.bodies.give_back(self._budget_key, self._reserved)
        self._reserved = 0

    def _over_budget(self, key: str, size: int | None) -> bytes:
        bodies = self._server.bodies
        return over_budget_answer(size, bodies.holding(key), bodies.share, bodies.held, bodies.budget, key,
                                  bodies.census(time.monotonic(), key,
                                                self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S))

    def _refuse_head(self, answer: bytes, length: int, what: str) -> None:
        """Answer ``answer`` from the head and close, reading and dropping the body (never kept)."""
        assert isinstance(self._request_conn, HTTP1Connection)
        stream = self._request_conn.detach()
        self._server.answering(self._conn)
        self._server.count(what)
        body_timeout = self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S
        IOLoop.current().add_callback(_answer_and_discard, stream, answer, min(length, DRAIN_BYTES),
                                      min(body_timeout, DRAIN_TIMEOUT_S))

    def _over_share(self, start_line: httputil.RequestStartLine, headers: httputil.HTTPHeaders, key: str,
                    open_now: int) -> None:
        """Answer 429 (field ``connections``, Retry-After) and close; audit the user once per interval."""
        assert isinstance(self._request_conn, HTTP1Connection)
        server = self._server
        message = over_share_message(key, server.fair.holding(key, but=self._conn), server.fair.share, open_now,
                                     server.max_connections)
        stream = self._request_conn.detach()
        server.answering(self._conn)
        server.refuse_over_share(stream, key, start_line, headers, message)

    def _admitted(self, start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
                  headers: httputil.HTTPHeaders) -> Awaitable[None] | None:
        if _is_chunked(headers) and isinstance(self._request_conn, HTTP1Connection):
            # tornado's cap raised mid-body and closed the connection unanswered (red team 20, R1): count it here
            self._request_conn.set_max_body_size(_NO_CAP)
            self._chunked_room = self._server.max_body_bytes if self._identified() else TOKENLESS_BODY_BYTES
            self._head = (start_line, headers)
            if self._lines is not None and self._server.min_chunk_bytes > 0:
                self._lines.watcher = self._chunk_seen  # red team 21, R4
        return self._inner.headers_received(start_line, headers)

    def _tell(self, start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
              headers: httputil.HTTPHeaders, length: int | None, limit: int) -> None:
        """Tell the server's hook (the audit of the caller the token names: red team 19, R5)."""
        hook = self._server.on_too_large
        if hook is not None and isinstance(start_line, httputil.RequestStartLine):
            try:  # never in the way of the 413
                hook(headers, f"{start_line.method} {start_line.path.split('?', 1)[0]}"[:300], length, limit)
            except Exception:
                log.exception("jupyter_sched: could not audit a refused oversize request")

    def _too_large(self, length: int, limit: int) -> None:
        """Answer 413 (field ``body``, the limit) and close, without reading or buffering the body."""
        assert isinstance(self._request_conn, HTTP1Connection)
        stream = self._request_conn.detach()
        self._server.answering(self._conn)
        self._server.count("refused 413: body over c.FrontDoor.max_body_bytes")
        body_timeout = self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S
        IOLoop.current().add_callback(_answer_and_discard, stream, _too_large_answer(length, limit),
                                      min(length, DRAIN_BYTES), min(body_timeout, DRAIN_TIMEOUT_S))

    def data_received(self, chunk: bytes) -> Awaitable[None] | None:
        if self._refused is not None:
            self._refused.drop(len(chunk))
            return None
        if self._chunked_room is not None:
            if len(chunk) > self._chunked_room:
                self._refuse_chunked().drop(len(chunk))
                return None
            self._chunked_room -= len(chunk)
            self._received += len(chunk)
            more = self._received - self._reserved if self._received > SMALL_BODY_BYTES else 0
            if self._budget_key is not None and more > 0:  # reserved as it comes, past the small size (red24 R1)
                if not self._make_room(self._budget_key, more):
                    self._refuse_chunked(self._over_budget(self._budget_key, None)).drop(len(chunk))
                    return None
                self._server.bodies.take(self._budget_key, more)
                self._reserved += more
            self._server.bodies.arrived(self, len(chunk), more)
            return self._inner.data_received(chunk)
        self._server.bodies.arrived(self, len(chunk))
        return self._inner.data_received(chunk)

    def _refuse_chunked(self, over_budget: bytes | None = None) -> _Refused:
        """A chunked body passed the limit (413; 401 without a credential past
        :data:`~.body_budget.TOKENLESS_BODY_BYTES`; 503 ``over_budget``, the answer, past the bodies'
        budget): the handler is told the request is gone (what it kept of the body is freed; it never
        runs), the answer is written, the rest is dropped as it comes."""
        assert isinstance(self._request_conn, HTTP1Connection)
        limit = self._server.max_body_bytes
        self._server.answering(self._conn)
        self._inner.on_connection_close()
        self._release()
        if over_budget is not None:
            self._server.count(f"refused 503: bodies held over {HELD_SETTING}")
            answer = over_budget
        elif not self._identified():
            self._server.count(f"refused 401: a body over {TOKENLESS_BODY_BYTES >> 10} KiB without a token or cookie")
            answer = tokenless_answer(None, refused=self._credential is not None)
        else:
            self._server.count("refused 413: body over c.FrontDoor.max_body_bytes")
            if self._head is not None:
                self._tell(*self._head, None, limit)
            answer = _too_large_answer(None, limit)
        body_timeout = self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S
        self._refused = _Refused(self._request_conn.stream, answer, min(body_timeout, DRAIN_TIMEOUT_S))
        return self._refused

    def _chunk_seen(self, size: int) -> None:
        """One more chunk-size line read (``size``: the bytes it declares; 0 ends the body)."""
        if self._refused is not None:  # dropping after a refusal: a bounded number more (red team 21, R4)
            if size > 0:
                self._refused.drop_chunk()
            return
        if size == 0:
            return
        self._chunks += 1
        self._declared += size
        if too_finely_chunked(self._chunks, self._declared, self._server.min_chunk_bytes):
            self._refuse_chunking(self._server.min_chunk_bytes)

    def _refuse_chunking(self, least: int) -> None:
        """A chunked body came in chunks too small for their number (red team 21, R4): the handler is
        told the request is gone, the 400 is written, the hook told; at most
        :data:`~.chunking.DRAIN_CHUNKS` more chunks are dropped before the connection closes (each
        costs what the refused ones did)."""
        assert isinstance(self._request_conn, HTTP1Connection)
        size = self._declared
        self._server.answering(self._conn)
        self._server.count("refused 400: a chunked body in chunks below c.FrontDoor.min_chunk_bytes")
        self._inner.on_connection_close()
        hook = self._server.on_chunking
        start_line, headers = self._head or (None, None)
        if hook is not None and isinstance(start_line, httputil.RequestStartLine) and headers is not None:
            try:  # never in the way of the 400
                hook(headers, f"{start_line.method} {start_line.path.split('?', 1)[0]}"[:300], self._chunks, size, least)
            except Exception:
                log.exception("jupyter_sched: could not audit a request refused for its chunking")
        body_timeout = self._server.conn_params.body_timeout or DRAIN_TIMEOUT_S
        self._refused = _Refused(self._request_conn.stream, chunking_answer(self._chunks, size, least),
                                 min(body_timeout, DRAIN_TIMEOUT_S), max_chunks=DRAIN_CHUNKS)

    def finish(self) -> None:
        self._server.answering(self._conn)
        self._unwatch()
        self._release()
        if self._refused is not None:  # the refused body ended: close once the 413 is written
            self._refused.close_after_answer()
            return
        try:
            self._inner.finish()
        except Exception:  # a handler that raised while being built (red40 R3): a traceback and no answer before
            self._answer_broken_handler()

    def _answer_broken_handler(self) -> None:
        """Answer 500 JSON and close, with one line a minute in the log (:data:`BROKEN_HANDLER_LINE`) and its count:
        before, each request to a route whose handler cannot be built wrote an 18-line traceback and got no answer,
        from callers that need no account (red40 R3: jupyter_server's ``favicon.ico`` route, 812 KB of log in 3 s)."""
        start_line, _ = self._head or (None, None)
        target = f"{start_line.method} {start_line.path.split('?', 1)[0]}"[:300] \
            if isinstance(start_line, httputil.RequestStartLine) else "?"
        self._server.count("answered 500: a handler that could not be built")
        if self._server.broken_handler_said():
            log.error(BROKEN_HANDLER_LINE, target, exc_info=True)
        body = json.dumps({"error": {"code": "internal_error", "message": "internal server error", "field": None,
                                     "hint": "the service's log names the route (once a minute); tell the admin"}}).encode()
        conn = self._request_conn
        if isinstance(conn, HTTP1Connection):
            conn.write_headers(httputil.ResponseStartLine("HTTP/1.1", 500, "Internal Server Error"),
                               httputil.HTTPHeaders({"Content-Type": "application/json; charset=UTF-8",
                                                     "Content-Length": str(len(body)), "Connection": "close"}), body)
            conn.finish()

    def _unwatch(self) -> None:
        if self._lines is not None and self._lines.watcher == self._chunk_seen:
            self._lines.watcher = None

    def on_connection_close(self) -> None:
        self._unwatch()
        self._release()
        if self._refused is not None:  # the handler was told at the refusal
            self._refused.close()
            return
        self._inner.on_connection_close()


class _Refused:
    """A chunked body refused 413 while it is still coming (red team 20, R1). The answer is written
    on the stream at once (the connection's own writer is not used: tornado would then stop reading
    and close with the body unread, a reset the proxy turns into its HTML 503: red team 19, R5); tornado
    keeps reading the chunks, dropped here as they come; past :data:`DRAIN_BYTES` dropped, or
    ``timeout_s`` after the refusal, the connection is closed; when the body ends, it closes as soon
    as the answer is written."""

    def __init__(self, stream: IOStream, answer: bytes, timeout_s: float, *, max_chunks: int | None = None) -> None:
        self._stream = stream
        self._dropped = 0
        self._chunks_left = max_chunks
        """Chunks still dropped before closing (None: no bound but :data:`DRAIN_BYTES`; red team 21, R4)."""
        self._written = stream.write(answer)
        self._written.add_done_callback(lambda done: done.cancelled() or done.exception())  # a reset caller: nothing to tell
        self._timer = IOLoop.current().call_later(timeout_s, self.close)

    def drop(self, size: int) -> None:
        """Drop ``size`` more bytes of the body; past :data:`DRAIN_BYTES`, close."""
        self._dropped += size
        if self._dropped > DRAIN_BYTES:
            self.close()

    def drop_chunk(self) -> None:
        """One more chunk of the body began; past the chunks' bound (if any), close."""
        if self._chunks_left is not None:
            self._chunks_left -= 1
            if self._chunks_left < 0:
                self.close()

    def close_after_answer(self) -> None:
        """Close once the 413 is written (at once if writing it failed)."""
        IOLoop.current().add_future(self._written, lambda _future: self.close())

    def close(self) -> None:
        IOLoop.current().remove_timeout(self._timer)
        self._stream.close()


async def _answer_and_discard(stream: IOStream, answer: bytes, left: int, timeout_s: float) -> None:
    """Write ``answer`` (the 413), then read and drop up to ``left`` bytes of the body the caller is
    still sending, for at most ``timeout_s``, then close. Closing with unread bytes in the socket
    makes the kernel reset the connection: JupyterHub's proxy, still writing the body, then got
    ``write ECONNRESET`` and showed its own HTML 503 instead of the 413 (red team 19, R5). Nothing is
    kept: each chunk is dropped as read; a body longer than :data:`DRAIN_BYTES` is cut there."""
    loop = IOLoop.current()
    handle = loop.call_later(timeout_s, stream.close)
    try:
        await stream.write(answer)
        while left > 0:
            left -= len(await stream.read_bytes(min(left, 1 << 20), partial=True))
    except StreamClosedError:
        pass
    finally:
        loop.remove_timeout(handle)
        stream.close()


class _Caller:
    """What :func:`note_caller` needs of a request: its server, its server connection and its credential
    (kind, digest; None until its head is read). Never the request, its connection or its delegates: a
    value of :data:`_REQUESTS` that reached its key kept the key alive for ever, and with it tornado's
    delegate holding the request's body twice (``chunks`` and ``request.body``): every 7.5 MB body, even
    one refused 400/403, left ~15 MiB in the service for good (verify 24, V2)."""

    __slots__ = ("conn", "credential", "server")

    def __init__(self, server: GuardedHTTPServer, conn: object) -> None:
        self.server, self.conn = server, conn
        self.credential: tuple[str, str] | None = None

    def learned(self, user: str) -> None:
        """The identity provider authenticated this request as hub ``user``: its credential counts as
        ``user`` from now on, and so does this request (verify 23, V5)."""
        self.server.learned(self.conn, self.credential, user)

    def refused(self) -> None:
        """The hub said this request's credential names nobody: its later requests count apart from the
        first requests of credentials not yet checked (verify 25, V4)."""
        if self.credential is not None and self.credential[0] != "job":
            self.server.keys.refuse(self.credential[1])


_REQUESTS: weakref.WeakKeyDictionary[object, _Caller] = weakref.WeakKeyDictionary()
"""Each request connection (tornado's ``HTTP1Connection``, ``handler.request.connection``) being read
or answered, and who its caller is: how the identity provider tells the front door who the caller is.
A value must never reach its key (the entry would then never go: verify 24, V2)."""


def note_caller(request: object, user: str) -> None:
    """The identity provider authenticated ``request`` (a handler's ``HTTPServerRequest``) as hub
    ``user``: its credential counts as that user at the front door from now on (verify 23, V5); a
    job token that passed its check counts as its job's owner, ``user`` (verify 25, V2). Nothing for a
    request the front door did not read (an in-process test server, the embedded server)."""
    watched = _REQUESTS.get(getattr(request, "connection", None)) if request is not None else None
    if watched is not None:
        watched.learned(user)


def note_refused(request: object) -> None:
    """The hub said ``request``'s credential (a token, a cookie) names nobody: the front door counts its later
    requests as ``"refused PEER"`` (:meth:`~.fair_share.CallerKeys.refuse`) — not in the share of first
    requests of tokens not yet checked, which a new real token of the same host needs (verify 25, V4), and with
    the tokenless bound on bodies. Nothing for a request the front door did not read."""
    watched = _REQUESTS.get(getattr(request, "connection", None)) if request is not None else None
    if watched is not None:
        watched.refused()


_HEAD_END = re.compile(rb"\r?\n\r?\n")


def _peeked_head(stream: object) -> tuple[httputil.RequestStartLine, httputil.HTTPHeaders, int] | None:
    """The request head waiting in ``stream``'s socket, read without taking it (``MSG_PEEK``): its start
    line, headers and size in bytes (with the blank line); None when no whole head is there yet, the
    stream is TLS (its bytes are not the head) or it does not parse (tornado answers it as ever)."""
    sock = getattr(stream, "socket", None)
    if sock is None or isinstance(stream, SSLIOStream):
        return None
    try:
        data = sock.recv(_HEAD_BYTES, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:
        return None
    end = _HEAD_END.search(data)
    if end is None:
        return None
    first, _, rest = data[:end.start()].decode("latin1").lstrip("\r\n").partition("\n")
    try:
        return httputil.parse_request_start_line(first.strip()), httputil.HTTPHeaders.parse(rest), end.end()
    except httputil.HTTPInputError:
        return None


def _kernel_unsent(stream: object) -> int:
    """Bytes in the socket's send queue the caller's side has not acknowledged (Linux ``SIOCOUTQ``,
    the ``TIOCOUTQ`` ioctl on a socket); 0 where it cannot be read. Small answers a caller never
    reads sit there, not in tornado's buffer (verify 23, V5)."""
    sock = getattr(stream, "socket", None)
    try:
        return max(0, int(struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]))  # type: ignore[union-attr]
    except (AttributeError, OSError, ValueError, struct.error):
        return 0


def _write_counters(stream: object) -> tuple[int, int]:
    """``(bytes unsent, bytes delivered)`` of a connection's answers so far: unsent is what tornado
    still buffers plus what the kernel's send queue holds unacknowledged; delivered is what the
    caller's side acknowledged. Tornado keeps its counts on the stream
    (``BaseIOStream._total_write_index``/``_total_write_done_index``, since 5.0) with no public
    accessor; a stream without them reads as nothing unsent (never cut). Counting the kernel's queue
    makes many small pipelined answers nobody reads as stalled as one large one (verify 23, V5)."""
    queued = getattr(stream, "_total_write_index", 0)
    written = getattr(stream, "_total_write_done_index", 0)
    if not isinstance(queued, int) or not isinstance(written, int):
        return 0, 0
    in_kernel = min(_kernel_unsent(stream), written)
    return max(0, queued - written) + in_kernel, written - in_kernel


class _PendingCheck:
    """One credential's check, waiting or under way (verify 28, V6): what to ask, and the connections whose requests
    wait for the answer."""

    __slots__ = ("askers", "credential", "done", "headers", "target")

    def __init__(self, credential: tuple[str, str], headers: httputil.HTTPHeaders, target: str) -> None:
        self.credential, self.headers, self.target = credential, headers, target
        self.askers: set[object] = set()
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()


def _peer_gone(stream: object) -> bool:
    """Whether ``stream``'s caller has closed it: tornado saw it closed, or its socket reads at its end (peeked,
    nothing taken; bytes still to read count as open) or reset. A request waiting for its credential's check has
    no read pending, so tornado may not have seen the close yet."""
    if stream is None or getattr(stream, "closed", lambda: True)():
        return True
    sock = getattr(stream, "socket", None)
    if sock is None:
        return True
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"")
    except BlockingIOError:
        return False
    except OSError:
        return True


_LOCAL_ACCOUNT = re.compile(r" \(uid (\d+)\)$")
"""A peer that is another local account than the proxy's (:func:`~.forwarded.peer_name`)."""


class _PeerContext(_HTTPRequestContext):
    """tornado's request context with the peer the connection counts as (:meth:`GuardedHTTPServer.peer_of`)."""

    peer: str = ""


class GuardedHTTPServer(HTTPServer):
    """``HTTPServer`` with a connection ceiling (oldest waiting connection closed first) and
    accept errors that pause accepting and are summed into one log line per interval."""

    def initialize(self, request_callback: Any, *, max_connections: int = 1000,  # type: ignore[override]
                   log_interval_s: float = 60.0, max_body_bytes: int = 100 << 20,
                   on_too_large: TooLargeHook | None = None, min_chunk_bytes: int = 0,
                   on_chunking: ChunkedHook | None = None, answer_timeout_s: float = 30.0,
                   max_connections_per_user: int = 0, on_over_share: OverShareHook | None = None,
                   max_body_bytes_held: int = DEFAULT_HELD_BYTES, check_credential: CredentialCheck | None = None,
                   keys_file: str | None = None, trusted_proxies: Iterable[str] = DEFAULT_TRUSTED_PROXIES,
                   proxy_uids: Iterable[int] = (), on_body_cut: BodyCutHook | None = None, **kwargs: Any) -> None:
        super().initialize(request_callback, max_body_size=max_body_bytes,
                           max_buffer_size=max_body_bytes + _HEAD_BYTES, **kwargs)
        self.max_connections = max_connections
        self.max_body_bytes = max_body_bytes
        self.trusted = TrustedProxies(trusted_proxies)
        """The peers whose ``X-Forwarded-For`` is believed (red 29, R1: a forged one on a direct connection was)."""
        self.proxy_uids = _proxy_uids(proxy_uids, os.geteuid())
        """The accounts whose loopback connections are the hub's proxy's (:meth:`peer_of`)."""
        self._forwarding_uids: set[str] = set()
        """Local accounts (not the proxy's) said to send ``X-Forwarded-For`` (:meth:`forwarded_by`)."""
        self.on_too_large = on_too_large
        self.min_chunk_bytes = min_chunk_bytes
        """Least mean size of a chunked body's chunks after :data:`~.chunking.FREE_CHUNKS` (0: not checked)."""
        self.on_chunking = on_chunking
        self.log_interval_s = log_interval_s
        self._waiting: OrderedDict[object, float] = OrderedDict()
        """Connections without a whole request yet, oldest first (value: since when)."""
        self._counts: dict[str, int] = {}
        self._broken_said_at = -BROKEN_HANDLER_EVERY_S  # when the last BROKEN_HANDLER_LINE was written (monotonic s)
        self._flush_pending = False
        self._lines: dict[object, ChunkLines] = {}
        """Each open connection's chunk-size lines (red team 21, R4)."""
        self._stalls = StalledAnswers(answer_timeout_s)
        """Answers waiting on a caller that does not read them (red team 23, R2)."""
        self._sweeper: PeriodicCallback | None = None
        share = default_share(max_connections) if max_connections_per_user == 0 else max(0, max_connections_per_user)
        self.fair = FairShare(share, max_connections)
        """Connections being answered per caller, and each caller's share of a pressed ceiling (verify 23, V5)."""
        self.keys = CallerKeys()
        """Which hub user each credential authenticated as (told by :func:`note_caller`)."""
        self.on_over_share = on_over_share
        self.bodies = BodyBudget(max_body_bytes_held, max_body_bytes)
        """Bytes of unfinished bodies reserved, in all and per caller (red team 24, R1)."""
        self.on_body_cut = on_body_cut
        self._cut_from: dict[str, int] = {}
        """Whose bodies were cut since the last line, and how many (red team 39, R6)."""
        self._held: dict[object, float] = {}
        """Connections whose next (pipelined) request waits for the caller to read the earlier answers, oldest first."""
        self._room_waiters: set[Callable[[], None]] = set()
        self._observed_at = 0.0
        """Monotonic time (s) the answers' unsent bytes were last looked at for the ceiling."""
        self.check_credential = check_credential
        """Who a credential not seen before names, asked before its request is counted (verify 26, V11)."""
        self._queue: CheckQueue[_PendingCheck] = CheckQueue(self._asked)
        """Checks waiting for one of the :data:`CHECKS_AT_ONCE` under way: per origin, in turn (verify 28, V6)."""
        self._running = 0
        self._check_tasks: set[asyncio.Future[None]] = set()
        """The checks under way (kept referenced until done)."""
        self._checking: dict[str, _PendingCheck] = {}
        """The check waiting or under way of each credential (digest): requests carrying the same one wait for it."""
        self.listening_since: float | None = None
        """Wall-clock time (s since the epoch) this server began listening: no other account held its address since
        (a squat report of a later refusal is false: :mod:`.squat_log`, verify 28 V5)."""
        self.keys_file = keys_file
        """Where the credentials learned are kept across a restart (None: not kept)."""
        self._keys_saved_at = 0.0
        self._load_keys()
        self._checks_paused_until = 0.0
        """Monotonic time (s) until which credentials are not checked first (a check could not tell: the hub)."""

    # ---- the ceiling ---------------------------------------------------------------------
    def peer_of(self, stream: Any, address: tuple[Any, ...] | Any) -> str:
        """The peer a connection accepted on ``stream`` from ``address`` counts as: its address, except that a
        loopback connection opened by a local account other than the proxy's (:attr:`proxy_uids`) is
        ``"ADDRESS (uid N)"`` — its own peer, its ``X-Forwarded-For`` never believed and its first checks bounded as
        one origin (red29 R1 on a same-host hub: a local user connecting straight to the service filled the loopback
        peer's checks and the proxy's first requests were answered 429). One lookup in the kernel's socket table
        (:func:`~.peer.connecting_uid`); where the kernel cannot be asked, the address, as before."""
        host = str(address[0] if isinstance(address, tuple) and address else address or "unknown")
        if not is_loopback(host):
            return host
        sock = getattr(stream, "socket", None)
        return peer_name(host, connecting_uid(sock) if sock is not None else None, self.proxy_uids)

    def forwarded_by(self, peer: str) -> None:
        """A request from ``peer`` carried ``X-Forwarded-For``: from a local account that is not the proxy's
        (:meth:`peer_of`), said once per account at WARNING — configurable-http-proxy running as an account
        :attr:`proxy_uids` lacks (its header then not believed: every proxied first request one origin), or a
        local user forging it (red29 R1)."""
        uid = _LOCAL_ACCOUNT.search(peer)
        if uid is None or uid.group(1) in self._forwarding_uids or len(self._forwarding_uids) >= 64:
            return
        self._forwarding_uids.add(uid.group(1))
        log.warning("jupyter_sched: front door: loopback connections of uid %s send X-Forwarded-For, as the hub's "
                    "proxy does, but uid %s is not the proxy's (root, the service's own account, %s): the header is "
                    "not believed from it. If configurable-http-proxy runs as uid %s, add it to %s; otherwise a "
                    "local user sends the header to pass as the proxy", uid.group(1), uid.group(1),
                    PROXY_UIDS_SETTING, uid.group(1), PROXY_UIDS_SETTING)

    def handle_stream(self, stream: Any, address: tuple[Any, ...]) -> None:
        peer = self.peer_of(stream, address)
        expected = (self._at_full_ceiling(stream, peer) if len(self._connections) >= self.max_connections
                    else None)
        if expected == "":
            return  # answered 429: its caller has their share of the full ceiling
        context = _PeerContext(stream, address, self.protocol, self.trusted_downstream)
        context.peer = peer
        conn = HTTP1ServerConnection(stream, self.conn_params, context)
        if expected is not None:
            self.fair.expect(conn, expected)
        self._lines[conn] = ChunkLines(stream)  # each chunk-size line read, for the chunking bound (red team 21, R4)
        self._connections.add(conn)
        self._waiting[conn] = time.monotonic()
        conn.start_serving(self)
        if self._sweeper is None:
            self._sweeper = PeriodicCallback(self._sweep, SWEEP_S * 1000)
            self._sweeper.start()
        while len(self._connections) > self.max_connections:
            if not self._make_room(conn):
                # every other connection is being answered and read, or too young to judge: refuse the newcomer
                # (accepting pauses at a full ceiling before it comes to this: ``_accept_on``)
                self.count("refused at the ceiling (every other connection was being answered)")
                self._connections.discard(conn)
                self._waiting.pop(conn, None)
                self._lines.pop(conn, None)
                stream.close()
                return

    def _make_room(self, newcomer: object | None = None) -> bool:
        """Close one connection of a full ceiling (never ``newcomer``), by the rules of ``max_connections``
        (:meth:`_evictable`): True when one was closed."""
        found = self._evictable(newcomer)
        if found is not None:
            self._close(*found)
        return found is not None

    def _evictable(self, newcomer: object | None = None) -> tuple[object, str] | None:
        """The connection a full ceiling closes for a newcomer (never ``newcomer``) and why; None when none
        may be closed (each is being answered and read, or waits without a whole request for less than
        :data:`HEAD_GRACE_S`)."""
        # first what one caller holds beyond fairness (verify 23, V5): a pipelined request waiting for its
        # caller to read the earlier answers, then a connection of the caller most over their share —
        # before anyone's idle keep-alive (the hub proxy's, carrying other users)
        held = next((c for c in self._held if c is not newcomer), None)
        if held is not None:
            return held, "closed at the ceiling (pipelined requests whose caller had not read the earlier answers)"
        # a connection without a whole request only once it had the time to send one: one accepted a moment
        # ago has not been read yet, and closing it (a bystander's, behind a flood of the hub proxy's new
        # connections) made the proxy answer its HTML 503 (verify 24, V3); nor one the hub proxy just got
        # back for its pool, which it sends its next request on, whoever's
        now = time.monotonic()
        young = {c for c, since in self._waiting.items() if now - since < HEAD_GRACE_S}
        young.add(newcomer)
        over = self.fair.most_over(self._waiting, spare=young)
        if over is not None:
            return over, f"closed at the ceiling (a caller over {SHARE_SETTING})"
        oldest = next((c for c, since in self._waiting.items() if c is not newcomer and now - since >= HEAD_GRACE_S),
                      None)
        if oldest is not None:
            return oldest, "closed at the ceiling (the oldest without a whole request)"
        if now - self._observed_at >= ROOM_POLL_S:
            self._observe_answers(now)
            self._observed_at = now
        # an answer stalled a while first; else any answer with bytes waiting on its caller: a caller
        # that replaced its unread connections before they aged kept newcomers out (verify 23, V1)
        stalled = self._stalls.most_stalled(now) or self._stalls.most_stalled(now, at_least_s=0.0)
        if stalled is not None and stalled is not newcomer:
            return stalled, "closed at the ceiling (the answer its caller read least)"
        return None

    def refuse_over_share(self, stream: IOStream, key: str, start_line: httputil.RequestStartLine,
                          headers: httputil.HTTPHeaders, message: str) -> None:
        """Answer the 429 over ``key``'s share (``message``) on ``stream``, whose request head was taken, and
        close it (a body still coming is read and dropped first); count it and audit the user."""
        self.count(f"refused 429: a caller over {SHARE_SETTING}")
        length = headers.get("Content-Length", "")
        left = min(int(length), DRAIN_BYTES) if length.isdigit() else 0
        body_timeout = self.conn_params.body_timeout or DRAIN_TIMEOUT_S
        IOLoop.current().add_callback(_answer_and_discard, stream, over_share_answer(message), left,
                                      min(body_timeout, DRAIN_TIMEOUT_S) if left else OVER_SHARE_CLOSE_S)
        self.audit_over_share(key, start_line, message)

    def audit_over_share(self, key: str, start_line: httputil.RequestStartLine, message: str) -> None:
        """Tell :attr:`on_over_share` of a request of caller ``key`` refused 429 (a hub user's, at most once per
        :data:`~.fair_share.AUDIT_INTERVAL_S`); never in the way of the 429."""
        user, hook = user_of(key), self.on_over_share
        if user is not None and hook is not None and (refused := self.fair.to_audit(key, time.monotonic())):
            try:
                hook(user, f"{start_line.method} {start_line.path.split('?', 1)[0]}"[:300], message, refused)
            except Exception:
                log.exception("jupyter_sched: could not audit a request refused over a caller's share")

    def _at_full_ceiling(self, stream: IOStream, peer: str) -> str | None:
        """A newcomer at a full ceiling: read the caller from the request head already in its socket, unread
        (``MSG_PEEK``; verify 24, V3). A caller with their share of connections already is answered 429 at
        once (the head taken, the connection never counted): returns ``""``. Else the caller's share key, for
        :meth:`~.fair_share.FairShare.expect` (None: no whole head there yet, or TLS)."""
        head = _peeked_head(stream)
        if head is None:
            return None
        start_line, headers, size = head
        credential = credential_digest(headers, start_line.path)
        if self.checks_first(credential):
            return None  # nobody's until checked (verify 26, V11: a fresh made-up token is not an honest first request)
        caller = share_key(self.keys.key(credential, peer), headers, self.trusted)
        open_now = len(self._connections)
        if self.fair.share <= 0 or self.fair.claims(caller) < self.fair.share:
            return caller
        message = over_share_message(caller, self.fair.claims(caller), self.fair.share, open_now, self.max_connections)
        try:
            stream.socket.recv(size)  # the head is taken, so the answer is read rather than reset
        except OSError:
            pass
        self.refuse_over_share(stream, caller, start_line, headers, message)
        return ""

    def _close(self, conn: object, what: str) -> None:
        """Close ``conn`` now, counted as ``what`` (its ``on_close`` may come later)."""
        self.count(what)
        conn.stream.close()  # type: ignore[attr-defined]
        self._connections.discard(conn)
        self._waiting.pop(conn, None)
        self._lines.pop(conn, None)
        self._stalls.forget(conn)
        self.fair.forget(conn)
        self._held.pop(conn, None)

    # ---- pipelined requests and each caller's share (verify 23, V5) ---------------------------
    def answers_ahead(self, conn: object) -> bool:
        """Whether ``conn``'s earlier answers still wait on its caller (more than
        :data:`PIPELINED_AHEAD_BYTES`): its next request, pipelined, is not taken yet."""
        return _write_counters(getattr(conn, "stream", None))[0] > PIPELINED_AHEAD_BYTES

    async def delivered(self, conn: object) -> bool:
        """Wait until ``conn``'s caller has its earlier answers: True then; False when the connection
        closed meanwhile, or was cut because its caller read under the minimum rate for
        ``answer_timeout_s`` (it waits, without a whole request, so the ceiling may close it first)."""
        stream = getattr(conn, "stream", None)
        pause, longest = DELIVERY_POLL_S
        mark, delivered_then = time.monotonic(), _write_counters(stream)[1]
        self._held[conn] = mark
        try:
            while stream is not None and not stream.closed() and conn in self._connections:
                unsent, delivered = _write_counters(stream)
                if unsent <= PIPELINED_AHEAD_BYTES:
                    return True
                now = time.monotonic()
                if delivered - delivered_then >= MIN_ANSWER_RATE * (now - mark) and delivered > delivered_then:
                    mark, delivered_then = now, delivered  # the caller reads: count again from here
                elif self._stalls.timeout_s > 0 and now - mark >= self._stalls.timeout_s:
                    self._close(conn, f"closed: an answer its caller did not read for {self._stalls.timeout_s:g} s, "
                                      f"pipelined requests waiting (under {MIN_ANSWER_RATE} B/s; "
                                      "c.FrontDoor.answer_timeout_s)")
                    return False
                await asyncio.sleep(pause)
                pause = min(pause * 2, longest)
            return False
        finally:
            self._held.pop(conn, None)

    # ---- credentials checked before their request is counted (verify 26, V11) ------------------
    def checks_first(self, credential: tuple[str, str] | None) -> bool:
        """Whether a request carrying ``credential`` waits for :meth:`check_first` before it is counted: there is a
        check, the credential was neither authenticated nor refused before, and checks are not paused."""
        return (self.check_credential is not None and not self.keys.known(credential)
                and time.monotonic() >= self._checks_paused_until)

    async def check_first(self, credential: tuple[str, str], headers: httputil.HTTPHeaders, target: str,
                          origin: str, conn: object) -> bool:
        """Ask :attr:`check_credential` who ``credential`` (kind, digest) names for ``conn``'s request from ``origin``
        — one check per credential at a time (requests carrying it wait for the same), at most
        :data:`CHECKS_AT_ONCE` at once, the others waiting per origin and taken in turn across origins — and
        remember the answer in :attr:`keys`: a user (:meth:`~.fair_share.CallerKeys.learn`) or nobody
        (:meth:`~.fair_share.CallerKeys.refuse`). A check that could not tell (:class:`Unchecked`, or any
        failure: the hub did not answer) leaves the credential unknown, and a failure pauses checking for
        :data:`CHECK_PAUSE_S` (requests then count among the unchecked, as before). A waiting check whose every
        asker's connection closed is dropped unasked. False (nothing asked, nothing waits) when ``origin`` has
        :data:`~.check_queue.CHECKS_WAITING_PER_ORIGIN` checks waiting or every origin
        :data:`~.check_queue.CHECKS_WAITING` (verify 28, V6): the request is to be refused 429. Never raises."""
        pending = self._checking.get(credential[1])
        if pending is not None:
            pending.askers.add(conn)
        else:
            pending = _PendingCheck(credential, headers, target)
            pending.askers.add(conn)
            taken = self._queue.offer(origin, pending)
            if taken:
                self._checking[credential[1]] = pending
            self._take_checks()  # also tells the dead the offer dropped
            if not taken:
                return False
        try:
            await asyncio.shield(pending.done)
        finally:
            pending.askers.discard(conn)
        return True

    def _asked(self, pending: _PendingCheck) -> bool:
        """Whether a request carrying ``pending``'s credential still waits on an open connection (its caller has not
        closed it: a peeked end of stream counts as closed)."""
        return any(conn in self._connections and not _peer_gone(getattr(conn, "stream", None))
                   for conn in pending.askers)

    def _take_checks(self) -> None:
        """Start waiting checks, in turn across origins, while fewer than :data:`CHECKS_AT_ONCE` are under way."""
        while self._running < CHECKS_AT_ONCE:
            pending, dropped = self._queue.take()
            for gone in dropped:
                self.count("checks of credentials dropped unasked (every request carrying it had closed its connection)")
                self._settle(gone)
            if pending is None:
                return
            self._running += 1
            fire_and_forget(self._check(pending), what="a check of a credential", keep=self._check_tasks)

    def _settle(self, pending: _PendingCheck) -> None:
        if self._checking.get(pending.credential[1]) is pending:
            del self._checking[pending.credential[1]]
        if not pending.done.done():
            pending.done.set_result(None)

    async def _check(self, pending: _PendingCheck) -> None:
        credential = pending.credential
        try:
            if self.check_credential is None or not self.checks_first(credential):
                return  # decided meanwhile (a request carrying it authenticated), or checks paused
            try:
                user = await self.check_credential(credential[0], pending.headers, pending.target)
            except Unchecked:
                return
            except Exception as exc:
                self._checks_paused_until = time.monotonic() + CHECK_PAUSE_S
                self.count(f"credentials not checked before being counted for {CHECK_PAUSE_S:g} s (the check "
                           f"failed: {exc.__class__.__name__})")
                return
            if user is None:
                self.keys.refuse(credential[1])
            else:
                self.keys.learn(credential[1], user, time.time())
        finally:
            self._running -= 1
            self._settle(pending)
            self._take_checks()

    def refuse_check(self, stream: IOStream, origin: str, headers: httputil.HTTPHeaders) -> None:
        """Answer 429 (field ``credential``, Retry-After) on ``stream``, whose request head was taken, for a full
        check queue (verify 28, V6) and close it; counted for the summary line."""
        queue = self._queue
        self.count("refused 429: too many credentials not seen before waiting for the hub's check")
        message = checks_full_message(origin, queue.waiting(origin), queue.waiting(), queue.per_origin, queue.total,
                                      queue.waiting_behind(peer_of(origin)), queue.per_peer)
        length = headers.get("Content-Length", "")
        left = min(int(length), DRAIN_BYTES) if length.isdigit() else 0
        body_timeout = self.conn_params.body_timeout or DRAIN_TIMEOUT_S
        IOLoop.current().add_callback(_answer_and_discard, stream, checks_full_answer(message), left,
                                      min(body_timeout, DRAIN_TIMEOUT_S) if left else OVER_SHARE_CLOSE_S)

    # ---- the credentials learned, kept across a restart (verify 28, V6) -----------------------
    def _load_keys(self) -> None:
        """Learn again the credentials of :attr:`keys_file` not yet expired; a missing or unreadable file is none."""
        if not self.keys_file:
            return
        try:
            with open(self.keys_file, encoding="utf-8") as handle:
                rows = json.load(handle).get("keys", [])
            restored = self.keys.restore([(str(d), str(u), float(e)) for d, u, e in rows], time.time(), LEARNED_KEEP_S)
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("jupyter_sched: front door: could not read %s (%s); credentials are checked anew",
                        self.keys_file, exc)
            return
        log.info("jupyter_sched: front door: %d credentials learned before the restart kept (%s)", restored,
                 self.keys_file)

    def save_keys(self, force: bool = False) -> None:
        """Write the credentials learned to :attr:`keys_file` (0600, replaced whole) when one was learned since the
        last write, at most every :data:`KEYS_SAVE_S` (``force``: now). Never raises."""
        now = time.monotonic()
        if not self.keys_file or not self.keys.changed or (not force and now - self._keys_saved_at < KEYS_SAVE_S):
            return
        self._keys_saved_at = now
        rows = self.keys.rows(time.time(), LEARNED_KEEP_S)
        part = f"{self.keys_file}.{os.getpid()}.tmp"
        try:
            fd = open_fd(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"keys": rows}, handle)
            os.chmod(part, 0o600)
            os.replace(part, self.keys_file)
        except OSError as exc:
            log.warning("jupyter_sched: front door: could not write %s (%s)", self.keys_file, exc)

    def learned(self, conn: object, credential: tuple[str, str] | None, user: str) -> None:
        """``conn``'s request authenticated as hub ``user`` with ``credential``: later requests carrying it
        count as ``user``, and so does this one if it is still being answered."""
        if credential is not None:  # a job's token too: its job's owner (verify 25, V2)
            self.keys.learn(credential[1], user, time.time())
        if conn in self._connections and conn not in self._waiting:
            self.fair.answering(conn, f"user {user}")

    # ---- answers nobody reads (red team 23, R2) ----------------------------------------------
    def _observe_answers(self, now: float) -> None:
        for conn in list(self._connections):
            if conn in self._waiting:
                self._stalls.forget(conn)
                continue
            unsent, written = _write_counters(getattr(conn, "stream", None))
            self._stalls.observe(conn, unsent, written, now)

    def _sweep(self) -> None:
        """Every :data:`~.stalled_answers.SWEEP_S`: close the answers stalled past the timeout."""
        now = time.monotonic()
        self._observe_answers(now)
        self.save_keys()
        timeout_s = self.conn_params.body_timeout or DRAIN_TIMEOUT_S
        for reader in self.bodies.slow(now, timeout_s):  # red team 39, R6
            if isinstance(reader, _Watched):
                reader.cut_slow(now, timeout_s)
        for conn in self._stalls.overdue(now):
            self._close(conn, f"closed: an answer its caller did not read for {self._stalls.timeout_s:g} s "
                              f"(under {MIN_ANSWER_RATE} B/s; c.FrontDoor.answer_timeout_s)")

    def stop(self) -> None:
        self.save_keys(force=True)
        if self._sweeper is not None:
            self._sweeper.stop()
            self._sweeper = None
        super().stop()

    def start_request(self, server_conn: object, request_conn: httputil.HTTPConnection) -> httputil.HTTPMessageDelegate:
        if server_conn in self._connections:
            self._waiting[server_conn] = self._waiting.pop(server_conn, time.monotonic())
            self._stalls.forget(server_conn)  # its answers were written: it waits for a request again
            self.fair.done(server_conn)
        return _Watched(super().start_request(server_conn, request_conn), self, server_conn, request_conn,
                        self._lines.get(server_conn))

    def answering(self, server_conn: object) -> None:
        """``server_conn``'s request is whole: it is answered, never closed at the ceiling."""
        self._waiting.pop(server_conn, None)

    def on_close(self, server_conn: object) -> None:
        self._waiting.pop(server_conn, None)
        self._stalls.forget(server_conn)
        self.fair.forget(server_conn)
        self._lines.pop(server_conn, None)
        self._connections.discard(server_conn)
        for resume in list(self._room_waiters):  # a listening socket paused at the full ceiling takes the next
            resume()

    def waiting(self) -> int:
        """How many open connections have no whole request yet."""
        return len(self._waiting)

    # ---- accepting -----------------------------------------------------------------------
    def listening_ports(self) -> list[int]:
        """The TCP ports this server listens on (IPv4 and IPv6 alike), sorted."""
        ports = set()
        for sock in self._sockets.values():
            try:
                address = sock.getsockname()
            except OSError:
                continue
            if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
                ports.add(int(address[1]))
        return sorted(ports)

    def add_sockets(self, sockets: Iterable[socket.socket]) -> None:
        if self.listening_since is None:
            self.listening_since = time.time()
        for sock in sockets:
            try:  # tornado listens with a queue of 128 (verify 24, V3)
                sock.listen(LISTEN_BACKLOG)
            except OSError:
                pass
            self._sockets[sock.fileno()] = sock
            self._handlers[sock.fileno()] = self._accept_on(sock)

    def _accept_on(self, sock: socket.socket) -> Callable[[], None]:
        """As tornado's ``add_accept_handler``, but running out of descriptors pauses accepting
        for :data:`ACCEPT_PAUSE_S` (the listening socket stays readable, so retrying at once spins
        and logged a traceback per try) and is counted for the summary line; and at a full ceiling where
        no connection may be closed (:meth:`_make_room`) accepting pauses until one closes (or for
        :data:`ROOM_POLL_S`): the newcomers wait in the listening socket's queue (:data:`LISTEN_BACKLOG`),
        rather than being accepted and closed before their request could be read (verify 24, V3)."""
        loop = IOLoop.current()
        removed, listening = [False], [True]

        def pause(for_s: float) -> None:
            if listening[0]:
                loop.remove_handler(sock)
                listening[0] = False
            loop.call_later(for_s, resume)

        def accept(fd: Any, events: int) -> None:
            for _ in range(128):
                if removed[0] or not listening[0]:
                    return
                if len(self._connections) >= self.max_connections and self._evictable() is None:
                    self.count("accepting paused at the full ceiling (newcomers wait until a connection closes)")
                    self._room_waiters.add(resume)
                    pause(ROOM_POLL_S)
                    return
                try:
                    connection, address = sock.accept()
                except BlockingIOError:
                    return
                except ConnectionAbortedError:
                    continue
                except OSError as exc:
                    if exc.errno not in _FD_ERRNOS:
                        raise
                    self.count(f"not accepted: {os.strerror(exc.errno)}")
                    pause(ACCEPT_PAUSE_S)
                    return
                self._handle_connection(connection, address)

        def resume() -> None:
            self._room_waiters.discard(resume)
            if not removed[0] and not listening[0]:
                loop.add_handler(sock, accept, IOLoop.READ)
                listening[0] = True

        def remove() -> None:
            if not removed[0] and listening[0]:
                loop.remove_handler(sock)
            removed[0] = True
            self._room_waiters.discard(resume)

        loop.add_handler(sock, accept, IOLoop.READ)
        return remove

    def body_cut(self, key: str, target: str, code: str, message: str, what: str) -> None:
        """A body of caller ``key`` was cut (red team 39, R6): counted as ``what``, its caller named in the next
        line, a hub user audited (at most once per :data:`~.fair_share.AUDIT_INTERVAL_S`, with the count)."""
        self.count(what)
        if key in self._cut_from or len(self._cut_from) < 64:
            self._cut_from[key] = self._cut_from.get(key, 0) + 1
        user, hook = user_of(key), self.on_body_cut
        if user is not None and hook is not None and (cut := self.fair.to_audit(f"cut {key}", time.monotonic())):
            try:
                hook(user, target, code, message, cut)
            except Exception:
                log.exception("jupyter_sched: could not audit a caller whose request bodies were cut")

    # ---- one line per interval --------------------------------------------------------------
    def broken_handler_said(self) -> bool:
        """True at most once a minute: whether this 500 for a handler that could not be built writes its line and
        traceback (the others are counted in the summary line)."""
        now = time.monotonic()
        if now - self._broken_said_at < BROKEN_HANDLER_EVERY_S:
            return False
        self._broken_said_at = now
        return True

    def count(self, what: str) -> None:
        """Count one ``what`` for the next summary line."""
        self._counts[what] = self._counts.get(what, 0) + 1
        if not self._flush_pending:
            self._flush_pending = True
            IOLoop.current().call_later(self.log_interval_s, self._flush)

    def _flush(self) -> None:
        self._flush_pending = False
        counts, self._counts = self._counts, {}
        cut_from, self._cut_from = self._cut_from, {}
        if counts:
            said = "; ".join(f"{n:,} {what}" for what, n in counts.items())
            if cut_from:  # the holders, named (red team 39, R6)
                named = sorted(cut_from.items(), key=lambda item: -item[1])
                said += "; bodies cut from " + ", ".join(f"{key} ({n:,})" for key, n in named[:8]) + (
                    f" and {len(named) - 8} more callers" if len(named) > 8 else "")
            log.warning("jupyter_sched: front door, last %.0f s: %s (%d open, %d without a whole request, ceiling %d; "
                        "c.FrontDoor.max_connections; %.1f MiB of unfinished bodies held, at most %.0f MiB; %s)",
                        self.log_interval_s, said, len(self._connections), len(self._waiting), self.max_connections,
                        self.bodies.held / (1 << 20), self.bodies.budget / (1 << 20), HELD_SETTING)


class FrontDoor(LoggingConfigurable):
    """Settings of the central service's HTTP server (``c.FrontDoor.*``; red team 17, R6)."""

    header_timeout_s = Float(
        20.0, config=True,
        help="""Seconds a connection has to send a whole request head (method, path, headers), and the
        longest a kept-alive connection may sit idle between requests; then it is closed. Default 20:
        JupyterHub's proxy and the users' servers send a head at once. A connection that holds half a
        request, with or without a token, holds one of the service's file descriptors until then.""",
    )
    body_timeout_s = Float(
        60.0, config=True,
        help="""Seconds a connection has to send a request's whole body once its head arrived; then it is
        closed. Default 60 (the largest body the API takes is a carried notebook of a few MB).""",
    )
    max_connections = Int(
        1000, config=True,
        help="""Most connections open at once. Past it, a pipelined request waiting for its caller to read
        the earlier answers is closed first, then a connection of a caller over
        c.FrontDoor.max_connections_per_user, then the connection that has waited longest without a whole
        request (half-sent, or idle kept-alive; at least 1 s), then the answer its caller has read least
        (stalled at least 2 s: c.FrontDoor.answer_timeout_s); other answers being read are never cut. When
        none may be closed, new connections wait to be accepted.
        Lowered at start to the process's RLIMIT_NOFILE minus 256 descriptors kept for the engine, the
        store and the hub client (systemd's default soft limit is 1024: raise LimitNOFILE to allow
        more). Default 1000.""",
    )
    max_body_bytes = Int(
        MAX_BODY_BYTES, config=True,
        help=f"""Largest request body taken, in bytes; a longer Content-Length is answered 413 (field body,
        the limit) before any of it is read or the caller authenticated; a chunked body gets the same 413 when
        it passes the limit.
        Default {MAX_BODY_BYTES} (17 MiB): a carried notebook (notebook_json, at most 8 MiB, whose JSON
        escaping can double it) plus a script's source. Tornado's default was 100 MB per connection.""",
    )
    min_chunk_bytes = Int(
        512, config=True,
        help=f"""Least mean size, in bytes, of the chunks of a body sent chunked (Transfer-Encoding: chunked),
        checked after its first {FREE_CHUNKS} chunks; a body that falls below it is answered 400 (field body)
        and its sender audited. Tornado spends ~16 µs of the service's IO loop on each chunk whatever its size,
        so 1-byte chunks made a 400 KB body cost ~26 s of it (red team 21, R4). Clients that send a chunked
        body (a generator's pieces, a proxy relaying reads) send KiBs a chunk. Default 512; 0 turns the check
        off.""",
    )
    answer_timeout_s = Float(
        30.0, config=True,
        help=f"""Seconds an answer may wait on a caller that does not read it (bytes unsent and fewer than
        {MIN_ANSWER_RATE} bytes a second read); then its connection is closed. A caller that sent whole
        requests and never read the answers held its connections for ever, and enough of them (without a
        token, on a static file) refused every other user's requests (red team 23, R2). Bytes the kernel
        holds unacknowledged count, so many small pipelined answers nobody reads stall like one large one
        (verify 23, V5). Log follows and
        event streams drain between events and are not affected. Default 30; 0 turns the timeout off (the
        ceiling still cuts the longest-stalled answer first).""",
    )
    max_connections_per_user = Int(
        0, config=True,
        help=f"""Most connections one caller may have being answered at once while the service is near its
        ceiling (at least {PRESSURE_SHARE:.0%} of max_connections open); a request beyond it is answered 429
        (Retry-After, field connections) and its connection closed, and at a full ceiling the caller most over it
        loses a connection before a newcomer is refused. The caller is the hub user a request's token or cookie
        authenticated as (per request: JupyterHub's proxy carries many users' requests on shared connections),
        else the peer address. A user refused so is audited at most once a minute. Pipelined requests are taken
        only once the caller has read the earlier answers. One user pipelining small requests on every
        connection held the whole ceiling (verify 23, V5). Default 0: a tenth of the ceiling, at least
        {SHARE_FLOOR}; -1 turns it off.""",
    )

    @validate("max_connections_per_user")
    def _valid_share(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if value < -1:
            raise TraitError(f"c.FrontDoor.max_connections_per_user = {value}: must be -1 (off), 0 (a tenth of the "
                             f"ceiling, at least {SHARE_FLOOR}) or a number of connections. Fix: set e.g. 16")
        return value

    max_body_bytes_held = Int(
        DEFAULT_HELD_BYTES, config=True,
        help=f"""Most bytes of unfinished request bodies the service buffers at once, before their callers are
        authenticated (each body's Content-Length is reserved from its head; a chunked one as it arrives). One
        caller (hub user, else peer address) may hold a quarter of it (at least max_body_bytes). A body that would
        pass either is answered 503 with Retry-After from its head, unread. A body over {TOKENLESS_BODY_BYTES >> 10}
        KiB from a request without a token or cookie is answered 401 unread. Without it, 1000 connections each
        holding a 17 MiB body unfinished took ~17 GiB, no token needed (red team 24, R1). Default
        {DEFAULT_HELD_BYTES >> 20} MiB; 0 turns the budget off; at least max_body_bytes, or the largest bodies are
        always refused. A body of at most {SMALL_BODY_BYTES >> 10} KiB is outside it (never refused for others'
        bodies); past it the caller holding most loses its slowest body first (503), and a body that comes too
        slowly for body_timeout_s is cut 408; the callers cut are named in the log and audited (red team 39, R6).""",
    )

    @validate("max_body_bytes_held")
    def _valid_held(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if value < 0:
            raise TraitError(f"{HELD_SETTING} = {value}: must be 0 (off) or a number of bytes. "
                             f"Fix: set e.g. {DEFAULT_HELD_BYTES} ({DEFAULT_HELD_BYTES >> 20} MiB)")
        return value

    trusted_proxies = List(
        Unicode(), list(DEFAULT_TRUSTED_PROXIES), config=True,
        help=f"""Addresses or CIDR blocks (e.g. ["10.0.0.5"], ["10.1.0.0/16"]) of the proxies whose
        X-Forwarded-For header is believed: only a request whose connection comes from one of them counts its first
        requests with tokens not seen before per client address (the last X-Forwarded-For address, which
        JupyterHub's proxy appends), so one browser's flood of made-up tokens does not take every other client's
        first requests. From any other address the header is the caller's own word and is ignored: the connecting
        address is the origin (a forged header on direct connections spread a flood over many made-up origins
        and every new token's first request was answered 429: red team 29, R1). Whatever the origins, the checks
        waiting behind one connecting address are bounded together (half of all), so one address never holds them
        all. Default {list(DEFAULT_TRUSTED_PROXIES)}: configurable-http-proxy on this host connects from loopback.
        On such a hub every local account also connects from loopback and can claim client addresses; that is
        bounded by the per-address bound, and nothing the proxy sends can prove otherwise on the same host (a
        secret in configurable-http-proxy's --custom-header is on its command line, which every local account
        can read in ps). Where the proxy runs on another host, name its address and leave loopback out; [] believes
        no header (every proxied request then shares the proxy's address).""",
    )

    proxy_uids = List(
        Int(), [], config=True,
        help="""Further accounts (uids) whose connections from loopback are the hub's proxy's
        (configurable-http-proxy's), beside root and the account the service runs as (JupyterHub starts its proxy
        and its services as its own account). A loopback connection opened by any other local account is a caller
        of its own, told by its account (the kernel's sock_diag says who opened it): its X-Forwarded-For is never
        believed and its first requests with tokens not seen before are bounded as one client's, so a local user
        flooding the service directly does not take the proxy's first requests (red team 29, R1). Name the proxy's
        uid here when it runs as another account than the service and root. Where the kernel cannot be asked
        (jupyter-sched doctor says so), every loopback connection counts as the proxy's address, as before.
        Default []: root and the service's own account.""",
    )

    @validate("proxy_uids")
    def _valid_proxy_uids(self, proposal: Any) -> list[int]:
        values = [int(value) for value in proposal["value"]]
        bad = [value for value in values if value < 0]
        if bad:
            raise TraitError(f"{PROXY_UIDS_SETTING} = {values}: {bad[0]} is not a uid (uids are 0 or more). Fix: give "
                             "the uid of the account configurable-http-proxy runs as (id -u ACCOUNT)")
        return values

    @validate("trusted_proxies")
    def _valid_trusted(self, proposal: Any) -> list[str]:
        values = [str(value).strip() for value in proposal["value"]]
        try:
            parse_trusted_proxies(values)
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return values

    log_interval_s = Float(
        60.0, config=True,
        help="""Connections closed at the ceiling and accepts refused for want of file descriptors are
        logged as one summary line per this many seconds (a flood wrote a traceback per try). Default 60.""",
    )

    def ceiling(self) -> int:
        """:attr:`max_connections`, lowered to leave :data:`FD_RESERVE` descriptors free."""
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        room = self.max_connections if soft == resource.RLIM_INFINITY else min(self.max_connections, soft - FD_RESERVE)
        return max(16, room)

    def http_server(self, app: Any, **kwargs: Any) -> GuardedHTTPServer:
        """The service's HTTP server for ``app`` (``kwargs``: ssl_options, xheaders)."""
        ceiling = self.ceiling()
        if ceiling < self.max_connections:
            self.log.warning("jupyter_sched: at most %d connections at once (c.FrontDoor.max_connections %d, lowered "
                             "to leave %d of this process's %d file descriptors to the engine; raise LimitNOFILE)",
                             ceiling, self.max_connections, FD_RESERVE,
                             resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        if not sock_diag.available():  # red29 R1: loopback connections are not told apart by account here
            self.log.warning("jupyter_sched: front door: %s",
                             local_accounts_unknown(_proxy_uids(self.proxy_uids, os.geteuid())))
        return GuardedHTTPServer(app, max_connections=ceiling, log_interval_s=self.log_interval_s,
                                 max_body_bytes=self.max_body_bytes, min_chunk_bytes=self.min_chunk_bytes,
                                 idle_connection_timeout=self.header_timeout_s, body_timeout=self.body_timeout_s,
                                 answer_timeout_s=self.answer_timeout_s,
                                 max_connections_per_user=self.max_connections_per_user,
                                 max_body_bytes_held=self.max_body_bytes_held, trusted_proxies=self.trusted_proxies,
                                 proxy_uids=self.proxy_uids, **kwargs)
