"""A user server's link to its central service: connected, or reconnecting with backoff (issue 17).

In hub mode every scheduler request of a user's server goes to the central service
(:mod:`.forward`). When that service stops answering (restarted, redeployed, its host gone), the
first failed request marks the link down and starts ONE retry loop: it probes the service
(``GET api/sched/config``) after 1 s, 2 s, 4 s … up to 30 s (jittered, :class:`~jupyter_sched.backoff.Backoff`)
until it answers. Meanwhile:

* a forwarded request is still sent (the user acting is not a retry: one that gets through marks
  the link up at once, however long the loop's next wait), and when it fails it answers 502
  ``hub_service_unreachable`` whose message is the loop's sentence: "the scheduler service does
  not answer: reconnecting to the central service (attempt 3, next in 4 s)", plus
  ``details.reconnecting`` — what the magics and the CLI print;
* the server's own event stream (``GET events``, which the panel reads) carries ``connection``
  events ``{"central": {"target", "attempt", "next_in_s", "error", "message"}}`` at each attempt
  and ``{"central": null}`` once the service answers again, so the panel shows the sentence and
  then re-reads what changed.

The probe's error text is this module's own words ("connection refused", "timed out"), never
the service's address (that goes to the log: red-team finding 9).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from ..backoff import Backoff, Reconnecting, Retries

__all__ = ["CENTRAL", "CentralLink", "transport_error"]

log = logging.getLogger(__name__)

CENTRAL = "central"
"""The loop's key in ``connection`` events."""
_TARGET = "the central service"
DEFAULT_BACKOFF = Backoff(base_s=1.0, cap_s=30.0, jitter=0.2)


def transport_error(exc: BaseException) -> str:
    """A failed request to the central service in a few words, without its address."""
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return "connection dropped"
    return type(exc).__name__


class CentralLink:
    """Up, or reconnecting to the central service (see module docstring).

    Args:
        probe: one attempt to reach the service; raises ``httpx.HTTPError`` when it does not answer.
        backoff: the retry schedule (default 1 s doubling to 30 s, 20 % jitter).
        retries: the bookkeeping (tests inject clocks through it); default one on ``backoff``.
    """

    def __init__(self, probe: Callable[[], Awaitable[Any]], *, backoff: Backoff = DEFAULT_BACKOFF,
                 retries: Retries | None = None) -> None:
        self._probe = probe
        self.retries = retries or Retries(backoff)
        self._task: asyncio.Task[None] | None = None
        self._listeners: set[asyncio.Queue[dict[str, Any]]] = set()
        self._stopped = False

    @property
    def reconnecting(self) -> Reconnecting | None:
        """The loop's state while the service does not answer, else None."""
        return self.retries.reconnecting(CENTRAL, _TARGET)

    def event(self) -> dict[str, Any]:
        """The ``connection`` event of the current state."""
        state = self.reconnecting
        return {"type": "connection", "data": {CENTRAL: state.to_dict() if state else None}}

    def failed(self, exc: BaseException) -> Reconnecting:
        """A request found the service gone: mark the link down (the first time, start the
        retry loop); the state to report. Later failures while the loop runs change nothing:
        the loop alone counts attempts."""
        if self.retries.get(CENTRAL) is None:
            self.retries.failed(CENTRAL, transport_error(exc))
            self._publish()
            if self._task is None and not self._stopped:
                self._task = asyncio.ensure_future(self._retry())
        state = self.reconnecting
        assert state is not None
        return state

    def succeeded(self) -> None:
        """A request got an answer: the link is up (ends the loop's reason to run)."""
        if self.retries.get(CENTRAL) is not None:
            self.retries.succeeded(CENTRAL)
            log.warning("jupyter_sched: the central service answers again")  # at its outage's level (store/outage.py)
            self._publish()

    def listen(self) -> asyncio.Queue[dict[str, Any]]:
        """A queue of this link's ``connection`` events (call :meth:`unlisten` when done)."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=64)
        self._listeners.add(queue)
        return queue

    def unlisten(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        """Stop delivering to ``queue``."""
        self._listeners.discard(queue)

    async def stop(self) -> None:
        """End the retry loop (server stopping)."""
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    def _publish(self) -> None:
        event = self.event()
        for queue in list(self._listeners):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(event)

    async def _retry(self) -> None:
        try:
            while not self._stopped:
                state = self.retries.get(CENTRAL)
                if state is None:
                    return
                reconnecting = self.reconnecting
                if reconnecting is not None:
                    log.warning("jupyter_sched: %s", reconnecting.message)
                    await asyncio.sleep(reconnecting.next_in_s)
                try:
                    await self._probe()
                except httpx.HTTPError as exc:
                    if self.retries.get(CENTRAL) is not None:
                        self.retries.failed(CENTRAL, transport_error(exc))
                        self._publish()
                    continue
                self.succeeded()
        finally:
            self._task = None
