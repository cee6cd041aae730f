"""Fire-and-forget tasks of the server and the central service: an audit record written off the loop, a
report sent to the hub, a tick's check. Nobody awaits them, so a failure's exception would be retrieved by
nobody and asyncio writes its whole traceback ("Task exception was never retrieved", ~3 KB) when the task is
collected — red30 R7: each request of a refused look-alike hub user wrote one into service.log (27 MiB a
minute from one client).

:func:`fire_and_forget` starts such a task with a done-callback that retrieves the outcome and says a failure
in one line, at most one line per :data:`FAILURE_LINE_EVERY_S` for each kind of task (``what``), the next
line counting those not said. Long-lived loops the service holds and awaits at its stop (the engine's
runner, the event pump) are not fire-and-forget and do not go through here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from ..textsafe import printable_line

__all__ = ["FAILURE_LINE_EVERY_S", "fire_and_forget"]

log = logging.getLogger("jupyter_sched")

_T = TypeVar("_T")

FAILURE_LINE_EVERY_S = 60.0
"""Seconds between two lines about failures of one kind of task (the ones between are counted)."""

_said: dict[str, tuple[float, int]] = {}
"""Per kind of task: when its last failure line was written (monotonic seconds), and failures since not said.
Keys are the callers' literal ``what`` words: a fixed, small set. Touched on the event loop only."""


def fire_and_forget(awaitable: Awaitable[_T], *, what: str, keep: set[Any] | None = None) -> asyncio.Future[_T]:
    """Start ``awaitable`` as a task nobody awaits; its failure is logged as one line (rate-limited per
    ``what``, e.g. ``"an audit record of a refusal"``), never as asyncio's traceback. ``keep``: a set
    holding the task until it is done (a task nobody holds may be collected before it ran; a reader of
    the set — ``refusals_written`` — may await the ones in flight). Must run on the event loop.
    Returns the task (more done-callbacks may be added)."""
    task = asyncio.ensure_future(awaitable)
    if keep is not None:
        keep.add(task)
    task.add_done_callback(functools.partial(_settled, what=what, keep=keep))
    return task


def _settled(task: asyncio.Future[Any], *, what: str, keep: set[Any] | None) -> None:
    if keep is not None:
        keep.discard(task)
    if task.cancelled():
        return
    exc = task.exception()  # retrieved: asyncio writes no traceback for it
    if exc is None:
        return
    now = time.monotonic()
    last, unsaid = _said.get(what, (None, 0))
    if last is not None and now - last < FAILURE_LINE_EVERY_S:
        _said[what] = (last, unsaid + 1)
        return
    _said[what] = (now, 0)
    more = f" ({unsaid} more since the last such line)" if unsaid else ""
    log.warning("jupyter_sched: %s failed: %s: %s%s", what, type(exc).__name__,
                printable_line(str(exc))[:300], more)
