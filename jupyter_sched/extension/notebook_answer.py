"""``GET jobs/{id}/notebook``'s answer: streamed from the file, a few per user at once (red team 24, R5).

The executed notebook is a file the run's owner writes (up to 64 MiB). It used to be read whole,
decoded with ``errors="replace"`` (an invalid byte became three) and handed to tornado in one
piece: six slow readers of one user held +1.15 GiB while they trickled, and every other request
waited ~13 s while the answers were built. Now its bytes are sent as written (never decoded),
:data:`~jupyter_sched.services.definitions.NOTEBOOK_CHUNK_BYTES` at a time — each piece read on a
worker thread and written only once the previous one left tornado's buffer (``await flush()``) —
so one answer holds ~64 KiB however slowly it is read, and the event loop never reads the file.
A user has at most :data:`MAX_NOTEBOOK_ANSWERS_PER_USER` such answers under way on this server;
one more is answered 429 (``busy``, ``Retry-After``) before the file is opened. A reader too slow
to be worth holding is cut by the front door's stall rule (hub mode), as any answer is.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from tornado.iostream import StreamClosedError

from ..errors import BusyError
from ..services.definitions import ExecutedNotebook

__all__ = ["MAX_NOTEBOOK_ANSWERS_PER_USER", "NotebookAnswers", "stream_notebook"]

MAX_NOTEBOOK_ANSWERS_PER_USER = 2
"""Executed-notebook answers one user may have under way at once on one server."""

NOTEBOOK_RETRY_AFTER_S = 2
"""The ``Retry-After`` (whole seconds) of the 429 past :data:`MAX_NOTEBOOK_ANSWERS_PER_USER`."""

_UNDER_WAY: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
"""Per running extension (one per server): each user's executed-notebook answers under way."""


class NotebookAnswers:
    """A user's slot among their executed-notebook answers: ``with NotebookAnswers(sched, user):``
    holds one for the whole answer.

    Raises:
        BusyError: (429, ``Retry-After``) the user already has
            :data:`MAX_NOTEBOOK_ANSWERS_PER_USER` under way.
    """

    def __init__(self, sched: Any, user: str) -> None:
        self._counts = _UNDER_WAY.setdefault(sched, {})
        self._user = user

    def __enter__(self) -> NotebookAnswers:
        if self._counts.get(self._user, 0) >= MAX_NOTEBOOK_ANSWERS_PER_USER:
            raise BusyError(f"{self._user} already has {MAX_NOTEBOOK_ANSWERS_PER_USER} executed notebooks being "
                            "sent", field=None, hint="wait for those downloads to finish, then ask again",
                            details={"retry_after_s": NOTEBOOK_RETRY_AFTER_S})
        self._counts[self._user] = self._counts.get(self._user, 0) + 1
        return self

    def __exit__(self, *exc: object) -> None:
        left = self._counts.get(self._user, 1) - 1
        if left > 0:
            self._counts[self._user] = left
        else:
            self._counts.pop(self._user, None)


async def stream_notebook(handler: Any, notebook: ExecutedNotebook) -> None:
    """Write ``notebook``'s bytes to ``handler``'s answer piece by piece (chunked: no length is
    promised, so a file its owner shortens meanwhile just ends early) and finish it; the file is
    closed at the end, also when the client hung up (then nothing more is written or raised)."""
    pieces = notebook.chunks()
    loop = asyncio.get_running_loop()
    try:
        while (chunk := await loop.run_in_executor(None, next, pieces, b"")):
            handler.write(chunk)
            await handler.flush()
        handler.finish()
    except StreamClosedError:
        return
    finally:
        pieces.close()
        notebook.file.close()
