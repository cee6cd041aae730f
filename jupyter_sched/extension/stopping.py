"""Requests that meet the server while it stops: 503 ``stopping`` with a Retry-After, never a 500.

jupyter_server stops its extensions before its HTTP server stops taking requests, and ours shuts its
request, bulk and dry-run thread pools on the way out. A panel's poll that came in between reached a
pool that was gone: ``run_in_executor`` raised ``RuntimeError: cannot schedule new futures after
shutdown``, answered 500 with a traceback in the server log at every stop (new user 24, N7); a call
queued on a pool when it shut (``cancel_futures``) was cancelled under its handler. So every
handler asks :func:`refuse_if_stopping` first, and every hop onto a pool goes through
:func:`run_pooled`, which turns both into :class:`~jupyter_sched.errors.StoppingError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar, cast

from ..errors import SchedError, StoppingError, http_status_for

__all__ = ["RETRY_AFTER_S", "refuse_if_stopping", "run_pooled", "stopping_error"]

R = TypeVar("R")

RETRY_AFTER_S = 5
"""Seconds a client is told to wait (``Retry-After``) before it asks a stopping server again."""


def stopping_error() -> StoppingError:
    """The answer to a request that came while the server stops (503 ``stopping``, Retry-After :data:`RETRY_AFTER_S` s)."""
    return StoppingError("the server is stopping (shutdown): this request was not carried out",
                         hint=f"retry in {RETRY_AFTER_S} s or so, once the server is back; nothing was changed",
                         details={"retry_after_s": RETRY_AFTER_S})


def refuse_if_stopping(sched: Any) -> None:
    """Raise :class:`StoppingError` when ``sched`` (the :class:`~.app.SchedApp`) has begun to stop.

    Raises:
        StoppingError: ``sched.stopping`` is true (503, Retry-After)."""
    if getattr(sched, "stopping", False):
        raise stopping_error()


async def run_pooled(pool: Executor, fn: Callable[[], R], *, stopping: Callable[[], bool]) -> R:
    """Run ``fn()`` on ``pool`` and return its result; a pool shut by a stopping server answers
    :class:`StoppingError` instead of a ``RuntimeError`` or a cancellation of the caller.

    Args:
        pool: the thread pool (request, bulk or dry-run threads).
        fn: the work, no arguments (a ``functools.partial``).
        stopping: true once the server has begun to stop (read only when the pool refused).

    Raises:
        StoppingError: the pool was shut (or shut with ``fn`` still queued) by a stopping server.
        SchedError: a refusal ``fn`` raised (4xx), without the pool thread's frames (:func:`_refusal_returned`).
        Exception: whatever else ``fn`` raised, unchanged.
    """
    loop = asyncio.get_running_loop()
    try:
        future = loop.run_in_executor(pool, _refusal_returned(fn))
    except RuntimeError:  # "cannot schedule new futures after shutdown"
        if stopping():
            raise stopping_error() from None
        raise
    try:
        value, refused = await future
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if future.cancelled() and stopping() and (task is None or not task.cancelling()):
            raise stopping_error() from None  # the pool dropped fn, not our caller that was cancelled
        raise
    if refused is not None:
        del future  # its result holds the refusal, and this frame is in the refusal's traceback: a cycle again
        try:
            raise refused
        finally:  # ... as this name would be
            del refused
    return cast(R, value)


def _refusal_returned(fn: Callable[[], R]) -> Callable[[], tuple[R | None, SchedError | None]]:
    """``fn`` for a pool thread, a refusal (a 4xx :class:`SchedError`) it raises returned, not raised:
    ``(value, None)`` or ``(None, refusal)``, the refusal without its traceback and the exceptions it came from.

    A refusal raised there kept what the thread's frames held for good (run A of session 38: verify 24 V2's
    bound, ~4 MiB a refused 7.5 MB body once red38 R1, 25f72c9c, moved large bodies' decode and parse onto
    these threads): its traceback and the exceptions it came from (pydantic's, the decode's) hold the thread's
    frames — the handler, its request, the decoded body or a carried notebook — and those frames the pool's
    work item, whose future holds the refusal again: a reference cycle, freed only by a full garbage
    collection, which bytes never prompt. A refusal is said whole by its own fields; a fault (5xx, anything
    else) keeps its traceback for the log."""
    def caught() -> tuple[R | None, SchedError | None]:
        try:
            return fn(), None
        except SchedError as refused:
            if http_status_for(refused) >= 500:
                raise
            refused.__context__ = refused.__cause__ = None
            return None, refused.with_traceback(None)
    return caught
