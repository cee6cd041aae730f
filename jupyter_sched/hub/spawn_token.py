"""The scheduler-only token of a user's server, minted by the HUB at spawn (verify26 V3).

A user's server calls the scheduler with a token of its owner whose only scope is the scheduler
service's (red team 25, R5). Session 25 had the server mint it itself with its own token, which
needed ``tokens!user`` on the hub's ``server`` role — and so let ANY server token (a terminal's
``$JUPYTERHUB_API_TOKEN``, a log, a printed environment) mint a never-expiring token with the
user's full scopes. Now the hub mints it, in the spawner's ``pre_spawn_hook``, and the ``server``
role holds no ``tokens`` scope::

    from jupyter_sched.hub.spawn_token import scheduler_token_hook
    c.Spawner.pre_spawn_hook = scheduler_token_hook
    # with a hook of your own: c.Spawner.pre_spawn_hook = chain_hooks(my_hook, scheduler_token_hook)

The hook gives the server ``$JUPYTER_SCHED_SERVICE_TOKEN`` (:data:`SERVICE_TOKEN_ENV`): scopes
``access:services!service=<name>`` (the hub adds the scopes naming its owner), expiring after
:data:`EXPIRES_IN_S`, noted ``jupyter-sched: server <name>`` (:func:`note_of`); that server's older
such tokens are deleted at each spawn — and at each stop, by the spawner's ``post_stop_hook``
(:func:`revoke_token_hook`, verify27 V1: the token outlived its server, 30 days of "run code as this
user" after a stop or an idle cull)::

    from jupyter_sched.hub.spawn_token import revoke_token_hook
    c.Spawner.post_stop_hook = revoke_token_hook
    # with a hook of your own: c.Spawner.post_stop_hook = chain_hooks(my_stop_hook, revoke_token_hook)

The scheduler service trusts the hub's answer about a token for ``c.HubIdentityProvider.token_cache_s``
(30 s): a revoked token is refused by the hub at once and by the service within that. A user the hub
deletes takes their tokens with them (JupyterHub deletes a removed user's tokens). The forwarder (:mod:`.forward`) and the clients in the
server's terminals and kernels (:mod:`jupyter_sched.client`) send it instead of the server's own token.

Runs in the hub's process: standard library only (``spawner`` is JupyterHub's Spawner).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["EXPIRES_IN_S", "SERVICE_TOKEN_ENV", "chain_hooks", "note_of", "revoke_token_hook", "scheduler_token_hook",
           "service_name"]

SERVICE_TOKEN_ENV = "JUPYTER_SCHED_SERVICE_TOKEN"
"""The user server's environment variable holding its scheduler-only token."""

EXPIRES_IN_S = 30 * 86400
"""Seconds the minted token lives (30 days; a server running longer calls the scheduler again once respawned)."""

_HUB_URL_ENV = "JUPYTER_SCHED_HUB_URL"


def service_name(environment: dict[str, Any]) -> str:
    """The scheduler's service name: ``NAME`` of ``$JUPYTER_SCHED_HUB_URL``'s ``…/services/NAME/``, else ``jupyter-sched``."""
    named = re.search(r"/services/([^/]+)/?$", urlsplit(str(environment.get(_HUB_URL_ENV, ""))).path)
    return named.group(1) if named else "jupyter-sched"


def note_of(server_name: str) -> str:
    """The note of the scheduler token of the user's server ``server_name`` ("" = the default server)."""
    return f"jupyter-sched: server {server_name or '(default)'}"


def scheduler_token_hook(spawner: Any) -> None:
    """``c.Spawner.pre_spawn_hook``: mint the server's scheduler-only token (deleting the server's older ones)
    and put it in ``spawner.environment[SERVICE_TOKEN_ENV]``.

    Raises:
        ValueError: the hub refuses the scopes (the user may not call the service: add
            ``access:services!service=<name>`` to the ``user`` role in ``c.JupyterHub.load_roles``).
    """
    environment = dict(spawner.environment or {})  # a copy: the configured dict may be shared by every spawner
    service = service_name(environment)
    note = note_of(getattr(spawner, "name", "") or "")
    user = spawner.user
    _delete_tokens(user, note)
    token = user.new_api_token(scopes=[f"access:services!service={service}"], expires_in=EXPIRES_IN_S, note=note)
    environment[SERVICE_TOKEN_ENV] = token
    spawner.environment = environment


def revoke_token_hook(spawner: Any) -> None:
    """``c.Spawner.post_stop_hook``: delete the stopped server's scheduler-only token(s) (verify27 V1), so a
    token read from its environment (a printed ``env``, a log) dies with the server as the server's own
    token does. JupyterHub runs it after every stop (a user's, an admin's, an idle cull, a failed start);
    the hub refuses the token at once, the service after ``c.HubIdentityProvider.token_cache_s`` (30 s)."""
    _delete_tokens(spawner.user, note_of(getattr(spawner, "name", "") or ""))


def _delete_tokens(user: Any, note: str) -> int:
    """Delete ``user``'s API tokens noted ``note`` (one server's scheduler tokens); how many."""
    gone = [t for t in user.api_tokens if t.note == note]
    for old in gone:
        user.db.delete(old)
    user.db.commit()
    return len(gone)


def chain_hooks(*hooks: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """One ``pre_spawn_hook`` (or ``post_stop_hook``) running ``hooks`` in order (each may be a coroutine
    function, awaited)."""

    async def chained(spawner: Any) -> None:
        for hook in hooks:
            result = hook(spawner)
            if hasattr(result, "__await__"):
                await result

    return chained
