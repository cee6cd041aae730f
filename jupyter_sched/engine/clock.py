"""Clocks the engine reads (injected, so simulations and tests drive time themselves)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Protocol

__all__ = ["Clock", "ManualClock", "SystemClock"]


class Clock(Protocol):
    """Source of the current time (aware UTC)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real wall clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class ManualClock:
    """A clock that moves only when told (tests, the simulator).

    Args:
        start: the initial time (aware; converted to UTC).

    Raises:
        ValueError: ``start`` is naive, or :meth:`advance` is given a negative step.
    """

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime")
        self._now = start.astimezone(timezone.utc)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        """Move forward ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ValueError("time only moves forward")
        self._now += timedelta(seconds=seconds)
        return self._now

    def set(self, value: datetime) -> None:
        """Jump to ``value`` (not earlier than now)."""
        if value < self._now:
            raise ValueError("time only moves forward")
        self._now = value
