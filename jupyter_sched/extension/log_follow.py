"""``GET jobs/{id}/logs?follow=true``: the long poll, bounded per user.

A follow answers as soon as the job's log has new text, the job finished or the scheduler has a
note the reader has not shown (``notes_seen``), else after
:data:`FOLLOW_WAIT_S` with empty text (the client loops with ``offset = next_offset``). It has
no event to wait on, so it re-reads the log every :data:`FOLLOW_POLL_S` through the request
threads. One user's 1,000 follows of their own pending job (red-team 4 finding 4) were 4,000
reads a second: every other user's ``GET me`` went 1.6 → 130 ms (79x) and submits 4 → 146 ms.
So at most :data:`MAX_OPEN_FOLLOWS` of a user's follows wait at once on one server; one more is
refused 429 ``busy`` naming ``follow`` (a terminal's ``logs -f`` or a panel's log view holds one
each; the refused one can retry when one has answered, or read without ``follow``).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter
from typing import Any

from ..errors import BusyError
from .web import answer_body

__all__ = ["FOLLOW_POLL_S", "FOLLOW_WAIT_S", "MAX_OPEN_FOLLOWS", "follow_logs"]

FOLLOW_WAIT_S = 25.0
"""Long-poll ceiling of a follow (s), under the usual proxy idle timeouts."""

FOLLOW_POLL_S = 0.25
"""Seconds between re-reads of a followed log."""

MAX_OPEN_FOLLOWS = 16
"""A user's follows that may wait at once on one server; one more is refused 429."""

_OPEN: weakref.WeakKeyDictionary[Any, Counter[str]] = weakref.WeakKeyDictionary()
"""Per running extension (one per server): each user's follows waiting now."""


async def follow_logs(handler: Any, job_id: str, request: Any) -> Any:
    """The chunk ``handler`` (a :class:`~.handlers.LogsHandler`) answers for ``request``
    (:class:`~jupyter_sched.services.models.GetJobLogsRequest`): read at once, then — with
    ``follow`` and nothing new yet — re-read every :data:`FOLLOW_POLL_S` for up to
    :data:`FOLLOW_WAIT_S`. None when the client hung up meanwhile (nothing to answer).

    Raises:
        NotFoundError: as the service's read (another user's job, none).
        BusyError: the caller already has :data:`MAX_OPEN_FOLLOWS` follows waiting here (field ``follow``).
    """
    jobs = handler.services.jobs
    chunk = await handler.call(_read_encoded, jobs.logs, handler.caller, job_id, request)
    began = chunk.state
    if not request.follow or _news(chunk, request, began):
        return chunk
    who = handler.current_user
    user = str(getattr(who, "username", None) or getattr(who, "name", None) or who)
    waiting = _OPEN.setdefault(handler.sched, Counter())
    if waiting[user] >= MAX_OPEN_FOLLOWS:
        raise BusyError(f"{MAX_OPEN_FOLLOWS} of your log follows are already waiting on this server", field="follow",
                        details={"open_follows": waiting[user], "max": MAX_OPEN_FOLLOWS},
                        hint="retry once one of them has answered, or read without follow (it answers at once)")
    waiting[user] += 1
    try:
        waited = 0.0
        while not _news(chunk, request, began) and waited < FOLLOW_WAIT_S:
            if handler._client_gone:
                return None
            await asyncio.sleep(FOLLOW_POLL_S)
            waited += FOLLOW_POLL_S
            chunk = await handler.call(_read_encoded, jobs.logs, handler.caller, job_id, request)
        return chunk
    finally:
        waiting[user] -= 1
        if waiting[user] <= 0:
            del waiting[user]


def _read_encoded(read: Any, *args: Any) -> Any:
    """``read(*args)`` — a log chunk — with its JSON text and ETag made here, on the request thread, where
    :meth:`~.web.SchedHandler.reply` finds them (:func:`~.web.answer_body` keeps them while the chunk lives):
    a 1 MiB chunk's encoding and SHA-1 held the event loop on every read (red37 R3: ~40 % of its time
    in a loop of one user's log reads, every other request waiting behind them)."""
    chunk = read(*args)
    answer_body(chunk).tag()
    return chunk


def _news(chunk: Any, request: Any, began: str | None) -> bool:
    """Whether the answer ends a follow's wait: new log text, the job finished, a note of the
    scheduler the reader has not shown (``notes_seen``; new user 21, N7: a note waited up to 25 s),
    or the job's state moved on from ``began`` (the follow's first read): a reader saying "pending: no
    output yet" says "running" when it starts, not up to 25 s later (newuser37 N2)."""
    seen = request.notes_seen
    return bool(chunk.text or chunk.finished or (seen is not None and len(chunk.notes) > seen)
                or chunk.state != began)
