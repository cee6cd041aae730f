"""Whether a TCP port is bound on this host, by a real bind — the edge's check behind the cycle's
``Snapshot.ports_bound_outside`` and the submit warning (red team 17, R3).

A port a process *outside* the scheduler listens on (a notebook terminal's ``python3 -m
http.server 18888``) was seen by nobody: a service declaring it was admitted, charged for its GPU
and failed "port 18888 is already in use". :class:`BoundPorts` binds each pending service's
declared port before the cycle (bounded: only ports of pending inference jobs, at most
:data:`MOST_CHECKED` a cycle, ~20 us each), so the job pends with a true reason instead. Who holds
the port is another account's business: the job's owner is told only "a process outside the
scheduler"; the service log (admins) names the socket's account and uid, once per port per
:data:`HOLDER_LOG_EVERY_S` — from the kernel's answer for that one port (:func:`~.port_owner.listening_uids`; red36
R1), never a scan of every process's descriptors (red35 R5) nor of the host's listening table (where the kernel
cannot be asked, the table read once a cycle, bounded, shared with the services' looks). Once a port has stayed
bound for :data:`HOLDER_NAMED_AFTER_S` its holder's account is named to the waiting job's owner too
(:meth:`BoundPorts.holders`, ``Snapshot.port_holders``; red31 R6: a user kept another's service pending for good by
binding its port, and its owner could not tell whom to ask) — not at once, so that declaring ports does not become a
quick way to learn who listens where.
"""

from __future__ import annotations

import errno
import logging
import pwd
import socket
import time
from collections.abc import Callable, Iterable

from .port_owner import listening_uids

__all__ = ["HOLDER_LOG_EVERY_S", "HOLDER_NAMED_AFTER_S", "MOST_CHECKED", "BoundPorts", "port_account", "port_bound",
           "port_holder"]

log = logging.getLogger(__name__)

MOST_CHECKED = 64
"""Most ports bound per cycle (the lowest first); the others are looked at in later cycles once these start."""
HOLDER_LOG_EVERY_S = 600.0
"""Seconds between two service-log lines naming the holder of one port."""
HOLDER_NAMED_AFTER_S = 600.0
"""Seconds a declared port stays bound outside the scheduler before its holder's account is named to the
waiting job's owner (10 min)."""


def port_bound(port: int) -> bool:
    """Whether a socket on this host listens on TCP ``port`` (IPv4 or IPv6, any address): a bind of
    the wildcard address fails with EADDRINUSE (SO_REUSEADDR: a closed connection's TIME_WAIT is no
    holder). False when it binds, or cannot be told (no IPv6, a port this account may not bind)."""
    for family, address in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind((address, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
    return False


def port_holder(port: int) -> str:
    """``a socket of red17b (uid 1002)`` listening on TCP ``port``, for the service log (``an unknown process``
    when none is found). The kernel's answer for the port (:func:`~.port_owner.listening_uids`), never a scan of
    every process's descriptors on the engine's thread (red35 R5: psutil's host-wide ``net_connections()`` per
    port, 2.5 s each with 95,000 descriptors a user opened: 60 ports, 98 s of no scheduling) nor of the host's
    listening table (red36 R1); admins name its process with ``ss -ltnp``."""
    uid = _listener_uid(port)
    if uid is None:
        return "an unknown process"
    return f"a socket of {_account(uid)} (uid {uid}; `ss -ltnp 'sport = :{port}'` names its process)"


def port_account(port: int) -> str | None:
    """The account of the socket listening on TCP ``port`` (None: none found) — the socket's owner, as the kernel
    says it (:func:`port_holder`)."""
    uid = _listener_uid(port)
    return None if uid is None else _account(uid)


def _listener_uid(port: int) -> int | None:
    return next(iter(listening_uids(port) or ()), None)


def _account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


class BoundPorts:
    """``ports -> the bound ones`` for the decider (``Decider.bound_ports``), logging each bound
    port's holder for admins (module docstring).

    Args:
        bound: the bind check (:func:`port_bound`).
        holder: who listens on a port (:func:`port_holder`).
        monotonic: the clock of :data:`HOLDER_LOG_EVERY_S`.
    """

    def __init__(self, *, bound: Callable[[int], bool] = port_bound,
                 holder: Callable[[int], str] = port_holder,
                 account: Callable[[int], str | None] = port_account,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.bound = bound
        self.holder = holder
        self.account = account
        self.monotonic = monotonic
        self._logged: dict[int, float] = {}
        self._since: dict[int, float] = {}
        """Each port bound at the last call: since when (monotonic) it was bound at every call."""
        self._named: dict[int, str] = {}

    def holders(self) -> dict[int, str]:
        """``{port: account}`` of the ports bound at the last call that stayed bound for
        :data:`HOLDER_NAMED_AFTER_S` or more (their holder's account read once per stretch, the kernel asked for
        each port; a holder that cannot be told is left out)."""
        now = self.monotonic()
        due = [port for port, since in self._since.items() if port not in self._named and now - since >= HOLDER_NAMED_AFTER_S]
        for port in due:
            self._named[port] = self.account(port) or ""
        return {port: who for port, who in self._named.items() if who}

    def __call__(self, ports: Iterable[int]) -> frozenset[int]:
        """The ports of ``ports`` (at most :data:`MOST_CHECKED`, lowest first) bound on this host."""
        found = frozenset(port for port in sorted(set(ports))[:MOST_CHECKED] if self.bound(port))
        now = self.monotonic()
        self._since = {port: self._since.get(port, now) for port in found}  # a port freed meanwhile starts again
        self._named = {port: who for port, who in self._named.items() if port in found}
        due = [port for port in sorted(found) if now - self._logged.get(port, -HOLDER_LOG_EVERY_S) >= HOLDER_LOG_EVERY_S]
        for port in due:
            self._logged[port] = now
            log.warning("port %d, declared by a pending service, is bound by %s outside the scheduler; the "
                        "service waits until it is free", port, self.holder(port))
        for port in [p for p in self._logged if p not in found and now - self._logged[p] >= HOLDER_LOG_EVERY_S]:
            del self._logged[port]
        return found
