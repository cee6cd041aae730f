"""Who a credential not seen before names, asked before its request is counted at the front door (verify 26, V11).

The front door counts each request as its caller (:mod:`.fair_share`): a credential seen authenticated as its
hub user, one the hub refused as "refused PEER", any other as "unproven PEER" — the share every honest first
request falls in (a new token, and after a service restart every token). A flood of made-up tokens, a fresh
one per request (they cost nothing), filled that share: every other account of the flood's host (every account
of a LocalProcessSpawner hub), and after a restart every account, had its first request answered 429 while the
flood lasted. :func:`credential_check` is the service's
:data:`~.front_door.CredentialCheck`, asked (a few at once, in turn:
:meth:`~.front_door.GuardedHTTPServer.check_first`) before such a request is counted:

* a hub token (``Authorization: token …``, ``?token=``): JupyterHub's own token check,
  ``HubAuth.user_for_token`` with its cache and the cache key the identity provider uses for the same request
  (its session id), so the request's own authentication is answered from the cache — one hub call either way;
* a cookie: the hub's OAuth cookie (``HubOAuth.cookie_name``) signed with the server's ``cookie_secret``,
  checked as its token; a ``Cookie`` header without a validly signed one names nobody (no hub call);
* a job's progress token (``jsjob1.…``): its MAC (:class:`~jupyter_sched.services.job_tokens.JobTokenCheck`'s
  tokens); a forgery names nobody, a genuine one is the service's to check (:class:`~.front_door.Unchecked`).

What the hub answers for a token: a user (or service) model, counted as its ``name``; None (the hub's 403:
made up, revoked, expired), nobody. The hub not answering raises (the front door pauses checking briefly and
counts such requests as unchecked, and the identity provider answers them 503).
"""

from __future__ import annotations

import os
from typing import Any

from tornado import httputil
from tornado.web import decode_signed_value

from ..services.job_tokens import is_job_token
from .fair_share import credential_of
from .front_door import CredentialCheck, Unchecked

__all__ = ["KEYS_FILE", "SESSION_COOKIE", "credential_check", "front_door_keys_file"]

SESSION_COOKIE = "jupyterhub-session-id"
"""The cookie whose value JupyterHub's ``HubAuth`` puts in its token cache key (``HubAuth.get_session_id``)."""

KEYS_FILE = "front_door_keys.json"
"""The file, in the service's data folder (``<jupyter data dir>/jupyter_sched``, beside its job-token secret), where
the front door keeps the credentials it learned across a restart (verify 28, V6): digests and hub users, 0600."""

_COOKIE_MAX_AGE_DAYS = 31
"""Tornado's ``get_signed_cookie`` default, which ``HubOAuth`` reads its cookie with."""


def credential_check(serverapp: Any) -> CredentialCheck:
    """The :data:`~.front_door.CredentialCheck` of the service ``serverapp`` (a jupyter_server ``ServerApp`` whose
    identity provider is :class:`~.identity.HubIdentityProvider`), read when asked (the identity provider and the
    scheduler are made after the HTTP server)."""

    async def check(kind: str, headers: httputil.HTTPHeaders, target: str) -> str | None:
        found = credential_of(headers, target)
        if found is None:
            raise Unchecked("no credential")
        cookies = httputil.parse_cookie(headers.get("Cookie", "") or "")
        if kind == "job":
            return _job_token(serverapp, found[1])
        token = found[1] if kind == "token" else _cookie_token(serverapp, cookies)
        if token is None:
            return None
        auth = getattr(getattr(serverapp, "identity_provider", None), "hub_auth", None)
        if auth is None:
            raise Unchecked("no hub authentication")
        model = await auth.user_for_token(token, use_cache=True, session_id=cookies.get(SESSION_COOKIE, ""), sync=False)
        if not isinstance(model, dict) or not model.get("name"):
            return None
        return str(model["name"])

    return check


def front_door_keys_file() -> str:
    """The path of :data:`KEYS_FILE` (its folder made 0700 when missing)."""
    from jupyter_core.paths import jupyter_data_dir

    folder = os.path.join(jupyter_data_dir(), "jupyter_sched")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return os.path.join(folder, KEYS_FILE)


def _cookie_token(serverapp: Any, cookies: dict[str, str]) -> str | None:
    """The token in the hub's OAuth cookie among ``cookies`` when its signature holds (``HubOAuth`` reads it with
    ``get_signed_cookie``), else None.

    Raises:
        Unchecked: the server has no hub OAuth or cookie secret to read it with.
    """
    auth = getattr(getattr(serverapp, "identity_provider", None), "hub_auth", None)
    try:
        name = getattr(auth, "cookie_name", None)
    except Exception:  # no OAuth client id (HubOAuth refuses an empty one)
        name = None
    secret = getattr(getattr(serverapp, "web_app", None), "settings", {}).get("cookie_secret")
    if not name or not secret:
        raise Unchecked("no hub OAuth cookie to read")
    value = cookies.get(str(name))
    if not value:
        return None
    token = decode_signed_value(secret, str(name), value, max_age_days=_COOKIE_MAX_AGE_DAYS)
    return token.decode("ascii", "replace") if token else None


def _job_token(serverapp: Any, token: str) -> str | None:
    """None for a forged job token (its MAC verifies under no secret the store holds).

    Raises:
        Unchecked: a genuine one (its run, route and owner are the service's check), or no job tokens here.
    """
    from .oversize import sched_app

    services = getattr(sched_app(serverapp), "services", None)
    tokens = getattr(getattr(services, "job_tokens", None), "tokens", None)
    if tokens is None or not is_job_token(token):
        raise Unchecked("no job tokens here")
    if tokens.read_any(token) is None:
        return None
    raise Unchecked("a genuine job token")
