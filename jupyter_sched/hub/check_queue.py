"""The checks of credentials not seen before, waiting for the hub: bounded per origin and in all, served in turn
across origins (verify 28, V6).

verify 26 V11 made the front door ask the hub who a credential not seen before names before counting its request
(:meth:`~.front_door.GuardedHTTPServer.check_first`), 16 checks at once. They waited in ONE first-come queue with no
bound, and a check went on for a request whose client had left: 6,000 pipelined requests, each with a fresh
made-up token, made a new real token's first request wait 33-37 s; 30 s of such bursts answered every bystander
503 and kept the service asking the hub ~150 lookups a second for minutes after the flood's clients were gone
(RSS 228 → 903 MiB). Now:

* a waiting check is made only while a request carrying its credential is still open: one whose every asker's
  connection closed is dropped before the hub is asked (:class:`CheckQueue` takes ``alive``);
* at most :data:`CHECKS_WAITING_PER_ORIGIN` checks wait per origin (the peer; through the hub's proxy the client
  address it appends to ``X-Forwarded-For``: :func:`~.fair_share.share_key`) and :data:`CHECKS_WAITING` in all;
  past either the request is answered 429 at once (:func:`checks_full_answer`: ``Retry-After``, field
  ``credential``), without a hub call — a flood's tail is refused, not queued;
* the waiting checks are taken in turn across origins (one queue per origin, round-robin), so one origin's flood
  delays another origin's first request by at most a turn, never by the flood's length.

A credential the hub named a user before (also before a restart: :class:`~.fair_share.CallerKeys` is kept in a
file, see :mod:`.front_door`) never waits here at all.

Pure bookkeeping: no tornado, no clock, no I/O.
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["CHECKS_WAITING", "CHECKS_WAITING_PER_ORIGIN", "CHECK_RETRY_AFTER_S", "CheckQueue", "checks_full_answer",
           "checks_full_message"]

CHECKS_WAITING_PER_ORIGIN = 32
"""Checks of credentials not seen before that may wait for the hub per origin (beyond those under way)."""
CHECKS_WAITING = 256
"""Checks that may wait for the hub in all, every origin together."""
CHECK_RETRY_AFTER_S = 2
"""Seconds a 429 for a full check queue asks the caller to wait."""

T = TypeVar("T")


class CheckQueue(Generic[T]):
    """Waiting checks, one first-come queue per origin, taken in turn across origins.

    ``per_origin`` and ``total``: the most that may wait per origin and in all. ``alive(item)``: whether someone
    still waits for ``item`` (a request carrying its credential is open); a dead one is dropped, never taken.
    """

    def __init__(self, alive: Callable[[T], bool], per_origin: int = CHECKS_WAITING_PER_ORIGIN,
                 total: int = CHECKS_WAITING) -> None:
        self._alive = alive
        self.per_origin, self.total = per_origin, total
        self._queues: OrderedDict[str, deque[T]] = OrderedDict()
        self._count = 0
        self._dropped: list[T] = []
        """Dead ones dropped by :meth:`offer`, returned by the next :meth:`take`."""

    def waiting(self, origin: str | None = None) -> int:
        """Checks waiting from ``origin`` (None: in all)."""
        if origin is None:
            return self._count
        queue = self._queues.get(origin)
        return len(queue) if queue is not None else 0

    def offer(self, origin: str, item: T) -> bool:
        """Queue ``item`` of ``origin`` (True); False when ``origin`` has :attr:`per_origin` waiting or all origins
        :attr:`total`, once the dead were dropped (those of ``origin``, then of all; the next :meth:`take` returns
        them)."""
        if self.waiting(origin) >= self.per_origin:
            self._drop_dead(origin)
        if self._count >= self.total:
            for each in list(self._queues):
                self._drop_dead(each)
        if self.waiting(origin) >= self.per_origin or self._count >= self.total:
            return False
        self._queues.setdefault(origin, deque()).append(item)
        self._count += 1
        return True

    def take(self) -> tuple[T | None, list[T]]:
        """The next check to make — the oldest of the origin whose turn it is (that origin's turn then passes to
        the next) — or None when none waits; and the dead ones dropped on the way or by :meth:`offer` since (to be
        told nobody waits)."""
        dropped, self._dropped = self._dropped, []
        while self._queues:
            origin, queue = next(iter(self._queues.items()))
            item = queue.popleft()
            self._count -= 1
            if queue:
                self._queues.move_to_end(origin)
            else:
                del self._queues[origin]
            if self._alive(item):
                return item, dropped
            dropped.append(item)
        return None, dropped

    def _drop_dead(self, origin: str) -> None:
        queue = self._queues.get(origin)
        if queue is None:
            return
        kept = deque(item for item in queue if self._alive(item))
        self._dropped.extend(item for item in queue if item not in kept)
        self._count -= len(queue) - len(kept)
        if kept:
            self._queues[origin] = kept
        else:
            del self._queues[origin]


def checks_full_message(origin: str, waiting_here: int, waiting_all: int, per_origin: int, total: int) -> str:
    """The words of a 429 for a full check queue: ``waiting_here`` checks wait from ``origin``, ``waiting_all`` in
    all, at most ``per_origin`` / ``total``."""
    where, _, via = origin.partition(" via ")
    at = f"{where} (through {via})" if via else where
    return (f"{waiting_here} requests from {at} with tokens not seen before wait for the hub to check them "
            f"({waiting_all} from every caller); at most {per_origin} wait per caller and {total} in all")


def checks_full_answer(message: str, retry_after_s: int = CHECK_RETRY_AFTER_S) -> bytes:
    """The whole HTTP 429 answer (JSON error ``busy`` naming field ``credential``, ``Retry-After``; the connection
    closes after it)."""
    body = json.dumps({"error": {
        "code": "busy", "field": "credential", "message": message,
        "hint": f"retry in {retry_after_s} s with a token the hub issued (a token already used here is not "
                "checked again, and is answered at once)",
        "details": {"retry_after_s": retry_after_s}}}).encode()
    head = (f"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: {retry_after_s}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body
