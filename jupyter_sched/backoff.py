"""Exponential backoff with jitter, and the "reconnecting to …" state every retry loop shows.

Every loop that retries something outside the process (a Kubernetes watch, the database, the
central service seen from a user server, an executor start or stop) waits
``min(cap_s, base_s · 2^(attempt-1))`` seconds scaled by a random factor in
``[1 - jitter, 1]`` before attempt ``attempt + 1``. The growth keeps a broken peer from being
hammered (a watch that relisted 63 times in 3 s, issue 17); the jitter keeps many clients that
failed together from retrying in lock step. Source: M. Brooker, "Exponential Backoff And
Jitter", AWS Architecture Blog (2015) — "equal jitter" when ``jitter=0.5``, "full jitter" at 1.

While a loop retries it exposes a :class:`Reconnecting` value, rendered as one sentence
("reconnecting to the Kubernetes API (jobs watch) (attempt 3, next in 4 s): HTTP 503") that
the affected jobs' reasons and the panel show.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DATABASE_BACKOFF", "Backoff", "Reconnecting", "RetryState", "Retries"]


@dataclass(frozen=True, slots=True)
class Backoff:
    """A backoff schedule.

    Attributes:
        base_s: the first wait, seconds (> 0).
        cap_s: the longest wait, seconds (>= ``base_s``).
        jitter: fraction of each wait that is random, 0..1 (0 = deterministic).

    Raises:
        ValueError: a bound is out of range.
    """

    base_s: float = 0.5
    cap_s: float = 60.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if not (self.base_s > 0 and self.cap_s >= self.base_s and 0.0 <= self.jitter <= 1.0):
            raise ValueError(f"invalid backoff: base_s={self.base_s}, cap_s={self.cap_s}, jitter={self.jitter} "
                             "(need base_s > 0, cap_s >= base_s, 0 <= jitter <= 1)")

    def ceiling(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (1-based) before jitter, seconds."""
        exponent = min(max(attempt, 1) - 1, 62)  # 2^62 s is far past any cap; avoids float overflow
        return float(min(self.cap_s, self.base_s * 2.0 ** exponent))

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """The jittered wait after failed attempt ``attempt``: in ``[ceiling·(1-jitter), ceiling]``."""
        ceiling = self.ceiling(attempt)
        return ceiling * (1.0 - self.jitter * rng())


DATABASE_BACKOFF = Backoff(base_s=0.5, cap_s=5.0, jitter=0.5)
"""The engine's tick while the database fails: at most 5 s between tries, so jobs start and end
again at most 5 s after the database is back (hubadmin25 B6: a 60 s cap left the engine idle 15 s
after a 30 s PostgreSQL restart); a tick a few seconds apart hammers nothing."""


@dataclass(frozen=True, slots=True)
class Reconnecting:
    """A retry loop's state while its peer is unreachable.

    Attributes:
        target: what is being reached, as a user reads it ("the Kubernetes API (pods watch)").
        attempt: failed attempts so far (>= 1).
        next_in_s: seconds until the next attempt (from when this value was made).
        error: the last failure, one line.
    """

    target: str
    attempt: int
    next_in_s: float
    error: str = ""

    @property
    def message(self) -> str:
        """One sentence: ``reconnecting to <target> (attempt n, next in s): <error>``."""
        tail = f": {self.error}" if self.error else ""
        return f"reconnecting to {self.target} (attempt {self.attempt}, next in {self.next_in_s:.0f} s){tail}"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (``reconnecting`` in API payloads)."""
        return {"target": self.target, "attempt": self.attempt, "next_in_s": round(self.next_in_s, 3),
                "error": self.error, "message": self.message}


@dataclass(frozen=True, slots=True)
class RetryState:
    """One key's failures: ``attempt`` failed tries, next try not before ``next_at`` (monotonic s)."""

    attempt: int
    next_at: float
    error: str


class Retries:
    """Per-key retry bookkeeping for reconcilers (thread-safe).

    A reconciler asks :meth:`due` before acting on a key, calls :meth:`failed` when the action
    failed (the next try is scheduled with :class:`Backoff`) and :meth:`succeeded` when it worked.

    Args:
        backoff: the schedule.
        monotonic: seconds clock (injected for tests).
        rng: uniform [0, 1) source for the jitter (injected for tests).
    """

    def __init__(self, backoff: Backoff, *, monotonic: Callable[[], float] = time.monotonic,
                 rng: Callable[[], float] = random.random) -> None:
        self.backoff = backoff
        self._monotonic = monotonic
        self._rng = rng
        self._lock = threading.Lock()
        self._states: dict[str, RetryState] = {}

    def due(self, key: str) -> bool:
        """True when ``key`` has no pending failure or its wait is over."""
        with self._lock:
            state = self._states.get(key)
        return state is None or self._monotonic() >= state.next_at

    def failed(self, key: str, error: str) -> RetryState:
        """Record a failure of ``key``; return its new state (attempt count and next try)."""
        with self._lock:
            previous = self._states.get(key)
            attempt = (previous.attempt if previous else 0) + 1
            state = RetryState(attempt, self._monotonic() + self.backoff.delay(attempt, self._rng), error)
            self._states[key] = state
            return state

    def succeeded(self, key: str) -> None:
        """Forget ``key``'s failures."""
        with self._lock:
            self._states.pop(key, None)

    def get(self, key: str) -> RetryState | None:
        """``key``'s failure state, None when it has none."""
        with self._lock:
            return self._states.get(key)

    def clear(self) -> None:
        """Forget everything (a new leadership term retries from scratch)."""
        with self._lock:
            self._states.clear()

    def states(self) -> Mapping[str, RetryState]:
        """A copy of every key's state."""
        with self._lock:
            return dict(self._states)

    def reconnecting(self, key: str, target: str) -> Reconnecting | None:
        """``key``'s state as a :class:`Reconnecting` value (None when it has no failure)."""
        state = self.get(key)
        if state is None:
            return None
        return Reconnecting(target, state.attempt, max(0.0, state.next_at - self._monotonic()), state.error)
