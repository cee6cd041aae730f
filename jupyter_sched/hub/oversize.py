"""The audit row of a body refused at the central service's front door for its size (red team 19, R5)
or for its chunking (red team 21, R4: chunks too small for their number).

:class:`~.front_door.GuardedHTTPServer` answers a ``Content-Length`` over ``c.FrontDoor.max_body_bytes``
413 from the head alone (a chunked body when it passes the limit: red team 20, R1), before any handler runs or the caller is known (red team 17, R11), so the
refusal was only a count in the front door's summary line. Here the head's ``Authorization: token …``
is asked of the hub (``HubAuth.user_for_token``, cached as every request's token) and, for a hub
user, the refusal is written like any other (:meth:`~jupyter_sched.extension.app.SchedApp.audit_refusal`,
under the per-user refusal bound of red team 18, R1). A head with no token, a token the hub does not
know, or a service's token stays a count. A job's progress token (``jsjob1.…``) is never sent to the
hub — it is no hub token, and no other check sends it there (:mod:`jupyter_sched.extension.job_tokens`):
it stays a count too. Best effort: the 413 is answered whatever happens here.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from tornado import httputil

from ..errors import ValidationError
from ..services.job_tokens import is_job_token
from .chunking import CHUNKING_HINT, chunking_message
from .front_door import too_large_message

__all__ = ["audit_body_cut", "audit_chunking", "audit_over_share", "audit_too_large", "sched_app", "token_of"]

log = logging.getLogger("jupyter_sched.front_door")

_AUTH_HEADER = re.compile(r"\s*(?:token|bearer)\s+(\S{1,512})\s*", re.IGNORECASE)


def token_of(headers: httputil.HTTPHeaders) -> str | None:
    """The hub token an ``Authorization: token …`` (or ``Bearer …``) header carries, else None."""
    match = _AUTH_HEADER.fullmatch(headers.get("Authorization", ""))
    return match.group(1) if match else None


async def audit_too_large(serverapp: Any, headers: httputil.HTTPHeaders, target: str, length: int | None,
                          limit: int) -> None:
    """Audit the 413 of a ``length``-byte body (None: sent chunked, refused when it passed ``limit``
    bytes; red team 20, R1) sent to ``target`` (``POST /services/…/api/sched/jobs``, shortened) as a
    refusal of the hub user whose token the head carries; nothing when it names none. Never raises."""
    err = ValidationError(too_large_message(length, limit), field="body",
                          hint="send a smaller body; an admin sets c.FrontDoor.max_body_bytes")
    err.code = "too_large"
    await _audit(serverapp, headers, target, err)


async def audit_chunking(serverapp: Any, headers: httputil.HTTPHeaders, target: str, pieces: int, size: int,
                         min_chunk_bytes: int) -> None:
    """Audit the 400 of a chunked body refused after ``pieces`` chunks of ``size`` bytes in all, below
    ``min_chunk_bytes`` a chunk on average (red team 21, R4), as :func:`audit_too_large` does. Never raises."""
    await _audit(serverapp, headers, target, ValidationError(chunking_message(pieces, size, min_chunk_bytes),
                                                             field="body", hint=CHUNKING_HINT))


def audit_over_share(serverapp: Any, user: str, target: str, message: str, refused: int) -> None:
    """Audit hub ``user``'s request to ``target`` refused 429 over their share of a pressed connection
    ceiling (verify 23, V5; ``refused``: how many of theirs were since the last such row, this one
    included — the front door asks at most once a minute per user). Never raises."""
    from ..errors import BusyError
    from .fair_share import SHARE_SETTING

    sched = sched_app(serverapp)
    if sched is None:
        return
    more = f" ({refused} such requests since the last record)" if refused > 1 else ""
    err = BusyError(message + more, field="connections", hint=f"an admin sets {SHARE_SETTING}",
                    details={"refused": refused, "setting": SHARE_SETTING})
    try:
        sched.audit_refusal(sched.services.caller(user, admin=False), err, request=target[:300])
    except Exception:  # the 429 went out whatever happens here
        log.warning("jupyter_sched: could not audit %s refused over their share of connections", user, exc_info=True)


def audit_body_cut(serverapp: Any, user: str, target: str, code: str, message: str, cut: int) -> None:
    """Audit hub ``user``'s unfinished body to ``target`` cut at the front door (red team 39, R6): ``code``
    ``slow_body`` (it came too slowly for ``body_timeout_s``) or ``busy`` (the user held the most of the bodies'
    budget and another caller's body needed room); ``cut``: how many of theirs were since the last such row, this
    one included (at most one row a minute per user). Never raises."""
    from ..errors import BusyError
    from .body_budget import HELD_SETTING, TIMEOUT_SETTING

    sched = sched_app(serverapp)
    if sched is None:
        return
    more = f" ({cut} bodies cut since the last record)" if cut > 1 else ""
    setting = TIMEOUT_SETTING if code == "slow_body" else HELD_SETTING
    err: ValidationError | BusyError
    if code == "slow_body":
        err = ValidationError(message + more, field="body", hint=f"send the whole body at once; an admin sets {setting}",
                              details={"cut": cut, "setting": setting})
        err.code = code
    else:
        err = BusyError(message + more, field="body", hint=f"an admin sets {setting}",
                        details={"cut": cut, "setting": setting})
    try:
        sched.audit_refusal(sched.services.caller(user, admin=False), err, request=target[:300])
    except Exception:  # the answer went out whatever happens here
        log.warning("jupyter_sched: could not audit %s whose request bodies were cut", user, exc_info=True)


def sched_app(serverapp: Any) -> Any:
    """The scheduler's extension app (hub.central's HubSchedApp, or SchedApp): the one with services to audit to."""
    apps = getattr(getattr(serverapp, "extension_manager", None), "extension_apps", {})
    return next((app for group in apps.values() for app in group
                 if getattr(app, "services", None) is not None and hasattr(app, "audit_refusal")), None)


async def _audit(serverapp: Any, headers: httputil.HTTPHeaders, target: str, err: ValidationError) -> None:
    """Audit ``err`` as a refusal of the hub user whose token ``headers`` carry (nothing when none)."""
    token = token_of(headers)
    auth = getattr(getattr(serverapp, "identity_provider", None), "hub_auth", None)
    if token is None or auth is None or is_job_token(token):
        return
    try:
        model = await auth.user_for_token(token, use_cache=True, sync=False)
    except Exception:  # the hub did not answer: the refusal stays a count
        log.info("jupyter_sched: could not ask the hub whose refused request body it was", exc_info=True)
        return
    if not isinstance(model, dict) or model.get("kind", "user") != "user" or not model.get("name"):
        return
    sched = sched_app(serverapp)
    if sched is None:
        log.warning("jupyter_sched: no scheduler extension to audit a refused request body to")
        return
    sched.audit_refusal(sched.services.caller(str(model["name"]), admin=False), err, request=target[:300])
