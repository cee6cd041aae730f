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

A server that has begun to stop answers its own 503 ``stopping`` (:class:`~jupyter_sched.errors.StoppingError`:
jupyter_server stops its extensions before its HTTP server) for the second or so before its port closes: that
is the same restart, ridden out the same way (newuser36 N2: ``wait`` ended at once when its poll landed there).

A name that does not resolve (``NO_SUCH_HOST_HINT``) or a URL that answers with something other
than the API (``NotSchedServerError``) is no restart: raised at once.

A submit rides out a restart too (hubadmin24 B18: nightly scripts failed at every upgrade), but only
while the failure proves the request never reached the scheduler (:func:`never_sent`: the hub
proxy's 503 for a service that is not running, a refused connection, the scheduler's own ``stopping``, which
it answers only for a request it did not carry out) — never after a timeout, a
reset or a 502/504, where the job may have been taken and a second send would submit it twice —
and for at most :data:`SUBMIT_RIDE_OUT_S` seconds.

A submit whose answer was lost (a connection closed before an answer, a 502/504, a timeout: it may
have arrived) is not given up at once (newuser31 N8: "ask your hub admin" 16 s into a restart it had
just announced, and the job was not there): :func:`submit_through_restart` waits, within the same
limit, until the scheduler answers. Every send of one submit carries one key (``POST
jobs?idempotency_key=K``, :func:`new_key`): a scheduler that honours keys (``GET config``'s
``features.submit_keys``) answers a resend with the job the key made (200: :data:`ARRIVED`) or makes it
(201: :data:`SENT_AGAIN`) — exact, whatever ended the lost send, and never two jobs, even while the
first send is still on its way in. Only a scheduler without keys (an older version) is looked at the
old way: among the caller's newest jobs for the same name and command submitted since just before
the send, sent again only when it is not there and the connection ended with the server's process
(:func:`died_with_it`; after a timeout or a 502/504 it may still be taking it: not sent twice). Where it
still cannot tell, it raises :class:`MaybeSubmitted`, whose message says how to look before submitting again.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from ..errors import SchedError

__all__ = ["ARRIVED", "CTRL_C", "MAX_DELAY_S", "RIDE_OUT_S", "SENT_AGAIN", "STOPPING", "SUBMIT_RIDE_OUT_S", "MaybeSubmitted",
           "RideOut", "died_with_it", "never_sent", "new_key", "no_server_answered", "restarting_notice", "submit_through_restart"]

RIDE_OUT_S = 600.0
"""Longest run of no answer (seconds) a wait keeps polling through before it gives up (exit 3)."""

SUBMIT_RIDE_OUT_S = 120.0
"""Longest run of no answer (seconds) a submit is retried through (only while :func:`never_sent`)."""

MAX_DELAY_S = 15.0
"""Longest pause (seconds) between two polls of a server that does not answer."""

STOPPING = "stopping"
"""The code of a scheduler's answer while its server stops (:class:`~jupyter_sched.errors.StoppingError`, 503
with Retry-After): the request was not carried out, and the server is going down — a restart's first second."""

DOWN_CODES = frozenset({"service_unavailable", "hub_service_unreachable", "server_unreachable", STOPPING})
"""Error codes that mean no scheduler is there to answer (a proxy or a user's server did, or nothing did, or the
scheduler itself said it is stopping)."""

CTRL_C = "Ctrl-C stops waiting, the job goes on"
"""How a terminal's wait is stopped, said in its notice."""

ARRIVED = "arrived"
"""How :func:`submit_through_restart` got its job: the lost send had reached the scheduler."""

SENT_AGAIN = "sent again"
"""How :func:`submit_through_restart` got its job: the lost send had not arrived; sent again."""

CLOCK_SKEW_S = 30.0
"""Seconds before the send a job of the caller's may say it was submitted and still be this submit's
(the scheduler's clock may run behind this machine's)."""

LOOKED_AT = 50
"""The caller's newest jobs looked at for a submit whose answer was lost."""

_clock: Callable[[], float] = time.monotonic
_sleep: Callable[[float], None] = time.sleep

T = TypeVar("T")


def no_server_answered(exc: BaseException) -> bool:
    """Whether ``exc`` says no scheduler answered — the hub proxy's 502/503/504, a user's server's
    ``hub_service_unreachable``, a refused, reset or timed-out connection, a server's own ``stopping``
    (it is going down) — as opposed to the scheduler's refusal. A host name that does not resolve and a URL that is not the API are not
    counted (nothing will come back there by waiting)."""
    from .sync import NO_SUCH_HOST_HINT, NotSchedServerError

    if not isinstance(exc, SchedError) or isinstance(exc, NotSchedServerError):
        return False
    return exc.code in DOWN_CODES and exc.hint != NO_SUCH_HOST_HINT


def never_sent(exc: BaseException) -> bool:
    """Whether ``exc`` proves the request never reached the scheduler, so that sending it again cannot
    do it twice: a proxy's 503 (JupyterHub's "Service Unavailable" for a service that is not running),
    a refused connection, or the scheduler's own 503 ``stopping`` — answered before a request's work
    runs, never after (:mod:`jupyter_sched.extension.stopping`; ``POST leases?wait_ms`` answers the lease
    it made instead). A timeout, a reset connection or a 502/504 do not prove it (the scheduler
    may have taken it)."""
    from ._wire import ServiceDownError
    from .sync import NotSchedServerError, ServerUnreachableError

    if isinstance(exc, SchedError) and exc.code == STOPPING:
        return True
    if isinstance(exc, ServiceDownError):
        return (exc.details or {}).get("status") == 503
    if isinstance(exc, ServerUnreachableError) and not isinstance(exc, NotSchedServerError):
        return "(connection refused)" in exc.message
    return False


def died_with_it(exc: BaseException) -> bool:
    """Whether the connection of a lost answer ended with the server's process (closed before an answer,
    reset): the request either arrived before it died or is gone, nothing of it still on its way, so a
    look that does not find it proves it never arrived. A timeout or a proxy's 502/504 do not (the
    scheduler may still be taking it)."""
    from .sync import NotSchedServerError, ServerUnreachableError

    if not isinstance(exc, ServerUnreachableError) or isinstance(exc, NotSchedServerError):
        return False
    return "closed before an answer" in exc.message or "connection reset" in exc.message.lower()


def restarting_notice(error: SchedError, doing: str, stop: str = CTRL_C, *, limit_s: float = RIDE_OUT_S) -> str:
    """``the scheduler is not answering (HTTP 503 …) — it is likely restarting; still waiting for
    j-… (for up to 10 min; Ctrl-C stops waiting, the job goes on)``: said once per wait.

    Args:
        error: the last answer (its message says who did not answer, and how).
        doing: what goes on meanwhile, ``still waiting for j-…``, ``still following j-…'s log``.
        stop: how to stop it, and what stopping leaves."""
    # a stopping server's own words say "this request was not carried out": true, and no news to a wait
    said = "the server is stopping (shutdown)" if error.code == STOPPING else error.message
    return f"{said} — it is likely restarting; {doing} (for up to {limit_s / 60:.0f} min; {stop})"


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


class MaybeSubmitted(SchedError):
    """A submit's answer was lost and the scheduler did not answer again in time to look whether it
    had arrived: the message says so and how to look (``jupyter-sched jobs`` / ``%schedule jobs``)."""

    code = "submit_unknown"


def _same_submit(job: Mapping[str, Any], body: Mapping[str, Any], since: datetime) -> bool:
    """Whether ``job`` (one of the caller's, as ``GET jobs`` lists it) is ``body`` sent at or after ``since``:
    the same name, the same command/script/notebook where the listing carries them."""
    if job.get("name") != body.get("name"):
        return False
    for key in ("command", "script", "notebook"):
        if key in job and key in body and job[key] != body[key]:
            return False
    try:
        submitted = datetime.fromisoformat(str(job.get("submitted_at")).replace("Z", "+00:00"))
    except ValueError:
        return False
    if submitted.tzinfo is None:
        submitted = submitted.replace(tzinfo=timezone.utc)
    return submitted >= since


def new_key() -> str:
    """A new submit key (``POST jobs?idempotency_key=``): 32 hex digits, random."""
    return uuid.uuid4().hex


def submit_through_restart(submit: Callable[[str | None], tuple[dict[str, Any], bool]],
                           mine: Callable[[int], list[dict[str, Any]]], body: Mapping[str, Any],
                           say: Callable[[str], None], *, stop: str, look: str,
                           keys_honoured: Callable[[bool], bool] = lambda fresh: False) -> tuple[dict[str, Any], str]:
    """Submit ``body`` through a restart of the scheduler, never twice (module doc; newuser31 N8).

    Args:
        submit: sends the submit once with the key given, None: none (``client.submit_keyed(body, key)``);
            returns ``(job, replayed)`` — ``replayed``: the scheduler answered with the job that key made before.
        mine: the caller's newest jobs, at most the number given (``client.jobs(limit=n)``).
        keys_honoured: whether the scheduler honours submit keys (``client.submit_keys_honoured``): asked before
            the first send (a key only then), and ``fresh`` after a lost answer — it waits until the scheduler
            answers; a restarted one may be another version (no: looked for the old way).
        say: prints a notice (a line on stderr, a notebook's output).
        stop: how to stop while nothing is sent (``Ctrl-C stops, nothing is submitted``).
        look: how the user lists their jobs (``jupyter-sched jobs``), for :class:`MaybeSubmitted`.

    Returns: ``(job, how)``; ``how`` is ``""`` (taken at the first answer, or sent again while it surely
    never arrived), :data:`ARRIVED` or :data:`SENT_AGAIN`.

    Raises: the scheduler's refusal as it is; the last "no answer" error once :data:`SUBMIT_RIDE_OUT_S`
    seconds are up while nothing was sent; :class:`MaybeSubmitted` when a lost send could not be looked for.
    """
    deadline = _clock() + SUBMIT_RIDE_OUT_S
    # the job as the user knows it, never a bare name that reads as a file ("whether train is there"; newuser36 n4)
    name = f'your job "{body["name"]}"' if body.get("name") else "your job"
    sending = RideOut(say, doing="the submit was not received; sending it again", stop=stop, retry_if=never_sent,
                      limit_s=SUBMIT_RIDE_OUT_S)
    looking = RideOut(say, doing="", stop="Ctrl-C stops looking", limit_s=SUBMIT_RIDE_OUT_S)
    how = ""
    # every send of this submit carries one key, where the scheduler honours keys: a resend is answered with the
    # job it made (s32; an older scheduler refuses the argument, so none is sent to it)
    key = new_key() if keys_honoured(False) else None
    keyed: bool | None = None if key is not None else False  # still honoured after the restart: asked once
    while True:
        # the scheduler's clock is read as this machine's, less a margin (CLOCK_SKEW_S)
        since = datetime.now(timezone.utc) - timedelta(seconds=CLOCK_SKEW_S)
        try:
            job, replayed = sending(lambda: submit(key), deadline=deadline)
            return job, ARRIVED if replayed else how
        except SchedError as exc:
            if never_sent(exc) or not no_server_answered(exc):
                raise  # a refusal, or the time is up while nothing was received: nothing is submitted
            lost = exc
        # after "the submit was not received; sending it again", a send that then lost its answer is said as what
        # changed, not as a second account of the same submit (newuser36 n4: "not received" then "may have reached")
        looking.doing = (f"{'sending it again got' if sending.said else 'the submit got'} no answer, so "
                         f"{'this time ' if sending.said else ''}it may have reached the scheduler: once it answers, "
                         f"looking whether {name} is there, to send it again only if not")
        if keyed is None:
            try:
                keyed = looking(lambda: keys_honoured(True), deadline=deadline)  # waits until the scheduler answers
            except SchedError as exc:
                if no_server_answered(exc):  # still down when the time was up: cannot tell
                    raise MaybeSubmitted(
                        f"{lost.message}; the submit may or may not have reached the scheduler",
                        hint=f"`{look}` shows whether {name} is there once the service answers; submit again only "
                             "if not") from exc
                keyed = False  # the question refused: an older scheduler; looked for the old way
        if keyed:  # the same key again: the job it made (ARRIVED), or made now (SENT_AGAIN) — exact, never two
            how = SENT_AGAIN
            continue
        try:
            jobs = looking(lambda: mine(LOOKED_AT), deadline=deadline)
        except SchedError as exc:  # still down when the time was up, or the look itself refused: cannot tell
            raise MaybeSubmitted(
                f"{lost.message}; the submit may or may not have reached the scheduler",
                hint=f"`{look}` shows whether {name} is there once the service answers; submit again only if not",
            ) from exc
        found = [job for job in jobs if _same_submit(job, body, since)]
        if found:
            return found[0], ARRIVED
        if not died_with_it(lost):  # a timeout or a proxy's 502/504: it may still be on its way in; not sent twice
            raise MaybeSubmitted(
                f"{lost.message}; the submit may or may not have reached the scheduler (it may still be taking it)",
                hint=f"`{look}` shows whether {name} is there in a moment; submit again only if not")
        how = SENT_AGAIN
