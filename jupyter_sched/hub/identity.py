"""Who is calling the central service: JupyterHub authentication and hub-derived roles.

Authentication is JupyterHub's own (``jupyterhub.services.auth.HubOAuth`` through the
``JupyterHubIdentityProvider`` of ``jupyterhub.singleuser``): an API request carries
``Authorization: token <hub token>`` (a user's token, or a user server's
``JUPYTERHUB_API_TOKEN`` when the server forwards for its owner); a browser carries the OAuth
cookie set by ``{prefix}oauth_callback``. Tokens whose scopes do not include the service's
access scope (``access:services!service=<name>``) are refused with 403. Nothing about the caller
is ever read from a request body.

Roles come from the hub, looked up with the service's own token (role scopes ``read:users``):

- scheduler admin = hub admin (``admin: true``) or a token holding :data:`ADMIN_SCOPE`
  (define it in ``c.JupyterHub.custom_scopes`` and grant it through a role);
- team = one of the user's hub groups (see :func:`choose_team`).

Lookups are cached ``lookup_cache_s`` seconds (default 60 s) so a burst of requests costs one
hub call per user.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

import httpx
from jupyterhub.singleuser.extension import JupyterHubIdentityProvider, JupyterHubUser
from tornado import web
from traitlets import Float, Unicode, default

from ..errors import BusyError, NotFoundError
from ..executors.runas import fds_short

__all__ = ["ADMIN_SCOPE", "HubIdentityProvider", "HubUser", "choose_team", "is_admin"]

ADMIN_SCOPE = "custom:jupyter-sched:admin"
"""Custom hub scope that makes its holder a scheduler admin (besides hub admins)."""


class HubUser(JupyterHubUser):  # type: ignore[misc]  # jupyterhub ships no type hints
    """A hub user as the scheduler sees it.

    Attributes:
        hub_user: the model JupyterHub returned for the caller's token (``name``, ``scopes``...).
        hub_admin: True when the hub says the user is an admin.
        hub_groups: the user's hub group names, sorted.
        scopes: the scopes of the token that authenticated this request.
    """

    def __init__(self, hub_user: Mapping[str, Any], *, admin: bool, groups: Iterable[str]) -> None:
        super().__init__(dict(hub_user))
        self.hub_admin = bool(admin)
        self.hub_groups = tuple(sorted(groups))
        self.scopes = frozenset(str(s) for s in hub_user.get("scopes") or ())


def is_admin(user: HubUser, admin_scope: str = ADMIN_SCOPE) -> bool:
    """Scheduler admin: a hub admin, or a caller whose token holds ``admin_scope``."""
    return user.hub_admin or admin_scope in user.scopes


def choose_team(groups: Iterable[str], known_teams: Iterable[str]) -> str | None:
    """The team of a user in ``groups``: the first (sorted) group that is a known team
    (named by a quota line, budget or team policy), else the first group; None without groups."""
    ordered = sorted(groups)
    known = set(known_teams)
    for group in ordered:
        if group in known:
            return group
    return ordered[0] if ordered else None


class HubIdentityProvider(JupyterHubIdentityProvider):  # type: ignore[misc]
    """jupyter_server IdentityProvider of the central service (see module docstring).

    ``get_user`` returns a :class:`HubUser` or None (jupyter_server then answers 403 to API
    requests); the hub decides who the caller is, from the token or the OAuth cookie.
    """

    lookup_cache_s = Float(
        60.0, config=True,
        help="""Seconds a user's hub record (admin flag, groups) stays cached. Default 60 s: role
        changes on the hub take effect within a minute without a hub call per request.""",
    )
    admin_scope = Unicode(
        ADMIN_SCOPE, config=True,
        help="""Hub scope that makes its holder a scheduler admin, besides hub admins.
        Default "custom:jupyter-sched:admin" (declare it in c.JupyterHub.custom_scopes).""",
    )

    token_cache_s = Float(
        30.0, config=True,
        help="""Seconds the hub's answer about a token is trusted before it is asked again (HubAuth's
        cache_max_age, 300 s in JupyterHub). Default 30 s: a token an admin revokes stops submitting
        jobs within half a minute. An explicit c.HubOAuth.cache_max_age / c.HubAuth.cache_max_age wins.""",
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cache: dict[str, tuple[float, bool, tuple[str, ...]]] = {}

    @default("hub_auth")
    def _default_hub_auth(self) -> Any:
        """JupyterHub's HubOAuth, trusting a token's answer :attr:`token_cache_s` (red-team finding 15)."""
        auth = super()._default_hub_auth()
        if not any("cache_max_age" in self.config.get(section, {}) for section in ("HubOAuth", "HubAuth")):
            auth.cache_max_age = int(self.token_cache_s)
        return auth

    async def get_user(self, handler: Any) -> HubUser | None:
        """Authenticate through the hub, then attach the hub's admin flag and groups."""
        if isinstance(getattr(handler, "_jupyterhub_user", None), HubUser):
            return handler._jupyterhub_user  # type: ignore[no-any-return]
        try:
            base = await super().get_user(handler)
        except web.HTTPError as exc:  # HubAuth: "Failed to connect to Hub API at …" for any failure (R6)
            if exc.status_code == 500 and fds_short():
                raise web.HTTPError(503, "the scheduler service is overloaded (out of file descriptors) and could not "
                                         "ask the hub who you are; retry in a moment") from None
            raise
        if base is None:
            return None
        model = dict(base.hub_user)
        admin, groups = await self._roles(str(model["name"]), model)
        user = HubUser(model, admin=admin, groups=groups)
        handler._jupyterhub_user = user
        return user

    async def _roles(self, name: str, model: Mapping[str, Any]) -> tuple[bool, tuple[str, ...]]:
        """``(hub admin?, groups)`` of ``name``: from the token's own model when it carries them,
        else from ``GET {hub api}/users/{name}`` with the service token (cached)."""
        if model.get("kind", "user") != "user":
            return False, ()
        if "admin" in model and "groups" in model:
            return bool(model["admin"]), tuple(str(g) for g in model["groups"])
        now = time.monotonic()
        cached = self._cache.get(name)
        if cached is not None and now - cached[0] < self.lookup_cache_s:
            return cached[1], cached[2]
        record = await self.hub_api("GET", f"users/{name}")
        admin = bool(record.get("admin")) if isinstance(record, dict) else False
        groups = tuple(str(g) for g in (record.get("groups") or ())) if isinstance(record, dict) else ()
        self._cache[name] = (now, admin, groups)
        return admin, groups

    def roles_now(self, name: str) -> tuple[bool, tuple[str, ...]]:
        """``(hub admin?, groups)`` of ``name`` outside a request (a job definition firing on the
        engine's thread): the cached record, else a blocking ``GET {hub api}/users/{name}``.

        Raises:
            NotFoundError: the hub has no such user (their definitions must not run).
            BusyError: the hub did not answer (ask again later).
        """
        now = time.monotonic()
        cached = self._cache.get(name)
        if cached is not None and now - cached[0] < self.lookup_cache_s:
            return cached[1], cached[2]
        auth = self.hub_auth
        url = auth.api_url.rstrip("/") + "/users/" + quote(name, safe="")
        try:
            response = httpx.get(url, headers={"Authorization": f"token {auth.api_token}"}, timeout=10.0)
        except httpx.HTTPError as exc:
            raise BusyError(f"the hub did not say who {name} is ({exc})", hint="retried shortly") from None
        if response.status_code == 404:
            raise NotFoundError(f"{name} is not a user of this hub", field="user",
                                hint="offboarding pauses their job definitions; an admin may pause or delete them")
        if response.status_code != 200:
            raise BusyError(f"the hub answered {response.status_code} looking up {name}", hint="retried shortly")
        record = response.json()
        admin = bool(record.get("admin")) if isinstance(record, dict) else False
        groups = tuple(str(g) for g in (record.get("groups") or ())) if isinstance(record, dict) else ()
        self._cache[name] = (now, admin, groups)
        return admin, groups

    async def hub_api(self, method: str, path: str, body: Any = None) -> Any:
        """Call the hub REST API with the service's token; the decoded JSON answer.

        Raises:
            tornado.httpclient.HTTPClientError: the hub refused or is unreachable.
        """
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest

        auth = self.hub_auth
        url = auth.api_url.rstrip("/") + "/" + path.lstrip("/")
        request = HTTPRequest(url, method=method, headers={"Authorization": f"token {auth.api_token}",
                                                           "Content-Type": "application/json"},
                              body=None if body is None else json.dumps(body), request_timeout=30)
        response = await AsyncHTTPClient().fetch(request)
        return json.loads(response.body) if response.body else None
