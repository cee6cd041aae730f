"""Whom a user's server sends its hub token to (red team 25, R5).

A user's server forwards to the central service with its owner's hub token (:mod:`.forward`). While
``jupyter-sched serve`` is down (a crash, an upgrade, a restart) any local account could bind its
unprivileged loopback port and collect every running server's token within one kernel report. So before
each request the forwarder asks :func:`refusal` whether the address may have the token:

* a loopback address (``127.0.0.0/8``, ``::1``, ``localhost``): every socket LISTENing on that port
  that takes connections to it (the address itself or a wildcard) must belong to root, to the account
  this server runs as (it can read the token anyway), or to a uid of ``c.SchedApp.hub_service_uids``.
  The owner comes from the kernel's ``sock_diag`` — one lookup of the listener the kernel would give a
  connection to that address and port (:func:`~jupyter_sched.sock_diag.listening_at`; red27 R6, red36 R4: a dump of
  the port's listeners at every address was another account's to size), else from ``/proc/net/tcp`` and
  ``/proc/net/tcp6`` (Linux; readable without privilege, unlike other accounts' processes); no listener at all is
  left to the connection (refused);
* any other address: ``https`` (certificates verified), unless ``c.SchedApp.hub_service_network_trusted``
  says the network between servers and the service is the admin's own (a cluster's network).

The answer is one sentence for the server's log (said once per holder by the caller), or None.

That check runs before the connection exists, so a squatter toggling its listener could pass it and then
accept the connection (verify26 V5). :func:`guarded_transport` therefore also checks each CONNECTED
socket before its first byte (:func:`.peer.connected_refusal`: who accepted it).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Collection
from pathlib import Path

import httpx

from .. import sock_diag
from ..extension.job_tokens import loopback_host
from .guarded import Check, ListenerRefused, guarded_sync_transport, guarded_transport
from .peer import Refusal, proc_address, tcp_rows

__all__ = ["Check", "ListenerRefused", "TokenWithheld", "first_unprivileged_port", "guarded_sync_transport",
           "guarded_transport", "listener_uids", "refusal"]

_LISTEN = "0A"
_PROC_NET = Path("/proc/net")


class TokenWithheld(httpx.ConnectError):
    """Nothing was sent: the only token at hand is the server's own, which opens the server (verify26 V3)."""


def first_unprivileged_port(path: Path = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")) -> int:
    """The lowest port any account may bind (Linux's ``net.ipv4.ip_unprivileged_port_start``; 1024 elsewhere)."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return 1024


def _targets(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
    return [ipaddress.ip_address(host)]


_address = proc_address


def _takes(listening: ipaddress.IPv4Address | ipaddress.IPv6Address,
           target: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a socket listening on ``listening`` may accept a connection to ``target``."""
    if listening == target or listening.is_unspecified:
        return listening.version == target.version or listening.version == 6  # [::] takes IPv4 too (dual stack)
    mapped = listening.ipv4_mapped if isinstance(listening, ipaddress.IPv6Address) else None
    return mapped is not None and mapped == target


def listener_uids(host: str, port: int, *, proc_net: Path | None = None) -> list[int] | None:
    """The uids of the TCP sockets LISTENing on ``port`` that take connections to ``host`` (a loopback
    address or ``localhost``); ``[]`` when none; None when neither ``sock_diag`` nor ``/proc/net/tcp`` can be
    read (not Linux). ``proc_net``: a folder written as ``/proc/net`` to read instead of asking the kernel (tests);
    None: the kernel's ``sock_diag``, one lookup per address of ``host`` (the listener it would hand that connection;
    :func:`~jupyter_sched.sock_diag.listening_at`) — at most one socket decoded each, whatever listens on the port at
    other addresses (red36 R4: another account's 56,000 listeners on 127.x.y.z and fd00:: at the service's port made
    each check 1.4-7 s, before every forwarded request) and whatever other connections exist (``/proc/net/tcp`` is
    generated whole — red27 R6); ``/proc/net`` only where the kernel cannot be asked."""
    targets = _targets(host)
    if proc_net is None:
        held = [sock_diag.listening_at(target, port) for target in targets]
        if all(found is not None for found in held):
            sockets = {inode: uid for found in held for _, uid, inode in found or ()}  # [::] answers for both
            return list(sockets.values())
    uids: list[int] = []
    rows = tcp_rows(_LISTEN, proc_net or _PROC_NET)
    for fields in rows or ():
        hex_address, _, hex_port = fields[1].partition(":")
        try:
            if int(hex_port, 16) != port:
                continue
            listening = _address(hex_address)
            uid = int(fields[7])
        except ValueError:
            continue
        if any(_takes(listening, target) for target in targets):
            uids.append(uid)
    return uids if rows is not None else None


def refusal(url: httpx.URL, *, allowed_uids: Collection[int], network_trusted: bool,
            proc_net: Path | None = None) -> str | None:
    """Why the hub token must not go to ``url``, or None when it may (see the module docstring).

    Args:
        url: where the request goes (the central service).
        allowed_uids: uids besides root and this process's own that may hold a loopback address.
        network_trusted: plain ``http`` to a non-loopback address is allowed.
    """
    host = url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    if not loopback_host(host):
        if url.scheme == "https" or network_trusted:
            return None
        return (f"the scheduler's address {where} is plain http on the network: not sending the token "
                "(anyone on the way could read it). Fix: serve it over https, or set "
                "c.SchedApp.hub_service_network_trusted = True if that network is only the hub's")
    uids = listener_uids(host, port, proc_net=proc_net)
    if not uids:  # nobody listens (the connection is refused), or no /proc/net/tcp to ask
        return None
    allowed = {0, os.geteuid(), *allowed_uids}
    stranger = next((uid for uid in uids if uid not in allowed), None)
    if stranger is None:
        return None
    return Refusal(f"the scheduler's address {where} is held by uid {stranger}, not the service: not sending the "
                   "token (another account may have taken the port while the service was down). Fix: stop that "
                   "process and restart jupyter-sched serve, and give the service a port below 1024; if the service "
                   f"really runs as uid {stranger}, add it to c.SchedApp.hub_service_uids", uid=stranger, address=where)
