"""Ask the kernel about ONE TCP socket, or the listeners of ONE port, over NETLINK ``sock_diag`` (red27 R6, red36 R1).

``/proc/net/tcp`` is generated whole by the kernel at each read: another account holding 9,000 loopback
connections (18,000 rows) made every check of who accepted a connection, and of who listens on the service's
port, cost 150-350 ms (verify28: the read alone). ``sock_diag`` answers the same questions from the kernel's
hash tables: an exact socket by its four-tuple (:func:`established`: one lookup), the listener taking connections to
one address and port (:func:`listening_at`: one lookup), the listeners of one port (:func:`listeners`,
:func:`listening_sockets`: the kernel walks only its table of listeners, in C, and sends only that port's: ~8 ms of
kernel time with 56,000 other listeners, nothing in Python per another port's listener) — no cost per unrelated
connection. Readable without privilege (as ``ss``); standard library only (the CLI imports it).

Used by the hub's front door (who opened a connection, who listens on the service's port) and by the local
executor (whether a service job listens on its port, which process holds a declared port: red36 R1 — reading the
listening part of ``/proc/net/tcp{,6}`` there cost 0.3-0.5 s a look once an account made 56,000 listeners). A
neutral module, so executors need not import the hub. Asked in the CALLING process's network namespace.

Every function answers None when ``sock_diag`` cannot be asked (not Linux, no ``inet_diag`` in the kernel, a
sandbox refusing netlink): the caller then reads ``/proc/net`` as before.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import struct

__all__ = ["ESTABLISHED", "LISTEN", "TIME_WAIT", "Address", "Listening", "available", "established", "listeners",
           "listening_at", "listening_sockets", "owner"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

ESTABLISHED = 1
TIME_WAIT = 6
LISTEN = 10
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 0x1
_NLM_F_DUMP = 0x300
_NLMSG_ERROR = 2
_NLMSG_DONE = 3
_HEADER = struct.Struct("=IHHII")  # struct nlmsghdr: length, type, flags, sequence, port id
_REQUEST = struct.Struct("=BBBBI")  # struct inet_diag_req_v2 up to its id: family, protocol, ext, pad, states
_ID = struct.Struct("!HH16s16s")  # struct inet_diag_sockid: sport, dport (network order), src, dst (network order)
_MESSAGE = struct.Struct("=BBBB")  # struct inet_diag_msg: family, state, timer, retrans, then the id (48 bytes)
_UID_AT = 4 + 48 + 12  # inet_diag_msg: after the id come expires, rqueue, wqueue, then uid, inode
_INODE_AT = _UID_AT + 4
_NO_COOKIE = b"\xff" * 8
_TIMEOUT_S = 1.0
_MAX_ANSWERS = 4096
"""A port's listeners are a handful (SO_REUSEPORT groups included); more than this is not read (the caller falls
back to ``/proc/net``)."""

Socket = tuple[int, int, Address, int, int]
"""One socket the kernel answered: (state, uid, local address, local port, inode)."""
Listening = tuple[Address, int, int]
"""One listening socket: (local address, uid, inode — as ``socket:[inode]`` in its holder's ``/proc/<pid>/fd``)."""


def _packed(address: Address) -> bytes:
    return address.packed + b"\0" * (16 - len(address.packed))


def _request(family: int, *, states: int, sport: int, dport: int, src: bytes, dst: bytes, dump: bool,
             interface: int = 0) -> bytes:
    body = (_REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, states) + _ID.pack(sport, dport, src, dst)
            + struct.pack("=I", interface) + _NO_COOKIE)
    flags = _NLM_F_REQUEST | (_NLM_F_DUMP if dump else 0)
    return _HEADER.pack(_HEADER.size + len(body), _SOCK_DIAG_BY_FAMILY, flags, 1, 0) + body


def _decoded(family: int, body: bytes) -> Socket:
    answered, state, _timer, _retrans = _MESSAGE.unpack_from(body)
    sport, _dport, src, _dst = _ID.unpack_from(body, _MESSAGE.size)
    uid, inode = struct.unpack_from("=II", body, _UID_AT)
    # the socket's own family: an IPv4 lookup answers a dual-stack IPv6 listener ([::], ::ffff:a.b.c.d) as IPv6
    local: Address = (ipaddress.IPv4Address(src[:4]) if (answered or family) == socket.AF_INET
                      else ipaddress.IPv6Address(src))
    return state, uid, local, sport, inode


def _ask(family: int, request: bytes, *, dump: bool) -> list[Socket] | None:
    """The sockets the kernel answers ``request`` with (``[]``: none, ENOENT); None when it cannot be asked or
    its answer is not understood."""
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG)
    except (OSError, AttributeError):  # not Linux (no AF_NETLINK), or netlink refused here
        return None
    found: list[Socket] = []
    try:
        with sock:
            sock.settimeout(_TIMEOUT_S)
            sock.send(request)
            while True:
                data = sock.recv(65536)
                at = 0
                while at + _HEADER.size <= len(data):
                    length, kind, _flags, _seq, _pid = _HEADER.unpack_from(data, at)
                    if length < _HEADER.size or at + length > len(data):
                        return None
                    body = data[at + _HEADER.size:at + length]
                    if kind == _NLMSG_DONE:
                        return found
                    if kind == _NLMSG_ERROR:
                        (code,) = struct.unpack_from("=i", body)
                        if code == 0:
                            return found
                        # ENOENT: no such socket — or, for a dump, no inet_diag in this kernel (no handler)
                        return found if -code == errno.ENOENT and not dump else None
                    if kind != _SOCK_DIAG_BY_FAMILY or len(body) < _UID_AT + 8:
                        return None
                    found.append(_decoded(family, body))
                    if len(found) > _MAX_ANSWERS:
                        return None
                    at += (length + 3) & ~3
                if not data:
                    return None
                if not dump and found:  # one socket asked: its one answer came
                    return found
    except (OSError, struct.error):
        return None


_ANSWERS = False
"""Whether this kernel's ``sock_diag`` answered for TCP once (then it does: kept for the process)."""


def _answers() -> bool:
    """Whether ``sock_diag`` has a TCP handler here: an exact lookup's ENOENT means "no such socket" only then
    (without ``inet_diag`` every request is ENOENT). Asked with an empty dump (no states: no socket walked)."""
    global _ANSWERS
    if not _ANSWERS:
        empty = _request(socket.AF_INET, states=0, sport=0, dport=0, src=b"\0" * 16, dst=b"\0" * 16, dump=True)
        _ANSWERS = _ask(socket.AF_INET, empty, dump=True) is not None
    return _ANSWERS


def available() -> bool:
    """Whether the kernel's ``sock_diag`` answers for TCP here (asked once, with an empty dump)."""
    return _answers()


def _exact(local: tuple[Address, int], remote: tuple[Address, int], *, interface: int | None = None) -> list[Socket] | None:
    """What the kernel answers for the TCP socket whose local end is ``local`` and remote end ``remote`` (one lookup
    in its table of connections; ``[]``: none); None when ``sock_diag`` cannot be asked. Both ends IPv4: asked as
    IPv4 (a dual-stack listener's accepted socket included); otherwise as IPv6. ``interface``: the index of the
    device the connection arrives on; None: the loopback device's (:func:`_loopback`), as every connection asked
    about here is made from this host to one of its own addresses — a socket bound to ``lo`` (``SO_BINDTODEVICE``)
    matches only a lookup that names it, so without it a client so bound read as "no such socket" and was refused
    (session 36 left); a socket bound to no device matches any. 0: none."""
    interface = _loopback() if interface is None else interface
    four = isinstance(local[0], ipaddress.IPv4Address) and isinstance(remote[0], ipaddress.IPv4Address)
    family = socket.AF_INET if four else socket.AF_INET6

    def six(address: Address) -> Address:
        return (ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed)
                if not four and isinstance(address, ipaddress.IPv4Address) else address)
    request = _request(family, states=0xFFFFFFFF, sport=local[1], dport=remote[1], src=_packed(six(local[0])),
                       dst=_packed(six(remote[0])), dump=False, interface=interface)
    answered = _ask(family, request, dump=False)
    if answered is None or (not answered and not _answers()):  # ENOENT from a kernel without inet_diag
        return None
    return answered


def established(local: tuple[Address, int], remote: tuple[Address, int]) -> int | bool | None:
    """The uid of the ESTABLISHED TCP socket whose local end is ``local`` and remote end ``remote`` (one lookup in
    the kernel's table of connections); False when there is none (gone, not accepted yet, or not on this host);
    None when ``sock_diag`` cannot be asked."""
    answered = _exact(local, remote)
    if answered is None:
        return None
    # an exact lookup falls back to the port's listener when no connection matches: only ESTABLISHED counts
    return next((uid for state, uid, _, port, _ in answered if state == ESTABLISHED and port == local[1]), False)


def owner(local: tuple[Address, int], remote: tuple[Address, int]) -> int | bool | None:
    """The uid owning the TCP socket whose local end is ``local`` and remote end ``remote`` — a connecting client's
    socket, ESTABLISHED or already closing its sending side (FIN-WAIT, CLOSE-WAIT…) — in one lookup, never waited
    for; False when there is none with an owner (gone; a TIME-WAIT remnant, which the kernel answers as uid 0; the
    port's listener, which an exact lookup falls back to); None when ``sock_diag`` cannot be asked."""
    answered = _exact(local, remote)
    if answered is None:
        return None
    return next((uid for state, uid, _, port, _ in answered if state not in (LISTEN, TIME_WAIT) and port == local[1]),
                False)


def listeners(port: int) -> list[tuple[Address, int]] | None:
    """(address, uid) of every TCP socket LISTENing on ``port``, IPv4 and IPv6 (:func:`listening_sockets`); None when
    ``sock_diag`` cannot be asked."""
    found = listening_sockets(port)
    return None if found is None else [(address, uid) for address, uid, _ in found]


def listening_sockets(port: int) -> list[Listening] | None:
    """(address, uid, inode) of every TCP socket LISTENing on ``port``, IPv4 and IPv6, in this process's network
    namespace: the kernel walks only its table of listeners and answers only ``port``'s (in-kernel ``sport`` filter),
    so the work here is O(that port's listeners), whatever other ports' listeners any account holds. None when
    ``sock_diag`` cannot be asked, or answers more than :data:`_MAX_ANSWERS` for the port."""
    found: list[Listening] = []
    for family in (socket.AF_INET, socket.AF_INET6):
        request = _request(family, states=1 << LISTEN, sport=port, dport=0, src=b"\0" * 16, dst=b"\0" * 16,
                           dump=True)
        answered = _ask(family, request, dump=True)
        if answered is None:
            return None
        found += [(address, uid, inode) for state, uid, address, sport, inode in answered
                  if state == LISTEN and sport == port]
    return found


_LOOPBACK: int | None = None


def _loopback() -> int:
    """The index of this network namespace's loopback device (0 where it cannot be told), asked once: a connection
    from this host to one of its own addresses arrives on it."""
    global _LOOPBACK
    if _LOOPBACK is None:
        try:
            _LOOPBACK = socket.if_nametoindex("lo")
        except (OSError, AttributeError):
            _LOOPBACK = 0
    return _LOOPBACK


def listening_at(address: Address, port: int) -> list[Listening] | None:
    """The TCP socket LISTENing on ``port`` that takes a connection made from this host to ``address`` — the one
    bound to ``address`` itself, else the wildcard one (``0.0.0.0``; ``[::]`` of a dual-stack socket for an IPv4
    ``address`` too; ``::ffff:a.b.c.d``), one bound to the loopback device included — as the kernel picks it for an
    incoming connection: one lookup in its hash of listeners, O(1) whatever else listens on the port at other
    addresses (red36 R4: 56,000 listeners of another account on 127.x.y.z and fd00:: at the service's port made a dump
    of the port's listeners 1.4-7 s); at most one socket answered and decoded (of a ``SO_REUSEPORT`` group, one
    member: the kernel lets only one account's sockets share an address). ``[]`` when none; None when ``sock_diag``
    cannot be asked."""
    unspecified: Address = ipaddress.IPv4Address(0) if address.version == 4 else ipaddress.IPv6Address(0)
    answered = _exact((address, port), (unspecified, 0))
    if answered is None:
        return None
    return [(local, uid, inode) for state, uid, local, sport, inode in answered if state == LISTEN and sport == port]
