"""Whose ``X-Forwarded-For`` the front door believes: the proxies named in ``c.FrontDoor.trusted_proxies`` (red 29, R1).

The front door counts the first requests of credentials not seen before per *origin* — through the hub's proxy, the
client address the proxy appends to ``X-Forwarded-For`` (:func:`~.fair_share.share_key`) — so a flood of made-up
tokens from one browser does not take every other host's first requests (session 25, verify 28 V6). The header is
the caller's own word on a connection that did not come through the proxy: anyone who reached the service's port
directly sent each made-up token with a different forged address, 8 forged origins took all 256 waiting checks, and
every new token's first request (also through the proxy) was answered 429 for as long as the flood ran. As nginx's
``set_real_ip_from``, Werkzeug's ``ProxyFix`` and tornado's ``xheaders`` do, the header is now believed only from a
peer (the connection's socket address) named here; any other peer is its own origin, whatever it says.

Pure: parsing and matching addresses, no I/O.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

__all__ = ["DEFAULT_TRUSTED_PROXIES", "LOOPBACK_PROXY", "TRUSTED_SETTING", "TrustedProxies", "parse_trusted_proxies"]

TRUSTED_SETTING = "c.FrontDoor.trusted_proxies"
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
