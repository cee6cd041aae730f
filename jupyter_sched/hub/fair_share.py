"""One caller's share of the connections being answered at the front door (verify 23, V5).

A hub user with a token opened 30 connections (the ceiling, lowered to 30) and pipelined 200 small
``GET me`` on each without reading: every answer was small and got written, so none counted as
unread (red team 23, R2), but each connection stayed "being answered" while its backlog lasted and
every other user was refused for 15 to 20 s. Reads had no per-user bound (only submits, log follows,
event streams and lease waits had one).

This module is the bookkeeping behind two rules of :mod:`.front_door`:

* **a share per caller** — while the ceiling is *pressed* (at least :data:`PRESSURE_SHARE` of
  ``c.FrontDoor.max_connections`` open), one caller may have at most ``max_connections_per_user``
  connections being answered at once (default :func:`default_share`: a tenth of the ceiling, at
  least :data:`SHARE_FLOOR`); a request beyond it is answered 429 from its head (``Retry-After``,
  the words name the limit and the setting) and its connection closed, and at a full ceiling the
  caller most over their share loses a connection before a newcomer is refused;
* **who the caller is** — per request, never per connection: JupyterHub's proxy carries many users'
  requests on shared keep-alive connections from one address. A request's credential (its
  ``Authorization`` token, a ``?token=``, else its ``Cookie`` header) is digested
  (:func:`credential_digest`); once a request with that credential authenticated, the digest names
  its hub user (:meth:`CallerKeys.learn`, told by the identity provider) and every later request
  carrying it counts as that user, whatever connection or token it uses. A job's progress token
  counts as itself. A request with no credential counts as its peer (socket) address; one whose
  credential was not yet seen authenticated (a first request; a made-up token) as "unproven
  credentials from" that address — so made-up tokens cannot make one caller many, and a flood without
  any token does not take the share of first requests. Through the hub's proxy the unproven share is
  per origin (the last ``X-Forwarded-For`` address, which the proxy appends: :func:`share_key`), all
  origins behind one peer bounded together at :meth:`FairShare.unproven_bound` (session 25: made-up
  tokens flooding from one host held the proxy's unproven share, and every new real token's first
  request was answered 429 until the flood stopped); a token's very first request shares the
  unproven share of its own host only. Where the front door can ask the hub first
  (:meth:`~.front_door.GuardedHTTPServer.check_first`), a credential not seen before is checked before its
  request is counted, so only what could not be checked (the hub not answering, a genuine job token) is
  counted as unproven (verify 26, V11: fresh made-up tokens filled it).

Pure bookkeeping: no tornado, no clock of its own (times are passed in).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import OrderedDict
from collections.abc import Container, Hashable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from .forwarded import LOOPBACK_PROXY, TrustedProxies

__all__ = ["AUDIT_INTERVAL_S", "PRESSURE_SHARE", "RETRY_AFTER_S", "SHARE_FLOOR", "SHARE_SETTING", "CallerKeys",
           "FairShare", "credential_digest", "credential_of", "default_share", "over_share_answer", "over_share_message", "share_key",
           "user_of"]

SHARE_FLOOR = 8
"""Least default share: connections one caller may have answered at once while the ceiling is pressed."""
PRESSURE_SHARE = 0.75
"""Share of the ceiling open at which the per-caller shares apply (below it, nobody waits for a slot)."""
RETRY_AFTER_S = 2
"""Seconds a 429 over the share asks the caller to wait (its other answers are being written meanwhile)."""
AUDIT_INTERVAL_S = 60.0
"""A user refused over their share is audited at most once per this many seconds (with the count)."""
SHARE_SETTING = "c.FrontDoor.max_connections_per_user"
_AUTH = re.compile(r"\s*(?:token|bearer)\s+(\S{1,4096})\s*", re.IGNORECASE)
_KEYS_KEPT = 10_000
"""Credentials remembered (least recently used forgotten first)."""


def default_share(ceiling: int) -> int:
    """The share of a ``ceiling`` of connections: a tenth, at least :data:`SHARE_FLOOR`."""
    return max(SHARE_FLOOR, ceiling // 10)


def credential_of(headers: Mapping[str, str], target: str) -> tuple[str, str] | None:
    """``(kind, credential)`` a request carries, or None: ``("token", TOKEN)`` for an ``Authorization:
    token|bearer …`` header or a ``?token=`` in ``target`` (the request's path and query), ``("job", TOKEN)``
    for such a token starting ``jsjob1.`` (a job's progress token), ``("cookie", HEADER)`` for a ``Cookie``
    header (the hub's OAuth cookie rides in it: the whole header, stripped)."""
    token = None
    if match := _AUTH.fullmatch(headers.get("Authorization", "") or ""):
        token = match.group(1)
    elif "token=" in target and "?" in target:
        values = parse_qs(target.split("?", 1)[1]).get("token")
        token = values[0] if values else None
    if token:
        return ("job" if token.startswith("jsjob1.") else "token"), token
    cookie = (headers.get("Cookie", "") or "").strip()
    return ("cookie", cookie) if cookie else None


def credential_digest(headers: Mapping[str, str], target: str) -> tuple[str, str] | None:
    """``(kind, digest)`` of the credential a request carries (:func:`credential_of`), or None; one browser's
    requests (the whole ``Cookie`` header) digest alike. The digest is a SHA-256 prefix: the credential itself
    is never kept."""
    found = credential_of(headers, target)
    if found is None:
        return None
    kind, value = found
    return kind, hashlib.sha256(f"{'cookie' if kind == 'cookie' else 'token'}:{value}".encode()).hexdigest()[:32]


class CallerKeys:
    """Which hub user each credential (digest) authenticated as: bounded, least recently used
    forgotten first. Only budgets read it — a revoked token still keyed to its user only limits that user."""

    def __init__(self, kept: int = _KEYS_KEPT) -> None:
        self._users: OrderedDict[str, str] = OrderedDict()
        self._refused: OrderedDict[str, None] = OrderedDict()
        self._kept = kept
        self._learned_at: dict[str, float] = {}
        """Wall-clock time (s since the epoch) each credential was learned at, when told (:meth:`rows`)."""
        self.changed = False
        """Whether a credential was learned since :meth:`rows` was last read (the front door then saves them)."""

    def refuse(self, digest: str) -> None:
        """The hub said the credential ``digest`` names nobody (a made-up or revoked token, a stale cookie): its
        later requests count as ``"refused PEER"``, not among the first requests of tokens not yet checked
        (verify 25, V4: a flood of made-up tokens from one host held the unproven share every new real token of
        that host — every account of a LocalProcessSpawner hub — needs for its first request)."""
        if digest in self._users:
            return
        self._refused[digest] = None
        self._refused.move_to_end(digest)
        while len(self._refused) > self._kept:
            self._refused.popitem(last=False)

    def refused(self, credential: tuple[str, str] | None) -> bool:
        """Whether the hub refused ``credential`` before (:meth:`refuse`)."""
        return credential is not None and credential[1] in self._refused

    def known(self, credential: tuple[str, str] | None) -> bool:
        """Whether ``credential`` authenticated before or the hub refused it (None: no credential, known)."""
        return credential is None or credential[1] in self._users or credential[1] in self._refused

    def learn(self, digest: str, user: str, at: float | None = None) -> None:
        """A request carrying the credential ``digest`` authenticated as hub user ``user`` (at wall-clock ``at``, s
        since the epoch: kept across a restart by :meth:`rows` / :meth:`restore`; None: this process only)."""
        if at is not None and self._users.get(digest) != user:
            self._learned_at[digest] = at
            self.changed = True
        self._users[digest] = user
        self._users.move_to_end(digest)
        self._refused.pop(digest, None)
        while len(self._users) > self._kept:
            gone, _ = self._users.popitem(last=False)
            self._learned_at.pop(gone, None)

    def rows(self, now: float, keep_s: float) -> list[tuple[str, str, float]]:
        """``(digest, user, expires_at)`` of each credential learned at a known time less than ``keep_s`` before
        wall-clock ``now``, least recently used first (what the front door keeps across a restart: digests, never
        the credentials); clears :attr:`changed`."""
        self.changed = False
        return [(digest, user, self._learned_at[digest] + keep_s) for digest, user in self._users.items()
                if digest in self._learned_at and self._learned_at[digest] + keep_s > now]

    def restore(self, rows: list[tuple[str, str, float]], now: float, keep_s: float) -> int:
        """Learn again the :meth:`rows` of an earlier run whose expiry is after wall-clock ``now`` (an expiry more
        than ``keep_s`` ahead is cut to it); how many were."""
        restored = 0
        for digest, user, expires_at in rows:
            if expires_at > now:
                self.learn(digest, user, min(expires_at, now + keep_s) - keep_s)
                restored += 1
        self.changed = False
        return restored

    def key(self, credential: tuple[str, str] | None, peer: str) -> str:
        """The caller a request counts as: ``"user NAME"`` when its credential authenticated before —
        a job's token that passed the job-token check counts as its job's owner (verify 25, V2: each
        checked job token was a caller of its own, with its own quarter of the body budget, so one user's
        four zero-GPU jobs held all of it, for good once proven, and every user's writes were 503) —
        ``"refused PEER"`` for one the hub refused (verify 25, V4: :meth:`refuse`), ``"unproven PEER"`` for
        any other credential not yet seen authenticated, a job-shaped one too (verify 24, V1: keyed by its
        digest, each made-up ``jsjob1.`` token was a caller of its own), and ``"address PEER"`` with none."""
        if credential is not None:
            _, digest = credential
            user = self._users.get(digest)
            if user is not None:
                self._users.move_to_end(digest)
                return f"user {user}"
            if digest in self._refused:
                return f"refused {peer}"
            return f"unproven {peer}"
        return f"address {peer}"


_ORIGIN = re.compile(r"[0-9A-Fa-f.:]{2,45}")
"""An address as configurable-http-proxy writes it in ``X-Forwarded-For`` (IPv4, IPv6, IPv4-mapped IPv6)."""


def share_key(key: str, headers: Mapping[str, str], trusted: TrustedProxies = LOOPBACK_PROXY) -> str:
    """The caller a request counts as for the connection share (:class:`FairShare`): ``key``
    (:meth:`CallerKeys.key`), except that unproven credentials arriving from a trusted proxy (``trusted``:
    ``c.FrontDoor.trusted_proxies``) count per origin — ``"unproven ORIGIN via PEER"`` where ``ORIGIN`` is
    the last address of the request's ``X-Forwarded-For`` (the client JupyterHub's proxy saw: it appends
    it) — so made-up tokens flooding through the proxy from one host do not take the first requests of
    every other host's new tokens (session 25); all of one peer's origins together stay bounded
    (:meth:`FairShare.over`, :class:`~.check_queue.CheckQueue`). From any other peer the header is the
    caller's own word and is ignored: the peer is the origin (red 29, R1: forged addresses on direct
    connections spread a flood over many origins). The body budget keeps ``key``."""
    if not key.startswith("unproven ") or not trusted.trusts(key[9:]):
        return key
    forwarded = (headers.get("X-Forwarded-For", "") or "").rsplit(",", 1)[-1].strip()
    if forwarded.startswith("::ffff:"):
        forwarded = forwarded[7:]
    if not _ORIGIN.fullmatch(forwarded) or forwarded == key[9:]:
        return key
    return f"unproven {forwarded} via {key[9:]}"


def _peer_of(key: str) -> str | None:
    """The peer address of an unproven share key (None: not one)."""
    if not key.startswith("unproven "):
        return None
    return key.rsplit(" via ", 1)[1] if " via " in key else key[9:]


def user_of(key: str) -> str | None:
    """The hub user a caller key names (None: an address or unproven credentials)."""
    return key[5:] if key.startswith("user ") else None


@dataclass
class _Refusals:
    since: float
    """Monotonic time (s) of the last audit row (or of the first refusal)."""
    counted: int = 0
    """Refusals since that row that were not written."""


@dataclass
class FairShare:
    """Connections being answered, per caller, and the share each may hold while the ceiling is pressed.

    ``share``: connections one caller may have answered at once then; ``ceiling``: the front door's
    ``max_connections``; ``pressure``: the open share of the ceiling at which shares apply.
    """

    share: int
    ceiling: int
    pressure: float = PRESSURE_SHARE
    _answering: dict[Hashable, str] = field(default_factory=dict)
    _last: dict[Hashable, str] = field(default_factory=dict)
    """Each open connection's latest caller (kept between its requests, until it closes)."""
    _refused: dict[str, _Refusals] = field(default_factory=dict)
    _expected: dict[Hashable, str] = field(default_factory=dict)
    """Connections accepted at a full ceiling whose request head was seen in the socket but not yet read:
    the caller it names (verify 24, V3)."""

    def pressed(self, open_connections: int) -> bool:
        """Whether ``open_connections`` press the ceiling (shares apply)."""
        return open_connections >= max(1, math.ceil(self.pressure * self.ceiling))

    def holding(self, key: str, but: Hashable | None = None) -> int:
        """Connections of caller ``key`` being answered (``but`` left out)."""
        return sum(1 for conn, who in self._answering.items() if who == key and conn is not but)

    def unproven_bound(self) -> int:
        """Connections the unproven credentials of all origins behind one peer may have answered at once
        while the ceiling is pressed: half the ceiling, at least the share."""
        return max(self.share, self.ceiling // 2)

    def over(self, conn: Hashable, key: str, open_connections: int) -> bool:
        """Whether answering ``key``'s request on ``conn`` would take more than the share now (for an
        unproven origin's, also more than :meth:`unproven_bound` of its peer's origins together)."""
        if self.share <= 0 or not self.pressed(open_connections):
            return False
        if self.holding(key, but=conn) >= self.share:
            return True
        peer = _peer_of(key)
        if peer is None or " via " not in key:
            return False
        behind = sum(1 for c, who in self._answering.items() if c is not conn and _peer_of(who) == peer)
        return behind >= self.unproven_bound()

    def claims(self, key: str) -> int:
        """Connections of caller ``key`` being answered, and accepted with a head of theirs not yet read."""
        return self.holding(key) + sum(1 for who in self._expected.values() if who == key)

    def expect(self, conn: Hashable, key: str) -> None:
        """``conn``, accepted at a full ceiling, holds a request head of caller ``key`` not yet read: it
        counts as theirs (for :meth:`claims` and :meth:`most_over`) until it is answered or closes."""
        self._expected[conn] = key
        self._last[conn] = key

    def checking(self, conn: Hashable) -> None:
        """``conn``'s request waits for its credential to be checked before it is counted (verify 26, V11): it is
        no caller's until then (an expectation from its peeked head is dropped)."""
        self._expected.pop(conn, None)

    def answering(self, conn: Hashable, key: str) -> None:
        """``conn`` answers a request of caller ``key`` (counted until :meth:`done`)."""
        self._expected.pop(conn, None)
        self._answering[conn] = key
        self._last[conn] = key

    def done(self, conn: Hashable) -> None:
        """``conn`` waits for its next request (its latest caller is kept)."""
        self._answering.pop(conn, None)

    def forget(self, conn: Hashable) -> None:
        """``conn`` closed."""
        self._expected.pop(conn, None)
        self._answering.pop(conn, None)
        self._last.pop(conn, None)

    def most_over(self, waiting: Container[Hashable] = (), spare: Container[Hashable] = ()) -> Hashable | None:
        """At a full ceiling, the connection to close: one of the caller whose latest requests hold the
        most open connections, when more than the share — the latest it began answering (its own request
        is cut), else one between two requests (in ``waiting``), never one in ``spare``; None when no caller
        is past the share. An idle connection goes last: one of the hub proxy's pool carries whoever's request
        the proxy sends next, and closing it as the proxy sent one made the proxy answer that bystander its
        HTML 503 (verify 24, V3; the front door also spares those idle less than a moment)."""
        counts: dict[str, int] = {}
        for who in self._last.values():
            counts[who] = counts.get(who, 0) + 1
        worst = max(counts.items(), key=lambda item: item[1], default=None)
        if self.share <= 0 or worst is None or worst[1] <= self.share:
            return None
        theirs = [conn for conn, who in self._last.items() if who == worst[0] and conn not in spare]
        idle = [conn for conn in theirs if conn in waiting]
        answering = [conn for conn in self._answering if self._answering[conn] == worst[0] and conn not in spare]
        return answering[-1] if answering else idle[0] if idle else theirs[-1] if theirs else None

    def to_audit(self, key: str, now: float, interval_s: float = AUDIT_INTERVAL_S) -> int | None:
        """One more refusal of ``key`` at monotonic ``now``: the refusals to write in one audit row
        (this one and those only counted since the last row), or None while the interval lasts."""
        seen = self._refused.get(key)
        if seen is not None and now - seen.since < interval_s:
            seen.counted += 1
            return None
        self._refused[key] = _Refusals(now)
        if len(self._refused) > _KEYS_KEPT:  # bounded: forget the callers refused long ago
            self._refused = {k: r for k, r in self._refused.items() if now - r.since < interval_s}
        return 1 + (seen.counted if seen is not None else 0)


def over_share_message(key: str, holding: int, share: int, open_connections: int, ceiling: int) -> str:
    """The words of a 429 over the share (and of its audit row)."""
    kind, _, rest = key.partition(" ")
    origin, _, via = rest.partition(" via ")
    at = f"{origin} (through {via})" if via else origin
    who = {"user": f"{rest} has", "address": f"the callers without a token at {rest} have",
           "refused": f"the callers at {rest} with tokens the hub refused have",
           "unproven": f"the callers at {at} with tokens not yet seen authenticated have"}.get(kind, "this job's token has")
    return (f"{who} {holding} requests being answered at once; while the service is near its connection "
            f"ceiling ({open_connections} of {ceiling} open) one caller may have {share} "
            f"({SHARE_SETTING})")


def over_share_answer(message: str, retry_after_s: int = RETRY_AFTER_S) -> bytes:
    """The whole HTTP 429 answer (JSON error ``busy`` naming field ``connections``, ``Retry-After``;
    the connection closes after it)."""
    body = json.dumps({"error": {
        "code": "busy", "field": "connections", "message": message,
        "hint": f"wait for your answers before sending more requests (retry in {retry_after_s} s), or send them "
                f"on fewer connections; an admin sets {SHARE_SETTING}",
        "details": {"retry_after_s": retry_after_s}}}).encode()
    head = (f"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: {retry_after_s}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body
