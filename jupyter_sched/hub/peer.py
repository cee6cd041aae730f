"""Who accepted a loopback TCP connection: checked on the CONNECTED socket (verify26 V5, V2).

:func:`.listener.refusal` looks at who LISTENs on the service's port before a request; a squatter that
opens and closes its listener every few milliseconds passes that check and then accepts the connection
made right after it (check-then-connect). Here the connection itself is checked, after connect and before
the first byte: the socket that accepted it is the row of ``/proc/net/tcp`` (or ``tcp6``) whose local
address is the service's and whose remote address is this socket's own; the kernel gives it the uid of the
listening socket that took the connection. Readable without privilege; standard library only (the CLI).

The kernel is asked for that one socket over ``sock_diag`` (:mod:`~jupyter_sched.sock_diag`: one lookup, whatever else the host
holds — red27 R6: the file is generated whole at each read, 150-350 ms at 18,000 rows); the file is read only where
``sock_diag`` cannot be asked, and once when the kernel never found the socket (its last word before refusing).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Protocol

from .. import sock_diag

__all__ = ["Refusal", "accepting_uid", "connected_refusal", "connecting_uid", "is_local_address", "loopback_refusal",
           "proc_address", "proc_hex", "tcp_rows", "trusted_uids"]

_PROC_NET = Path("/proc/net")
_ESTABLISHED = "01"
_TRIES = 20
_PAUSE_S = 0.002
"""The accepting side's row may appear a moment after connect() returned: looked for up to ~40 ms."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refusal(str):
    """Why nothing may be sent over a connected socket (one sentence with the fix). ``gone``: no live socket holds
    the other end any more — the accepting process died between connect and the check (a service being restarted;
    a squatter toggling its listener looks the same), so a caller that rides out a restart may connect again.
    ``address`` (``host:port``, "" when not said) and ``uid``: who held the service's address (None: no live socket,
    or not said) — what a user server reports to the service once it answers again (:mod:`.squat_log`; verify26 V8)."""

    gone: bool
    uid: int | None
    address: str

    def __new__(cls, text: str, *, gone: bool = False, uid: int | None = None, address: str = "") -> Refusal:
        made = super().__new__(cls, text)
        made.gone, made.uid, made.address = gone, uid, address
        return made


class Connected(Protocol):
    """A connected socket: ``socket.socket``, or asyncio's ``TransportSocket`` of one."""

    def getsockname(self) -> Any: ...

    def getpeername(self) -> Any: ...


def is_local_address(address: Address) -> bool:
    """Whether a connection to ``address`` reaches this host (this network namespace): a loopback or unspecified
    address, or one of this host's own (its LAN address, the one its name resolves to). Then another local account
    may be the one listening there, however the address was spelled (red32 R1: a store URL naming this host by its
    hostname, a hub API at the host's LAN address, passed every check keyed to the word "loopback").

    Asked of the kernel: an address it lets a socket bind to is its own (one ``bind`` of a datagram socket, nothing
    sent); where ``net.ipv4.ip_nonlocal_bind`` (or IPv6's) lets any address be bound, the interfaces' addresses
    are read instead (psutil)."""
    address = _plain(address)
    if address.is_loopback or address.is_unspecified:
        return True
    if _nonlocal_bind(address.version):
        import psutil

        return any(_plain(ipaddress.ip_address(found.address.split("%")[0])) == address
                   for found_all in psutil.net_if_addrs().values() for found in found_all
                   if found.family in (socket.AF_INET, socket.AF_INET6))
    family = socket.AF_INET if address.version == 4 else socket.AF_INET6
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((str(address), 0))
    except OSError:
        return False
    return True


def _nonlocal_bind(version: int) -> bool:
    try:
        return Path(f"/proc/sys/net/ipv{version}/ip_nonlocal_bind").read_text().strip() not in ("", "0")
    except OSError:
        return False


def proc_address(hex_address: str) -> Address:
    """``/proc/net/tcp*``'s address: 32-bit words in host byte order."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i:i + 4][::-1] if socket.htonl(1) != 1 else raw[i:i + 4] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(words)


def _plain(address: Address) -> Address:
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return mapped if mapped is not None else address


def _endpoint(field: str) -> tuple[Address, int]:
    hex_address, _, hex_port = field.partition(":")
    return _plain(proc_address(hex_address)), int(hex_port, 16)


def tcp_rows(state: str, proc_net: Path = _PROC_NET) -> list[list[str]] | None:
    """The rows (fields split) of ``/proc/net/tcp`` and ``tcp6`` in ``state`` (``0A`` LISTEN, ``01`` ESTABLISHED);
    None when neither can be read (not Linux)."""
    rows: list[list[str]] | None = None
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc_net / name).read_text().splitlines()[1:]
        except OSError:
            continue
        rows = rows or []
        rows += [fields for fields in map(str.split, lines) if len(fields) >= 8 and fields[3] == state]
    return rows


def proc_hex(address: Address, *, six: bool) -> str:
    """``address`` as ``/proc/net/tcp`` (``six`` False: IPv4 only) or ``tcp6`` writes it: 32-bit words in host byte
    order, upper-case hex (an IPv4 address in ``tcp6`` as its v4-mapped form). The inverse of :func:`proc_address`."""
    if six and isinstance(address, ipaddress.IPv4Address):
        address = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed)
    raw = address.packed
    words = b"".join(raw[i:i + 4][::-1] if socket.htonl(1) != 1 else raw[i:i + 4] for i in range(0, len(raw), 4))
    return words.hex().upper()


def _needles(ours: tuple[Address, int], theirs: tuple[Address, int]) -> dict[str, str]:
    """The text of the accepting row's local/remote addresses and state, per file (``tcp``, ``tcp6``)."""
    found = {}
    for name, six in (("tcp", False), ("tcp6", True)):
        if not six and not (isinstance(ours[0], ipaddress.IPv4Address) and isinstance(theirs[0], ipaddress.IPv4Address)):
            continue
        found[name] = (f" {proc_hex(theirs[0], six=six)}:{theirs[1]:04X} {proc_hex(ours[0], six=six)}:{ours[1]:04X} "
                       f"{_ESTABLISHED} ")
    return found


def _once(ours: tuple[Address, int], theirs: tuple[Address, int], proc_net: Path) -> int | bool | None:
    """The uid of the row local=``theirs``, remote=``ours`` (ESTABLISHED); False: no such row; None: no /proc.

    The row is found by its text, not by splitting and decoding every row: another account holding thousands of
    loopback connections made each check read and parse all of them (~350 ms at 18,000 rows; red27 R6)."""
    readable = False
    for name, needle in _needles(ours, theirs).items():
        try:
            text = (proc_net / name).read_text()
        except OSError:
            continue
        readable = True
        at = text.find(needle)
        if at < 0:
            continue
        line = text[text.rfind("\n", 0, at) + 1:text.find("\n", at) if text.find("\n", at) >= 0 else len(text)]
        fields = line.split()
        try:
            return int(fields[7])
        except (IndexError, ValueError):
            continue
    return False if readable else None


def accepting_uid(sock: Connected, *, proc_net: Path | None = None) -> int | bool | None:
    """The uid owning the other end of the connected TCP socket ``sock`` (a loopback connection): an int; False
    when no live socket on this host holds that end (gone, or not here); None when neither ``sock_diag`` nor
    ``/proc/net`` can be read. ``proc_net``: a folder written as ``/proc/net`` to read instead of asking the kernel
    (tests); None: ask the kernel (:mod:`~jupyter_sched.sock_diag`), ``/proc/net`` only where it cannot be asked and once when
    it never found the socket (the last try)."""
    here, there = sock.getsockname(), sock.getpeername()
    ours = (_plain(ipaddress.ip_address(here[0].split("%")[0])), int(here[1]))
    theirs = (_plain(ipaddress.ip_address(there[0].split("%")[0])), int(there[1]))
    found: int | bool | None = False
    for attempt in range(_TRIES):
        found = sock_diag.established(theirs, ours) if proc_net is None else None
        if found is None or (found is False and attempt + 1 == _TRIES):
            found = _once(ours, theirs, proc_net or _PROC_NET)
        if found is not False:
            return found
        if attempt + 1 < _TRIES:
            time.sleep(_PAUSE_S)
    return found


def connecting_uid(sock: Connected) -> int | bool | None:
    """The uid owning the connecting end of the ACCEPTED TCP socket ``sock`` (whose account opened a connection to
    this service; red29 R1 on a same-host hub: it tells the hub's proxy apart from another local account): an int;
    False when no socket with an owner holds that end any more (closed meanwhile); None when ``sock_diag`` cannot
    be asked here or ``sock`` has no addresses. One lookup in the kernel's table, never waited for and never
    ``/proc/net`` (read whole, it costs 150-350 ms on a host with many connections: red27 R6) — it runs on the
    service's event loop for each connection accepted from loopback."""
    try:
        here, there = sock.getsockname(), sock.getpeername()
        ours = (_plain(ipaddress.ip_address(str(here[0]).split("%")[0])), int(here[1]))
        theirs = (_plain(ipaddress.ip_address(str(there[0]).split("%")[0])), int(there[1]))
    except (OSError, ValueError, TypeError, IndexError):
        return None
    return sock_diag.owner(theirs, ours)


def trusted_uids(accounts: Collection[str] = (), configured: Collection[int] = ()) -> frozenset[int]:
    """Root, this process's uid, those of ``accounts`` (names) that exist here and ``configured``: who may hold a
    loopback address a service of this host listens on (the store's ``postgres``, the exporters' accounts)."""
    import pwd

    uids = {0, os.geteuid(), *configured}
    for name in accounts:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            continue
    return frozenset(uids)


def connected_refusal(sock: Connected, *, allowed_uids: Collection[int], what: str = "the token",
                      proc_net: Path | None = None) -> Refusal | None:
    """Why nothing may be sent over ``sock`` (one sentence with the fix), or None: a connection to an address of this
    host must have been accepted by root, this process's own uid or one of ``allowed_uids``; other hosts pass."""
    return loopback_refusal(
        sock, allowed_uids=allowed_uids, proc_net=proc_net, held=lambda where: f"the scheduler's address {where}",
        doing=f"not sending {what}", service="the service",
        gone_fix="restart jupyter-sched serve, on a port below 1024",
        held_fix=lambda uid: ("stop that process and restart jupyter-sched serve, and give the service a port below "
                              f"1024; if the service really runs as uid {uid}, add it to c.SchedApp.hub_service_uids "
                              "(a client: JUPYTER_SCHED_SERVICE_UIDS)"))


def loopback_refusal(sock: Connected, *, allowed_uids: Collection[int], held: Callable[[str], str], doing: str,
                     service: str, gone_fix: str, held_fix: Callable[[int], str],
                     proc_net: Path | None = None) -> Refusal | None:
    """Why ``sock`` must not be used (one sentence with the fix), or None: a connection to an address of this host
    (:func:`is_local_address`: loopback, or this host's own by any name) must have been accepted by root, this
    process's own uid or one of ``allowed_uids``; connections to other hosts pass. The words:
    ``held(address)`` names the address (``"the scheduler's address 127.0.0.1:8010"``), ``doing`` what is not done
    (``"not sending the token"``), ``service`` whose port it is (``"the service"``, ``"the hub"``), ``gone_fix`` /
    ``held_fix(uid)`` the fix when no live socket / another account holds it (red31 R2, R4: the telemetry
    exporter's and the hub API's addresses, as the service's own)."""
    try:
        peer = sock.getpeername()
    except OSError:
        return None  # not connected: sending fails on its own
    if not isinstance(peer, tuple) or not is_local_address(ipaddress.ip_address(str(peer[0]).split("%")[0])):
        return None
    where = f"{peer[0]}:{peer[1]}" if ":" not in str(peer[0]) else f"[{peer[0]}]:{peer[1]}"
    uid = accepting_uid(sock, proc_net=proc_net)
    if uid is None:
        return None  # not Linux: nothing to ask
    if uid is False:
        return Refusal(f"the connection to {where} was not accepted by a live socket on this host: {doing} "
                       f"(another account may be taking the port in turns while {service} is down). Fix: {gone_fix}",
                       gone=True, address=where)
    if uid in {0, os.geteuid(), *allowed_uids}:
        return None
    return Refusal(f"{held(where)} is held by uid {uid}, not {service}: {doing} (another account may have taken the "
                   f"port while {service} was down). Fix: {held_fix(int(uid))}", uid=int(uid), address=where)
