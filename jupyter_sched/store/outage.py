"""A database outage said once: one WARNING when the store stops answering, a reminder a minute, one INFO when it is back.

Every thread of the service reads the store (the engine's tick, the activity reports, the hub's
offboarding check, each request), so a PostgreSQL restart used to make each of them log its own
failure with a full chained traceback, every second: 15,231 log lines for a 30-second outage and
no line when it ended (hubadmin25 B6). :class:`StoreOutage` is told of every transaction that could
not reach the database (:meth:`failed`) and of every one that committed (:meth:`answered`) and
logs:

* ``WARNING the database does not answer (since 15:41:09 UTC): <cause> …`` at the first failure;
* ``WARNING the database still does not answer after 60 s (412 failed reads and writes): <cause>``
  at most once per ``remind_s`` (60 s) while it lasts;
* ``INFO the database answers again after 30 s (1,204 failed reads and writes meanwhile)`` at the
  first transaction that commits afterwards.

Callers that catch a store failure log it with :func:`log_store_failure`: a failure to reach the
database (:func:`unreachable`) at DEBUG with its traceback — the outage is already said — and any
other failure as before, at ERROR with its traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from ..errors import StoreError

__all__ = ["REMIND_S", "StoreOutage", "first_line", "log_store_failure", "unreachable"]

log = logging.getLogger("jupyter_sched.store")

REMIND_S = 60.0
"""Seconds between two "still does not answer" reminders while an outage lasts."""

UNREACHABLE = "database_unreachable"
"""The :class:`StoreError` detail that marks a failure to reach the database (a refused or lost
connection), as opposed to a failure of one statement."""


def unreachable(exc: BaseException) -> bool:
    """True when ``exc`` is a :class:`StoreError` raised because the database could not be reached
    (the connection was refused or lost), not because of one statement or row."""
    return isinstance(exc, StoreError) and bool(exc.details.get(UNREACHABLE))


def log_store_failure(logger: logging.Logger, message: str, exc: BaseException) -> None:
    """Log a caught failure: at DEBUG (traceback included) when the database is unreachable — the
    store's outage line says it once — else at ERROR with the traceback (a fault worth reading)."""
    logger.log(logging.DEBUG if unreachable(exc) else logging.ERROR, "%s", message, exc_info=exc)


class StoreOutage:
    """Tracks whether the database answers and says so in the log (see module docstring). Thread-safe.

    Args:
        target: what does not answer, as the admin reads it ("the database postgresql://…/sched").
        remind_s: seconds between two reminders while it lasts.
        monotonic: seconds clock (injected for tests).
        wall: the wall clock, for "since HH:MM:SS UTC" (injected for tests).
    """

    def __init__(self, target: str = "the database", *, remind_s: float = REMIND_S,
                 monotonic: Callable[[], float] = time.monotonic,
                 wall: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.target = target
        self.remind_s = remind_s
        self._monotonic = monotonic
        self._wall = wall
        self._lock = threading.Lock()
        self._since: float | None = None  # monotonic start of the outage; None while it answers
        self._reminded = 0.0
        self._failures = 0
        self.outages = 0
        """Outages seen since start (each said once)."""

    @property
    def down(self) -> bool:
        """True from the first failure to reach the database until a transaction commits again."""
        return self._since is not None

    def down_for_s(self) -> float | None:
        """Seconds since the database stopped answering (None while it answers)."""
        since = self._since
        return None if since is None else self._monotonic() - since

    def failed(self, cause: str) -> None:
        """A transaction could not reach the database; ``cause`` is the driver's error, one line."""
        with self._lock:
            now = self._monotonic()
            self._failures += 1
            if self._since is None:
                self._since, self._reminded, self._failures = now, now, 1
                self.outages += 1
                at = self._wall().strftime("%H:%M:%S UTC")
                log.warning("%s does not answer (since %s): %s — requests are answered 503 and the scheduler waits "
                            "until it answers again; this is said again once a minute while it lasts, and when it "
                            "is back", self.target, at, first_line(cause))
                return
            if now - self._reminded >= self.remind_s:
                self._reminded = now
                log.warning("%s still does not answer after %.0f s (%s failed reads and writes): %s", self.target,
                            now - self._since, f"{self._failures:,}", first_line(cause))

    def answered(self) -> None:
        """A transaction committed: the database answers (cheap while it did all along)."""
        if self._since is None:
            return
        with self._lock:
            if self._since is None:
                return
            lasted = self._monotonic() - self._since
            failures, self._since = self._failures, None
        log.info("%s answers again after %.0f s (%s failed reads and writes meanwhile)", self.target, lasted,
                 f"{failures:,}")


def first_line(text: str) -> str:
    """A driver's error without its advice, SQL and background link: its first line (at most 400 characters)."""
    first = text.strip().splitlines()[0] if text.strip() else "no error text"
    return first[:400]
