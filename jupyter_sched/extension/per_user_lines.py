"""One user's share of a thread pool on a shared service: per user, a line of their calls in which at most half the
pool's threads work for them at once; the rest wait on the event loop holding no thread, and past a bound the next is
refused 429 (red27 R5: four of one user's usage reports held every bulk thread for minutes; red37 R3: sixteen loops of
one user's ``GET jobs/{id}/logs`` or even ``GET me`` held all eight request threads, others' starts 0.3 -> 2.3 s).
:class:`~.app.SchedApp` keeps one for its bulk reads and one for its quick requests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..errors import BusyError
from .stopping import run_pooled

__all__ = ["BULK_WAITING_PER_USER", "QUICK_WAITING_PER_USER", "PerUserLines"]

R = TypeVar("R")

BULK_WAITING_PER_USER = 16
"""Most of one user's bulk reads in flight or waiting (:meth:`~.app.SchedApp.bulk_off_loop`); more are 429."""

QUICK_WAITING_PER_USER = 64
"""Most of one user's quick requests in flight or waiting (:meth:`~.app.SchedApp.quick_off_loop`); more are 429.
Above what one person's clients ask at once (a panel's refresh, :data:`~.log_follow.MAX_OPEN_FOLLOWS`
log follows' re-reads, a notebook's magics), far below what a request loop brings."""


class PerUserLines:
    """The lines of one pool: per user ``[semaphore of half the pool's threads, their calls in it or waiting]``,
    forgotten when their last call ends.

    Args:
        pool: the threads the calls run on.
        most: a user's calls in flight or waiting past which the next is refused.
        what: what the calls are, in the refusal's words ("page and report reads").
        retry_s: seconds the refusal says to wait (its ``Retry-After``).
    """

    def __init__(self, pool: ThreadPoolExecutor, *, most: int, what: str, retry_s: int) -> None:
        self.pool, self.most, self.what, self.retry_s = pool, most, what, retry_s
        self.of: dict[str, list[Any]] = {}

    async def run(self, user: str, call: Callable[[], R], *, stopping: Callable[[], bool],
                  threads_stopped: Callable[[], bool]) -> R:
        """``call()`` on the pool within ``user``'s line (on the loop once the threads are gone: ``threads_stopped``).

        Raises:
            BusyError: ``most`` of theirs are in flight or waiting (429, ``retry_after_s``).
        """
        line = self.of.get(user)
        if line is None:
            line = self.of[user] = [asyncio.Semaphore(max(1, self.pool._max_workers // 2)), 0]
        if line[1] >= self.most:
            raise BusyError(f"{line[1]} of your {self.what} are waiting for your earlier ones",
                            hint=f"retry in {self.retry_s} s, once they have answered (send fewer at once)",
                            details={"retry_after_s": self.retry_s, "waiting": line[1]})
        line[1] += 1
        try:
            async with line[0]:
                if threads_stopped():
                    return call()
                return await run_pooled(self.pool, call, stopping=stopping)
        finally:
            line[1] -= 1
            if line[1] <= 0:
                self.of.pop(user, None)
