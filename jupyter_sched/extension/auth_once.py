"""A token-and-cookie request's identity proved once, then recognised while the proof still holds (issue 17).

A panel, the CLI or any ``httpx``/``requests`` session polls with the same ``Authorization: token …``
header and the same signed login cookie on every request. jupyter_server's built-in
``IdentityProvider`` proves both again each time: the token compared, a debug record built (its
logger stays at DEBUG whatever ``--log-level`` says), the cookie's HMAC-SHA256 signature checked,
its JSON decoded into a new ``User`` — about a sixth of the event loop's CPU per request under
``benchmarks/status_bench.py``'s fifty pollers, where ``jupyter-sched status`` waits behind each
poller's requests.

:class:`ProvenOnce` wraps that provider for :class:`~.web.SchedHandler`: the provider's own
``get_user`` decides every request whose headers it has not proved; when it accepted the server
token from the ``Authorization`` header and named the user of the (valid) login cookie — so it set
no cookie and the request is marked token-authenticated — the exact ``Authorization`` and ``Cookie``
header text are remembered with what they proved. A later request carrying byte-for-byte the same
headers is answered from that, without parsing its cookies (~1.5 % of the loop's time under
``status_bench``), while all of this still holds, checked on every request:

- the provider's token is the one that was sent (a changed or revoked token refuses at once);
- the server's cookie secret is the same object (a rotated secret refuses at once);
- the cookie's own signing time is within the provider's ``max_age_days`` (31 by default), as
  tornado checks it, and the proof is at most :data:`KEEP_S` seconds old;
- no ``?token=`` argument (the provider reads that before the header) and no debug logging shown
  (the provider's debug line would be missing).

Anything else — another provider (a hub's), a password login, a browser with the cookie only, a
first request that gets its cookie set, any difference in either value — goes through the
provider as before. :class:`ProvenOnceHandler` also keeps what ``check_host`` found (a regular
expression and an IP-address parse per request): a ``Host`` value found local once stays local.
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from typing import Any, cast

from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider

from .cookies import CookieOnce
from .request_log import shows_debug

__all__ = ["KEEP_S", "ProvenOnce", "ProvenOnceHandler", "known_local", "proven_once", "signed_at"]

KEEP_S = 30.0
"""Seconds a proof is used at most before the provider proves the same values again."""

_KEPT = 64
"""Proofs kept (oldest dropped first): one per client session that polls."""

_LONGEST = 8192
"""Header and cookie text longer than this together is never remembered."""

_SETTINGS_KEY = "jupyter_sched_proven_once"
_HOSTS_KEY = "jupyter_sched_local_hosts"


class ProvenOnce:
    """The server's built-in ``IdentityProvider``, remembering what identical requests proved
    (module docstring); every other attribute is the provider's own."""

    def __init__(self, provider: IdentityProvider) -> None:
        self._provider = provider
        self._proofs: OrderedDict[tuple[str, tuple[str, ...]], tuple[Any, str, Any, float, float]] = OrderedDict()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # its own fields are set in __init__: never the provider's private ones
            raise AttributeError(name)
        return getattr(self._provider, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:  # a setting changed through the handler is the provider's (its token, its cookie options)
            setattr(self._provider, name, value)

    async def get_user(self, handler: Any) -> Any:
        """The provider's ``get_user``, or the user an identical request proved (module docstring)."""
        provider = self._provider
        if getattr(handler, "_jupyter_current_user", None):
            return await _awaited(provider.get_user(handler))
        user = self.recognised(handler.request, handler.settings)
        if user is not None:
            handler._token_authenticated = True
            return copy.copy(user)
        user = await _awaited(provider.get_user(handler))
        key = self._key(handler.request)
        if key is not None and user is not None and not shows_debug(provider.log):
            self._remember(handler, key, user)
        return user

    def recognised(self, request: Any, settings: Any) -> Any | None:
        """The user an earlier request with byte-for-byte these ``Authorization`` and ``Cookie``
        headers proved, while all of the module docstring's conditions still hold (checked now; a
        stale proof is dropped); None: the provider decides. The user object is the proof's own:
        read it, never change it (:meth:`get_user` hands a handler a copy)."""
        provider = self._provider
        if shows_debug(provider.log):
            return None
        key = self._key(request)
        if key is None:
            return None
        proof = self._proofs.get(key)
        if proof is None:
            return None
        user, token, secret, until, _ = proof
        if token == provider.token and secret is settings.get("cookie_secret") and time.time() < until:
            return user
        self._proofs.pop(key, None)
        return None

    def _key(self, request: Any) -> tuple[str, tuple[str, ...]] | None:
        """The ``Authorization`` header and the ``Cookie`` headers' text a proof is remembered by
        (unparsed: the same text carries the same cookies); None: never remembered."""
        if "token" in request.query_arguments:
            return None
        header = request.headers.get("Authorization", "")
        if not header:
            return None
        cookies = tuple(request.headers.get_list("Cookie"))
        if not cookies or len(header) + sum(len(c) for c in cookies) > _LONGEST:
            return None
        return header, cookies

    def _remember(self, handler: Any, key: tuple[str, tuple[str, ...]], user: Any) -> None:
        """Keep ``user`` for ``key`` when the provider proved it from the server token in the header
        and the login cookie naming that very user (so it set no cookie)."""
        provider = self._provider
        token = provider.token
        match = provider.auth_header_pat.match(key[0])
        if not token or not getattr(handler, "_token_authenticated", False) or match is None \
                or match.group(2) != token:
            return
        cookie = handler.get_cookie(provider.get_cookie_name(handler))
        if not cookie or provider.get_user_cookie(handler) != user:  # read once per request already (CookieOnce)
            return
        signed = signed_at(cookie)
        if signed is None:
            return
        max_age_days = provider.get_secure_cookie_kwargs.get("max_age_days", 31)
        now = time.time()
        until = min(now + KEEP_S, signed + max_age_days * 86400)
        self._proofs[key] = (copy.copy(user), token, handler.settings.get("cookie_secret"), until, now)
        self._proofs.move_to_end(key)
        while len(self._proofs) > _KEPT:
            self._proofs.popitem(last=False)


async def _awaited(value: Any) -> Any:
    if hasattr(value, "__await__"):
        return await value
    return value


def signed_at(cookie: str) -> float | None:
    """The signing time (epoch seconds) of a tornado signed value (format 1 or 2); None when
    ``cookie`` is neither (the signature itself is the provider's to check)."""
    try:
        if cookie.startswith("2|"):
            rest = cookie[2:]
            for _ in range(2):  # key version, then the timestamp: each "length:value|"
                length, _, rest = rest.partition(":")
                value, rest = rest[:int(length)], rest[int(length) + 1:]
            return float(int(value))
        parts = cookie.split("|")
        return float(int(parts[1])) if len(parts) == 3 else None
    except ValueError:
        return None


class ProvenOnceHandler(CookieOnce):
    """Handler mixin (before jupyter_server's ``APIHandler`` in the bases): its identity provider
    is the server's one :class:`ProvenOnce` when the server runs jupyter_server's built-in token
    (or password) provider, any other provider as it is; ``check_host`` is remembered for a
    ``Host`` value it allowed (module docstring); a request's signed cookie is verified once
    (:class:`~.cookies.CookieOnce`, which the provider's own reads and :class:`ProvenOnce` share)."""

    @property
    def identity_provider(self) -> Any:
        provider = cast(Any, super()).identity_provider
        return proven_once(cast(Any, self).settings, provider) or provider

    def check_host(self) -> bool:
        """jupyter_server's ``check_host``, remembered while it allowed a ``Host`` value that names
        no UNIX socket path (those are looked up on disk each time) under the same settings."""
        handler = cast(Any, self)
        settings = handler.settings
        if known_local(handler.request, settings):
            return True
        allowed = bool(cast(Any, super()).check_host())
        host = handler.request.host or ""
        local: set[tuple[str, tuple[str, ...]]] = settings.setdefault(_HOSTS_KEY, set())
        if allowed and "/" not in host and "%" not in host and len(local) < _KEPT:
            local.add((host, tuple(settings.get("local_hostnames", ["localhost"]))))
        return allowed


def proven_once(settings: Any, provider: Any) -> ProvenOnce | None:
    """The server's one :class:`ProvenOnce` around ``provider`` (its ``settings["identity_provider"]``)
    when that is jupyter_server's built-in token or password provider; None for any other."""
    if type(provider) not in (IdentityProvider, PasswordIdentityProvider):
        return None
    kept: ProvenOnce | None = settings.get(_SETTINGS_KEY)
    if kept is None or kept._provider is not provider:
        kept = settings[_SETTINGS_KEY] = ProvenOnce(provider)
    return kept


def known_local(request: Any, settings: Any) -> bool:
    """True when jupyter_server's ``check_host`` allows ``request`` without looking again: remote
    access is allowed, or it allowed this very ``Host`` value under the same ``local_hostnames``
    (:meth:`ProvenOnceHandler.check_host`); False: ask ``check_host``."""
    if settings.get("allow_remote_access", False):
        return True
    local = settings.get(_HOSTS_KEY)
    return bool(local) and (request.host or "", tuple(settings.get("local_hostnames", ["localhost"]))) in local
