"""Who answers at a loopback hub API address: the hub, or another account (red31 R4).

The service calls the hub API (``$JUPYTERHUB_API_URL``, ``http://127.0.0.1:8081/hub/api`` by default — a port any
local account may bind while the hub restarts) with its own token and with each caller's, and believes the answer:
``admin``, ``groups`` and ``scopes`` make a scheduler admin. So every connection the service (and a user's server)
makes to a loopback hub API address is checked once connected, before the first byte
(:func:`jupyter_sched.hub.peer.loopback_refusal`): it must have been accepted by root, this process's account or one
of the hub's accounts (``c.HubSchedApp.hub_uids``, or ``$JUPYTER_SCHED_HUB_UIDS``: comma-separated uids). Another
account's connection is closed unused — nothing sent, the token least of all — said once in the log (ERROR), and the
request fails as "the hub did not answer" (never as that account's identity).

The clients: :func:`hub_client` / :func:`hub_sync_client` (httpx over :mod:`.guarded`'s transports) for the
service's own requests, and :func:`guard_hub_auth` for JupyterHub's own aiohttp client (HubAuth's token checks).
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from collections.abc import Collection
from typing import Any

import httpx

from .guarded import guarded_sync_transport, guarded_transport
from .peer import Refusal, loopback_refusal

__all__ = ["ENV_HUB_UIDS", "HubSquatted", "guard_hub_auth", "hub_client", "hub_refusal", "hub_sync_client",
           "hub_uids", "set_hub_uids"]

log = logging.getLogger(__name__)

ENV_HUB_UIDS = "JUPYTER_SCHED_HUB_UIDS"
"""Comma-separated uids the hub runs as, where it is not root (a user's server and the service both read it)."""

_configured: frozenset[int] = frozenset()
_said: set[tuple[str, int | None]] = set()
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, httpx.AsyncClient]] = \
    weakref.WeakKeyDictionary()


class HubSquatted(OSError):
    """A loopback hub API connection was accepted by another account: closed unused (aiohttp's connector)."""


def set_hub_uids(uids: Collection[int]) -> None:
    """The hub's accounts from ``c.HubSchedApp.hub_uids`` (the service sets them at start)."""
    global _configured
    _configured = frozenset(int(uid) for uid in uids)


def hub_uids() -> frozenset[int]:
    """The uids that may accept a loopback hub API connection besides root and this process's own."""
    from_env = set()
    for part in os.environ.get(ENV_HUB_UIDS, "").split(","):
        if part.strip().isdigit():
            from_env.add(int(part.strip()))
    return _configured | from_env


def hub_refusal(sock: Any) -> Refusal | None:
    """Why nothing may be sent over ``sock`` (connected to the hub API), or None; a refusal is said once per
    address and account as an ERROR."""
    said = loopback_refusal(
        sock, allowed_uids=hub_uids(), held=lambda where: f"the hub API's address {where}",
        doing="not sending the request nor its token, and believing nothing from it", service="the hub",
        gone_fix="restart the hub, with its API on a port below 1024",
        held_fix=lambda uid: ("stop that process and restart the hub, with its API on a port below 1024 "
                              "(c.JupyterHub.hub_bind_url); if the hub really runs as uid "
                              f"{uid}, add it to c.HubSchedApp.hub_uids"))
    if said is not None and (said.address, said.uid) not in _said:
        _said.add((said.address, said.uid))
        log.error("jupyter_sched: %s", said)
    return said


def hub_client(timeout_s: float) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` for the hub API whose every new loopback connection passes :func:`hub_refusal`
    (a refused one raises :class:`jupyter_sched.hub.guarded.ListenerRefused`, an ``httpx.ConnectError``). One per
    event loop and timeout, kept (its connections are reused by the hub poll's pages)."""
    loop = asyncio.get_running_loop()
    per_loop = _clients.setdefault(loop, {})
    client = per_loop.get(timeout_s)
    if client is None or client.is_closed:
        client = per_loop[timeout_s] = httpx.AsyncClient(timeout=timeout_s, transport=guarded_transport(hub_refusal),
                                                          trust_env=False)
    return client


def hub_sync_client(timeout_s: float) -> httpx.Client:
    """The blocking twin of :func:`hub_client` (a new one: close it)."""
    return httpx.Client(timeout=timeout_s, transport=guarded_sync_transport(hub_refusal), trust_env=False)


def guard_hub_auth(client: Any) -> None:
    """Make JupyterHub's own HTTP client (``jupyterhub.httpclient.JupyterHubHTTPClient``: HubAuth's token checks)
    check each new connection with :func:`hub_refusal`: its connector's connections are checked once made; a refused
    one is closed and fails as a connection error (HubAuth: "Failed to connect to Hub API", said as 503 "the
    scheduler could not ask the hub who you are"). Idempotent; call before the client's session is made."""
    if getattr(client, "_jupyter_sched_guarded", False):
        return
    make = client._new_connector

    def new_connector() -> Any:
        connector = make()
        create = connector._create_connection

        async def create_connection(req: Any, traces: Any, timeout: Any) -> Any:
            proto = await create(req, traces, timeout)
            transport = getattr(proto, "transport", None)
            sock = transport.get_extra_info("socket") if transport is not None else None
            said = hub_refusal(sock) if sock is not None and hasattr(sock, "getpeername") else None
            if said is not None:
                proto.close()
                raise HubSquatted(str(said))
            return proto

        connector._create_connection = create_connection
        return connector

    client._new_connector = new_connector
    client._jupyter_sched_guarded = True
