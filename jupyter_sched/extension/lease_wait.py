"""Long-polling leases: ``POST leases?wait_ms=`` and ``GET leases/{id}?wait_ms=`` answer once decided.

``%gpu request 1`` used to send ``POST leases`` and then poll ``GET leases/{id}`` every 25 ms until
the engine had granted it: at least two round trips and, on average, half a poll interval of
waiting after the grant (issue 17: lease p50 <= 20 ms). With ``wait_ms`` the request itself waits,
on the event loop (no thread held), for the engine's ``lease`` event of that lease, and answers as
soon as the lease is no longer waiting in the queue — granted (``admitted``/``running``) or ended
— or after ``wait_ms`` with the lease still ``pending`` (the client then shows the reason and asks
again). A decided lease is answered from the engine's event, which carries the stored lease as
the service shows it to its owner (the events only ever go to the lease's own user here); an
expired wait is answered by a fresh read through the service.

The subscription is taken *before* the lease is submitted (or read), so an engine that decides
within the submit's own round trip cannot be missed; an event stream that drops this waiter (it
fell behind) or a server stopping ends the wait early with a fresh read.

Bounded per user (red-team 3 finding 2): a wait ends as soon as its client hangs up
(:meth:`LeaseWaiter.abandon`, from the handler's ``on_connection_close``) — dropped requests used to
keep waiting, and re-reading, for the whole ``wait_ms`` — and only :data:`MAX_POLLING_WAITS` of a
user's waits at a time re-read the store; the others still answer on the engine's events and,
at the end of ``wait_ms``, with one read. One user's 700 dropped waits on a server that does not
lead had slowed every other user's ``GET me`` 176-fold. And at most :data:`MAX_OPEN_WAITS` of a
user's requests wait at once on one server: each holds an event subscription that every engine
event is offered to, on the event loop, for up to 25 s; one more is refused 429 ``busy`` naming
``wait_ms`` (nothing is submitted: retry when one has answered, or ask without ``wait_ms``).
"""

from __future__ import annotations

import time
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import BusyError
from ..services.models import Job
from ..services.models.jobs import MAX_OPEN_LEASE_WAITS
from .events import EventHub, Subscription

__all__ = ["MAX_OPEN_WAITS", "MAX_POLLING_WAITS", "EndsWaitOnHangUp", "LeaseWaiter", "poll_interval", "waiting",
           "waiting_user"]

_WAITING_STATES = frozenset({"pending", "preempted"})

MAX_POLLING_WAITS = 16
"""A user's lease waits that re-read the store at once (more kernels than this waiting for GPUs
at the same moment is rare); the rest wait on the engine's events only."""

MAX_OPEN_WAITS = MAX_OPEN_LEASE_WAITS
"""A user's lease requests that may wait (``wait_ms`` > 0) at once on one server; one more is
refused 429 (a notebook per kernel waits with one: 64 kernels waiting for GPUs at once is far)."""

_POLLING: weakref.WeakKeyDictionary[EventHub, Counter[str]] = weakref.WeakKeyDictionary()
"""Per event hub (one per server): each user's waits that re-read the store now."""

_OPEN: weakref.WeakKeyDictionary[EventHub, Counter[str]] = weakref.WeakKeyDictionary()
"""Per event hub: each user's requests that wait now (``wait_ms`` > 0)."""


def poll_interval(services: Any) -> float:
    """Seconds between re-reads of a waiting lease: 1 s while this server's engine leads the store
    (its own events wake the wait at once), 0.1 s on a follower (another server decides)."""
    engine = getattr(services, "engine", None)
    return 1.0 if engine is not None and engine.is_leader else 0.1


async def waiting_user(handler: Any) -> str:
    """Whose lease events a ``POST leases`` wait follows: the name from the identity step alone —
    the caller itself is resolved on the submit's request thread (``LATE_CALLER``: one hop less
    per ``%gpu request``, issue 17); refused there, the caller is resolved now, which answers it."""
    user = handler.own_name()
    if user is None:
        caller = await handler.call(handler.sched.resolve_caller, handler.current_user)
        handler._sched_caller, user = caller, caller.user
    return str(user)


def waiting(state: str) -> bool:
    """True while a lease in ``state`` still waits in the queue for GPUs."""
    return state in _WAITING_STATES


class LeaseWaiter:
    """Wait on ``hub`` for one of ``user``'s leases to leave the queue (see module docstring).

    Use as ``with LeaseWaiter(hub, user) as waiter: lease = ...; lease = await waiter.decided(...)``.

    Args:
        hub: the server's event hub (engine events on the loop).
        user: whose lease events to keep (the others are skipped before they are queued).
        wait_ms: how long the request may wait (0: it answers at once and counts against no cap).

    Raises:
        BusyError: (on entering) ``user`` already has :data:`MAX_OPEN_WAITS` waits open here.
    """

    def __init__(self, hub: EventHub, user: str, wait_ms: int = 0) -> None:
        self._hub = hub
        self._user = user
        self._wait_ms = wait_ms
        self._sub: Subscription | None = None
        self._polls = False
        self._open = False
        self.gone = False

    def _view(self, event: dict[str, Any]) -> dict[str, Any] | None:
        data = event.get("data")
        if event.get("type") != "lease" or not isinstance(data, dict) or data.get("user") != self._user:
            return None
        return event

    def __enter__(self) -> LeaseWaiter:
        if self._wait_ms > 0:
            waits = _OPEN.setdefault(self._hub, Counter())
            if waits[self._user] >= MAX_OPEN_WAITS:
                raise BusyError(f"{MAX_OPEN_WAITS} of your lease requests are already waiting on this server",
                                field="wait_ms", details={"open_waits": waits[self._user], "max": MAX_OPEN_WAITS},
                                hint="retry once one of them has answered, or ask without wait_ms (it answers at "
                                     "once; GET leases/{id} follows the lease)")
            waits[self._user] += 1
            self._open = True
        self._sub = self._hub.subscribe(self._view)
        polling = _POLLING.setdefault(self._hub, Counter())
        if polling[self._user] < MAX_POLLING_WAITS:
            polling[self._user] += 1
            self._polls = True
        return self

    def __exit__(self, *_: object) -> None:
        if self._open:
            waits = _OPEN.get(self._hub)
            if waits is not None:
                waits[self._user] -= 1
                if waits[self._user] <= 0:
                    del waits[self._user]
            self._open = False
        if self._polls:
            polling = _POLLING.get(self._hub)
            if polling is not None:
                polling[self._user] -= 1
                if polling[self._user] <= 0:
                    del polling[self._user]
            self._polls = False
        if self._sub is not None:
            self._hub.unsubscribe(self._sub)
            self._sub = None

    def abandon(self) -> None:
        """The client hung up: end the wait now, without another read (idempotent)."""
        self.gone = True
        if self._sub is not None:
            self._hub.unsubscribe(self._sub)  # wakes decided() with EOFError

    async def decided(self, lease: Job, wait_ms: int, reread: Callable[[], Awaitable[Job]], *,
                      poll_s: float = 1.0) -> Job:
        """``lease`` once it no longer waits, or as it stands after ``wait_ms`` milliseconds;
        ``lease`` itself when it was decided already or ``wait_ms`` is 0. Besides the events it
        re-reads (``reread``) every ``poll_s`` seconds: on a server that does not lead the store
        the deciding engine is another process, whose events never reach this one."""
        if wait_ms <= 0 or not waiting(lease.state) or self._sub is None:
            return lease
        deadline = time.monotonic() + wait_ms / 1000
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return await reread()
            try:
                event = await self._sub.next(min(left, poll_s) if self._polls else left)
            except EOFError:  # hung up: nobody to answer; dropped or the server stops: what is stored now
                return lease if self.gone else await reread()
            if event is None:  # a poll interval (or the whole wait) passed without a word about it
                fresh = await reread()
                if not waiting(fresh.state) or time.monotonic() >= deadline:
                    return fresh
                continue
            data = event["data"]
            if data.get("id") != lease.id or waiting(str(data.get("state", ""))):
                continue
            # the engine's event is the decided lease as the service reads it for its owner (the
            # same job_to_dict; only pending jobs get a fresher reason from the engine): answer it
            # without another read, which would wait for a worker thread and the store
            return Job.model_validate(data, context={"viewer": self._user})  # its owner's (red team 22, R2)


class EndsWaitOnHangUp:
    """Handler mixin: the :class:`LeaseWaiter` kept in ``self._waiter`` ends when the client hangs
    up (tornado's ``on_connection_close``) instead of waiting out ``wait_ms``."""

    _waiter: LeaseWaiter | None = None

    def on_connection_close(self) -> None:
        if self._waiter is not None:
            self._waiter.abandon()
        super_close = getattr(super(), "on_connection_close", None)
        if super_close is not None:
            super_close()
