"""A squat a user server refused, reported to the central service and audited there (verify26 V8).

While ``jupyter-sched serve`` is down another account may take its port; a user server's forwarder then refuses
to send anything there (:mod:`.listener`, :mod:`.peer`: red team 25 R5, verify26 V5) and says so once per holder
in its OWN log — which no admin reads: a hostile input was refused but not audited. Now the forwarder keeps what
it refused (:class:`SquatLog`: per holder uid, where, first and last time, how many) and, once a request reaches
the real service again (through the same guard: never the squatter), hands it over with ``POST
api/sched/squat-refused`` and its own token. The service writes one ``squat_refused`` audit record per holder
(:func:`record_squats`; ``GET audit?action=squat_refused``), naming the account of the uid on the service's host.

A report is the reporting server's word (it runs as its user, who can write anything there), so the record's
actor and user are the reporter (the server the hub's token names), never the holder: a user cannot put a row
on someone else's record, only say who held the port; the holder is in the words and the details. Bounded: a
report names at most :data:`MAX_HOLDERS` holders, one reporter is taken once a minute (more is 429, audited
as a refusal under the refusal log's own bound), and a server keeps at most :data:`MAX_HOLDERS` holders until
it can report them (the most recent).

What the service can check of a report, it checks (verify 28 V5, red 28 R7: any user's token posted a report
blaming another account, root or the service's own uid, for minutes the service was serving, 999,999,999 times):
a report is refused 400 (audited as a refusal) when a holder is the service's own uid (the forwarder's guard takes
the service's account: it refuses nothing held by it), when a refusal's last time lies after the service began
listening (:data:`LISTEN_SKEW` allowed: while it listens nobody else holds its address), or when its count is more
than :data:`MAX_REFUSALS_PER_S` a second of its window could hold. A row taken says the holder as the reporter's
claim ("alice's Jupyter server says …"), not as the service's finding, and says what was checked. Each process of
the service keeps its listening span in the store (:mod:`jupyter_sched.store.spans`, schema 26): a report of a
window in which any process of the service listened on the reported port of this host is refused too
(:func:`not_while_listening`; red 29, R6: after a restart a report of a window the previous process served was taken
and its row said "the service checked that it was not listening then"); before the first span kept, the row says
the service cannot tell.
"""

from __future__ import annotations

import pwd
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from ..errors import ValidationError, json_kind

__all__ = ["LISTEN_SKEW", "MAX_HOLDERS", "MAX_REFUSALS_PER_S", "SQUAT_ACTION", "SQUAT_REPORT_PATH", "Held", "SquatLog", "holder_account",
           "not_while_listening", "parse_squat_report", "port_of", "record_squats", "squat_message"]

SQUAT_REPORT_PATH = "squat-refused"
"""Where a user server reports the squats it refused (under ``api/sched/``)."""
SQUAT_ACTION = "squat_refused"
"""The audit action of each holder reported."""
MAX_HOLDERS = 4
"""Holders one report names, and a server keeps until it can report (the most recent)."""
_MAX_COUNT = 10**9
_MAX_ADDRESS = 100
_CLOCK_SKEW = timedelta(minutes=5)
LISTEN_SKEW = timedelta(seconds=5)
"""How far after the service began listening a reported refusal may lie (the two clocks, the last refusal racing the
bind) before the report is refused as false."""
MAX_REFUSALS_PER_S = 100
"""Most refusals a second of a holder's window a report may count (each is a connection tried and its holder looked
up), plus :data:`_COUNT_SLACK`."""
_COUNT_SLACK = 10


@dataclass
class Held:
    """One holder of the service's address refused by a server: ``uid`` (None: no live socket accepted the
    connection), ``address`` (``host:port``), first and last refusal (UTC) and how many."""

    uid: int | None
    address: str
    first_at: datetime
    last_at: datetime
    count: int = 1

    def to_wire(self) -> dict[str, Any]:
        return {"holder_uid": self.uid, "address": self.address, "first_at": self.first_at.isoformat(),
                "last_at": self.last_at.isoformat(), "count": self.count}


class SquatLog:
    """The squats a user server refused and has not yet reported (module docstring)."""

    def __init__(self) -> None:
        self._held: OrderedDict[tuple[int | None, str], Held] = OrderedDict()

    def seen(self, uid: int | None, address: str, now: datetime) -> None:
        """One more refusal because ``uid`` held ``address`` at ``now`` (UTC)."""
        key = (uid, address[:_MAX_ADDRESS])
        held = self._held.get(key)
        if held is None:
            self._held[key] = Held(uid, key[1], now, now)
            while len(self._held) > MAX_HOLDERS:
                self._held.popitem(last=False)
        else:
            held.last_at, held.count = now, min(held.count + 1, _MAX_COUNT)
            self._held.move_to_end(key)

    def __bool__(self) -> bool:
        return bool(self._held)

    def take(self) -> list[Held]:
        """What to report (then forgotten; :meth:`put_back` when the report did not get through)."""
        taken, self._held = list(self._held.values()), OrderedDict()
        return taken

    def put_back(self, taken: list[Held]) -> None:
        """Keep ``taken`` (a report that did not get through), merged with what was refused meanwhile."""
        for held in taken:
            key = (held.uid, held.address)
            now = self._held.get(key)
            if now is not None:
                held.last_at, held.count = now.last_at, min(held.count + now.count, _MAX_COUNT)
            self._held[key] = held
            self._held.move_to_end(key, last=False)
        while len(self._held) > MAX_HOLDERS:
            self._held.popitem(last=False)


def _when(raw: Any, field: str, now: datetime) -> datetime:
    if not isinstance(raw, str) or len(raw) > 40:
        raise ValidationError(f"{field} must be an ISO 8601 time with an offset (got {json_kind(raw)})", field=field,
                              hint="e.g. 2026-12-05T21:00:00+00:00")
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        when = None
    if when is None or when.tzinfo is None or when > now + _CLOCK_SKEW:
        raise ValidationError(f"{field} must be an ISO 8601 time with an offset, not in the future", field=field,
                              hint="e.g. 2026-12-05T21:00:00+00:00")
    return when.astimezone(timezone.utc)


def parse_squat_report(body: Any, now: datetime, *, listening_since: datetime | None = None,
                       own_uids: Collection[int] = ()) -> list[Held]:
    """The holders of a report ``{"refusals": [{"holder_uid", "address", "first_at", "last_at", "count"}]}``, taken
    when the service began listening at ``listening_since`` (UTC; None: not known) and runs as ``own_uids``.

    Raises:
        ValidationError: naming the field (``refusals``, ``holder_uid``, ``address``, ``first_at``, ``last_at``,
            ``count``) and the fix; also a holder that is the service's own uid (``holder_uid``), a refusal after
            the service began listening (``last_at``), a count its window cannot hold (``count``): the module
            docstring.
    """
    shape = ('a squat report is {"refusals": [{"holder_uid": UID or null, "address": "127.0.0.1:8010", '
             '"first_at": TIME, "last_at": TIME, "count": N}]}')
    if not isinstance(body, dict) or set(body) != {"refusals"}:
        raise ValidationError(shape, field="body", hint="sent by a user server that refused to call a squatted port")
    raw = body["refusals"]
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_HOLDERS:
        raise ValidationError(f"refusals must be a list of 1 to {MAX_HOLDERS} holders (got {json_kind(raw)})",
                              field="refusals", hint=shape)
    held = []
    for entry in raw:
        if not isinstance(entry, dict) or set(entry) != {"holder_uid", "address", "first_at", "last_at", "count"}:
            raise ValidationError(shape, field="refusals", hint="each holder has exactly those five keys")
        uid, address, count = entry["holder_uid"], entry["address"], entry["count"]
        if uid is not None and (not isinstance(uid, int) or isinstance(uid, bool) or not 0 <= uid < 2**32):
            raise ValidationError(f"holder_uid must be a uid (0 to 4294967295) or null (got {json_kind(uid)})",
                                  field="holder_uid", hint="the uid /proc/net/tcp gave the socket that held the port")
        if not isinstance(address, str) or not address or len(address) > _MAX_ADDRESS or not address.isprintable():
            raise ValidationError(f"address must be the service's host:port, at most {_MAX_ADDRESS} printable "
                                  "characters", field="address", hint="e.g. 127.0.0.1:8010")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= _MAX_COUNT:
            raise ValidationError(f"count must be a number of refusals, 1 to {_MAX_COUNT:,} (got {json_kind(count)})",
                                  field="count", hint="how many requests the server refused to send there")
        first, last = _when(entry["first_at"], "first_at", now), _when(entry["last_at"], "last_at", now)
        if last < first:
            raise ValidationError("last_at is before first_at", field="last_at", hint="the last refusal's time")
        _credible(uid, first, last, count, listening_since, own_uids)
        held.append(Held(uid, address, first, last, count))
    return held


def _credible(uid: int | None, first: datetime, last: datetime, count: int, listening_since: datetime | None,
              own_uids: Collection[int]) -> None:
    """Refuse what the service knows to be false of one holder (the module docstring).

    Raises:
        ValidationError: naming ``holder_uid``, ``last_at`` or ``count``.
    """
    if uid is not None and uid in own_uids:
        raise ValidationError(f"holder_uid {uid} is the service's own account: a port it holds is not a squat (a "
                              "user server's forwarder takes it)", field="holder_uid",
                              hint="report only holders the forwarder refused (their uid from /proc/net/tcp)")
    if listening_since is not None and last > listening_since + LISTEN_SKEW:
        raise ValidationError(f"last_at {last:%Y-%m-%d %H:%M:%S} UTC is after the service began listening on its "
                              f"address ({listening_since:%Y-%m-%d %H:%M:%S} UTC): nobody else held it then",
                              field="last_at", hint="report only refusals made while the service was down")
    most = _COUNT_SLACK + int(MAX_REFUSALS_PER_S * (last - first).total_seconds())
    if count > most:
        raise ValidationError(f"count {count:,} is more refusals than {first:%H:%M:%S} to {last:%H:%M:%S} UTC could "
                              f"hold (at most {most:,}: {MAX_REFUSALS_PER_S} a second)", field="count",
                              hint="count each request refused once")


class Span(Protocol):
    """A process of the service listening on ``port`` of this host from ``started_at`` to ``end`` (UTC):
    :class:`jupyter_sched.store.spans.ListeningSpan`."""

    @property
    def port(self) -> int: ...
    @property
    def pid(self) -> int: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def ended_at(self) -> datetime | None: ...
    @property
    def end(self) -> datetime: ...
    @property
    def end_inferred(self) -> bool: ...


def port_of(address: str) -> int | None:
    """The port of ``host:port`` (``[v6]:port`` too); None when it names none."""
    _, colon, port = address.rpartition(":")
    return int(port) if colon and port.isdigit() and 0 < int(port) < 65536 else None


def not_while_listening(held: Sequence[Held], spans: Sequence[Span]) -> None:
    """Refuse a report of refusals made while a process of the service listened on the reported port of this host
    (``spans``: the service's listening spans here, :mod:`jupyter_sched.store.spans`; :data:`LISTEN_SKEW` allowed
    at both ends): nobody else held the address then (red 29, R6).

    Raises:
        ValidationError: naming ``first_at`` (the window begins in a span) or ``last_at``.
    """
    for one in held:
        port = port_of(one.address)
        for span in spans:
            if (span.port != port or one.last_at <= span.started_at + LISTEN_SKEW
                    or one.first_at >= span.end - LISTEN_SKEW):
                continue
            ended = (f"to at least {span.end:%Y-%m-%d %H:%M:%S} UTC" if span.ended_at is None else
                     f"to {span.end:%Y-%m-%d %H:%M:%S} UTC" + (", its last sign of life before it stopped without a "
                                                               "clean stop" if span.end_inferred else ""))
            raise ValidationError(
                f"{one.first_at:%Y-%m-%d %H:%M:%S} to {one.last_at:%Y-%m-%d %H:%M:%S} UTC: the service was listening "
                f"on port {port} of this host then (its process {span.pid}, from {span.started_at:%Y-%m-%d %H:%M:%S} "
                f"UTC {ended}): nobody else held its address",
                field="first_at" if one.first_at > span.started_at else "last_at",
                hint="report only refusals made while the service was down")


def holder_account(uid: int | None) -> str | None:
    """The account of ``uid`` on this host (the service's: where the port was held), or None."""
    if uid is None:
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return None


def squat_message(reporter: str, held: Held, account: str | None, listening_since: datetime | None = None,
                  spans_since: datetime | None = None) -> str:
    """The audit record's words for ``held``, reported by ``reporter``'s server: its claim, said as such, and what the
    service checked — that the holder is not its own account and, when ``spans_since`` (UTC: the first listening
    span kept, :func:`not_while_listening`) is known, that none of its processes listened on the port then (before
    ``spans_since`` it cannot tell); else, when ``listening_since`` (UTC) is known, that THIS process was not
    listening then (red 29, R6: the row said "the service checked that it was not listening then" of a window the
    previous process served)."""
    if held.uid is None:
        who = ("no live socket on this host held the other end of the connection (another account taking the port "
               "in turns, or the service dying as it was called)")
    else:
        who = f"it says the address was held by {f'account {account} ' if account else ''}(uid {held.uid}), not the service"
    times = f"{held.count} time{'s' if held.count != 1 else ''}"
    span = (f"at {held.first_at:%Y-%m-%d %H:%M:%S} UTC" if held.first_at == held.last_at else
            f"from {held.first_at:%Y-%m-%d %H:%M:%S} to {held.last_at:%Y-%m-%d %H:%M:%S} UTC")
    port = port_of(held.address)
    if spans_since is not None and port is not None:
        before = held.first_at < spans_since
        checked = ("the service checked that the holder is not its own account and that none of its processes "
                   f"listened on port {port} of this host then (it keeps their listening times since "
                   f"{spans_since:%Y-%m-%d %H:%M:%S} UTC" + ("; of the time before, it cannot tell)" if before else ")"))
    elif listening_since is None:
        checked = ("the service checked that the holder is not its own account; whether the service was listening "
                   "then it cannot tell")
    else:
        checked = (f"the service checked that the holder is not its own account and that its process listening since "
                   f"{listening_since:%Y-%m-%d %H:%M:%S} UTC was not listening then; whether an earlier process of "
                   "the service was, it cannot tell")
    return (f"{reporter}'s Jupyter server says it refused to send its token to the scheduler's address "
            f"{held.address} {times} {span}: {who} (the reporting server's word; {checked})")


def record_squats(store: Any, reporter: str, held: list[Held], listening_since: datetime | None = None,
                  spans_since: datetime | None = None) -> int:
    """Write one ``squat_refused`` audit record per holder of ``held`` (reported by ``reporter``, the hub user whose
    token the report came with: the records' actor and user; ``listening_since``: when this service process began
    listening, UTC, None: not known; ``spans_since``: the first listening span kept — :func:`squat_message`); how
    many were written."""
    with store.transaction() as tx:
        for one in held:
            account = holder_account(one.uid)
            details: Mapping[str, Any] = {**one.to_wire(), "holder_account": account, "reported_by": reporter}
            tx.add_event(actor=reporter, action=SQUAT_ACTION, user=reporter,
                         message=squat_message(reporter, one, account, listening_since, spans_since)[:500],
                         details=details)
    return len(held)
