"""This service process's listening span, kept in the store (red29 R6; :mod:`jupyter_sched.store.spans`).

A squat report of a window in which any process of the service listened on the reported port is refused
(:func:`.squat_log.not_while_listening`): only the running process's start was known, so after a restart a report
of a window the previous process served was taken. :class:`ListeningRecord` writes this process's span once its
front door listens (:attr:`~.front_door.GuardedHTTPServer.listening_since`, the ports bound), refreshes its last
sign of life every :data:`BEAT_S` while it runs (a process killed without a clean stop ends there, inferred at the
next start on the same host and port) and writes its end on a clean stop.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from typing import Any, Protocol

__all__ = ["BEAT_S", "ListeningRecord", "this_host"]

BEAT_S = 30.0
"""Seconds between two writes of this process's last sign of life (an unclean stop's inferred end is at most this
much before the real one: the service claims no more than it saw)."""


def this_host() -> str:
    """The host name the spans are kept under (``socket.gethostname()``)."""
    return socket.gethostname()


class Listening(Protocol):
    """The front door: when it began listening (s since the epoch; None: not yet) and the ports it listens on."""

    listening_since: float | None

    def listening_ports(self) -> list[int]: ...


class ListeningRecord:
    """This process's listening spans (one per port it listens on) in the store: :meth:`beat`, :meth:`end`.

    Not thread-safe: one caller at a time (the service's timer runs one beat at once)."""

    def __init__(self, host: str | None = None, pid: int | None = None) -> None:
        self.host = host or this_host()
        self.pid = os.getpid() if pid is None else pid
        self.spans: dict[int, int] = {}
        """Span id by port, once written."""

    def beat(self, store: Any, server: Listening | None, now: datetime) -> None:
        """Write the spans of the ports ``server`` listens on not written yet (from its ``listening_since``) and
        refresh the others' last sign of life at ``now`` (UTC). Nothing while it does not listen yet.

        Raises:
            StoreError: the store did not take the write (tried again at the next beat)."""
        since = getattr(server, "listening_since", None) if server is not None else None
        if server is None or not isinstance(since, float):
            return
        started = datetime.fromtimestamp(since, UTC)
        for port in server.listening_ports():
            if port in self.spans:
                store.touch_listening_span(self.spans[port], now)
            else:
                self.spans[port] = store.open_listening_span(self.host, port, self.pid, started, now)

    def end(self, store: Any, now: datetime) -> None:
        """This process stops listening (a clean stop) at ``now`` (UTC): each span written gets its end.

        Raises:
            StoreError: the store did not take it (the next start infers the end from the last beat)."""
        spans, self.spans = self.spans, {}
        for span_id in spans.values():
            store.close_listening_span(span_id, now)
