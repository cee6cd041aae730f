"""Work whose size a user controls, run off the engine thread (red team 19, R6 and R7).

A released lent lease's drain reads which processes still hold its GPU (``/proc/<pid>/fd`` and
``maps`` of the job's and its owner's processes: their number and their mappings are the owner's
to grow); the executed-notebook sweep walks folders users can plant. Run on the engine thread,
either stalled admissions, exits, preemption and idle reclaim for everyone while it ran (60 s for
20,000 planted folders; 10 s per release with 40 processes of 60,000 mappings each).

:class:`Background` runs such work in a worker thread, one run per key at a time. The engine's
caller asks for a key's result each tick: a run that finishes within a short wait answers in that
tick (the waits draw on a budget of ``wait_s`` seconds that refills at ``wait_s`` per second, so
however many runs a user starts, the engine waits on them at most that share of its time); a slower one answers
at a later tick, and meanwhile the caller keeps what it guards as it is (the lease stays
"draining": the owner pays for the owner's processes, not everyone).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, TypeVar

__all__ = ["PENDING", "Background"]


T = TypeVar("T")

PENDING: object = object()
"""What :meth:`Background.result` answers while the key's run is still going."""


class Background(Generic[T]):
    """Runs of ``key → work()``, each in its own daemon thread (a scan stuck on ``/proc`` never holds
    the server's exit), one in flight per key (module docstring).

    Args:
        name: the worker threads' name prefix (in thread dumps and logs).
        wait_s: the wait budget, seconds (refilled at ``wait_s`` per second): a fast scan
            answers in the tick that started it.
        monotonic: the wait's clock (tests pass their own).
    """

    def __init__(self, name: str, *, wait_s: float = 0.25, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self._runs: dict[str, tuple[Future[T], float]] = {}
        self._lock = threading.Lock()
        self.wait_s = wait_s
        self._monotonic = monotonic
        self._tokens = wait_s
        self._refilled = monotonic()

    def running_since(self, key: str) -> float | None:
        """The monotonic time ``key``'s run started; None when none is in flight."""
        with self._lock:
            run = self._runs.get(key)
        return run[1] if run is not None else None

    def result(self, key: str, work: Callable[[], T]) -> T | object:
        """``work()``'s answer for ``key`` — started now if no run of ``key`` is in flight — or
        :data:`PENDING` while it runs. A run that raised answers by raising the same exception
        (once; the next call starts a new run)."""
        with self._lock:
            run = self._runs.get(key)
            now = self._monotonic()
            self._tokens = min(self.wait_s, self._tokens + (now - self._refilled) * self.wait_s)
            self._refilled = now
            if run is None:
                run = (self._start(key, work), now)
                self._runs[key] = run
            budget = self._tokens
        future = run[0]
        if not future.done() and budget > 0:
            try:
                future.exception(timeout=budget)
            except TimeoutError:
                pass
            with self._lock:
                self._tokens = max(0.0, self._tokens - (self._monotonic() - now))
        if not future.done():
            return PENDING
        with self._lock:
            self._runs.pop(key, None)
        return future.result()

    def _start(self, key: str, work: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()

        def body() -> None:
            try:
                future.set_result(work())
            except BaseException as exc:  # handed to the reader, raised there
                future.set_exception(exc)

        threading.Thread(target=body, name=f"{self.name}-{key}", daemon=True).start()
        return future

    def forget(self, key: str) -> None:
        """Drop ``key``'s run (it finishes, unread)."""
        with self._lock:
            self._runs.pop(key, None)

    def clear(self) -> None:
        """Drop every run (a new term): results of the old term are not read."""
        with self._lock:
            self._runs.clear()
