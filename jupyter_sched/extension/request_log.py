"""Jupyter's request log without the lines nobody will see (issue 17), and log lines that never command a terminal.

jupyter_server logs every answer below 300 (and 304) at debug level, and its logger is set to
DEBUG whatever ``--log-level`` says (traitlets filters in the handlers), so each polled request
built and formatted a log record that every handler then dropped: about 6 % of the server's GIL
time under ``status_bench``'s fifty pollers. :func:`logged_quietly` records only the Prometheus
request-duration sample of such an answer, as Jupyter's ``log_request`` does; every other answer —
an error, a refusal, a redirect, or any answer while debug logging is on, or with a
``log_function`` other than Jupyter's own — is left to tornado's ``log_request``.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from jupyter_server.log import log_request as jupyter_log_request
from jupyter_server.prometheus.log_functions import prometheus_log_method
from tornado import web

from ..errors import bounded
from ..textsafe import escaped_controls

__all__ = ["LOG_LINE_MAX_CHARS", "REPEATS_EVERY_S", "Repeats", "escape_log_controls", "is_jupyter_log_request", "logged_quietly", "redacted_url",
           "shows_debug"]


def logged_quietly(handler: web.RequestHandler, log: logging.Logger) -> bool:
    """True when ``handler``'s answer was a success that no log handler would show (or a 503 for an
    unreachable database or a stopping server, a 507 for a full disk, already logged in one line), and only its
    Prometheus sample was recorded;
    False: the caller logs it the usual way (tornado's ``_log``)."""
    status = handler.get_status()
    log_function = handler.settings.get("log_function")
    # a 503 for an unreachable database or a stopping server: its one line is written (with its reference), the
    # outage is said once by the store; Jupyter's log would add the request's headers at ERROR, ~20 lines an
    # answer (hubadmin25 B6; newuser26 n11: every restart's in-flight progress report)
    outage = status in (503, 507) and getattr(handler, "_outage", False) is True
    if isinstance(log_function, partial) and is_jupyter_log_request(log_function) \
            and (outage or ((status < 300 or status == 304) and not shows_debug(log))):
        if log_function.keywords.get("record_prometheus_metrics", True):
            prometheus_log_method(handler)  # type: ignore[no-untyped-call]
        return True
    return False


def is_jupyter_log_request(log_function: Any) -> bool:
    """True when ``log_function`` is jupyter_server's own ``log_request`` as the server sets it."""
    return (isinstance(log_function, partial) and log_function.func is jupyter_log_request and not log_function.args
            and set(log_function.keywords) <= {"record_prometheus_metrics"})


def shows_debug(logger: logging.Logger) -> bool:
    """True when a debug record of ``logger`` would reach a handler that emits it (the logger
    is enabled for DEBUG and a handler on its way up, up to where propagation stops, has level
    DEBUG or NOTSET). With no handler at all, logging's last resort shows warnings only."""
    if not logger.isEnabledFor(logging.DEBUG):
        return False
    current: logging.Logger | None = logger
    while current is not None:
        if any(handler.level <= logging.DEBUG for handler in current.handlers):
            return True
        if not current.propagate:
            return False
        current = current.parent
    return False


LOG_LINE_MAX_CHARS = 4000
"""Most characters of one record's message in the server's log (its traceback, if any, is kept
whole): a client's text a line quotes — a refusal, a path, a header — cannot make the log grow by
more than this a request (red team 19, R1: 58 KB of log per refused 64 KiB ``node_selector``)."""


REPEATS_EVERY_S = 60.0
"""A line of one :data:`_REPEATED` kind is written at most once per this many seconds (the rest counted)."""

REPEATS_KEYS_MAX = 1024
"""Kinds (with their status or path) :class:`Repeats` remembers before it forgets those whose minute is over."""

_NO_USER = r"\((?:job-token)?@[^)]*\) "
"""Jupyter's access line's ``(user@ip)`` of a request that named nobody (or only a job token that did not verify)."""

_REPEATED: tuple[tuple[int, str, re.Pattern[str]], ...] = (
    (logging.WARNING, "more requests refused 403 with a token or cookie the hub names nobody by",
     re.compile(r"(403) [A-Z]+ \S+ \(@[^)]*\) ")),  # Jupyter's access line of a request with no user
    (logging.WARNING, "more requests refused {0} that named nobody",
     re.compile(r"(4\d\d) [A-Z]+ \S+ " + _NO_USER)),  # any other 4xx access line of such a request
    (logging.WARNING, "more", re.compile(r"No Hub user identified for request$")),  # jupyterhub's HubAuth
    (logging.WARNING, "more requests blocked for a Host header this server does not answer to",
     re.compile(r"Blocking request with non-local 'Host' ")),  # jupyter_server's host check, before any handler
    (logging.WARNING, "more requests refused {0} before a handler named anyone",
     re.compile(r"(4\d\d) [A-Z]+ \S+ \([^)@]*\): ")),  # tornado's line of an HTTPError (xsrf, 404 of no route)
    (logging.INFO, "more requests refused 401 (a credential that names nobody)",
     re.compile(r"jupyter_sched [A-Z]+ \S+ -> 401: ")),  # our own line of a refused credential (a made-up job token)
    (logging.INFO, "more requests refused {0} that named nobody",
     re.compile(r"jupyter_sched [A-Z]+ \S+ -> (4\d\d) \(nobody named\): ")),  # our own refusal line (web.log_exception)
    (logging.WARNING, "more cross-origin requests blocked",
     re.compile(r"Blocking Cross Origin API request for ")),  # jupyter_server's check_origin (verify39 V3)
    (logging.INFO, "more malformed HTTP messages", re.compile(r"Malformed HTTP message from ")),  # tornado's parser
    (logging.INFO, "more new xsrf cookies set", re.compile(r"Setting new xsrf cookie for ")),  # each cookie-less request
    (logging.INFO, "more requests redirected {0} that named nobody",
     re.compile(r"(30\d) [A-Z]+ \S+ " + _NO_USER)),  # to the hub's login: files/…, logout, api/spec.yaml (red40 R3)
    (logging.WARNING, "more oauth callbacks whose state matched no cookie",
     re.compile(r"oauth state argument ")),  # jupyterhub's HubOAuthCallbackHandler quotes the caller's state (red40 R2)
    (logging.WARNING, "more errors written by jupyter_server's own handlers",
     re.compile(r"wrote error: ")),  # its APIHandler.write_error, once per refused api/status, api/me (red40 R2)
    (logging.WARNING, "more job tokens refused that verify under no secret here",
     re.compile(r"jupyter_sched: [A-Z]{1,10} \S+ refused: a job token that does not verify ")),  # once per claimed job
    # before (services.job_tokens): a forger varying the job id it names wrote a line each (red40 R2b)
    (logging.ERROR, "more requests answered {0} that named nobody",
     re.compile(r"(5\d\d) [A-Z]+ \S+ " + _NO_USER)),  # Jupyter's access line of a 5xx, and its headers' block:
    (logging.ERROR, "more header blocks of 5xx answers", re.compile(r'\{\s+"Host": ')),
    (logging.INFO, "more requests answered 503 while the scheduler is off (its start's ERROR line says why)",
     re.compile(r"jupyter_sched [A-Z]+ \S+ -> 503 \[reference \w+\]: the scheduler is not running: ")),  # each poll
    (logging.WARNING, "more requests answered 507 while the store's disk is full",
     re.compile(r"jupyter_sched [A-Z]+ \S+ -> 507 \[reference \w+\]: ")),  # each write; the store says it once
    (logging.ERROR, "more uncaught exceptions of {0}",
     re.compile(r"Uncaught exception ([A-Z]{1,10} /[^ ?]{0,120})")),  # tornado's, of a handler not ours (red40 R3:
    # jupyterhub's logout where the service has no oauth client id — 25 lines a request, no account needed)
)
"""The lines a flood of requests that name nobody writes one per request (red29: made-up tokens, two per 403, ~1 MB of
log a minute; red39 R7: a foreign Host header, unknown paths, malformed request lines, missing ``_xsrf``, made-up job
tokens — up to 4.5 MB a minute from any local process, no account needed; verify39 V3, V4: a foreign ``Origin``,
a control character in the path; red40 R2, R3: an oauth callback quoting the caller's 30,000-character state, a
``wrote error`` line per refused ``api/status``, redirects to the login): ``(level, what the count says, pattern)``.
A pattern's first group, when it has one (the status), splits its kind; ``{0}`` in the words is that group."""


class Repeats(logging.Filter):
    """Lets the first line of each :data:`_REPEATED` kind (and status) through per :data:`REPEATS_EVERY_S` and counts
    the others; the next one let through says how many were not written (red29, red39 R7: a flood of requests that name
    nobody wrote one or two lines per request; the front door's summary line a minute counts them already).
    ``monotonic``: the clock (s)."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._monotonic = monotonic
        self._since: dict[tuple[int, str], float] = {}
        self._held: dict[tuple[int, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno not in (logging.ERROR, logging.WARNING, logging.INFO):
            return True
        message = record.getMessage()
        for kind, (level, what, pattern) in enumerate(_REPEATED):
            match = pattern.match(message) if record.levelno == level else None
            if match is None:
                continue
            status = match.group(1) if pattern.groups else ""
            key = (kind, status)  # a status is three digits, a path at most 120 characters; the kinds a fixed list
            now = self._monotonic()
            if len(self._since) >= REPEATS_KEYS_MAX:  # paths are the caller's: keep what a minute can hold
                self._forget(now)
            since = self._since.get(key)
            if since is not None and now - since < REPEATS_EVERY_S:
                self._held[key] = self._held.get(key, 0) + 1
                return False
            self._since[key] = now
            held = self._held.pop(key, 0)
            if held:
                record.msg, record.args = (f"{message} (and {held:,} {what.format(status)} in the "
                                           f"{now - (since or now):.0f} s before, not written one by one)"), None
            return True
        return True


    def _forget(self, now: float) -> None:
        """Drop the kinds whose minute is over and that hold no count (their next line is written anyway)."""
        for key, since in list(self._since.items()):
            if now - since >= REPEATS_EVERY_S and not self._held.get(key):
                del self._since[key]


class _EscapedControls(logging.Filter):
    """Rewrites a record whose message holds a control character (:func:`escaped_controls`) or is
    longer than :data:`LOG_LINE_MAX_CHARS` (cut, the cut said); drops the repeats :class:`Repeats` holds back."""

    def __init__(self) -> None:
        super().__init__()
        self._repeats = Repeats()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._repeats.filter(record):
            return False
        message = record.getMessage()
        safe = bounded(escaped_controls(message), LOG_LINE_MAX_CHARS)
        if safe is not message:
            record.msg, record.args = safe, None
        return True


def escape_log_controls(log: logging.Logger) -> None:
    """Every handler of ``log`` (the server's log, which tornado's loggers reach too) writes a
    control character a client sent — a node_selector value, a path, a header — as its escape,
    never raw (red team 15, R3: an admin's ``tail -f`` of the service log ran a user's ESC
    sequences). Newlines stay: Jupyter's formatter indents the lines after the first. A record's
    message longer than :data:`LOG_LINE_MAX_CHARS` is cut (red team 19, R1). The lines a flood of refused
    credentials writes per request are written once a minute with their count (:class:`Repeats`; red29)."""
    for handler in log.handlers:
        if not any(isinstance(f, _EscapedControls) for f in handler.filters):
            handler.addFilter(_EscapedControls())


def redacted_url(url: str) -> str:
    """``url`` (a database URL) with its password hidden, for logging."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}"
    return url
