"""A token scoped to the scheduler for the clients' calls through a JupyterHub (verify25 V7).

The CLI, the Python client and the magics reach a hub's scheduler at ``JUPYTER_SCHED_HUB_URL``
(``https://hub/services/jupyter-sched/``) with the user's own hub token (``JUPYTER_SCHED_TOKEN`` from
the hub's token page, or ``JUPYTERHUB_API_TOKEN`` in a user server's terminal), which opens the user's
Jupyter server too (``access:servers``: files, kernels — code run as the user). The hub's proxy forwards
those calls to whatever holds the service's port: while the service is down (a crash, an upgrade) that
may be another account, which then had the user's whole token. So before the first call through the hub
the client asks the hub, with the user's token, for a token of the same user whose only scope is
``access:services!service=<the scheduler>`` and sends that one instead (what a user's server does since
red team 25, R5: :mod:`jupyter_sched.hub.narrow_token`).

The scoped token is kept, per account, in ``jupyter-sched-hub-tokens.json`` in the Jupyter runtime dir
(mode 0600; keyed by a digest of the hub API URL, the service and the user's token, never the token
itself), for :data:`SCOPED_FOR_S` seconds (the hub expires it then), so each CLI command does not mint
one. A user server's terminals and kernels have one the hub minted at spawn (``$JUPYTER_SCHED_SERVICE_TOKEN``,
:mod:`jupyter_sched.hub.spawn_token`), sent as is. A hub that gives none (a token that may make no tokens —
a server's own, since verify26 V3 —, an older hub, the hub not answering) sends nothing: the client raises
:class:`HubTokenError` naming why and the fix (it no longer falls back to the user's own token).

Standard library only: the CLI is a new process per command (:mod:`._http`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import quote, urlsplit

from ..errors import SchedError
from ..safefd import open_fd
from ._http import HttpUnreachable, StdlibHttp
from .discovery import ENV_SERVICE_TOKEN, Connection, jupyter_runtime_dir

__all__ = ["CACHE_FILE", "SCOPED_FOR_S", "HubTokenError", "ScopedToken", "hub_api_url", "renewed_scoped", "scoped",
           "service_of"]

log = logging.getLogger(__name__)

SCOPED_FOR_S = 86400
"""Seconds a minted scoped token lives at the hub (``expires_in``; a hub whose
``token_expires_in_max_seconds`` is lower gives its own maximum)."""

RENEW_BEFORE_S = 3600
"""A kept token with less than this left (seconds) is minted again instead of used."""

CACHE_FILE = "jupyter-sched-hub-tokens.json"
"""The file in the Jupyter runtime dir keeping the scoped tokens of this account."""

_IDENTIFY = ("read:users:name!user", "read:users:groups!user")
"""The scopes the hub adds to every token to name its owner (harmless beside the service's)."""



class HubTokenError(SchedError):
    """No token scoped to the hub's scheduler could be had, and the caller's own token is not sent (verify26 V3)."""

    code = "no_scoped_token"


class HubAddressError(HubTokenError):
    """The address called is not behind a hub: its ``/hub/api`` answered 404 (the scheduler service's own address,
    the value of ``JUPYTER_SCHED_HUB_URL`` in the example jupyterhub_config.py): the fix is the address, not the
    token (red31 N1 / newuser31 N3: this was a traceback in the CLI)."""

    code = "not_the_hub"


class ScopedToken(NamedTuple):
    """A token the hub minted: its value, its id (``a123``) and when it expires (seconds since the epoch; 0 = never)."""

    token: str
    id: str
    expires_at: float


def service_of(url: str) -> str | None:
    """The service name of a hub service URL (``…/services/NAME/``), None for any other URL."""
    named = re.search(r"/services/([^/]+)/?$", urlsplit(url).path)
    return named.group(1) if named else None


def hub_api_url(url: str, env: Mapping[str, str]) -> str:
    """The hub's REST API for a call to the service at ``url``: ``$JUPYTERHUB_API_URL`` (set in a user
    server and its terminals and kernels), else the hub's proxy's ``/hub/api`` at ``url``'s root (the
    README's ``https://hub/services/jupyter-sched/`` from any other shell), "" when neither applies."""
    given = env.get("JUPYTERHUB_API_URL", "").strip()
    if given:
        return given.rstrip("/")
    parts = urlsplit(url)
    at = parts.path.find("/services/")
    if at < 0 or parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}{parts.path[:at]}/hub/api"


def _key(api: str, service: str, token: str) -> str:
    return hashlib.sha256(f"{api}\n{service}\n{token}".encode()).hexdigest()


def _cache_path(runtime_dir: str | None) -> str:
    return os.path.join(runtime_dir or jupyter_runtime_dir(), CACHE_FILE)


def _read_cache(path: str) -> dict[str, Any]:
    """The kept tokens (``{key: {"token", "id", "expires_at"}}``); {} for a missing, unreadable, malformed file or
    one another account could read or write (not trusted)."""
    try:
        fd = open_fd(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            return {}
        with os.fdopen(fd, encoding="utf-8") as fh:
            fd = -1
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    finally:
        if fd >= 0:
            os.close(fd)
    tokens = data.get("tokens") if isinstance(data, dict) else None
    return {k: v for k, v in tokens.items() if isinstance(v, dict) and isinstance(v.get("token"), str)} \
        if isinstance(tokens, dict) else {}


def _write_cache(path: str, tokens: Mapping[str, Any], now: float) -> None:
    """Write ``tokens`` (expired ones left out) to ``path`` with mode 0600, atomically; a folder that
    cannot be written keeps nothing (the next process mints again)."""
    kept = {k: v for k, v in tokens.items() if not v.get("expires_at") or float(v["expires_at"]) > now}
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = open_fd(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"tokens": kept}, fh)
        os.replace(temporary, path)
    except OSError:
        log.debug("jupyter_sched: could not keep the scoped hub token in %s", path, exc_info=True)
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _expiry(model: Mapping[str, Any]) -> float:
    stamp = model.get("expires_at")
    if not isinstance(stamp, str) or not stamp:
        return 0.0
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _narrow_already(scopes: Any, service: str) -> bool:
    """Whether a token with ``scopes`` (``GET /user``'s list) can do no more than call ``service``."""
    if not isinstance(scopes, list):
        return False
    own = f"access:services!service={service}"
    return all(isinstance(s, str) and (s == own or s.startswith(_IDENTIFY)) for s in scopes)


class _Refused(NamedTuple):
    """The hub refused the user's token itself (401/403 on ``GET /user``): the service will say so."""

    status: int


class _NotTheHub(NamedTuple):
    """The hub API was guessed from the scheduler's address and answered 404: that address is not the hub's."""

    status: int


class _HubDown(NamedTuple):
    """The hub did not answer, or answered 5xx: the call is made with no token (its own words say what is down)."""

    why: str


def _mint(api: str, service: str, token: str, timeout_s: float, *,
          guessed: bool = False) -> ScopedToken | _Refused | _HubDown | _NotTheHub | str | None:
    """Ask the hub at ``api`` (with ``token``) for a token of the same user scoped to ``service``. None: ``token``
    is already that narrow; a str: why the hub gave none (a sentence naming the fix). ``guessed``: ``api`` was made
    from the scheduler's address (no ``$JUPYTERHUB_API_URL``), so a 404 says that address is not the hub's."""
    http = StdlibHttp(api + "/", {"Authorization": f"token {token}", "Accept": "application/json"}, timeout_s)
    try:
        who = http.request("GET", "user")
        if who.status in (401, 403):
            return _Refused(who.status)
        if who.status >= 500:
            return _HubDown(f"the hub's API at {api} answered HTTP {who.status} to GET user")
        if who.status == 404 and guessed:
            return _NotTheHub(who.status)
        if who.status != 200:
            return f"the hub's API at {api} answered HTTP {who.status} to GET user"
        model = json.loads(who.body)
        name = model.get("name") if isinstance(model, dict) else None
        if not isinstance(name, str) or not name:
            return f"the hub's API at {api} named no user"
        if _narrow_already(model.get("scopes"), service):
            return None
        body: dict[str, Any] = {"scopes": [f"access:services!service={service}"], "expires_in": SCOPED_FOR_S,
                                "note": f"jupyter-sched client of {name}: calls of the scheduler through the hub"}
        made = http.request("POST", f"users/{quote(name, safe='')}/tokens", body=body)
        if made.status == 400 and "must not exceed" in made.text:  # the hub's token_expires_in_max_seconds
            del body["expires_in"]
            made = http.request("POST", f"users/{quote(name, safe='')}/tokens", body=body)
        if made.status == 403:
            return ("the hub lets this token make no other token (403; a user server's own token may not): "
                    "in a user server's terminal use $JUPYTER_SCHED_SERVICE_TOKEN (the hub's admin sets "
                    "c.Spawner.pre_spawn_hook = jupyter_sched.hub.spawn_token.scheduler_token_hook), elsewhere a "
                    "token from the hub's token page (JUPYTER_SCHED_TOKEN)")
        if made.status != 201:
            return f"the hub answered HTTP {made.status} to the request for a token: {made.text[:200]}"
        minted = json.loads(made.body)
        return ScopedToken(token=str(minted["token"]), id=str(minted.get("id", "")), expires_at=_expiry(minted))
    except HttpUnreachable as exc:
        return _HubDown(f"the hub's API at {api} did not answer ({exc})")
    except (ValueError, KeyError, TypeError):
        return f"the hub's API at {api} answered something that is not a token"
    finally:
        http.close()


def _refuse(why: str, url: str) -> HubTokenError:
    return HubTokenError(f"not calling the scheduler at {url}: your own hub token opens your Jupyter server too, "
                         f"and no token that may only call the scheduler could be had: {why}",
                         hint="set JUPYTERHUB_API_URL to the hub's API (https://HUB/hub/api) and use a token from the "
                              "hub's token page (JUPYTER_SCHED_TOKEN); in a user server's terminal "
                              "$JUPYTER_SCHED_SERVICE_TOKEN is used")


def scoped(connection: Connection, env: Mapping[str, str], *, timeout_s: float = 10.0,
           runtime_dir: str | None = None, now: Callable[[], float] = time.time) -> Connection:
    """``connection`` with a token scoped to its hub service instead of the user's own, when it calls a hub's
    service (``…/services/NAME/``) with a token: the one kept in the runtime dir, else one minted now (and kept).
    Unchanged for any other connection, a token already that narrow (the server's ``$JUPYTER_SCHED_SERVICE_TOKEN``)
    or a token the hub refuses (the service will refuse it too, and say so). With NO token when the hub does not
    answer (or answers 5xx): the call then says what is down, and the caller's own token went nowhere.

    Args:
        connection: where the client calls and with what token (:func:`~.discovery.discover`).
        env: the environment (``JUPYTERHUB_API_URL``).
        timeout_s: seconds for each of the (at most three) requests to the hub.
        runtime_dir: where the kept tokens are (default: Jupyter's runtime dir).
        now: seconds since the epoch.

    Raises:
        HubTokenError: the hub gives no scoped token (nothing is sent with the caller's own).
        HubAddressError: the address is not the hub's (its ``/hub/api`` answered 404): the fix is the address.
    """
    service = service_of(connection.url)
    if service is None or not connection.token or connection.token_from or connection.hub_token:
        return connection
    if connection.token == env.get(ENV_SERVICE_TOKEN, "").strip():
        return connection  # minted by the hub at spawn, scoped to the scheduler (verify26 V3)
    api = hub_api_url(connection.url, env)
    if not api:
        raise _refuse("no hub API is known to ask for one: set JUPYTERHUB_API_URL (https://HUB/hub/api)",
                      connection.url)
    path, key = _cache_path(runtime_dir), _key(api, service, connection.token)
    kept = _read_cache(path)
    entry = kept.get(key)
    if entry is not None and (not entry.get("expires_at") or float(entry["expires_at"]) > now() + RENEW_BEFORE_S):
        return connection._replace(token=str(entry["token"]), hub_token=connection.token)
    minted = _mint(api, service, connection.token, timeout_s, guessed=not env.get("JUPYTERHUB_API_URL", "").strip())
    if isinstance(minted, _NotTheHub):
        raise HubAddressError(
            f"{connection.url} is not the hub's address: its {api} answered HTTP {minted.status} to GET user, as the "
            "scheduler service's own address does; nothing was sent to the scheduler",
            field="url",
            hint=f"use the hub's address, http(s)://HUB/services/{service}/ (JUPYTER_SCHED_HUB_URL or --url), or set "
                 "JUPYTERHUB_API_URL to the hub's API (http(s)://HUB/hub/api)")
    if minted is None or isinstance(minted, _Refused):
        return connection
    if isinstance(minted, _HubDown):
        log.debug("jupyter_sched: calling %s with no token: %s", connection.url, minted.why)
        return connection._replace(token="")
    if isinstance(minted, str):
        raise _refuse(minted, connection.url)
    kept[key] = minted._asdict()
    _write_cache(path, kept, now())
    return connection._replace(token=minted.token, hub_token=connection.token)


def renewed_scoped(connection: Connection, env: Mapping[str, str], *, timeout_s: float = 10.0,
                   runtime_dir: str | None = None, now: Callable[[], float] = time.time) -> Connection | None:
    """After the service refused ``connection``'s scoped token (401/403): a newly minted one when the hub no
    longer takes the kept one (deleted on the token page, expired early), for the caller to send the request
    again; None when the hub still takes it (the refusal is the service's word) or it is not a scoped one."""
    if not connection.hub_token:
        return None
    api = hub_api_url(connection.url, env)
    http = StdlibHttp(api + "/", {"Authorization": f"token {connection.token}", "Accept": "application/json"},
                      timeout_s)
    try:
        if http.request("GET", "user").status not in (401, 403):
            return None
    except HttpUnreachable:
        return None
    finally:
        http.close()
    service = service_of(connection.url) or ""
    path = _cache_path(runtime_dir)
    kept = _read_cache(path)
    kept.pop(_key(api, service, connection.hub_token), None)
    _write_cache(path, kept, now())
    fresh = scoped(connection._replace(token=connection.hub_token, hub_token=""), env, timeout_s=timeout_s,
                   runtime_dir=runtime_dir, now=now)
    return fresh if fresh.token != connection.token else None
