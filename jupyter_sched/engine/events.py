"""In-process event fan-out from the engine to API subscribers (SSE), bounded per subscriber.

Events are ``{"type": ..., "data": {...}}`` with types ``job``, ``lease``, ``inventory``,
``telemetry``, ``idle_warning``, ``preempted``, ``progress`` (and ``lagged``, see below). The engine publishes
from its worker thread; each subscriber reads on its own asyncio loop.

Bounded memory (issue 10, resource bounds): each subscriber has a queue of at most ``maxsize``
events; when a slow or vanished client lets it fill, the oldest events are dropped and one
``{"type": "lagged", "data": {"dropped": n}}`` is delivered next, so the client knows to re-read
state through the REST API.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any

__all__ = ["EventBus", "Subscription"]


class Subscription:
    """An async iterator of events for one consumer; :meth:`close` ends it."""

    def __init__(self, bus: EventBus, loop: asyncio.AbstractEventLoop, maxsize: int) -> None:
        self._bus = bus
        self._loop = loop
        self._items: deque[dict[str, Any]] = deque()
        self._maxsize = maxsize
        self._dropped = 0
        self._wake = asyncio.Event()
        self.closed = False

    def _push(self, event: dict[str, Any]) -> None:  # runs on self._loop
        if self.closed:
            return
        if len(self._items) >= self._maxsize:
            self._items.popleft()
            self._dropped += 1
        self._items.append(event)
        self._wake.set()

    def pending(self) -> int:
        """Events queued and not yet read (at most ``maxsize``)."""
        return len(self._items)

    def close(self) -> None:
        """Stop receiving; a waiting ``__anext__`` ends the iteration."""
        if not self.closed:
            self.closed = True
            self._bus._remove(self)
            self._loop.call_soon_threadsafe(self._wake.set)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> dict[str, Any]:
        while True:
            if self._dropped:
                dropped, self._dropped = self._dropped, 0
                return {"type": "lagged", "data": {"dropped": dropped}}
            if self._items:
                return self._items.popleft()
            if self.closed:
                raise StopAsyncIteration
            self._wake.clear()
            await self._wake.wait()

    async def get(self, timeout: float | None = None) -> dict[str, Any]:
        """The next event (``asyncio.TimeoutError`` after ``timeout`` seconds)."""
        return await asyncio.wait_for(self.__anext__(), timeout)


class EventBus:
    """Thread-safe publish to every live :class:`Subscription`.

    Args:
        maxsize: events buffered per subscriber before the oldest are dropped.
    """

    def __init__(self, maxsize: int = 1000) -> None:
        self.maxsize = maxsize
        self._subs: list[Subscription] = []
        self._lock = threading.Lock()

    def subscribe(self) -> Subscription:
        """A new subscription bound to the running asyncio loop.

        Raises:
            RuntimeError: called outside a running event loop.
        """
        sub = Subscription(self, asyncio.get_running_loop(), self.maxsize)
        with self._lock:
            self._subs.append(sub)
        return sub

    def _remove(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)

    def publish(self, event: dict[str, Any]) -> None:
        """Deliver ``event`` to every subscriber (from any thread; never blocks)."""
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            try:
                sub._loop.call_soon_threadsafe(sub._push, event)
            except RuntimeError:  # its loop is closed: the subscriber is gone
                self._remove(sub)

    def subscribers(self) -> int:
        """Number of live subscriptions."""
        with self._lock:
            return len(self._subs)
