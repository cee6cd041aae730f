"""Hub mode, local executor: whether a hub user's jobs can run here, for ``GET me`` (newuser38 n16).

A hub user with no OS account to run as saw ``jupyter-sched status`` all green; only ``submit`` refused,
with an admin's fix addressed to them. ``GET me`` now carries ``jobs_cannot_run`` — the run-as check's
sentence and whom to ask — and ``status`` shows it as a ``jobs`` line. The account database is read off
the event loop and each answer kept :data:`KEPT_S` seconds (fifty panels polling ``GET me`` each second
read it once), so an account an admin creates is seen within that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..errors import OverloadedError, SchedError
from ..executors.runas import AccountMapping

__all__ = ["KEPT_S", "AccountSaid", "cannot_run_text"]

KEPT_S = 10.0
"""Seconds one user's answer is kept."""

_KEPT_USERS = 4096
"""Users whose answers are kept at most (the oldest are dropped past it)."""


def cannot_run_text(err: SchedError) -> str:
    """``cannot run — hub user 'n38d' has no OS account 'n38d' on this host to run their jobs as: ask an
    admin to create the account 'n38d' (useradd), …`` — the run-as check's refusal as a status line."""
    return f"cannot run — {err.message}" + (f": {err.hint}" if err.hint else "")


class AccountSaid:
    """``said(user)``: "" when ``user``'s jobs may run as their account, else :func:`cannot_run_text`
    (the account database unreadable, e.g. out of file descriptors: "" — submit says so itself)."""

    def __init__(self, mapping: AccountMapping, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.mapping = mapping
        self.clock = clock
        self._kept: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def kept(self, user: str) -> str | None:
        """The answer for ``user`` read less than :data:`KEPT_S` ago, or None (then call this, off the loop)."""
        entry = self._kept.get(user)
        if entry is None or self.clock() - entry[0] >= KEPT_S:
            return None
        return entry[1]

    def __call__(self, user: str) -> str:
        try:
            self.mapping.resolve(user)
            said = ""
        except OverloadedError:
            said = ""
        except SchedError as err:
            said = cannot_run_text(err)
        with self._lock:
            if len(self._kept) >= _KEPT_USERS:
                self._kept.pop(next(iter(self._kept)))
            self._kept[user] = (self.clock(), said)
        return said
