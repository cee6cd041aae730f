"""A wait rides out a restart of the server it asks (hubadmin23 A18).

An upgrade restarts the scheduler service (about 10 s): while it is down, JupyterHub's proxy
answers 503 (``service_unavailable``), a user's server 502 ``hub_service_unreachable``, a local
server refuses the connection or resets it. Whatever waits on the server — `jupyter-sched wait`,
`submit --wait`, `logs -f`; in a notebook `%gpu request`'s wait for its GPUs, `%schedule wait`,
`%schedule logs -f` — polls it; such an answer is not the end of what it waits for, so the poll is
sent again with backoff (1, 2, 4, 8, then every :data:`MAX_DELAY_S` seconds) for up to
:data:`RIDE_OUT_S` seconds of no answer, said once (:func:`restarting_notice`), and the wait goes on
where it was (a log from the last offset read: nothing shown twice, nothing lost). Past that the last
error is raised (the CLI exits ``EXIT_NO_SERVER``, 3, "no server answered", as ``wait --help`` says).

A name that does not resolve (``NO_SUCH_HOST_HINT``) or a URL that answers with something other
than the API (``NotSchedServerError``) is no restart: raised at once.

A submit rides out a restart too (hubadmin24 B18: nightly scripts failed at every upgrade), but only
while the failure proves the request never reached the scheduler (:func:`never_sent`: the hub
proxy's 503 for a service that is not running, a refused connection) — never after a timeout, a
reset or a 502/504, where the job may have been taken and a second send would submit it twice —
and for at most :data:`SUBMIT_RIDE_OUT_S` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from ..errors import SchedError

__all__ = ["CTRL_C", "MAX_DELAY_S", "RIDE_OUT_S", "SUBMIT_RIDE_OUT_S", "RideOut", "never_sent", "no_server_answered",
           "restarting_notice"]

RIDE_OUT_S = 600.0
"""Longest run of no answer (seconds) a wait keeps polling through before it gives up (exit 3)."""

SUBMIT_RIDE_OUT_S = 120.0
"""Longest run of no answer (seconds) a submit is retried through (only while :func:`never_sent`)."""

MAX_DELAY_S = 15.0
"""Longest pause (seconds) between two polls of a server that does not answer."""

DOWN_CODES = frozenset({"service_unavailable", "hub_service_unreachable", "server_unreachable"})
"""Error codes that mean no scheduler answered (a proxy or a user's server did, or nothing did)."""

CTRL_C = "Ctrl-C stops waiting, the job goes on"
"""How a terminal's wait is stopped, said in its notice."""

_clock: Callable[[], float] = time.monotonic
_sleep: Callable[[float], None] = time.sleep

T = TypeVar("T")


def no_server_answered(exc: BaseException) -> bool:
    """Whether ``exc`` says no scheduler answered — the hub proxy's 502/503/504, a user's server's
    ``hub_service_unreachable``, a refused, reset or timed-out connection — as opposed to the
    scheduler's own refusal. A host name that does not resolve and a URL that is not the API are not
    counted (nothing will come back there by waiting)."""
    from .sync import NO_SUCH_HOST_HINT, NotSchedServerError

    if not isinstance(exc, SchedError) or isinstance(exc, NotSchedServerError):
        return False
    return exc.code in DOWN_CODES and exc.hint != NO_SUCH_HOST_HINT


def never_sent(exc: BaseException) -> bool:
    """Whether ``exc`` proves the request never reached the scheduler, so that sending it again cannot
    do it twice: a proxy's 503 (JupyterHub's "Service Unavailable" for a service that is not running)
    or a refused connection. A timeout, a reset connection or a 502/504 do not prove it (the scheduler
    may have taken it)."""
    from ._wire import ServiceDownError
    from .sync import NotSchedServerError, ServerUnreachableError

    if isinstance(exc, ServiceDownError):
        return (exc.details or {}).get("status") == 503
    if isinstance(exc, ServerUnreachableError) and not isinstance(exc, NotSchedServerError):
        return "(connection refused)" in exc.message
    return False


def restarting_notice(error: SchedError, doing: str, stop: str = CTRL_C, *, limit_s: float = RIDE_OUT_S) -> str:
    """``the scheduler is not answering (HTTP 503 …) — it is likely restarting; still waiting for
    j-… (for up to 10 min; Ctrl-C stops waiting, the job goes on)``: said once per wait.

    Args:
        error: the last answer (its message says who did not answer, and how).
        doing: what goes on meanwhile, ``still waiting for j-…``, ``still following j-…'s log``.
        stop: how to stop it, and what stopping leaves."""
    return f"{error.message} — it is likely restarting; {doing} (for up to {limit_s / 60:.0f} min; {stop})"


class RideOut:
    """Polls ``fetch`` through a restart: :meth:`__call__` returns its answer, retrying while no
    server answers (:func:`no_server_answered`) for at most :data:`RIDE_OUT_S` seconds in a row
    (or until ``deadline``, a :func:`time.monotonic` value, whichever is first). One instance per
    wait: its notice is said once, whatever the number of outages.

    Args:
        say: prints the notice (a line on stderr, a notebook's output).
        doing: what goes on meanwhile (:func:`restarting_notice`), e.g. ``still waiting for j-7``.
        stop: how to stop it (:data:`CTRL_C`; a notebook's "interrupt the kernel …").
        before_notice: called just before the notice is said (to take a progress bar down).
        retry_if: which errors are retried (default :func:`no_server_answered`; a submit: :func:`never_sent`).
        limit_s: longest run of no answer retried, in seconds (default :data:`RIDE_OUT_S`).

    Raises (from :meth:`__call__`): the last error once the time is up; any other error at once.
    """

    def __init__(self, say: Callable[[str], None], *, doing: str, stop: str = CTRL_C,
                 before_notice: Callable[[], None] = lambda: None,
                 retry_if: Callable[[BaseException], bool] = no_server_answered, limit_s: float = RIDE_OUT_S) -> None:
        self.say = say
        self.retry_if = retry_if
        self.limit_s = limit_s
        self.doing = doing
        self.stop = stop
        self.before_notice = before_notice
        self.said = False

    def __call__(self, fetch: Callable[[], T], *, deadline: float | None = None) -> T:
        down_since: float | None = None
        delay = 1.0
        while True:
            try:
                return fetch()
            except SchedError as exc:
                if not self.retry_if(exc):
                    raise
                now = _clock()
                down_since = now if down_since is None else down_since
                end = down_since + self.limit_s if deadline is None else min(down_since + self.limit_s, deadline)
                if now >= end:
                    raise
                if not self.said:
                    self.before_notice()
                    self.say(restarting_notice(exc, self.doing, self.stop, limit_s=self.limit_s))
                    self.said = True
                _sleep(min(delay, max(end - now, 0.0)))
                delay = min(delay * 2, MAX_DELAY_S)
