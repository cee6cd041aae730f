"""Bytes of unfinished request bodies the central service holds at once (red team 24, R1).

Tornado buffers a request's body whole before the handler runs, and the caller is authenticated
only then. Each body was bounded (``c.FrontDoor.max_body_bytes``, 17 MiB; ``body_timeout_s``), the
sum was not: with no token, 30 connections each sending all but the last byte of a 17 MiB body
took the service from 269 to 779 MiB in 2.7 s, 120 to 2.3 GB, and the ceiling (1000) allows
~17 GiB — the OOM killer then picks the service or someone's kernel. The front door now:

* takes at most :data:`TOKENLESS_BODY_BYTES` of body from a request whose head carries no
  credential (no ``Authorization`` token, ``?token=`` or ``Cookie``): every API route that takes a
  body needs one, so a longer ``Content-Length`` is answered 401 from the head (nothing of it kept)
  and a chunked one when it passes the bound;
* reserves each body's ``Content-Length`` (a chunked body: as it arrives) against
  ``c.FrontDoor.max_body_bytes_held`` (:data:`DEFAULT_HELD_BYTES`) and against the caller's share
  of it (:func:`caller_share`: a quarter, at least one largest body); a body that would pass either
  is answered 503 with ``Retry-After`` from its head (chunked: when it passes), so what is buffered
  before authentication is bounded by the setting whoever sends it. A reservation ends when the body
  is whole (the request then runs and is authenticated) or its connection closes.

Red team 39, R6: four hub users each holding their quarter with slow 16 MiB bodies (100 bytes every 2 s) took the
whole budget, and every other user's submit, even 44 bytes, was answered 503 for as long as they trickled. So the
budget can no longer be spent to refuse others:

* a body of at most :data:`SMALL_BODY_BYTES` (every submit without a carried notebook) is never refused for the
  budget: it is outside it (what such bodies hold at once is bounded by the connection ceiling), and a chunked
  body is counted once it passes that size;
* a body that arrives too slowly (:meth:`BodyBudget.slow`: after :data:`SLOW_GRACE_S`, at the rate it came so far
  it would take more than :data:`SLOW_FACTOR` times ``body_timeout_s``) is cut, 408 (:func:`slow_body_answer`);
* past the budget, the caller holding most (more than the newcomer would) loses its slowest body first
  (:meth:`BodyBudget.room`, answered :func:`cut_answer`), and only a newcomer that would itself hold most is
  refused; each caller whose bodies were cut is named in the front door's line and audited.

Red team 40, R6: 16 hub users each holding one 16 MiB body of which all but 200 bytes came in the first second, then
nothing, refused an honest user's second concurrent 10 MiB upload (503: at 20 MiB it "held most"): a stalled body's
whole-life average rate stayed high, and callers were ranked by bytes alone. So a body is judged by its progress:

* the slow rule looks at the last :data:`RECENT_S` (:meth:`BodyBudget.slow`; a younger body: its whole life), so a
  body that stopped coming is cut 408 however fast it began;
* past the budget, the bodies of others that are stalled (no byte for :data:`STALLED_S`) are cut first, longest
  still first, whatever their size or their caller's; only then the rule above among moving bodies;
* a refusal still needed says how many bodies of how many callers the budget holds and how many are stalled.

Verify 40, V4: 16 callers that sent ONE BYTE A SECOND after their 16 MiB were not stalled (a byte came), so an honest
user's second upload was still refused 503 until the slow rule cut them seconds later. For room a body is ranked by
its recent pace as the slow rule does: one that came over the last :data:`CRAWL_S` at under :data:`CRAWL_FRACTION` of
the pace that makes it whole in time (:meth:`_Body.crawling`) is stalled for room too, cut before any moving one.

Pure bookkeeping and the answers' bytes; :mod:`.front_door` calls it.
"""

from __future__ import annotations

import json
import time
import weakref
from dataclasses import dataclass, field

__all__ = ["CRAWL_FRACTION", "CRAWL_S", "DEFAULT_HELD_BYTES", "HELD_SETTING", "RECENT_S", "SLOW_FACTOR", "SLOW_GRACE_S", "SMALL_BODY_BYTES", "STALLED_S",
           "TIMEOUT_SETTING", "TOKENLESS_BODY_BYTES", "BodyBudget", "caller_share", "cut_answer", "cut_message",
           "over_budget_answer", "slow_body_answer", "slow_body_message", "tokenless_answer"]

TOKENLESS_BODY_BYTES = 64 << 10
"""Most bytes of body taken from a request that carries no credential (it is refused anyway)."""
DEFAULT_HELD_BYTES = 256 << 20
"""``c.FrontDoor.max_body_bytes_held``'s default: bytes of unfinished bodies held at once."""
HELD_SETTING = "c.FrontDoor.max_body_bytes_held"
TIMEOUT_SETTING = "c.FrontDoor.body_timeout_s"
RETRY_AFTER_S = 5
"""The ``Retry-After`` (whole seconds) of a body refused over the budget."""
SMALL_BODY_BYTES = 64 << 10
"""Bodies of at most this many bytes are outside the budget: never refused or cut for bodies others hold (red team
39, R6). Every request but one carrying a notebook is far smaller; the ceiling on connections bounds their sum."""
SLOW_GRACE_S = 5.0
"""Seconds a body over :data:`SMALL_BODY_BYTES` may come at any pace before its rate is judged (a connection's
first seconds are slow)."""
SLOW_FACTOR = 2.0
"""A body is too slow when, at the rate it came so far, it would take more than this many times ``body_timeout_s``
(tornado closes it at ``body_timeout_s`` anyway; the slack allows a rate that rises)."""
RECENT_S = 5.0
"""Seconds of a body's recent past its pace is judged by (red team 40, R6: a body that came fast, then stopped, kept
a high average for as long as ``body_timeout_s``)."""
STALLED_S = 1.0
"""A body no byte of which came for this long is stalled: past the budget it is cut before any moving body, whatever
its size (red team 40, R6). A client sending a body it holds sends without pause."""
CRAWL_S = 2.0
"""Seconds of a body's recent past its pace is judged by for room (verify 40, V4)."""
CRAWL_FRACTION = 0.1
"""A body older than :data:`CRAWL_S` whose pace over the last :data:`CRAWL_S` is under this fraction of the slow
rule's floor (its size over :data:`SLOW_FACTOR` times ``body_timeout_s``) crawls: past the budget it is cut as a
stalled one is (verify 40, V4: one byte a second is not "moving")."""


@dataclass
class _Body:
    """One unfinished body being counted (red team 39, R6)."""

    key: str
    length: int | None
    """Its Content-Length (None: chunked)."""
    since: float
    """Monotonic time (s) its head was read."""
    received: int = 0
    reserved: int = 0
    """Bytes of it counted in the budget (its length from the head; a chunked one's bytes once past the small
    size)."""
    target: str = ""
    """``"POST /path"``, for the log and the audit."""
    last: float = 0.0
    """Monotonic time (s) its last byte came (its head's, before any; red team 40, R6)."""
    marks: list[tuple[float, int]] = field(default_factory=list)
    """``(time, received)`` taken at each sweep, the oldest at or before :data:`RECENT_S` ago (its pace's window)."""

    def rate(self, now: float, window: float | None = None) -> float:
        """Bytes a second it came at over the last ``window`` (:data:`RECENT_S`; a younger body: its whole life)."""
        start, base = self.since, 0
        for when, received in self.marks:
            if when > now - (RECENT_S if window is None else window):
                break
            start, base = when, received
        return (self.received - base) / max(now - start, 1e-3)

    def mark(self, now: float) -> None:
        """Note how much came by ``now`` (each sweep), forgetting what is older than the window needs."""
        self.marks.append((now, self.received))
        while len(self.marks) > 1 and self.marks[1][0] <= now - RECENT_S:
            del self.marks[0]

    def idle(self, now: float) -> float:
        """Seconds since its last byte (or its head)."""
        return now - max(self.last, self.since)

    def crawling(self, now: float, timeout_s: float) -> float | None:
        """Its pace over the last :data:`CRAWL_S` when that is under :data:`CRAWL_FRACTION` of the pace that makes it
        whole within :data:`SLOW_FACTOR` times ``timeout_s`` (a chunked one: what came so far) and it is older than
        :data:`CRAWL_S`; else None (verify 40, V4)."""
        size = self.length if self.length is not None else self.received
        if timeout_s <= 0 or now - self.since < CRAWL_S or size <= 0:
            return None
        pace = self.rate(now, CRAWL_S)
        return pace if pace < CRAWL_FRACTION * size / (SLOW_FACTOR * timeout_s) else None

    def stalled(self, now: float, timeout_s: float) -> bool:
        """No byte for :data:`STALLED_S`, or crawling (:meth:`crawling`): cut for room before any moving body."""
        return self.idle(now) >= STALLED_S or self.crawling(now, timeout_s) is not None


def caller_share(budget: int, max_body_bytes: int) -> int:
    """Bytes of unfinished bodies one caller may hold: a quarter of ``budget``, at least one
    ``max_body_bytes`` body (never more than ``budget``)."""
    return min(budget, max(budget // 4, max_body_bytes))


class BodyBudget:
    """Reserved bytes of unfinished bodies, in all and per caller key (a hub user, else the peer)."""

    def __init__(self, budget: int, max_body_bytes: int) -> None:
        self.budget = budget
        """Bytes held at once in all (0 or less: no bound)."""
        self.share = caller_share(budget, max_body_bytes) if budget > 0 else 0
        self.held = 0
        self._by_key: dict[str, int] = {}
        self._bodies: weakref.WeakKeyDictionary[object, _Body] = weakref.WeakKeyDictionary()
        """Each unfinished body, by its reader (weakly: a reader gone takes its entry with it; red team 39, R6)."""

    def fits(self, key: str, size: int) -> bool:
        """Whether ``size`` more bytes for ``key`` stay within the budget and the key's share."""
        if self.budget <= 0:
            return True
        return self.held + size <= self.budget and self._by_key.get(key, 0) + size <= self.share

    def take(self, key: str, size: int) -> None:
        """Reserve ``size`` bytes for ``key`` (checked with :meth:`fits` first)."""
        self.held += size
        self._by_key[key] = self._by_key.get(key, 0) + size

    def give_back(self, key: str, size: int) -> None:
        """End a reservation of ``size`` bytes of ``key``."""
        if size <= 0:
            return
        self.held = max(0, self.held - size)
        left = self._by_key.get(key, 0) - size
        if left > 0:
            self._by_key[key] = left
        else:
            self._by_key.pop(key, None)

    def holding(self, key: str) -> int:
        """Bytes ``key`` holds reserved now."""
        return self._by_key.get(key, 0)

    # ---- each body (red team 39, R6) ---------------------------------------------------------
    def track(self, reader: object, key: str, length: int | None, now: float, target: str = "") -> None:
        """``reader`` reads a body of ``key`` (``length``: its Content-Length; None: chunked) from ``now``."""
        self._bodies[reader] = _Body(key, length, now, target=target[:300])

    def arrived(self, reader: object, size: int, reserved: int = 0) -> None:
        """``size`` more bytes of ``reader``'s body came; ``reserved`` of them were reserved (a chunked body)."""
        body = self._bodies.get(reader)
        if body is not None:
            body.received += size
            body.reserved += reserved
            if size > 0:
                body.last = time.monotonic()

    def reserved_head(self, reader: object, size: int) -> None:
        """``reader``'s body reserved ``size`` bytes from its head."""
        body = self._bodies.get(reader)
        if body is not None:
            body.reserved += size

    def untrack(self, reader: object) -> _Body | None:
        """``reader``'s body ended (whole, refused, cut or gone): what was known of it."""
        return self._bodies.pop(reader, None)

    def body(self, reader: object) -> _Body | None:
        """What is known of ``reader``'s body (None: not tracked)."""
        return self._bodies.get(reader)

    def slow(self, now: float, timeout_s: float) -> list[object]:
        """The readers whose bodies (over :data:`SMALL_BODY_BYTES`, with a Content-Length) come too slowly: after
        :data:`SLOW_GRACE_S`, at their rate over the last :data:`RECENT_S` (:meth:`_Body.rate`; red team 40, R6: not
        their whole life's) the whole body would take more than :data:`SLOW_FACTOR` times ``timeout_s``. Called at
        each sweep: it marks every body's progress."""
        bodies = list(self._bodies.items())
        for _reader, body in bodies:
            body.mark(now)
        if timeout_s <= 0:
            return []
        return [reader for reader, body in bodies
                if body.length is not None and body.length > SMALL_BODY_BYTES and now - body.since >= SLOW_GRACE_S
                and body.rate(now) * SLOW_FACTOR * timeout_s < body.length]

    def census(self, now: float, key: str = "", timeout_s: float = 0.0) -> tuple[int, int, int, int]:
        """The budgeted bodies of callers other than ``key``: ``(bodies, callers, stalled bodies, their callers)``
        (stalled: :meth:`_Body.stalled`), for the words of a refusal (red team 40, R6)."""
        callers: set[str] = set()
        stalled: set[str] = set()
        count = stalled_count = 0
        for body in list(self._bodies.values()):
            if body.key == key or body.reserved <= 0:
                continue
            count += 1
            callers.add(body.key)
            if body.stalled(now, timeout_s):
                stalled_count += 1
                stalled.add(body.key)
        return count, len(callers), stalled_count, len(stalled)

    def room(self, key: str, size: int, now: float, timeout_s: float = 0.0) -> list[object] | None:
        """The readers to cut so that ``size`` more bytes of ``key`` fit the budget (``[]``: they fit): first the
        stalled bodies of others (no byte for :data:`STALLED_S`), longest still first, whatever their size (red
        team 40, R6), then the crawling ones (:meth:`_Body.crawling` for ``timeout_s``), slowest first (verify 40,
        V4); then bodies of the callers holding more than ``key`` would, most first (of equals, the one
        with the slowest body), the slowest body of each first; None when cutting those is not enough (``key``
        would hold as much as anyone moving: it is refused instead, and nothing is cut). Never ``key``'s own."""
        if self.budget <= 0:
            return []
        need = self.held + size - self.budget
        if need <= 0:
            return []
        mine = self.holding(key) + size
        holding = dict(self._by_key)
        bodies: dict[str, list[tuple[float, object, int]]] = {}
        stalled: list[tuple[tuple[int, float], object, _Body]] = []
        for reader, body in list(self._bodies.items()):
            if body.key != key and body.reserved > 0:
                if body.idle(now) >= STALLED_S:
                    stalled.append(((0, -body.idle(now)), reader, body))
                elif (pace := body.crawling(now, timeout_s)) is not None:
                    stalled.append(((1, pace), reader, body))
                else:
                    bodies.setdefault(body.key, []).append((body.rate(now), reader, body.reserved))
        cut: list[object] = []
        for _rank, reader, body in sorted(stalled, key=lambda piece: piece[0]):
            if need <= 0:
                return cut
            cut.append(reader)
            holding[body.key] = holding.get(body.key, 0) - body.reserved
            need -= body.reserved
        for pieces in bodies.values():
            pieces.sort(key=lambda piece: piece[0], reverse=True)  # slowest last: popped first
        while need > 0:
            most = max((k for k in bodies if bodies[k]), default=None,  # ties: the one with the slowest body
                       key=lambda k: (holding.get(k, 0), -bodies[k][-1][0]))
            if most is None or holding.get(most, 0) <= mine:
                return None
            _rate, reader, reserved = bodies[most].pop()
            cut.append(reader)
            holding[most] = holding.get(most, 0) - reserved
            need -= reserved
        return cut


def _answer(status: str, body: dict[str, object], extra: str = "") -> bytes:
    data = json.dumps({"error": body}).encode()
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}Content-Length: {len(data)}\r\n"
            f"Connection: close\r\n\r\n").encode() + data


def tokenless_answer(length: int | None, *, refused: bool = False) -> bytes:
    """The whole 401 for a body longer than :data:`TOKENLESS_BODY_BYTES` sent with no credential, or with one
    the hub refused before (``refused``; verify 25, V4) (``length``: its Content-Length; None: chunked, refused
    once it passed the bound)."""
    said = f"{length:,} bytes" if length is not None else f"more than {TOKENLESS_BODY_BYTES:,} bytes (chunked)"
    came = "with a token or cookie the hub refused" if refused else "without a token or cookie"
    return _answer("401 Unauthorized", {
        "code": "unauthorized", "field": "Authorization",
        "message": f"a request body of {said} came {came}; this service reads at most "
                   f"{TOKENLESS_BODY_BYTES:,} bytes of body from a caller it cannot identify",
        "hint": "send your API token (Authorization: token <token>; a new one from the hub's token page, "
                "HUB/hub/token) with the request" if refused else
                "send your API token (Authorization: token <token>) with the request",
        "details": {"credentials": "refused" if refused else "missing"}})


def _mib(size: int) -> str:
    """``size`` bytes in MiB, one decimal at most (``64``, ``0.1``)."""
    return f"{size / (1 << 20):.1f}".removesuffix(".0")


def _share_holder(key: str, holding: int, share: int) -> tuple[str, str]:
    """Who holds the share a body did not fit in, said truly for the caller ``key`` (``"user NAME"``, ``"unproven
    PEER"``, ``"refused PEER"``, ``"address PEER"``), and the hint's advice. verify 25, V1: a new token's first
    request (not yet authenticated, so in its address's share) was told "you already have 64.0 MiB…" while
    requests of other callers at that address held it."""
    amount = f"{_mib(holding)} MiB of unfinished request bodies (at most {_mib(share)} MiB"
    kind, _, peer = key.partition(" ")
    if kind == "unproven":
        return (f"the share of requests from {peer} whose tokens are not yet authenticated holds {amount} for "
                "them together) — requests of other callers, not necessarily yours; a token is counted as its user "
                "once one of its requests has been answered", "send it again, or first make one small request "
                "(e.g. GET api/sched/me) so that the token is known")
    if kind == "refused":
        return (f"the requests from {peer} with tokens the hub refused hold {amount} for them together)",
                "send it with a valid token (a new one from the hub's token page, HUB/hub/token)")
    if kind == "address":
        return (f"the requests from {peer} without a token hold {amount} for them together)",
                "send it with your API token (Authorization: token <token>)")
    return (f"you already have {amount} per caller)", "send it again after your other uploads finished")


def over_budget_answer(size: int | None, holding: int, share: int, held: int, budget: int,
                       key: str = "", census: tuple[int, int, int, int] | None = None) -> bytes:
    """The whole 503 (``Retry-After``) for a body that would pass the budget or the share of caller ``key``
    (:meth:`~.fair_share.CallerKeys.key`; the words say whose the share is: :func:`_share_holder`); ``census``:
    :meth:`BodyBudget.census` of the others' bodies, said when the budget refused it (red team 40, R6)."""
    said = f"{size:,} bytes" if size is not None else "a chunked body"
    mine = holding + (size or 0) > share
    why, advice = _share_holder(key, holding, share) if mine else (
        f"the service holds {held / (1 << 20):.0f} MiB of unfinished request bodies (at most "
        f"{budget / (1 << 20):.0f} MiB at once){_held_by(census, holding + (size or 0))}", "send it again")
    return _answer("503 Service Unavailable", {
        "code": "busy", "field": "body",
        "message": f"a request body of {said} was not taken: {why}",
        "hint": f"{advice} (retry in {RETRY_AFTER_S} s); an admin sets {HELD_SETTING}",
        "details": {"retry_after_s": RETRY_AFTER_S}}, extra=f"Retry-After: {RETRY_AFTER_S}\r\n")


def _callers(count: int, kind: str = "") -> str:
    return f"{count:,} {kind}caller" + ("" if count == 1 else "s")


def _held_by(census: tuple[int, int, int, int] | None, mine: int) -> str:
    """Whose the held bodies are, for a refusal (red team 40, R6: the refusal named no holder)."""
    if census is None:
        return ""
    count, callers, stalled, stalled_callers = census
    still = (f"{stalled:,} of them stalled (no byte for {STALLED_S:g} s, or crawling; {_callers(stalled_callers)})"
             if stalled
             else "all still coming")
    return (f": {count:,} bodies of {_callers(callers, 'other ')}, {still}; cutting the stalled ones and those of "
            f"callers holding more than you would ({_mib(mine)} MiB) does not make room")


def slow_body_message(length: int, received: int, elapsed_s: float, timeout_s: float,
                      rate: float | None = None, idle_s: float = 0.0) -> str:
    """The words of a 408 (and of its audit row): a ``length``-byte body of which ``received`` came in
    ``elapsed_s``, too slowly to be whole within ``timeout_s`` (red team 39, R6); ``rate``: its pace over the last
    :data:`RECENT_S` (red team 40, R6; None: its whole life's), ``idle_s``: seconds since its last byte."""
    if rate is None:
        rate = received / max(elapsed_s, 1e-3)
    if idle_s >= RECENT_S:
        pace = f", none for the last {idle_s:.0f} s"
    elif elapsed_s > RECENT_S:
        pace = f", {rate:,.0f} bytes/s over the last {RECENT_S:g} s"
    else:
        pace = f" ({rate:,.0f} bytes/s)"
    takes = f"about {length / rate:,.0f} s" if rate > 0 else "for ever"
    return (f"the request body of {length:,} bytes came too slowly: {received:,} bytes in {elapsed_s:.0f} s"
            f"{pace}; at that rate it takes {takes}, and this service takes a body within {timeout_s:g} s")


def slow_body_answer(length: int, received: int, elapsed_s: float, timeout_s: float,
                     rate: float | None = None, idle_s: float = 0.0) -> bytes:
    """The whole 408 of a body cut for its pace (field ``body``; the connection closes after it)."""
    return _answer("408 Request Timeout", {
        "code": "slow_body", "field": "body",
        "message": slow_body_message(length, received, elapsed_s, timeout_s, rate, idle_s),
        "hint": f"send the whole body at once (any HTTP client does for a body it holds), over a faster link; an "
                f"admin sets {TIMEOUT_SETTING}",
        "details": {"received": received, "length": length, "timeout_s": timeout_s}})


def cut_message(size: int | None, received: int, holding: int, key: str, idle_s: float = 0.0,
                pace: float | None = None) -> str:
    """The words of a body cut to make room for another caller's (and of its audit row; red team 39, R6); one no
    byte of which came for ``idle_s`` >= :data:`STALLED_S` is said stalled (red team 40, R6), one that crawled at
    ``pace`` bytes/s over the last :data:`CRAWL_S` is said crawling (verify 40, V4)."""
    said = f"of {size:,} bytes" if size is not None else "(sent chunked)"
    if idle_s < STALLED_S and pace is not None:
        return (f"the request body {said} was cut after {received:,} bytes: it came at {pace:,.1f} bytes/s over the "
                f"last {CRAWL_S:g} s, far too slowly to be whole in time, and another caller's body needed room")
    if idle_s >= STALLED_S:
        return (f"the request body {said} was cut after {received:,} bytes: no byte of it came for {idle_s:.0f} s, "
                "and another caller's body needed room")
    kind, _, who = key.partition(" ")
    whose = "you" if kind == "user" else f"the requests from {who}"
    return (f"the request body {said} was cut after {received:,} bytes: another caller's body needed room, and "
            f"{whose} held the most unfinished request bodies ({_mib(holding)} MiB)")


def cut_answer(size: int | None, received: int, holding: int, key: str, idle_s: float = 0.0,
               pace: float | None = None) -> bytes:
    """The whole 503 (``Retry-After``) of a body cut to make room (field ``body``)."""
    return _answer("503 Service Unavailable", {
        "code": "busy", "field": "body", "message": cut_message(size, received, holding, key, idle_s, pace),
        "hint": f"send it again once your other uploads finished, each whole at once (retry in {RETRY_AFTER_S} s); "
                f"an admin sets {HELD_SETTING}",
        "details": {"retry_after_s": RETRY_AFTER_S, "received": received}}, extra=f"Retry-After: {RETRY_AFTER_S}\r\n")
