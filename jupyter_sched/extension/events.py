"""THE fan-out of the service's event stream to push clients, each with a bounded queue.

The service produces one stream of ``{"type": str, "data": {...}}`` events (types ``job``,
``lease``, ``inventory``, ``telemetry``, ``idle_warning``, ``preempted``, ``progress``, ...); the engine's
:class:`~jupyter_sched.engine.events.EventBus` only carries it from the engine's thread to the
server's loop, where one pump task reads it and offers every event to each subscriber. Each
subscriber has a *view* — ``view(event) -> event | None``, the caller's visibility
(:func:`jupyter_sched.services.visibility.event_for`) — applied before anything is queued, so a
user's queue never fills with other users' events. A subscriber whose queue is full is
*dropped* — its queue is emptied and closed — rather than buffered forever: a slow or vanished
browser can never grow server memory without bound (issue 10 item 6). A dropped client
reconnects and refetches state over REST.

The hub also counts events by type for the Prometheus endpoint (preemptions, reclaims).

Resuming (issue 17): every event gets an id ``<epoch>-<n>`` (``epoch``: this hub's start, so ids
of a restarted server never match) and the hub keeps the last ``replay_size`` events. A client
that reconnects with the SSE ``Last-Event-ID`` header gets, through its view, the events it
missed when they are all still kept, else one ``{"type": "lagged", "data": {"resumed": false}}``
first (re-read the state over REST), as a dropped client does.

Bounded per user (red-team 4 finding 1): every event is offered to every subscriber and written,
as JSON, to each client that may see it, so one user's many streams multiplied the cost of each
of their own events — eve's 1,000 idle streams and her submit/cancel loop made every other user's
``GET me`` 20x slower. A user keeps at most :data:`MAX_STREAMS_PER_USER` streams here: opening one
more closes that user's OLDEST (a browser tab gone without closing its socket must not lock its
owner out; the closed client reconnects with backoff like a dropped one). And an event's data is
serialised once (:meth:`EventHub.text`), not once per client that sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from ..services.models.base import wire_json
from .floods import stream_replacements

__all__ = ["MAX_STREAMS_PER_USER", "RESUME_HEADER", "EventHub", "Subscription", "stream_replacements"]

MAX_STREAMS_PER_USER = 16
"""Event streams one user keeps open on one server (a panel per browser tab, a CLI watching);
one more closes the user's oldest (see module docstring)."""

_TEXTS_KEPT = 64
"""Serialised event data kept for the clients still writing them (the latest events')."""

RESUME_HEADER = "X-Jupyter-Sched-Resume"
"""Set on ``GET events`` answers of a server that resumes after ``Last-Event-ID`` (or says
``lagged``): a client need not guess whether it missed events."""

log = logging.getLogger(__name__)

_CLOSED: dict[str, Any] = {"type": "__closed__", "data": {}}


class Subscription:
    """One push client's bounded view of the event stream.

    Attributes:
        dropped: True once the hub dropped this client for falling behind.
        reason: why it was closed (``"slow client"``, ``"server stopping"``, ``"unsubscribed"``).
    """

    def __init__(self, maxsize: int, view: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> None:
        self._queue: asyncio.Queue[tuple[dict[str, Any], str]] = asyncio.Queue(maxsize=maxsize)
        self._view = view
        self.dropped = False
        self.closed = False
        self.reason = ""
        self.owner: str | None = None

    def offer(self, event: dict[str, Any], event_id: str = "") -> bool:
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
            self._queue.put_nowait((event, event_id))
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
        self._queue.put_nowait((_CLOSED, ""))

    async def next(self, timeout: float) -> dict[str, Any] | None:
        """The next event, ``None`` after ``timeout`` seconds without one.

        Raises:
            EOFError: the subscription was closed (dropped, unsubscribed or server stopping).
        """
        item = await self.next_with_id(timeout)
        return None if item is None else item[0]

    async def next_with_id(self, timeout: float) -> tuple[dict[str, Any], str] | None:
        """The next event and its id (``""`` for one the hub made up, such as ``lagged``), ``None``
        after ``timeout`` seconds without one.

        Raises:
            EOFError: the subscription was closed (dropped, unsubscribed or server stopping).
        """
        try:
            event, event_id = await asyncio.wait_for(self._queue.get(), timeout)
        except asyncio.TimeoutError:
            return None
        if event is _CLOSED:
            raise EOFError(self.reason)
        return event, event_id

    @property
    def pending(self) -> int:
        """Events queued and not yet read."""
        return self._queue.qsize()


class EventHub:
    """Broadcast one event source to many bounded subscriptions.

    Args:
        queue_size: events buffered per subscriber before it is dropped.
        replay_size: events kept for clients that resume with ``Last-Event-ID``.
    """

    def __init__(self, queue_size: int, *, replay_size: int = 256) -> None:
        self.queue_size = queue_size
        self.epoch = secrets.token_hex(4)
        self._seq = 0
        self._recent: deque[tuple[int, dict[str, Any]]] = deque(maxlen=replay_size)
        self._subscribers: set[Subscription] = set()
        self.counts: Counter[str] = Counter()
        self.dropped_clients = 0
        self.replaced_clients = 0
        self._owned: dict[str, deque[Subscription]] = {}
        self._texts: dict[int, tuple[object, str]] = {}
        self._task: asyncio.Task[None] | None = None

    def subscribe(self, view: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None, *,
                  last_event_id: str | None = None, owner: str | None = None,
                  replaced: Callable[[int], object] | None = None) -> Subscription:
        """Register a new push client that receives ``view(event)`` of each event (None: skipped;
        no view: every event as it is). ``last_event_id``: the client resumes after that event
        (see module docstring): the kept events after it come first, or one ``lagged``.
        ``owner``: the user whose stream it is; their oldest stream is closed when this one
        would be their ``MAX_STREAMS_PER_USER + 1``-th (None: the server's own, not counted).
        ``replaced(count)``: told when opening this stream closed ``count`` older ones (audited, :mod:`.floods`)."""
        sub = Subscription(self.queue_size, view)
        if last_event_id:
            self._replay(sub, last_event_id)
        if owner is not None:
            streams = self._owned.setdefault(owner, deque())
            closed = max(0, len(streams) - MAX_STREAMS_PER_USER + 1)
            if closed and replaced is not None:
                replaced(closed)
            while len(streams) >= MAX_STREAMS_PER_USER:
                oldest = streams.popleft()
                self._subscribers.discard(oldest)
                oldest.owner = None
                oldest.close(f"replaced: {owner} opened more than {MAX_STREAMS_PER_USER} event streams")
                self.replaced_clients += 1
            streams.append(sub)
            sub.owner = owner
        self._subscribers.add(sub)
        return sub

    def _forget(self, sub: Subscription) -> None:
        """Stop offering events to ``sub`` and stop counting it against its owner."""
        self._subscribers.discard(sub)
        owner, sub.owner = sub.owner, None
        streams = self._owned.get(owner) if owner is not None else None
        if streams is not None:
            with contextlib.suppress(ValueError):
                streams.remove(sub)
            if not streams:
                del self._owned[str(owner)]

    def text(self, data: object) -> str:
        """``data`` as JSON, serialised once for every client that writes the same event (the
        views pass an event's data on as it is; a telemetry view builds its own)."""
        kept = self._texts.get(id(data))
        if kept is not None and kept[0] is data:
            return kept[1]
        text = wire_json(data).decode()  # never NaN nor Infinity: EventSource clients JSON.parse each event
        if len(self._texts) >= _TEXTS_KEPT:
            del self._texts[next(iter(self._texts))]
        self._texts[id(data)] = (data, text)  # the reference keeps id(data) from being reused
        return text

    def _replay(self, sub: Subscription, last_event_id: str) -> None:
        epoch, _, number = last_event_id.strip().partition("-")
        # client input: only plain ASCII digits that fit a sequence number ('²'.isdigit() is True
        # but int() refuses it; 5,000 digits exceed int()'s limit: both were a 500, red-team 3 finding 7)
        seen = int(number) if number.isascii() and number.isdigit() and len(number) <= 18 else -1
        oldest = self._recent[0][0] if self._recent else self._seq + 1
        missed = [(item, f"{self.epoch}-{seq}") for seq, item in self._recent if seq > seen]
        if sub._view is not None:
            missed = [(view, event_id) for item, event_id in missed if (view := sub._view(item)) is not None]
        # a restarted server (another epoch), an id from the future, events no longer kept, or
        # more than the client's queue holds: it re-reads instead
        if epoch != self.epoch or not oldest - 1 <= seen <= self._seq or len(missed) >= self.queue_size:
            sub.offer({"type": "lagged", "data": {"resumed": False}})
            return
        for event, event_id in missed:
            sub._queue.put_nowait((event, event_id))  # already through its view

    def unsubscribe(self, sub: Subscription) -> None:
        """Forget ``sub`` (idempotent)."""
        self._forget(sub)
        sub.close("unsubscribed")

    @property
    def subscribers(self) -> int:
        """Connected push clients."""
        return len(self._subscribers)

    def publish(self, event: Mapping[str, Any]) -> None:
        """Offer ``event`` to every subscriber; drop the ones that are full."""
        item = {"type": str(event.get("type", "message")), "data": event.get("data", {})}
        self.counts[item["type"]] += 1
        self._seq += 1
        self._recent.append((self._seq, item))
        event_id = f"{self.epoch}-{self._seq}"
        for sub in list(self._subscribers):
            if not sub.offer(item, event_id):
                self._forget(sub)
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
        self._owned.clear()


async def _iterate(source: Any) -> AsyncIterator[Mapping[str, Any]]:
    if hasattr(source, "__aiter__"):
        async for event in source:
            yield event
        return
    while True:
        yield await source.get()
