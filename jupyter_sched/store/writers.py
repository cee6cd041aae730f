"""A first-come, first-served reentrant lock: the writers' lock of one SQLite file (issue 17).

Every write transaction of a process on one SQLite file holds that file's lock from before its
``BEGIN IMMEDIATE`` until after its commit (``store._writers_lock``). ``threading.RLock`` is not
fair: its release wakes a waiter, but the releasing thread — which holds the GIL and is running —
takes the lock again for its next transaction before the woken thread gets to run. The engine
writes a cycle's pending reasons in batches of 50 rows, one transaction each, back to back, so
that submits interleave between batches; with ``RLock`` a submit that arrived during the first
batch waited for all of them (40-90 ms at 1,000 pending on a loaded 2-core machine: the submit
p95/p99). :class:`FairLock` hands the lock on release to the thread that has waited longest, and a
thread asking while others wait queues behind them.
"""

from __future__ import annotations

import threading
from collections import deque

__all__ = ["FairLock"]


class FairLock:
    """Reentrant lock granted in the order it was asked for (see module docstring).

    ``acquire(blocking=False)`` succeeds only when nobody holds it and nobody waits (or this
    thread holds it already); ``acquire(timeout=s)`` waits in line, up to ``s`` seconds (< 0:
    without limit). ``release`` by a thread that does not hold it raises ``RuntimeError``.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._owner: int | None = None
        self._depth = 0
        self._line: deque[tuple[int, threading.Lock]] = deque()

    @property
    def waiting(self) -> int:
        """Threads waiting in line now (diagnostics and tests)."""
        return len(self._line)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock (see class docstring); True when taken."""
        me = threading.get_ident()
        with self._guard:
            if self._owner == me:
                self._depth += 1
                return True
            if self._owner is None and not self._line:
                self._owner, self._depth = me, 1
                return True
            if not blocking:
                return False
            turn = threading.Lock()
            turn.acquire()
            entry = (me, turn)
            self._line.append(entry)
        if turn.acquire(timeout=timeout if timeout is not None and timeout >= 0 else -1):
            return True  # handed over by release(): this thread owns it now
        with self._guard:
            if self._owner == me:  # handed over just as the wait ended
                return True
            self._line.remove(entry)
            return False

    def release(self) -> None:
        """Give the lock up; the longest waiter (if any) owns it on return."""
        with self._guard:
            if self._owner != threading.get_ident():
                raise RuntimeError("cannot release a FairLock this thread does not hold")
            self._depth -= 1
            if self._depth:
                return
            if self._line:
                owner, turn = self._line.popleft()
                self._owner, self._depth = owner, 1
                turn.release()
            else:
                self._owner = None

    def __enter__(self) -> FairLock:
        self.acquire()
        return self

    def __exit__(self, *_: object) -> None:
        self.release()
