"""THE fan-out of the service's event stream to push clients, each with a bounded queue.

The service produces one stream of ``{"type": str, "data": {...}}`` events (types ``job``,
``lease``, ``inventory``, ``telemetry``, ``idle_warning``, ``preempted``, ...); the engine's
:class:`~jupyter_sched.engine.events.EventBus` only carries it from the engine's thread to the
server's loop, where one pump task reads it and offers every event to each subscriber. Each
subscriber has a *view* — ``view(event) -> event | None``, the caller's visibility
(:func:`jupyter_sched.services.visibility.event_for`) — applied before anything is queued, so a
user's queue never fills with other users' events. A subscriber whose queue is full is
*dropped* — its queue is emptied and closed — rather than buffered forever: a slow or vanished
browser can never grow server memory without bound (issue 10 item 6). A dropped client
reconnects and refetches state over REST.

The hub also counts events by type for the Prometheus endpoint (preemptions, reclaims).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

__all__ = ["EventHub", "Subscription"]

log = logging.getLogger(__name__)

_CLOSED: dict[str, Any] = {"type": "__closed__", "data": {}}


class Subscription:
    """One push client's bounded view of the event stream.

    Attributes:
        dropped: True once the hub dropped this client for falling behind.
        reason: why it was closed (``"slow client"``, ``"server stopping"``, ``"unsubscribed"``).
    """

    def __init__(self, maxsize: int, view: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> None:
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=maxsize)
        self._view = view
        self.dropped = False
        self.closed = False
        self.reason = ""

    def offer(self, event: dict[str, Any]) -> bool:
        """Queue what this client may see of ``event`` (nothing when its view says so) without
        waiting; on overflow drop the client. Returns False when dropped."""
        if self.closed:
            return False
        if self._view is not None:
            seen = self._view(event)
            if seen is None:
                return True
            event = seen
        try:
            self._queue.put_nowait(event)
            return True
        except asyncio.QueueFull:
            self.dropped = True
            self.close("slow client")
            return False

    def close(self, reason: str) -> None:
        """Empty the queue (freeing its memory) and wake the reader with an end marker."""
        if self.closed:
            return
        self.closed = True
        self.reason = reason
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(_CLOSED)

    async def next(self, timeout: float) -> dict[str, Any] | None:
        """The next event, ``None`` after ``timeout`` seconds without one.

        Raises:
            EOFError: the subscription was closed (dropped, unsubscribed or server stopping).
        """
        try:
            event = await asyncio.wait_for(self._queue.get(), timeout)
        except asyncio.TimeoutError:
            return None
        if event is _CLOSED:
            raise EOFError(self.reason)
        return event

    @property
    def pending(self) -> int:
        """Events queued and not yet read."""
        return self._queue.qsize()


class EventHub:
    """Broadcast one event source to many bounded subscriptions.

    Args:
        queue_size: events buffered per subscriber before it is dropped.
    """

    def __init__(self, queue_size: int) -> None:
        self.queue_size = queue_size
        self._subscribers: set[Subscription] = set()
        self.counts: Counter[str] = Counter()
        self.dropped_clients = 0
        self._task: asyncio.Task[None] | None = None

    def subscribe(self, view: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> Subscription:
        """Register a new push client that receives ``view(event)`` of each event (None: skipped;
        no view: every event as it is)."""
        sub = Subscription(self.queue_size, view)
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Forget ``sub`` (idempotent)."""
        self._subscribers.discard(sub)
        sub.close("unsubscribed")

    @property
    def subscribers(self) -> int:
        """Connected push clients."""
        return len(self._subscribers)

    def publish(self, event: Mapping[str, Any]) -> None:
        """Offer ``event`` to every subscriber; drop the ones that are full."""
        item = {"type": str(event.get("type", "message")), "data": event.get("data", {})}
        self.counts[item["type"]] += 1
        for sub in list(self._subscribers):
            if not sub.offer(item):
                self._subscribers.discard(sub)
                if sub.dropped:
                    self.dropped_clients += 1
                    log.warning("jupyter_sched: dropped an event-stream client that fell %d events behind",
                                self.queue_size)

    def start(self, source: Any) -> None:
        """Start pumping ``source`` (an async iterator, or an object with ``async get()``) into the hub."""
        self._task = asyncio.ensure_future(self._pump(source))

    async def _pump(self, source: Any) -> None:
        try:
            async for event in _iterate(source):
                self.publish(event)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("jupyter_sched: the event source failed; push clients get no more events")

    async def stop(self) -> None:
        """Stop the pump and close every subscription."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        for sub in list(self._subscribers):
            sub.close("server stopping")
        self._subscribers.clear()


async def _iterate(source: Any) -> AsyncIterator[Mapping[str, Any]]:
    if hasattr(source, "__aiter__"):
        async for event in source:
            yield event
        return
    while True:
        yield await source.get()
