"""Bulk reads stop when their client hangs up (verify27 V7: four abandoned ``telemetry/history``
calls kept the service computing for minutes after their clients gave up).

:class:`StopsOnHangUp` (a mixin of :class:`~.web.SchedHandler`) keeps one flag per request, set by
tornado's ``on_connection_close``; :meth:`StopsOnHangUp.bulk_run` gives the handler's service call
the bulk request threads (:meth:`~.app.SchedApp.bulk_off_loop`, bounded per user: red27 R5) and runs
it :func:`~jupyter_sched.abandoned.watched` by that flag, so the store's long readers stop at their
next :func:`~jupyter_sched.abandoned.check` once nobody waits for the answer.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from ..abandoned import watched

__all__ = ["StopsOnHangUp"]


class StopsOnHangUp:
    """Handler mixin (before tornado's ``RequestHandler``): see the module docstring."""

    @functools.cached_property
    def hangup(self) -> threading.Event:
        """Set once the client of this request hung up."""
        return threading.Event()

    def on_connection_close(self) -> None:
        """The client hung up: a bulk read of this request still running stops between its chunks."""
        self.hangup.set()
        super_close = getattr(super(), "on_connection_close", None)
        if super_close is not None:
            super_close()

    def pooled_run(self, fn: Callable[..., Any], *, bulk: bool) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """``(run, fn)`` for this request's service call: a bulk read's (:meth:`bulk_run`), else on the quick
        request threads within the caller's line on a shared service (:meth:`~.app.SchedApp.quick_off_loop`;
        red37 R3: another user's request finds a free thread), a GET not read once its client hung up there."""
        if bulk:  # one user's reads in flight are bounded (red27 R5), stop once the client hangs up (V7)
            return self.bulk_run(fn)
        handler: Any = self
        run = functools.partial(handler.sched.quick_off_loop, handler.own_name())  # positional: fn may take user=
        if handler.request.method == "GET" and getattr(handler.sched, "per_user_in_flight", False):
            fn = functools.partial(watched, self.hangup, fn)
        return run, fn

    def bulk_run(self, fn: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """``(run, fn)`` for a bulk read: ``run`` puts a call on the bulk request threads for this caller
        (:meth:`~.app.SchedApp.bulk_off_loop`); ``fn`` is ``fn`` stopping once the client hangs up."""
        handler: Any = self
        run = functools.partial(handler.sched.bulk_off_loop, user=handler.own_name())
        return run, functools.partial(watched, self.hangup, fn)
