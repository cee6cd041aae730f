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
hub call per user. A request that changes something (``POST``/``PUT``/``PATCH``: submit, lease,
definition create/edit, resubmit) decides team membership on a view at most
``membership_fresh_s`` old (default 2 s), read from the hub's user record, never the token's cached
model (up to ``token_cache_s`` old); and a membership change the service's hub poll sees
(:meth:`HubIdentityProvider.seen_models`) drops what was cached for that user at once (red team 19,
R2: a user removed from a group submitted on it for 30 s).

Every request the service makes to the hub — these lookups, HubAuth's token checks (JupyterHub's own
HTTP client, bounded by :func:`bound_token_checks`), the hub poll and activity reports — ends within
``hub_timeout_s`` (default 10 s); a token check or lookup the hub did not answer is a 503 (retry),
never a request held for minutes or a 500 (issue 17).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

import httpx
from jupyterhub.singleuser.extension import JupyterHubIdentityProvider, JupyterHubUser
from tornado import web
from traitlets import Float, TraitError, Unicode, default, validate

from ..errors import BusyError, NotFoundError
from ..executors.runas import fds_short
from ..wording.service_token import TOKEN_REFUSED_MESSAGE, no_longer_a_user
from .front_door import note_caller, note_refused
from .hub_peer import guard_hub_auth, hub_sync_client
from .hubapi import HUB_TIMEOUT_S, HubAPI
from .service_token import TokenWatch

__all__ = ["ADMIN_SCOPE", "HubIdentityProvider", "HubUser", "bound_token_checks", "choose_team", "is_admin"]

_MUTATIONS = frozenset({"POST", "PUT", "PATCH"})
"""Request methods whose admission decides on a fresh membership view (``membership_fresh_s``)."""

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

    membership_fresh_s = Float(
        2.0, config=True,
        help="""Seconds a user's hub groups may be old when their request changes something (submit,
        lease, definition create/edit, resubmit: POST/PUT/PATCH); older, they are read from the hub
        again (one hub call per user per this many seconds of such requests). Reads keep the
        token's cached answer. 0 = every such request asks the hub. Default 2 s: a user an admin
        removes from a group can no longer charge it 2 s later (red team 19, R2; was token_cache_s).""",
    )

    hub_timeout_s = Float(
        HUB_TIMEOUT_S, config=True,
        help="""Seconds one request of the service to the hub API may take, connecting included: token
        checks, group lookups, the hub poll, activity reports. Then it counts as failed: a user's request
        that needed it is answered 503 (retry), a periodic task tries again at its next tick. Default
        10 s (JupyterHub's own HubAuth client waits up to 300 s: one held request kept a user waiting
        for 5 minutes; issue 17). Must be 1..300.""",
    )

    @validate("hub_timeout_s")
    def _valid_hub_timeout(self, proposal: Any) -> float:
        value = float(proposal["value"])
        if not 1.0 <= value <= 300.0:  # also refuses NaN
            raise TraitError(f"c.HubIdentityProvider.hub_timeout_s = {value!r}: must be 1..300 seconds. Fix: set e.g. 10")
        return value

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cache: dict[str, tuple[float, bool, tuple[str, ...]]] = {}
        self._known: dict[str, tuple[str, ...]] = {}  # user -> groups last used for them
        self._stale: dict[str, float] = {}  # user -> when a change was seen: their token's cached model is not trusted
        self._token_watch: TokenWatch | None = None

    @property
    def token_watch(self) -> TokenWatch:
        """Whether the hub accepts the service's own token (:mod:`.service_token`; hub admin 22)."""
        if self._token_watch is None:
            self._token_watch = TokenWatch(self.hub_auth.api_url, os.environ.get("JUPYTERHUB_SERVICE_NAME", "")
                                           or "jupyter-sched", logger=self.log)
        return self._token_watch

    def service_hub(self) -> HubAPI:
        """The hub API with the service's own token (bounded by :attr:`hub_timeout_s`)."""
        return HubAPI(self.hub_auth.api_url, self.hub_auth.api_token, timeout_s=self.hub_timeout_s)

    @default("hub_auth")
    def _default_hub_auth(self) -> Any:
        """JupyterHub's HubOAuth, trusting a token's answer :attr:`token_cache_s` (red-team finding 15)."""
        auth = super()._default_hub_auth()
        if not any("cache_max_age" in self.config.get(section, {}) for section in ("HubOAuth", "HubAuth")):
            auth.cache_max_age = int(self.token_cache_s)
        return auth

    def _patch_get_login_url(self, handler: Any) -> None:
        """JupyterHub's patch (``handler.get_login_url``, a closure over the handler), undone when the
        answer is written (:func:`unpatch_at_finish`)."""
        super()._patch_get_login_url(handler)
        unpatch_at_finish(handler)

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
            if exc.status_code == 500 and str(exc.log_message or "").startswith("Failed to connect to Hub API"):
                # the hub did not answer (in hub_timeout_s) or refused the connection: the caller retries (issue 17)
                raise web.HTTPError(503, "the scheduler could not ask the hub who you are (no connection, or no "
                                         f"answer within {self.hub_timeout_s:g} s); retry in a moment") from None
            raise
        if base is None:  # the hub names nobody for the credential (made up, revoked, stale) or none came
            note_refused(getattr(handler, "request", None))  # apart from tokens not yet checked (verify 25, V4)
            return None
        model = dict(base.hub_user)
        fresh = str(getattr(getattr(handler, "request", None), "method", "GET")).upper() in _MUTATIONS
        admin, groups = await self._roles(str(model["name"]), model, fresh=fresh)
        user = HubUser(model, admin=admin, groups=groups)
        handler._jupyterhub_user = user
        note_caller(getattr(handler, "request", None), str(model["name"]))  # the front door's per-user share (V5)
        return user

    async def _roles(self, name: str, model: Mapping[str, Any], *, fresh: bool = False) -> tuple[bool, tuple[str, ...]]:
        """``(hub admin?, groups)`` of ``name``: from the token's own model when it carries them,
        else from ``GET {hub api}/users/{name}`` with the service token (cached
        ``lookup_cache_s``). ``fresh`` (a request that changes something), or a membership change
        seen within ``token_cache_s``: never the token's model, and the record at most
        ``membership_fresh_s`` old.

        Raises:
            tornado.web.HTTPError: 503 when the hub did not answer a lookup (retry in a moment); 403
                when it answered that ``name`` is no user (deleted since their token was checked).
        """
        if model.get("kind", "user") != "user":
            return False, ()
        now = time.monotonic()
        seen = self._stale.get(name)
        if seen is not None and now - seen >= self.token_cache_s:  # every token's cached model is newer now
            del self._stale[name]
            seen = None
        if "admin" in model and "groups" in model and not fresh and seen is None:
            groups = tuple(str(g) for g in model["groups"])
            self._known[name] = groups
            return bool(model["admin"]), groups
        cached = self._cache.get(name)
        bound = min(self.lookup_cache_s, self.membership_fresh_s) if fresh else self.lookup_cache_s
        if cached is not None and now - cached[0] < bound:
            return cached[1], cached[2]
        try:
            record = await self.hub_api("GET", f"users/{quote(name, safe='')}")
        except Exception as exc:  # refused or unreachable: no traceback to the caller
            code = getattr(exc, "status", None)
            if code in (401, 403) and await self.token_watch.check(self.service_hub()) is False:
                raise web.HTTPError(503, TOKEN_REFUSED_MESSAGE) from None  # the admin's fix, not "retry" (hub admin 22)
            if code == 404:  # the hub's definite answer, not an outage (hubadmin25 B21)
                self._cache.pop(name, None)
                raise web.HTTPError(403, no_longer_a_user(name)) from None
            raise web.HTTPError(503, f"the scheduler could not ask the hub for {name}'s groups ({exc.__class__.__name__}); "
                                     "retry in a moment") from None
        if not isinstance(record, dict) or not isinstance(record.get("groups"), list):
            if "admin" in model and "groups" in model:  # the service's token may not read groups: the token's say
                return bool(model["admin"]), tuple(str(g) for g in model["groups"])
            record = record if isinstance(record, dict) else {}
        admin = bool(record.get("admin"))
        groups = tuple(str(g) for g in (record.get("groups") or ()))
        self._cache[name] = (now, admin, groups)
        self._known[name] = groups
        return admin, groups

    def seen_models(self, models: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """The hub poll's user models (``{name: model}``): each user whose ``groups`` differ from
        those last used for them is forgotten at once (:meth:`forget`); the names forgotten, sorted.
        A model without ``groups`` (the service's token may not read them) says nothing."""
        changed = []
        for name, model in models.items():
            groups = model.get("groups") if isinstance(model, Mapping) else None
            known = self._known.get(name)
            if isinstance(groups, list) and known is not None and sorted(known) != sorted(str(g) for g in groups):
                self.forget(name)
                changed.append(name)
        return sorted(changed)

    def forget(self, name: str) -> None:
        """Drop what is cached of ``name``'s roles, and trust no token's cached model of them for
        ``token_cache_s`` (HubAuth keeps those per token): their next request reads the hub."""
        self._cache.pop(name, None)
        self._known.pop(name, None)
        self._stale[name] = time.monotonic()

    def roles_now(self, name: str) -> tuple[bool, tuple[str, ...]]:
        """``(hub admin?, groups)`` of ``name`` outside a request (a job definition firing on the
        engine's thread): the cached record, else a blocking ``GET {hub api}/users/{name}``.

        Raises:
            NotFoundError: the hub has no such user (their definitions must not run).
            BusyError: the hub did not answer (ask again later).
        """
        now = time.monotonic()
        cached = self._cache.get(name)
        if cached is not None and now - cached[0] < self.lookup_cache_s:  # dropped at once by a change seen (forget)
            return cached[1], cached[2]
        auth = self.hub_auth
        url = auth.api_url.rstrip("/") + "/users/" + quote(name, safe="")
        try:
            with hub_sync_client(self.hub_timeout_s) as hub:  # loopback squatters refused (red31 R4)
                response = hub.get(url, headers={"Authorization": f"token {auth.api_token}"})
        except httpx.HTTPError as exc:
            raise BusyError(f"the hub did not say who {name} is ({exc})", hint="retried shortly") from None
        if response.status_code == 404:
            raise NotFoundError(f"{name} is not a user of this hub", field="user",
                                hint="offboarding pauses their job definitions; an admin may pause or delete them")
        if response.status_code in (401, 403) and self.token_watch.refused:
            raise BusyError(f"the hub refuses this service's token looking up {name}",
                            hint="fix JUPYTERHUB_API_TOKEN (the service's log says how); retried then")
        if response.status_code != 200:
            raise BusyError(f"the hub answered {response.status_code} looking up {name}", hint="retried shortly")
        record = response.json()
        admin = bool(record.get("admin")) if isinstance(record, dict) else False
        groups = tuple(str(g) for g in (record.get("groups") or ())) if isinstance(record, dict) else ()
        self._cache[name] = (now, admin, groups)
        self._known[name] = groups
        return admin, groups

    async def hub_api(self, method: str, path: str, body: Any = None) -> Any:
        """Call the hub REST API with the service's token; the decoded JSON answer.

        Raises:
            HubLookupError: the hub refused (``status``) or did not answer (status 0; a loopback address held by
                another account is that too: :mod:`.hub_peer`).
        """
        return await self.service_hub().request(method, path, body)  # loopback squatters refused (red31 R4)


def bound_token_checks(timeout_s: float) -> bool:
    """Give JupyterHub's own HTTP client — HubAuth's token checks, the first thing every request to
    the service waits on — a total ``timeout_s`` (seconds) per request unless
    ``c.JupyterHubHTTPClient.session_options`` sets one; whether it did. aiohttp's default is 300 s, so
    one token check the hub held kept its user waiting 5 minutes (issue 17). Run on the event loop
    before the first request (the client's session takes its options when it is made); a
    JupyterHub without that client (before 6) is left as it is (False)."""
    try:
        import aiohttp
        from jupyterhub.httpclient import JupyterHubHTTPClient
    except ImportError:
        return False
    client = JupyterHubHTTPClient.instance()
    guard_hub_auth(client)  # its connections to a loopback hub API are checked too (red31 R4)
    if "timeout" in client.session_options:
        return False
    client.session_options = {**client.session_options,
                              "timeout": aiohttp.ClientTimeout(total=timeout_s, sock_connect=timeout_s)}
    return True


def unpatch_at_finish(handler: Any) -> None:
    """Once ``handler`` (a tornado ``RequestHandler``) has written its answer (``on_finish``), drop
    JupyterHub's per-request ``get_login_url`` closure, which holds the handler (a reference cycle),
    and the request's body.

    The cycle kept each handler, its request and its body (a 7.5 MB notebook_json: 7.5 MiB) until a
    full garbage collection, which large bodies do not prompt (they are not containers): the service
    grew by each large request, refused 400/403/422 or not, 3.5 GB after 190 (verify 24, V2)."""
    finish = handler.on_finish

    def on_finish() -> None:
        handler.__dict__.pop("get_login_url", None)
        handler.__dict__.pop("on_finish", None)  # this closure: it holds the handler too
        try:
            finish()
        finally:
            handler.request.body = b""

    handler.on_finish = on_finish
