"""Whether a service job's own process listens on its port, with bounded work a look (red35 R4, red36 R1).

The engine's thread asks it for every ready service every few seconds. It was psutil's ``net_connections()`` for each
process of the job's tree: every descriptor read and the host's whole socket tables parsed once per process — a job of
1,000 processes holding 800 sockets each, its listener in its last child, held the engine's thread a minute at a time
(others' starts 55 to 122 s). Then a look read the listening part of ``/proc/<pid>/net/tcp{,6}`` — but any account
makes as many listening sockets as it likes (the whole of 127/8, any IPv6 address with ``IP_FREEBIND``): 56,000 of
them made each look 0.3-0.5 s of parsing on the engine's thread, per ready service every 2 s (red36 R1: others'
starts 0.27 → 2.7 s). A look first asks the kernel for the one listener that takes connections to each address a
client of this host reaches the service at — ``127.0.0.1``, ``::1`` and this host's own interface addresses
(:func:`reachable_sockets`: one lookup each in the kernel's hash of listeners, whatever else listens on the port at
other addresses; session 36 left the whole port's listeners listed each look, 19-49 ms with another account's crowd on
127.x.y.z at the job's port), then looks for the process holding such a socket: first where it was found last time
(one ``readlink``), else through the job's processes' descriptors at most :data:`FDS_PER_LOOK` a look, the search
going on at the next look where it stopped. Where none of those is the job's, the answer is "no": the job listens
nowhere this host's clients reach it (:func:`nowhere_reachable` says so and what to do) — the port's listeners at
other addresses are never listed (session 37 left: they were, their inodes and uids read, to find a job listening
only at ``127.0.0.2``; they may be other accounts', and a service there answers no client that asks for it at
``localhost``). Only where the kernel cannot be asked are the port's listeners read
(:func:`jupyter_sched.sock_diag.listening_sockets`, else the namespace's table below).

The kernel is asked in the service's network namespace, which is the job's: jobs get none of their own (the runas
wrapper unshares IPC and mounts only, :mod:`.runas`). A job whose root process is in another namespace all the same
(one made outside this executor), or a host where ``sock_diag`` cannot be asked, has its namespace's table read from
``/proc/<pid>/net`` instead — :class:`ListenTable`: at most once per cycle (an executor poll) for every service job and
:class:`~.bound_ports.BoundPorts` together, at most :data:`CYCLE_BYTES` a cycle; a table cut there answers "unknown"
for a port not found in what was read (never "no": nobody's listeners make another's service read as not
listening), and "unknown" counts as serving where the port answers (the caller's check).
"""

from __future__ import annotations

import ipaddress
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Literal

from .. import sock_diag
from ..safefd import open_fd

__all__ = ["CYCLE_BYTES", "FDS_PER_LOOK", "REACHABLE_WORDS", "TABLE", "TABLE_EVERY_S", "Answer", "ListenTable",
           "PortOwner", "listening_inodes", "listening_uids", "nowhere_reachable", "reachable_sockets"]

FDS_PER_LOOK = 2048
"""Descriptors of the job's processes looked at (one ``readlink`` each) in one look, at most."""
_LISTEN = b"0A"
CYCLE_BYTES = 512 << 10
"""The most bytes of ``/proc/<pid>/net/tcp{,6}`` read in one cycle, every table together (the fallback only: about
3,000 listening sockets; a host's own listeners are a few hundred; ~11 ms of CPU a cycle, measured with 56,000)."""
TABLE_EVERY_S = 1.0
"""A table read is used again for this long at most (one engine poll), unless a new cycle began first."""

Answer = Literal["yes", "no", "unknown", "searching"]
"""``yes``: a process of the job listens on the port; ``no``: none does; ``unknown``: their sockets cannot be read
(another account's, without the privilege), or the port's listeners cannot be told (a table cut at
:data:`CYCLE_BYTES` and the port not in what was read); ``searching``: not found yet, the search goes on at the next
look."""

Table = tuple[list[tuple[int, int, int]] | None, bool]
"""``(port, uid, inode)`` of the listening sockets read (None: no table could be read), and whether that is all of
them (no table cut)."""


def _read_tables(pid: int | str, budget: int) -> tuple[Table, int]:
    """The listening sockets of ``pid``'s network namespace from ``/proc/<pid>/net/tcp{,6}``, read up to the first
    socket that is not listening (the kernel lists listening sockets first, so the host's connections are never read)
    and at most ``budget`` bytes in all (the listening part is any account's to size); with the bytes read."""
    found: list[tuple[int, int, int]] = []
    read, whole, seen = False, True, 0
    for table in ("tcp", "tcp6"):
        try:
            fd = open_fd(f"/proc/{pid}/net/{table}", os.O_RDONLY)
        except OSError:
            continue
        read = True
        try:
            with os.fdopen(fd, "rb") as fh:
                for n, line in enumerate(fh):
                    seen += len(line)
                    if seen > budget:
                        whole = False
                        break
                    if n == 0:
                        continue  # the header
                    fields = line.split()
                    if len(fields) < 10 or fields[3] != _LISTEN:
                        break  # listening sockets come first: the rest is none of them
                    found.append((int(fields[1].rsplit(b":", 1)[-1], 16), int(fields[7]), int(fields[9])))
        except (OSError, ValueError):
            continue
        if not whole:
            break
    return ((found if read else None), whole), seen


def _namespace(pid: int | str) -> tuple[int, int] | None:
    """``(device, inode)`` naming ``pid``'s network namespace; None when it cannot be told (gone, or another
    account's without the privilege)."""
    try:
        st = os.stat(f"/proc/{pid}/ns/net")
    except OSError:
        return None
    return st.st_dev, st.st_ino


class ListenTable:
    """The fallback's reads of ``/proc/<pid>/net/tcp{,6}`` (module docstring), shared: each network namespace's
    tables read at most once per cycle (:meth:`next_cycle`, or :data:`TABLE_EVERY_S`), at most :data:`CYCLE_BYTES`
    a cycle for all of them together; a namespace asked after the bytes are spent reads as cut with nothing found.

    Args:
        monotonic: the clock of :data:`TABLE_EVERY_S`.
    """

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.monotonic = monotonic
        self._lock = threading.Lock()
        self._began = -TABLE_EVERY_S
        self._spent = 0
        self._read: dict[object, Table] = {}

    def next_cycle(self) -> None:
        """A new cycle: tables are read again when next asked (the local executor's poll calls it first)."""
        with self._lock:
            self._began, self._spent, self._read = self.monotonic(), 0, {}

    def listeners(self, pid: int | str = "self") -> Table:
        """The listening sockets of ``pid``'s network namespace (read once a cycle; see the class)."""
        with self._lock:
            if self.monotonic() - self._began >= TABLE_EVERY_S:
                self._began, self._spent, self._read = self.monotonic(), 0, {}
            key: object = _namespace(pid) or ("pid", pid)
            if key not in self._read:
                table, seen = _read_tables(pid, CYCLE_BYTES - self._spent) if self._spent < CYCLE_BYTES \
                    else (([], False), 0)
                self._spent += seen
                self._read[key] = table
            return self._read[key]


TABLE = ListenTable()
"""The process's one :class:`ListenTable`: every service job's look and :class:`~.bound_ports.BoundPorts` share it."""


_SELF: tuple[int, int] | None = None


def _asks_kernel(pid: int | str) -> bool:
    """Whether ``pid``'s listeners may be asked of the kernel from here: it is in this process's network namespace
    (sock_diag answers for the asker's namespace)."""
    global _SELF
    if pid == "self":
        return True
    _SELF = _SELF or _namespace("self")
    return _SELF is not None and _namespace(pid) == _SELF


def _of_port(pid: int | str, port: int) -> list[tuple[sock_diag.Address | None, int, int]] | None:
    """``(address, uid, inode)`` of the TCP sockets listening on ``port`` in ``pid``'s network namespace: the kernel's
    answer for that one port where it can be asked, else :data:`TABLE`'s read (address None); None when that cannot
    be told (no table read, or none found in a table cut at :data:`CYCLE_BYTES`)."""
    if _asks_kernel(pid):
        held = sock_diag.listening_sockets(port)
        if held is not None:
            return list(held)
    found, whole = TABLE.listeners(pid)
    if found is None:
        return None
    of_port: list[tuple[sock_diag.Address | None, int, int]] = [(None, uid, inode) for bound, uid, inode in found
                                                                 if bound == port]
    return of_port if of_port or whole else None


_LOOPBACKS: tuple[sock_diag.Address, ...] = (ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1"))
_MOST_ADDRESSES = 32
"""This host's interface addresses asked about, at most (an admin's few; only root adds them)."""
_ADDRESSES_EVERY_S = 60.0
_addresses: tuple[float, tuple[sock_diag.Address, ...]] | None = None


def _reachable() -> tuple[sock_diag.Address, ...]:
    """``127.0.0.1``, ``::1`` and this host's interface addresses (not link-local: a lookup of those needs their
    device), read at most once a minute."""
    global _addresses
    now = time.monotonic()
    if _addresses is None or now - _addresses[0] >= _ADDRESSES_EVERY_S:
        found = list(_LOOPBACKS)
        try:
            import psutil

            for entries in psutil.net_if_addrs().values():
                for entry in entries:
                    try:
                        address = ipaddress.ip_address(str(entry.address).partition("%")[0])
                    except ValueError:
                        continue  # a MAC address
                    if not address.is_link_local and address not in found and len(found) < _MOST_ADDRESSES:
                        found.append(address)
        except (ImportError, OSError):
            pass
        _addresses = (now, tuple(found))
    return _addresses[1]


def reachable_sockets(pid: int | str, port: int) -> list[tuple[sock_diag.Address, int, int]] | None:
    """``(address, uid, inode)`` of the sockets listening on ``port`` that take a connection made from this host to
    ``127.0.0.1``, ``::1`` or one of its interface addresses (a socket bound to one of them, or the wildcard): one
    exact lookup per address (:func:`~jupyter_sched.sock_diag.listening_at`), so another account's listeners at
    other addresses of the port (127.77.x.y, an ``IP_FREEBIND`` IPv6 address) are never listed nor decoded. None
    where the kernel cannot be asked from here (another network namespace, no ``sock_diag``)."""
    if not _asks_kernel(pid):
        return None
    held: dict[int, tuple[sock_diag.Address, int, int]] = {}
    for address in _reachable():
        at = sock_diag.listening_at(address, port)
        if at is None:
            return None
        for local, uid, inode in at:  # a wildcard socket answers for several addresses: once
            held.setdefault(inode, (local, uid, inode))
    return list(held.values())


REACHABLE_WORDS = "127.0.0.1, ::1 or this host's own addresses"
"""Where a service's clients on this host reach it, in words (:func:`reachable_sockets`' addresses)."""


def nowhere_reachable(port: int, *, others_there: bool = False) -> str:
    """Plain words for a service none of whose processes listens on ``port`` where this host's clients reach it, and
    what to do: ``where this host's clients reach it (127.0.0.1, ::1 or this host's own addresses) — make it listen
    on 0.0.0.0:8000 (every address) or 127.0.0.1:8000``. ``others_there``: a process that is not the job's listens at
    one of those addresses (said as that, never whose nor where else)."""
    taken = "; a process that is not the job's listens there" if others_there else ""
    return (f"where this host's clients reach it ({REACHABLE_WORDS}){taken} — make it listen on 0.0.0.0:{port} "
            f"(every address) or 127.0.0.1:{port}")


def listening_inodes(pid: int | str, port: int) -> set[int] | None:
    """Inodes of the TCP sockets listening on ``port`` in ``pid``'s network namespace (the kernel's answer for the
    port; :data:`TABLE` where it cannot be asked); None when that cannot be told — a user who binds 100,000
    listening sockets never makes another's service read as not listening."""
    held = _of_port(pid, port)
    return None if held is None else {inode for _, _, inode in held}


def listening_uids(port: int) -> list[int] | None:
    """The uids of the TCP sockets listening on ``port`` in this process's network namespace: those taking
    connections to this host's addresses (:func:`reachable_sockets`) where there are some, else every listener of the
    port (as :func:`listening_inodes`: a holder at another address, ``127.0.0.2``); None when that cannot be told."""
    near = reachable_sockets("self", port)
    held = near if near else _of_port("self", port)
    return None if held is None else [uid for _, uid, _ in held]


class PortOwner:
    """One service job's search for the process holding its listening socket (see the module docstring)."""

    def __init__(self) -> None:
        self._hit: tuple[int, str] | None = None
        """The job's process and descriptor found holding a listening socket of the port."""
        self._held: tuple[sock_diag.Address, int] | None = None
        """That socket's address and inode, where the kernel told them."""
        self._search: Iterator[tuple[int, str, str | None]] | None = None
        self._looking_for: frozenset[int] = frozenset()
        self._unreadable = False
        self._near_missed: frozenset[int] = frozenset()
        """The inodes of :func:`reachable_sockets` a finished search found none of the job's processes holding."""
        self.others_there = False
        """At the last look that answered "no": something not the job's listened at an address of
        :func:`reachable_sockets` (for :func:`nowhere_reachable`'s words)."""

    def look(self, root_pid: int, members: Callable[[], Iterable[int]], port: int) -> Answer:
        """Whether a process of the job (``root_pid``, its wrapper, and ``members()``, asked when a search begins)
        listens on ``port``; at most :data:`FDS_PER_LOOK` descriptors read. Once found, a look is one lookup in the
        kernel's hash of listeners (:meth:`_still`) and one ``readlink`` while it stays so."""
        if self._still(root_pid, port):
            return "yes"
        near = reachable_sockets(root_pid, port)  # the exact lookups: no other address of the port listed
        if near is not None:
            inodes = frozenset(inode for _, _, inode in near)
            if near and inodes != self._near_missed:
                answer = self._seek(root_pid, members, list(near))
                if answer != "no":
                    return answer
                self._near_missed = inodes
            # none at this host's addresses is the job's: it listens nowhere reachable (module docstring)
            self._search = self._hit = self._held = None
            self.others_there = bool(near)
            return "no"
        found = _of_port(root_pid, port)  # the kernel cannot be asked here
        if found is None:
            return "unknown"
        if not found:
            self._search = self._hit = self._held = None
            self.others_there = False
            return "no"
        return self._seek(root_pid, members, found)

    def _seek(self, root_pid: int, members: Callable[[], Iterable[int]],
              found: list[tuple[sock_diag.Address | None, int, int]]) -> Answer:
        """The search of the job's descriptors for one of the sockets ``found`` (at most :data:`FDS_PER_LOOK` a
        look, going on at the next look while ``found`` is the same)."""
        wanted = {f"socket:[{inode}]": (address, inode) for address, _, inode in found}
        if self._hit is not None and (link := _link(*self._hit)) in wanted:
            self._found(self._hit, wanted[link])
            return "yes"
        self._hit = self._held = None
        inodes = frozenset(inode for _, _, inode in found)
        if self._search is None or self._looking_for != inodes:
            self._search, self._looking_for = _descriptors([root_pid, *members()]), inodes
            self._unreadable = False
        for _ in range(FDS_PER_LOOK):
            item = next(self._search, None)
            if item is None:  # every descriptor of the job looked at
                self._search = None
                return "unknown" if self._unreadable else "no"
            pid, name, target = item
            if target is None:
                self._unreadable = True
            elif target in wanted:
                self._search = None
                self._found((pid, name), wanted[target])
                return "yes"
        return "searching"

    def _found(self, hit: tuple[int, str], socket: tuple[sock_diag.Address | None, int]) -> None:
        address, inode = socket
        self._hit, self._held = hit, (None if address is None else (address, inode))
        self._near_missed = frozenset()

    def _still(self, root_pid: int, port: int) -> bool:
        """Whether the socket found last time still takes connections to its address on ``port`` (the kernel's one
        lookup: no walk of the host's listeners, which any account may fill) and the process found holding it still
        holds it."""
        if self._hit is None or self._held is None or not _asks_kernel(root_pid):
            return False
        address, inode = self._held
        at = sock_diag.listening_at(address, port)
        return bool(at) and any(held == inode for _, _, held in at or ()) and _link(*self._hit) == f"socket:[{inode}]"


def _descriptors(pids: Iterable[int]) -> Iterator[tuple[int, str, str | None]]:
    """``(pid, descriptor name, its link or None when unreadable)`` for each descriptor of ``pids`` (each pid once),
    listed as they are taken; one closed between the listing and its read is left out — not "unreadable", which
    makes the look's answer "unknown" and counts as serving where the port answers (s38: a job's descriptor closed
    mid-walk read "ready" while another process answered its port, newuser8 N8's test under load)."""
    seen: set[int] = set()
    for pid in pids:
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with os.scandir(f"/proc/{pid}/fd") as entries:
                for entry in entries:
                    try:
                        target: str | None = os.readlink(f"/proc/{pid}/fd/{entry.name}")
                    except FileNotFoundError:
                        continue  # closed since the listing (or its process ended): not a socket it holds
                    except OSError:
                        target = None  # there, but not to be read from here
                    yield pid, entry.name, target
        except PermissionError:
            yield pid, "", None
        except OSError:
            continue


def _link(pid: int, name: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/{name}")
    except OSError:
        return None
