"""Answers nobody reads: which connections' answers have stalled, and for how long (red team 23, R2).

The front door never closes a connection whose request is being answered (:mod:`.front_door`). An
answer larger than the socket buffers (a job's log, a static file) is written only as fast as the
caller reads it, and tornado reads a connection's next request only once the last answer is
written. A caller that sends whole requests and never reads the answers therefore held its
connections "being answered" for ever: thirty of them — with no token, on a static file anyone may
fetch — filled a ceiling of thirty, and every other user's new connection was refused (the hub's
proxy answered 503) for as long as the caller liked.

:class:`StalledAnswers` keeps, per connection, when its answer last had nothing left unsent and how
many bytes had been written by then. An answer is *stalled* while bytes wait unsent and the caller
has read fewer than :data:`MIN_ANSWER_RATE` bytes a second of it since; the front door closes a
connection stalled for ``c.FrontDoor.answer_timeout_s`` and, at its ceiling, evicts the connection
stalled longest (:data:`EVICTABLE_AFTER_S` at least, else any with bytes unsent: a caller that replaced
its unread connections before they aged still kept one newcomer in six out — verify 23, V1) before it
refuses a newcomer. A slow but
reading client (a notebook on a poor link following a log) keeps its connection: it reads at least
the minimum rate, and an SSE stream or a log follow drains its buffer between events.

Pure bookkeeping over numbers the caller passes in (bytes unsent, bytes written, a monotonic time):
no tornado, no clock of its own.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

__all__ = ["EVICTABLE_AFTER_S", "MIN_ANSWER_RATE", "SWEEP_S", "StalledAnswers"]

MIN_ANSWER_RATE = 1024
"""Bytes a second a caller must read of an answer that has bytes unsent, for it not to count as
stalled (a reader on a 9600-baud line reads ~1 KB/s; a caller that reads nothing reads 0)."""
EVICTABLE_AFTER_S = 2.0
"""Seconds an answer must have stalled before the front door may close it at its ceiling (an
answer just written into full buffers is not yet evidence of a caller that does not read)."""
SWEEP_S = 1.0
"""Seconds between two looks at the connections being answered."""


@dataclass
class _Backlog:
    since: float
    """Monotonic time (s) the answer last had nothing unsent (or was first seen with a backlog)."""
    written_then: int
    """Bytes of the connection's answers written by then."""


class StalledAnswers:
    """Per connection being answered: since when its answer has waited on the caller.

    ``timeout_s``: how long an answer may stall before :meth:`overdue` names it (0: never);
    ``min_rate``: bytes a second the caller must read not to count as stalled.
    """

    def __init__(self, timeout_s: float, min_rate: int = MIN_ANSWER_RATE) -> None:
        self.timeout_s = timeout_s
        self.min_rate = min_rate
        self._backlogs: dict[Hashable, _Backlog] = {}
        self._written: dict[Hashable, int] = {}

    def observe(self, conn: Hashable, unsent: int, written: int, now: float) -> None:
        """One look at ``conn``: ``unsent`` bytes of its answers wait, ``written`` bytes were written
        in all (both counters of the connection's stream), at monotonic time ``now`` (s)."""
        self._written[conn] = written
        if unsent <= 0:
            self._backlogs.pop(conn, None)
            return
        if conn not in self._backlogs:
            self._backlogs[conn] = _Backlog(now, written)

    def forget(self, conn: Hashable) -> None:
        """``conn`` closed, or waits for a request again (the idle and header timeouts apply)."""
        self._backlogs.pop(conn, None)
        self._written.pop(conn, None)

    def stalled_for(self, conn: Hashable, now: float) -> float:
        """Seconds ``conn``'s answer has stalled (0.0: nothing unsent, or the caller reads it)."""
        backlog = self._backlogs.get(conn)
        if backlog is None:
            return 0.0
        waited = now - backlog.since
        read = self._written.get(conn, backlog.written_then) - backlog.written_then
        if read >= self.min_rate * waited and read > 0:
            # the caller keeps up: start the count again from here
            self._backlogs[conn] = _Backlog(now, self._written.get(conn, backlog.written_then))
            return 0.0
        return max(0.0, waited)

    def overdue(self, now: float) -> list[Hashable]:
        """Connections stalled for ``timeout_s`` or longer, longest first (none when it is 0)."""
        if self.timeout_s <= 0:
            return []
        return self._longest(self._backlogs, now, self.timeout_s)

    def most_stalled(self, now: float, at_least_s: float = EVICTABLE_AFTER_S) -> Hashable | None:
        """The connection stalled longest, if for ``at_least_s`` or more; else None."""
        longest = self._longest(self._backlogs, now, at_least_s)
        return longest[0] if longest else None

    def _longest(self, conns: Iterable[Hashable], now: float, at_least_s: float) -> list[Hashable]:
        stalls = [(self.stalled_for(conn, now), conn) for conn in list(conns)]
        return [conn for stalled, conn in sorted(stalls, key=lambda pair: -pair[0]) if stalled >= at_least_s]
