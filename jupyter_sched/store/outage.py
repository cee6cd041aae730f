"""A database outage said once: one WARNING when the store stops answering, a reminder a minute, one when it is back.

Every thread of the service reads the store (the engine's tick, the activity reports, the hub's
offboarding check, each request), so a PostgreSQL restart used to make each of them log its own
failure with a full chained traceback, every second: 15,231 log lines for a 30-second outage and
no line when it ended (hubadmin25 B6). :class:`StoreOutage` is told of every transaction that could
not reach the database (:meth:`failed`) and of every one that committed (:meth:`answered`) and
logs:

* ``WARNING the database does not answer (since 15:41:09 UTC): <cause> …`` at the first failure;
* ``WARNING the database still does not answer after 60 s (412 failed reads and writes): <cause>``
  at most once per ``remind_s`` (60 s) while it lasts;
* ``WARNING the database answers again after 30 s (1,204 failed reads and writes meanwhile)`` at the
  first transaction that commits afterwards (at the outage's level: the package's INFO lines do not reach the
  server's log, and a level filter would show an outage that never ends).

A full disk under the store (:class:`~jupyter_sched.errors.StoreFullError`: every write fails, reads go on) is said the
same way (newuser41 N3's leftover: the engine wrote "reconnecting to the database" every backoff and each request's
507 an ERROR with its headers): :meth:`StoreOutage.full` writes

* ``WARNING the store's disk … is full (since 15:41:09 UTC): writes are refused …`` at the first refused write;
* ``WARNING the store's disk is still full after 60 s (38 writes refused)`` at most once per ``remind_s``;
* ``WARNING the store's disk has room again after 95 s (112 writes refused meanwhile)`` at the first write that
  commits once the disk has room (``room``: a committed write alone does not prove it — SQLite reuses its log's
  pages — so the folder's free bytes are asked too).

Callers that catch a store failure log it with :func:`log_store_failure`: a failure to reach the
database (:func:`unreachable`) or a full disk at DEBUG with its traceback — the outage is already said — and any
other failure as before, at ERROR with its traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from ..errors import StoreError, StoreFullError

__all__ = ["REMIND_S", "StoreOutage", "first_line", "log_store_failure", "said_by_store", "unreachable"]

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


def said_by_store(exc: BaseException) -> bool:
    """True when ``exc`` is a store failure the store's own lines say once (:class:`StoreOutage`): the database
    could not be reached, or its disk is full — a caller logs it at DEBUG, a request's answer in one line."""
    return unreachable(exc) or isinstance(exc, StoreFullError)


def log_store_failure(logger: logging.Logger, message: str, exc: BaseException) -> None:
    """Log a caught failure: at DEBUG (traceback included) when the database is unreachable or its disk full — the
    store's outage line says it once — else at ERROR with the traceback (a fault worth reading)."""
    logger.log(logging.DEBUG if said_by_store(exc) else logging.ERROR, "%s", message, exc_info=exc)


class StoreOutage:
    """Tracks whether the database answers and says so in the log (see module docstring). Thread-safe.

    Args:
        target: what does not answer, as the admin reads it ("the database postgresql://…/sched").
        remind_s: seconds between two reminders while it lasts.
        monotonic: seconds clock (injected for tests).
        wall: the wall clock, for "since HH:MM:SS UTC" (injected for tests).
        room: whether the store's disk has room now (a SQLite file's folder has free bytes; a database server's:
            True, its committed write is the proof) — asked only while a full disk is said, at a committed write.
    """

    def __init__(self, target: str = "the database", *, remind_s: float = REMIND_S,
                 monotonic: Callable[[], float] = time.monotonic,
                 wall: Callable[[], datetime] = lambda: datetime.now(UTC),
                 room: Callable[[], bool] = lambda: True) -> None:
        self.target = target
        self.remind_s = remind_s
        self._monotonic = monotonic
        self._wall = wall
        self._room = room
        self._lock = threading.Lock()
        self._since: float | None = None  # monotonic start of the outage; None while it answers
        self._reminded = 0.0
        self._failures = 0
        self.outages = 0
        """Outages seen since start (each said once)."""
        self._full_since: float | None = None  # monotonic start of a full disk; None while writes are saved
        self._full_reminded = 0.0
        self._refused = 0
        self.full_spells = 0
        """Full-disk spells seen since start (each said once)."""

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

    @property
    def full_now(self) -> bool:
        """True from the first write refused for a full disk until a write commits with room on the disk."""
        return self._full_since is not None

    def full(self, cause: str) -> None:
        """A write was refused because the store's disk is full; ``cause`` says which disk and its free bytes."""
        with self._lock:
            now = self._monotonic()
            self._refused += 1
            if self._full_since is None:
                self._full_since, self._full_reminded, self._refused = now, now, 1
                self.full_spells += 1
                at = self._wall().strftime("%H:%M:%S UTC")
                log.warning("%s (since %s): writes are refused and nothing of them is saved (requests that write are "
                            "answered 507 store_full; running work goes on) — free space there; this is said again "
                            "once a minute while it lasts, and when there is room", first_line(cause), at)
                return
            if now - self._full_reminded >= self.remind_s:
                self._full_reminded = now
                log.warning("the store's disk is still full after %.0f s (%s writes refused): %s",
                            now - self._full_since, f"{self._refused:,}", first_line(cause))

    def answered(self, *, wrote: bool = False) -> None:
        """A transaction committed: the database answers (cheap while it did all along); ``wrote``: it was a
        write transaction (which ends a full disk's spell once the disk has room)."""
        if self._full_since is not None and wrote:
            self._saved()
        if self._since is None:
            return
        with self._lock:
            if self._since is None:
                return
            lasted = self._monotonic() - self._since
            failures, self._since = self._failures, None
        # at the outage's own level: the package's INFO lines never reach the server's log (its level is the root's,
        # WARNING — extension/log_route.py), so an INFO end left a `grep '\[W'` reader an outage that never ended
        log.warning("%s answers again after %.0f s (%s failed reads and writes meanwhile)", self.target, lasted,
                    f"{failures:,}")

    def _saved(self) -> None:
        """A write committed while a full disk is said: said over once the disk has room."""
        try:
            room = self._room()
        except OSError:  # the folder cannot be asked: the committed write is the proof
            room = True
        if not room:
            return
        with self._lock:
            if self._full_since is None:
                return
            lasted = self._monotonic() - self._full_since
            refused, self._full_since = self._refused, None
        log.warning("the store's disk has room again after %.0f s (%s writes refused meanwhile)", lasted,
                    f"{refused:,}")  # at the spell's own level, as the end of an outage


def first_line(text: str) -> str:
    """A driver's error without its advice, SQL and background link: its first line (at most 400 characters)."""
    first = text.strip().splitlines()[0] if text.strip() else "no error text"
    return first[:400]
