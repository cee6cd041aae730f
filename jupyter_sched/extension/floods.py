"""Floods on the audit log: busy answers (429) and replaced event streams, one row per user a minute.

A 429 (``BusyError``: too many dry runs or waits in flight), a 413 body of too many JSON items
(:mod:`.body_bounds`, red38 R1) and the close of a user's oldest event
stream when they open more than ``MAX_STREAMS_PER_USER`` are no refusals of a rule, so they were
never audited — and an admin could not see that a user hammers the service (red team 15, R10:
3,000 streams opened, nothing on the log). Each is now an audit record of action ``refused``
(``code`` ``busy`` or ``streams_replaced``), at most **one per user per minute** (per server): the
rest of that minute are counted and said in one record when the next one of that user (or anyone)
comes after the minute ended — as every refusal is bounded
(:meth:`~jupyter_sched.admission.Admission.record_refusal`), with one place a minute here since a
flood is one fact, not sixty.
"""

from __future__ import annotations

import logging
from typing import Any

from ..admission import REFUSED
from ..services.callers import RefusalWindows

__all__ = ["FLOODS_SETTING", "audit_flood", "stream_replacements"]

log = logging.getLogger(__name__)

FLOODS_SETTING = "jupyter_sched_floods"
"""Key of the server's per-user flood minutes in the tornado settings (one per server)."""


_STATUS = {"busy": 429, "too_large": 413}
"""The HTTP status each flood's requests were answered with (a replaced stream has none)."""


def _windows(handler: Any) -> RefusalWindows:
    windows: RefusalWindows = handler.settings.setdefault(FLOODS_SETTING, RefusalWindows(per_minute=1))
    return windows


def audit_flood(handler: Any, user: str, *, code: str, request: str, message: str) -> None:
    """Audit ``user``'s flood of ``code`` (``busy``, ``streams_replaced``, ``too_large``: red38 R1), at most once a minute;
    written off the loop. Nothing on a server without an audit log (a hub user's server)."""
    sched = handler.settings.get("jupyter_sched")
    store = getattr(getattr(sched, "services", None), "store", None)
    if store is None or not hasattr(store, "add_event") or not user:
        return
    allowed, ended = _windows(handler).take_place(user)
    rows = [(who, f"{counted} more busy answer(s), replaced event stream(s) or too large bodies of {who} in one "
                  "minute were counted, not recorded one by one (at most one a minute is)",
             {"code": "suppressed", "suppressed": counted})
            for who, counted, _ in ended]
    if allowed:
        rows.append((user, message[:500], {"code": code, "request": request[:200]}))
    if not rows:
        return

    def write() -> None:
        for who, text, details in rows:
            try:
                store.add_event(actor=who, action=REFUSED, user=who, job_id=None, message=text,
                                details={"field": "body" if code == "too_large" else None,
                                       "status": _STATUS.get(code), **details})
            except Exception:  # the flood goes on whether or not the log takes it
                log.warning("jupyter_sched: could not audit a flood of %s", who, exc_info=True)

    off_loop = getattr(sched, "off_loop", None)
    if off_loop is None:
        write()
        return
    from .background import fire_and_forget

    fire_and_forget(off_loop(write), what="an audit record of a flood")


def stream_replacements(handler: Any, user: str) -> Any:
    """The ``replaced(count)`` hook of a user's new event stream (:meth:`.events.EventHub.subscribe`):
    audits that opening it closed ``count`` older ones."""
    def replaced(count: int) -> None:
        from .events import MAX_STREAMS_PER_USER

        audit_flood(handler, user, code="streams_replaced", request="GET events",
                    message=f"{user} opened more than {MAX_STREAMS_PER_USER} event streams: {count} older one(s) "
                            "closed (replaced)")

    return replaced
