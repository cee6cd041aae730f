"""The JupyterHub REST API as the central service reads it: every page, and "not seen" as unknown.

JupyterHub pages ``GET /hub/api/users``: a client that sends
``Accept: application/jupyterhub-pagination+json`` gets ``{"items": [...], "_pagination":
{"offset", "limit", "total", "next": {"offset", "limit", "url"} | null}}`` and follows ``next``;
``limit`` is capped at the hub's ``api_page_max_limit`` (200 by default) whatever the client asks,
and a client without that header silently gets only the first ``api_page_max_limit`` users
(JupyterHub ``apihandlers/base.py``, ``get_api_pagination`` / ``paginated_model``). Offsets move
when users start or stop servers between two pages, so one user can be missed by a complete walk.

Hence the rule here: :func:`active_users` follows every page and returns who was *seen*; a user
not seen is **unknown**, never "stopped". Before acting on a user's absence (releasing leases),
the caller asks about that user alone with :func:`user_servers`, which answers definitively
(``{}`` = no active server, the user was deleted) or None (the hub did not answer: do nothing).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import quote

__all__ = ["HUB_TIMEOUT_S", "PAGINATION_MEDIA_TYPE", "HubAPI", "HubClient", "HubLookupError", "active_servers_of", "active_users",
           "all_users", "group_exists", "hub_answer", "user_exists", "user_servers"]

log = logging.getLogger(__name__)

PAGINATION_MEDIA_TYPE = "application/jupyterhub-pagination+json"
_PAGE = 200
HUB_TIMEOUT_S = 10.0
"""Default seconds one request of the service to the hub API may take (``c.HubIdentityProvider.hub_timeout_s``)."""
_MAX_PAGES = 10_000


class HubClient(Protocol):
    """What :func:`active_users` and :func:`user_servers` need: one JSON request to the hub API."""

    async def request(self, method: str, path: str, body: Any = None, *, paginated: bool = False) -> Any:
        """``method path`` under the hub API; the decoded JSON answer.

        Raises:
            HubLookupError: the hub answered with an error status (``status`` attribute) or not at all.
        """
        ...


class HubLookupError(Exception):
    """The hub did not answer usefully; ``status`` is the HTTP status (0: no answer).

    ``outage``: the hub did not answer at all (status 0) — an expected condition while it restarts,
    said once per outage by :class:`HubAPI` (hubadmin24 B13), so callers log it at debug only."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status

    @property
    def outage(self) -> bool:
        """True when the hub gave no answer (down, restarting, unreachable)."""
        return self.status == 0


class HubAPI:
    """:class:`HubClient` over httpx with the service's own token; a loopback hub API address held by another
    account is refused before anything is sent (:mod:`.hub_peer`, red31 R4) and fails as "no answer".

    Args:
        api_url: the hub API URL (``$JUPYTERHUB_API_URL``, e.g. ``http://127.0.0.1:8081/hub/api``).
        token: the service's API token (``$JUPYTERHUB_API_TOKEN``).
        timeout_s: seconds one request may take, connecting and waiting for a connection slot
            included; then it fails as :class:`HubLookupError`
            (status 0) and the caller retries at its next tick.
    """

    def __init__(self, api_url: str, token: str, *, timeout_s: float = HUB_TIMEOUT_S) -> None:
        self.api_url = api_url.rstrip("/") + "/"
        self.token = token
        self.timeout_s = timeout_s
        self.down_since: float | None = None
        """Epoch seconds of the first unanswered request of the outage in force (None: the hub answers)."""

    async def request(self, method: str, path: str, body: Any = None, *, paginated: bool = False) -> Any:
        import asyncio

        import httpx

        from .hub_peer import hub_client

        headers = {"Authorization": f"token {self.token}", "Content-Type": "application/json",
                   "Accept": PAGINATION_MEDIA_TYPE if paginated else "application/json"}
        try:
            # a loopback hub API held by another account is refused once connected, before the token goes
            # (red31 R4: it answered "admin" for anyone and kept the service's token); the total bounded as before
            response = await asyncio.wait_for(hub_client(self.timeout_s).request(
                method, self.api_url + path.lstrip("/"), headers=headers,
                content=None if body is None else json.dumps(body)), self.timeout_s)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise self._down(HubLookupError(f"{method} {path}: no answer from the hub (timed out; limit "
                                            f"{self.timeout_s:g} s)"), f"timed out: {exc}") from None
        except httpx.TransportError as exc:
            raise self._down(HubLookupError(f"{method} {path}: no answer from the hub ({exc})"), str(exc)) from None
        except OSError as exc:
            raise self._down(HubLookupError(f"{method} {path}: hub unreachable ({exc})"),
                             exc.strerror or str(exc)) from None
        self._up()
        if response.status_code >= 400:
            raise HubLookupError(f"{method} {path}: hub answered {response.status_code}{hub_answer(response)}",
                                 response.status_code)
        try:
            return json.loads(response.content) if response.content else None
        except ValueError:
            raise HubLookupError(f"{method} {path}: the hub's answer is not JSON{hub_answer(response)}",
                                 response.status_code) from None

    def _down(self, exc: HubLookupError, why: str) -> HubLookupError:
        """Note an unanswered request: the first of an outage logs one WARNING (hubadmin24 B13: every
        poll logged a traceback); ``exc`` back, for the caller to raise."""
        if self.down_since is None:
            self.down_since = time.time()
            log.warning("jupyter_sched: the hub at %s does not answer (%s) since %s UTC: offboarding, activity "
                        "posts and lease checks wait and are retried at each poll (said again when it answers)",
                        self.api_url, why, time.strftime("%H:%M:%S", time.gmtime(self.down_since)))
        return exc

    def _up(self) -> None:
        """Note an answer: the end of an outage is said once, with its length."""
        if self.down_since is not None:
            log.warning("jupyter_sched: the hub at %s answers again (it did not for %.0f s)", self.api_url,
                        time.time() - self.down_since)
            self.down_since = None


def hub_answer(response: Any, limit: int = 200) -> str:
    """``: <the hub's message>`` from an HTTP answer of the hub (JupyterHub errors are
    ``{"status", "message"}``; other bodies are quoted as text), at most ``limit`` characters; ""
    without a body. For logs: what the hub said, never a request header."""
    body = getattr(response, "body", None) or getattr(response, "content", None) or b""  # tornado's, httpx's
    if not body:
        return ""
    text = body.decode("utf-8", "replace")
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = None
    if isinstance(decoded, Mapping) and isinstance(decoded.get("message"), str):
        text = decoded["message"]
    text = " ".join(text.split())
    return ": " + (text if len(text) <= limit else text[:limit] + "…")


async def active_users(hub: HubClient, *, page: int = _PAGE) -> dict[str, Mapping[str, Any]]:
    """Every user the hub lists with an active server, following all pages: ``{name: user model}``.

    A complete walk may still miss a user whose server started or stopped between pages: absence
    here means *unknown* (see module docstring).

    Raises:
        HubLookupError: a page could not be read (then nothing is known).
    """
    return await _walk(hub, "users?state=active&", page)


async def all_users(hub: HubClient, *, page: int = _PAGE) -> dict[str, Mapping[str, Any]]:
    """Every user the hub has, following all pages: ``{name: user model}``. Absence means
    *unknown* until :func:`user_exists` says so for that user alone (see module docstring).

    Raises:
        HubLookupError: a page could not be read.
    """
    return await _walk(hub, "users?", page)


async def user_exists(hub: HubClient, name: str) -> bool | None:
    """Whether the hub has a user ``name``, asked about that user alone: False only on the hub's
    404; None when it did not answer (unknown)."""
    try:
        model = await hub.request("GET", f"users/{quote(name, safe='')}")
    except HubLookupError as exc:
        if exc.status == 404:
            return False
        log.log(logging.DEBUG if exc.outage else logging.WARNING, "jupyter_sched: could not ask the hub about %s: %s",
                name, exc)
        return None
    return True if isinstance(model, Mapping) else None


async def group_exists(hub: HubClient, name: str) -> bool | None:
    """Whether the hub has a group ``name``, asked about that group alone (``GET groups/{name}``, the
    service token's ``read:groups``): False only on the hub's 404; None when it did not answer (unknown).
    A group no listed user is in may still exist, empty (verify24 V4: its last member removed)."""
    try:
        model = await hub.request("GET", f"groups/{quote(name, safe='')}")
    except HubLookupError as exc:
        if exc.status == 404:
            return False
        log.log(logging.DEBUG if exc.outage else logging.WARNING, "jupyter_sched: could not ask the hub about group "
                "%s: %s", name, exc)
        return None
    return True if isinstance(model, Mapping) else None


async def _walk(hub: HubClient, query: str, page: int) -> dict[str, Mapping[str, Any]]:
    seen: dict[str, Mapping[str, Any]] = {}
    offset = 0
    for _ in range(_MAX_PAGES):
        answer = await hub.request("GET", f"{query}offset={offset}&limit={page}", paginated=True)
        if isinstance(answer, list):  # a hub without pagination answers the whole list
            items, following = answer, None
        elif isinstance(answer, Mapping) and isinstance(answer.get("items"), list):
            items = answer["items"]
            pagination = answer.get("_pagination") or {}
            following = pagination.get("next") if isinstance(pagination, Mapping) else None
        else:
            raise HubLookupError(f"unexpected answer to GET users: {type(answer).__name__}")
        for user in items:
            if isinstance(user, Mapping) and isinstance(user.get("name"), str):
                seen[user["name"]] = user
        if not isinstance(following, Mapping) or not isinstance(following.get("offset"), int):
            return seen
        if following["offset"] <= offset:
            raise HubLookupError(f"the hub's next page does not advance (offset {following['offset']})")
        offset = following["offset"]
    raise HubLookupError("the hub kept answering pages")


def active_servers_of(user: Mapping[str, Any]) -> list[str]:
    """Names of a user model's active servers ("" is the default server), sorted."""
    servers = user.get("servers") or {}
    if not isinstance(servers, Mapping):
        return []
    return sorted(str(name) for name, server in servers.items()
                  if not isinstance(server, Mapping) or server.get("stopped") is not True)


async def user_servers(hub: HubClient, name: str) -> list[str] | None:
    """The active servers of ``name`` asked about that user alone: a list (empty when the user
    has none or no longer exists), or None when the hub did not answer (unknown)."""
    try:
        model = await hub.request("GET", f"users/{quote(name, safe='')}")
    except HubLookupError as exc:
        if exc.status == 404:
            return []
        log.log(logging.DEBUG if exc.outage else logging.WARNING, "jupyter_sched: could not ask the hub about %s: %s",
                name, exc)
        return None
    if not isinstance(model, Mapping):
        return None
    return active_servers_of(model)
