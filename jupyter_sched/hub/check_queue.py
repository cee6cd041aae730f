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
* at most :data:`CHECKS_WAITING_PER_ORIGIN` checks wait per origin (the peer; through a trusted proxy the client
  address it appends to ``X-Forwarded-For``: :func:`~.fair_share.share_key`), :data:`CHECKS_WAITING_PER_PEER` per
  peer, all its origins together (red 29, R1: 8 origins behind one peer took all 256, and every other peer's first
  request was answered 429), and :data:`CHECKS_WAITING` in all; past any the request is answered 429 at once (:func:`checks_full_answer`: ``Retry-After``, field
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

__all__ = ["CHECKS_WAITING", "CHECKS_WAITING_PER_ORIGIN", "CHECKS_WAITING_PER_PEER", "CHECK_RETRY_AFTER_S", "CheckQueue", "checks_full_answer",
           "checks_full_message"]

CHECKS_WAITING_PER_ORIGIN = 32
"""Checks of credentials not seen before that may wait for the hub per origin (beyond those under way)."""
CHECKS_WAITING = 256
"""Checks that may wait for the hub in all, every origin together."""
CHECKS_WAITING_PER_PEER = CHECKS_WAITING // 2
"""Checks that may wait for the hub from one peer (socket address), all its origins together: one peer (the hub's
proxy, or anyone on its host who claims origins in ``X-Forwarded-For``) never holds the whole queue."""
CHECK_RETRY_AFTER_S = 2
"""Seconds a 429 for a full check queue asks the caller to wait."""

T = TypeVar("T")


class CheckQueue(Generic[T]):
    """Waiting checks, one first-come queue per origin, taken in turn across origins.

    An origin is ``"PEER"`` or ``"ORIGIN via PEER"`` (:func:`~.fair_share.share_key`). ``per_origin``,
    ``per_peer`` and ``total``: the most that may wait per origin, per peer (all its origins together) and in all.
    ``alive(item)``: whether someone still waits for ``item`` (a request carrying its credential is open); a dead one
    is dropped, never taken.
    """

    def __init__(self, alive: Callable[[T], bool], per_origin: int = CHECKS_WAITING_PER_ORIGIN,
                 total: int = CHECKS_WAITING, per_peer: int = CHECKS_WAITING_PER_PEER) -> None:
        self._alive = alive
        self.per_origin, self.per_peer, self.total = per_origin, per_peer, total
        self._queues: OrderedDict[str, deque[T]] = OrderedDict()
        self._count = 0
        self._peers: dict[str, int] = {}
        """Checks waiting per peer."""
        self._dropped: list[T] = []
        """Dead ones dropped by :meth:`offer`, returned by the next :meth:`take`."""

    def waiting(self, origin: str | None = None) -> int:
        """Checks waiting from ``origin`` (None: in all)."""
        if origin is None:
            return self._count
        queue = self._queues.get(origin)
        return len(queue) if queue is not None else 0

    def waiting_behind(self, peer: str) -> int:
        """Checks waiting from ``peer``, all its origins together."""
        return self._peers.get(peer, 0)

    def offer(self, origin: str, item: T) -> bool:
        """Queue ``item`` of ``origin`` (True); False when ``origin`` has :attr:`per_origin` waiting, its peer
        :attr:`per_peer` or all origins :attr:`total`, once the dead were dropped (those of ``origin``, of its
        peer's origins, then of all; the next :meth:`take` returns them)."""
        peer = peer_of(origin)
        if self.waiting(origin) >= self.per_origin:
            self._drop_dead(origin)
        if self.waiting_behind(peer) >= self.per_peer:
            for each in [each for each in self._queues if peer_of(each) == peer]:
                self._drop_dead(each)
        if self._count >= self.total:
            for each in list(self._queues):
                self._drop_dead(each)
        if (self.waiting(origin) >= self.per_origin or self.waiting_behind(peer) >= self.per_peer
                or self._count >= self.total):
            return False
        self._queues.setdefault(origin, deque()).append(item)
        self._count += 1
        self._peers[peer] = self._peers.get(peer, 0) + 1
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
            self._left(origin, 1)
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
        self._left(origin, len(queue) - len(kept))
        if kept:
            self._queues[origin] = kept
        else:
            del self._queues[origin]

    def _left(self, origin: str, count: int) -> None:
        peer = peer_of(origin)
        left = self._peers.get(peer, 0) - count
        if left > 0:
            self._peers[peer] = left
        else:
            self._peers.pop(peer, None)


def peer_of(origin: str) -> str:
    """The peer of an origin (``"ORIGIN via PEER"`` or ``"PEER"``)."""
    return origin.rsplit(" via ", 1)[-1]


def checks_full_message(origin: str, waiting_here: int, waiting_all: int, per_origin: int, total: int,
                        waiting_behind: int | None = None, per_peer: int | None = None) -> str:
    """The words of a 429 for a full check queue: ``waiting_here`` checks wait from ``origin``, ``waiting_behind``
    from its peer (all its origins), ``waiting_all`` in all, at most ``per_origin`` / ``per_peer`` / ``total``."""
    where, _, via = origin.partition(" via ")
    at = f"{where} (through {via})" if via else where
    behind = f"{waiting_behind} from {via or where}, " if waiting_behind is not None else ""
    peer = f", {per_peer} per connecting address" if per_peer is not None else ""
    return (f"{waiting_here} requests from {at} with tokens not seen before wait for the hub to check them "
            f"({behind}{waiting_all} from every caller); at most {per_origin} wait per caller{peer} and {total} in all")


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
