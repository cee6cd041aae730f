"""Whose ``X-Forwarded-For`` the front door believes: the proxies named in ``c.FrontDoor.trusted_proxies`` (red 29, R1).

The front door counts the first requests of credentials not seen before per *origin* — through the hub's proxy, the
client address the proxy appends to ``X-Forwarded-For`` (:func:`~.fair_share.share_key`) — so a flood of made-up
tokens from one browser does not take every other host's first requests (session 25, verify 28 V6). The header is
the caller's own word on a connection that did not come through the proxy: anyone who reached the service's port
directly sent each made-up token with a different forged address, 8 forged origins took all 256 waiting checks, and
every new token's first request (also through the proxy) was answered 429 for as long as the flood ran. As nginx's
``set_real_ip_from``, Werkzeug's ``ProxyFix`` and tornado's ``xheaders`` do, the header is now believed only from a
peer (the connection's socket address) named here; any other peer is its own origin, whatever it says.

On a hub whose proxy runs on the service's host every local account shares that address (loopback) with the
proxy: a local user connecting straight to the service still filled the loopback peer's bound and starved the
proxy's first requests (red29's control run). Where the kernel says who opened a loopback connection
(``sock_diag``: :func:`~.peer.connecting_uid`), the peer is also told by its account (:func:`peer_name`): the
proxy's accounts (root, the account the service runs as, ``c.FrontDoor.proxy_uids``) are the loopback address
itself, any other local account is a peer of its own (``"127.0.0.1 (uid 1022)"``) — never a trusted proxy, its
checks bounded as one origin. Where the kernel cannot be asked, every loopback connection is the address, as before.

Pure: parsing and matching addresses, no I/O.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterable

__all__ = ["DEFAULT_TRUSTED_PROXIES", "LOOPBACK_PROXY", "PROXY_UIDS_SETTING", "TRUSTED_SETTING", "TrustedProxies",
           "is_loopback", "local_accounts_unknown", "parse_trusted_proxies", "peer_name", "proxy_uids"]

TRUSTED_SETTING = "c.FrontDoor.trusted_proxies"
PROXY_UIDS_SETTING = "c.FrontDoor.proxy_uids"
DEFAULT_TRUSTED_PROXIES = ("127.0.0.1", "::1")
"""The addresses JupyterHub's proxy (configurable-http-proxy) connects from when it runs on the service's host."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_trusted_proxies(values: Iterable[str]) -> tuple[Network, ...]:
    """``values`` (addresses or CIDR blocks, e.g. ``"10.0.0.5"``, ``"10.1.0.0/16"``, ``"::1"``) as networks.

    Raises ValueError naming the first value that is neither, and the fix."""
    networks = []
    for value in values:
        text = str(value).strip()
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{TRUSTED_SETTING}: {text!r} is not an IP address or CIDR block (e.g. '10.0.0.5', "
                             "'10.1.0.0/16', '::1'). Fix: give the address your hub's proxy connects to this "
                             "service from") from None
    return tuple(networks)


class TrustedProxies:
    """The peers whose ``X-Forwarded-For`` is believed (:meth:`trusts`)."""

    def __init__(self, values: Iterable[str] = DEFAULT_TRUSTED_PROXIES) -> None:
        self.networks = parse_trusted_proxies(values)
        self._seen: dict[str, bool] = {}

    def trusts(self, peer: str) -> bool:
        """Whether ``peer`` (a socket address as text; an IPv4-mapped IPv6 address counts as its IPv4 one) is a
        trusted proxy. Not an address (a Unix socket, ``"unknown"``): False."""
        known = self._seen.get(peer)
        if known is not None:
            return known
        try:
            address = ipaddress.ip_address(peer.split("%", 1)[0])
        except ValueError:
            trusted = False
        else:
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
                address = address.ipv4_mapped
            trusted = any(address.version == network.version and address in network for network in self.networks)
        if len(self._seen) >= 4096:
            self._seen.clear()
        self._seen[peer] = trusted
        return trusted


LOOPBACK_PROXY = TrustedProxies()
"""The default: the proxy on this host (its loopback addresses)."""


def is_loopback(peer: str) -> bool:
    """Whether ``peer`` (a socket address as text) is a loopback address (an IPv4-mapped one included)."""
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def proxy_uids(configured: Iterable[int], service_uid: int) -> frozenset[int]:
    """The accounts whose loopback connections are the hub's proxy's: root, ``service_uid`` (the account the service
    runs as: JupyterHub starts its proxy and its services as its own account) and ``configured``
    (``c.FrontDoor.proxy_uids``)."""
    return frozenset({0, int(service_uid), *(int(uid) for uid in configured)})


def peer_name(address: str, uid: int | bool | None, proxies: Collection[int]) -> str:
    """The peer a connection from ``address`` counts as, told by ``uid`` — the account that opened it
    (:func:`~.peer.connecting_uid`; asked only for loopback connections): ``address`` itself for one of ``proxies``
    (:func:`proxy_uids`), for a connection from elsewhere (``uid`` None) and where the kernel cannot say (None);
    ``"ADDRESS (uid N)"`` for another local account and ``"ADDRESS (account not known)"`` when the connecting socket
    was gone already (False) — peers of their own, never a trusted proxy (red29 R1 on a same-host hub)."""
    if uid is None or (uid is not False and uid in proxies):
        return address
    if uid is False:
        return f"{address} (account not known)"
    return f"{address} (uid {int(uid)})"


def local_accounts_unknown(proxies: Collection[int] | None = None) -> str:
    """What it means that the kernel's ``sock_diag`` cannot be asked here (service start and ``jupyter-sched doctor``
    say it): loopback connections are not told apart by account. ``proxies``: the proxy's accounts (None: not
    known here, the doctor)."""
    who = (" (" + ", ".join(["root", *(f"uid {uid}" for uid in sorted(proxies) if uid)]) + ")") if proxies else ""
    return ("the kernel's sock_diag cannot be asked here, so the service cannot tell which local account opened a "
            f"loopback connection: every local account counts as the hub's proxy{who} there, and one local user "
            "flooding the service directly with made-up tokens can have the proxy's first requests answered 429 "
            "(red team 29, R1). Fix: a Linux kernel with inet_diag (modprobe inet_diag; as `ss -t` needs), netlink "
            f"sockets allowed to the service; {PROXY_UIDS_SETTING} then names the proxy's account if it is not the "
            "service's")
