"""A 429 the server says to retry after a few seconds is retried, a bounded number of times.

The server answers 429 ``busy`` with a ``Retry-After`` header (whole seconds, RFC 9110 §10.2.3)
when a user submits faster than ``max_submits_per_user_minute`` allows: it did nothing with the
request, so sending it again after that wait is safe for every method. Both clients (and so the
CLI and ``%gpu``) wait and resend it at most :data:`MAX_BUSY_RETRIES` times, saying so each time
(``server busy: retrying in 3 s (1/3)``, :func:`retry_notice`), and never when the wait is longer
than :data:`MAX_BUSY_WAIT_S` or not given: a cap on pending or unfinished work is a 429 without
``Retry-After`` (it lasts until some work ends), and is raised at once. A 429 still refused after the
retries is raised as the server's error, its message saying how often it was tried and its hint
when to try again (:func:`gave_up`) — one line, never a loop.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import SchedError

__all__ = ["MAX_BUSY_RETRIES", "MAX_BUSY_WAIT_S", "busy_wait_s", "gave_up", "retry_notice"]

MAX_BUSY_RETRIES = 3
"""Resends of one request answered 429 with a ``Retry-After`` (then its error is raised)."""

MAX_BUSY_WAIT_S = 60.0
"""Longest ``Retry-After`` (seconds) waited out; a longer one is raised at once with its time."""


def busy_wait_s(status: int, retry_after: str | None) -> float | None:
    """Seconds to wait before resending a request answered ``status`` with the ``Retry-After``
    header ``retry_after`` (delay-seconds; an HTTP date is not sent by this server and is not
    waited for), or None when it is not to be resent (not a 429, no usable header, longer than
    :data:`MAX_BUSY_WAIT_S`)."""
    if status != 429 or not retry_after:
        return None
    text = retry_after.strip()
    if not text.isdigit():
        return None
    wait = float(int(text))
    return wait if wait <= MAX_BUSY_WAIT_S else None


def retry_notice(wait_s: float, attempt: int) -> str:
    """``server busy: retrying in 3 s (1/3)``: what a client says before its ``attempt``-th resend."""
    return f"server busy: retrying in {math.ceil(wait_s):d} s ({attempt}/{MAX_BUSY_RETRIES})"


def gave_up(error: SchedError, retry_after: str | None, *, retries: int, now: datetime | None = None) -> SchedError:
    """``error`` (the last 429's) with how often it was sent and when to try again: ``… (refused 4
    times over 9 s of retries); hint: retry after 19:42:07 UTC (in 3 s)``. Unchanged when it was
    not retried and the server gave no wait (a pending cap: its hint says what to do)."""
    wait = None
    if retry_after and retry_after.strip().isdigit():
        wait = int(retry_after.strip())
    if retries == 0 and wait is None:
        return error
    message = error.message
    if retries:
        message = f"{message} (still refused after {retries} retr{'y' if retries == 1 else 'ies'})"
    hint = error.hint
    if wait is not None:
        from ..model.units import clock_text  # the reader's zone, as every time the CLI and magics say

        base = now or datetime.now(timezone.utc)
        hint = f"retry after {clock_text(base + timedelta(seconds=wait), base, seconds=True)} (in {wait} s)"
    details: Mapping[str, Any] = error.details
    return type(error)(message, field=error.field, hint=hint, details={**details, "retries": retries})
