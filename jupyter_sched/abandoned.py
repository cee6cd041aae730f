"""A bulk read whose client hung up stops between its chunks (verify27 V7: four abandoned
``telemetry/history`` calls kept the service computing for minutes after their clients gave up).

The web layer gives each bulk read a flag (a :class:`threading.Event`) that its handler sets when
the connection closes, and runs the service call :func:`watched` by it on a request thread; the
long readers (the store's usage-row decode, its telemetry rollups) call :func:`check` between
chunks, which raises :class:`AbandonedError` once the flag is set. Code run outside such a request
(the engine, the CLI, tests) has no flag: :func:`check` does nothing there. No I/O, no clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from .errors import BusyError

__all__ = ["CHECK_EVERY_ROWS", "AbandonedError", "check", "watched"]

R = TypeVar("R")

CHECK_EVERY_ROWS = 2000
"""Rows a reader decodes between two :func:`check` calls (~10-40 ms of work)."""

_FLAG: ContextVar[threading.Event | None] = ContextVar("jupyter_sched_abandoned", default=None)


class AbandonedError(BusyError):
    """The client of this request hung up: its work was stopped and nothing is answered (tornado
    discards a write to a closed connection). Never audited: nobody was refused."""

    code = "abandoned"
    audited = True


def check() -> None:
    """Raise :class:`AbandonedError` when the request this thread works for was abandoned (its
    client hung up); nothing outside a :func:`watched` call.

    Raises:
        AbandonedError: the flag of the running :func:`watched` call is set."""
    flag = _FLAG.get()
    if flag is not None and flag.is_set():
        raise AbandonedError("the client hung up: this read was stopped", hint="ask again when you want the answer")


def watched(flag: threading.Event, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``fn(*args, **kwargs)`` with :func:`check` answering ``flag`` (set: the client hung up) in
    it, on this thread; not started at all when ``flag`` is already set (it hung up while the read
    waited for a thread).

    Raises:
        AbandonedError: ``flag`` was set before or while ``fn`` ran (at one of its checks).
        Exception: whatever ``fn`` raised, unchanged."""
    token = _FLAG.set(flag)
    try:
        check()
        return fn(*args, **kwargs)
    finally:
        _FLAG.reset(token)
