"""Whether the hub accepts the service's own API token: checked at start, watched while it runs.

Hub admin 22's probe: a ``jupyter-sched serve`` started with a wrong ``JUPYTERHUB_API_TOKEN`` served
~45 s without a word. The hub checks each *user's* token with that user's token, so reads worked;
everything the service asks the hub with its own token failed — the group lookup of every submit and
lease (503 "could not ask the hub for ann's groups (HTTPClientError); retry in 5 seconds", forever),
the hub poll, activity reports, offboarding — and the only start-up line about the hub blamed a
missing ``read:hub`` scope.

JupyterHub answers ``GET {hub api}/user`` with the token's owner — ``{"kind": "service", "name",
"scopes"}`` for a service's token — and 403 to a token it does not know. So:

- **at start** (:func:`check_token_blocking`, ``serve``): 401/403 → the service does not start (exit 2,
  one line naming ``JUPYTERHUB_API_TOKEN``, the service's ``api_token`` in ``jupyterhub_config.py`` and
  the fix); no answer (the hub may start after its service) → it starts and says the token was not
  checked; accepted → a WARNING if the token is not this service's or lacks scopes the service needs;
- **while it runs** (:class:`TokenWatch`): checked at every hub poll, and at once when a hub call with the
  service's token is answered 401/403; the hub refusing it is one ERROR (again hourly while it lasts, and
  an INFO line when the hub accepts it again); users' requests that need the hub get a 503 that names
  the admin's fix instead of "retry in 5 seconds" (:mod:`jupyter_sched.wording.service_token`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..wording.service_token import missing_scopes_line, token_refused_line, token_unchecked_line, token_user_line
from .hubapi import HubClient, HubLookupError

__all__ = ["NEEDED_SCOPES", "TokenCheck", "TokenWatch", "check_token_blocking", "start_up_lines"]

log = logging.getLogger(__name__)

NEEDED_SCOPES = ("read:users", "list:users", "read:groups", "read:servers", "users:activity")
"""Scopes the service's token needs (its role in server/jupyterhub_config.py; ``read:hub`` is optional:
the spawner line says what it gives)."""

_REFUSED = frozenset({401, 403})
_RECHECK_S = 5.0
"""Seconds a check's answer is reused by the next check that is not forced (a burst of refused lookups
asks the hub once)."""
_REPEAT_S = 3600.0
"""Seconds between two ERROR lines while the hub keeps refusing the token."""


@dataclass(frozen=True)
class TokenCheck:
    """The hub's answer about the service's token.

    Attributes:
        accepted: True (the hub knows it), False (401/403), None (no usable answer: unknown).
        status: the HTTP status (0: no answer).
        model: the token owner's model when accepted (``kind``, ``name``, ``scopes``).
        why: what happened when unknown (for the log).
    """

    accepted: bool | None
    status: int = 0
    model: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""


def check_token_blocking(api_url: str, token: str, *, timeout_s: float = 10.0) -> TokenCheck:
    """Ask the hub at ``api_url`` (``$JUPYTERHUB_API_URL``) who ``token`` is (``GET user``), before
    the service starts; never raises."""
    import httpx

    from .hub_peer import hub_sync_client

    try:
        with hub_sync_client(timeout_s) as hub:  # a loopback squatter gets no token (red31 R4): "no answer"
            answer = hub.get(api_url.rstrip("/") + "/user", headers={"Authorization": f"token {token}"})
    except httpx.HTTPError as exc:
        return TokenCheck(None, why=f"no answer: {exc.__class__.__name__}: {exc}"[:300])
    if answer.status_code in _REFUSED:
        return TokenCheck(False, answer.status_code)
    try:
        model = answer.json() if answer.status_code == 200 else None
    except ValueError:
        model = None
    if not isinstance(model, Mapping):
        return TokenCheck(None, answer.status_code, why=f"the hub answered {answer.status_code} without a user model")
    return TokenCheck(True, 200, model)


def start_up_lines(check: TokenCheck, *, api_url: str, service: str) -> tuple[str | None, list[str]]:
    """``(refusal, warnings)`` of a start-up check: the line that stops the service (None: it starts)
    and the warnings it logs."""
    if check.accepted is False:
        return token_refused_line(api_url, service, check.status), []
    if check.accepted is None:
        return None, [token_unchecked_line(api_url, check.why)]
    return None, accepted_warnings(check.model, service)


def accepted_warnings(model: Mapping[str, Any], service: str) -> list[str]:
    """Warnings about a token the hub accepts: not this service's, or missing :data:`NEEDED_SCOPES`."""
    kind, name = str(model.get("kind") or "user"), str(model.get("name") or "?")[:100]
    said: list[str] = []
    if kind != "service" or name != service:
        said.append(token_user_line(kind, name, service))
    scopes = {str(s) for s in model.get("scopes") or ()}
    missing = [s for s in NEEDED_SCOPES if s not in scopes and not any(x.startswith(s + "!") for x in scopes)]
    if missing and "scopes" in model:
        said.append(missing_scopes_line(service, missing))
    return said


class TokenWatch:
    """The service's token as the hub last answered about it (see module docstring).

    Args:
        api_url: the hub API URL (for the log line).
        service: the service's name in the hub's config (``$JUPYTERHUB_SERVICE_NAME``).
        clock: monotonic seconds (injected for tests).
        logger: where the lines go (the service's own log, formatted as its other lines); this module's else.
    """

    def __init__(self, api_url: str, service: str, *, clock: Callable[[], float] = time.monotonic,
                 logger: logging.Logger | logging.LoggerAdapter[Any] | None = None) -> None:
        self.api_url = api_url
        self.service = service
        self._clock = clock
        self._log = logger or log
        self.accepted: bool | None = None
        self._checked_at: float | None = None
        self._said_at: float | None = None

    @property
    def refused(self) -> bool:
        """Whether the hub refused the token at the last check."""
        return self.accepted is False

    async def check(self, hub: HubClient, *, force: bool = False) -> bool | None:
        """Ask the hub (``GET user`` with the service's token) unless asked within the last few seconds
        and not ``force``; log a change (module docstring); the answer (True, False, None: unknown)."""
        now = self._clock()
        if not force and self._checked_at is not None and now - self._checked_at < _RECHECK_S:
            return self.accepted
        self._checked_at = now
        try:
            await hub.request("GET", "user")
        except HubLookupError as exc:
            if exc.status in _REFUSED:
                self._refused(exc.status, now)
                return False
            return self.accepted  # no answer: what was known stays known
        if self.accepted is False:
            self._log.info("jupyter_sched: the hub at %s accepts this service's API token again", self.api_url)
        self.accepted, self._said_at = True, None
        return True

    def _refused(self, status: int, now: float) -> None:
        if self.accepted is not False or self._said_at is None or now - self._said_at >= _REPEAT_S:
            self._log.error("jupyter_sched: %s", token_refused_line(self.api_url, self.service, status))
            self._said_at = now
        self.accepted = False
