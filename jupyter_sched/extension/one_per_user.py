"""Heavy reads one at a time per user: ``GET telemetry`` and ``GET telemetry/history``.

Each of these answers builds every sample of the window it is asked for (``since``/``limit``:
up to 3,600 samples per GPU, every GPU; a history up to ~10,000 points) in Python, on the request
threads, and serialises it on the event loop — tens of milliseconds to seconds each, holding the
interpreter. Sixteen concurrent loops of one user (red-team 4 finding 3) made every other user's
``GET me`` 76x (telemetry, 4 GPUs, 700 samples each) to 240x (history) slower; the same reads one
at a time cost others ~3x. So a user's reads of these routes run one at a time on this server:
the next waits on the event loop (no thread held) until the previous one has its answer, and a
request whose client hung up while waiting is not computed at all. Other users never wait on
another user's turn.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import BusyError

__all__ = ["OnePerUserCalls"]

R = TypeVar("R")

_TURNS: weakref.WeakKeyDictionary[Any, dict[str, _Turn]] = weakref.WeakKeyDictionary()
"""Per running extension (one per server): each user's turn among these reads."""


class _Turn:
    """One user's lock and how many of their requests hold or await it (forgotten at 0)."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class OnePerUserCalls:
    """Handler mixin (before :class:`~.web.SchedHandler`): its service calls (:meth:`call`) run
    one at a time per user of this server; a caller that hung up while waiting is answered
    nothing (tornado discards it) and nothing is computed for it."""

    _client_gone = False

    def on_connection_close(self) -> None:
        self._client_gone = True
        super_close = getattr(super(), "on_connection_close", None)
        if super_close is not None:
            super_close()

    async def call(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        # the authenticated name (the admission step's caller may be resolved only on the request thread)
        who = self.current_user  # type: ignore[attr-defined]
        user = str(getattr(who, "username", None) or getattr(who, "name", None) or who)
        turns = _TURNS.setdefault(self.sched, {})  # type: ignore[attr-defined]
        turn = turns.setdefault(user, _Turn())
        turn.users += 1
        try:
            async with turn.lock:
                if self._client_gone:  # nobody to answer: compute nothing (written to a closed stream)
                    raise BusyError("the client hung up while waiting for its turn", field=None)
                result: R = await super().call(fn, *args, **kwargs)  # type: ignore[misc]
                return result
        finally:
            turn.users -= 1
            if turn.users == 0 and turns.get(user) is turn:
                del turns[user]
