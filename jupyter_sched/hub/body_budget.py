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

Pure bookkeeping and the answers' bytes; :mod:`.front_door` calls it.
"""

from __future__ import annotations

import json

__all__ = ["DEFAULT_HELD_BYTES", "HELD_SETTING", "TOKENLESS_BODY_BYTES", "BodyBudget", "caller_share",
           "over_budget_answer", "tokenless_answer"]

TOKENLESS_BODY_BYTES = 64 << 10
"""Most bytes of body taken from a request that carries no credential (it is refused anyway)."""
DEFAULT_HELD_BYTES = 256 << 20
"""``c.FrontDoor.max_body_bytes_held``'s default: bytes of unfinished bodies held at once."""
HELD_SETTING = "c.FrontDoor.max_body_bytes_held"
RETRY_AFTER_S = 5
"""The ``Retry-After`` (whole seconds) of a body refused over the budget."""


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
                       key: str = "") -> bytes:
    """The whole 503 (``Retry-After``) for a body that would pass the budget or the share of caller ``key``
    (:meth:`~.fair_share.CallerKeys.key`; the words say whose the share is: :func:`_share_holder`)."""
    said = f"{size:,} bytes" if size is not None else "a chunked body"
    mine = holding + (size or 0) > share
    why, advice = _share_holder(key, holding, share) if mine else (
        f"the service holds {held / (1 << 20):.0f} MiB of unfinished request bodies (at most "
        f"{budget / (1 << 20):.0f} MiB at once)", "send it again")
    return _answer("503 Service Unavailable", {
        "code": "busy", "field": "body",
        "message": f"a request body of {said} was not taken: {why}",
        "hint": f"{advice} (retry in {RETRY_AFTER_S} s); an admin sets {HELD_SETTING}",
        "details": {"retry_after_s": RETRY_AFTER_S}}, extra=f"Retry-After: {RETRY_AFTER_S}\r\n")
