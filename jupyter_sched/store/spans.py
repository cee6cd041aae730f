"""When each process of the service listened: the ``service_spans`` rows (schema version 26; red29 R6).

A user server reports the squats it refused while the service was down (:mod:`jupyter_sched.hub.squat_log`); the
service refuses a report of a window it was listening in — nobody else held its address then. Only the running
process's start was known, so after a restart a report of a window the PREVIOUS process served was taken. Each
process now writes a row when it begins listening (:func:`open_span`), refreshes its ``seen_at`` while it runs
(:func:`touch_span`) and writes its end on a clean stop (:func:`close_span`); a process that died without one has
its end inferred at the next start on the same host and port (its last ``seen_at``: the service claims no more than
it saw). :func:`spans_on` reads what a report is judged against.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from ..errors import TimestampError
from . import schema
from .codec import parse_ts, ts

__all__ = ["ListeningSpan", "close_span", "open_span", "spans_on", "touch_span"]


@dataclass(frozen=True, slots=True)
class ListeningSpan:
    """One process of the service listening on ``port`` of ``host`` from ``started_at`` (UTC) to :attr:`end`."""

    id: int
    host: str
    port: int
    pid: int
    started_at: datetime
    seen_at: datetime
    ended_at: datetime | None
    """None: running (or died, its end not inferred yet)."""
    end_inferred: bool

    @property
    def end(self) -> datetime:
        """The last time the service knows it listened: its end, else its last sign of life."""
        return self.ended_at or self.seen_at


def open_span(conn: sa.Connection, host: str, port: int, pid: int, started_at: datetime, now: datetime) -> int:
    """Record that process ``pid`` began listening on ``port`` of ``host`` at ``started_at``, seen at ``now`` (UTC);
    earlier spans of that host and port still open (their process died without a clean stop) end at their last
    ``seen_at``, marked inferred. Returns the new row's id."""
    table = schema.service_spans
    conn.execute(table.update()
                 .where(table.c.host == host, table.c.port == port, table.c.ended_at.is_(None))
                 .values(ended_at=table.c.seen_at, end_inferred=True))
    result = conn.execute(table.insert().values(host=host, port=port, pid=pid, started_at=ts(started_at),
                                                seen_at=ts(now), ended_at=None, end_inferred=False))
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def touch_span(conn: sa.Connection, span_id: int, now: datetime) -> None:
    """The process of span ``span_id`` is alive and listening at ``now`` (UTC)."""
    table = schema.service_spans
    conn.execute(table.update().where(table.c.id == span_id, table.c.ended_at.is_(None)).values(seen_at=ts(now)))


def close_span(conn: sa.Connection, span_id: int, now: datetime) -> None:
    """The process of span ``span_id`` stopped listening at ``now`` (UTC; a clean stop)."""
    table = schema.service_spans
    conn.execute(table.update().where(table.c.id == span_id)
                 .values(seen_at=ts(now), ended_at=ts(now), end_inferred=False))


def spans_on(conn: sa.Connection, host: str, ports: set[int] | frozenset[int] | None = None) -> list[ListeningSpan]:
    """The spans recorded on ``host`` (of ``ports``; None: every port), oldest first (a row whose times do not
    parse is left out)."""
    table = schema.service_spans
    query = sa.select(table).where(table.c.host == host).order_by(table.c.started_at, table.c.id)
    if ports is not None:
        query = query.where(table.c.port.in_(sorted(ports)))
    out = []
    for row in conn.execute(query):
        try:
            started, seen, ended = parse_ts(row.started_at), parse_ts(row.seen_at), parse_ts(row.ended_at)
        except (TimestampError, ValueError):
            continue
        if started is None or seen is None:
            continue
        out.append(ListeningSpan(id=int(row.id), host=row.host, port=int(row.port), pid=int(row.pid),
                                 started_at=started, seen_at=seen, ended_at=ended,
                                 end_inferred=bool(row.end_inferred)))
    return out
