"""Whether a service job's own process listens on its port, with bounded work a look (red35 R4).

The engine's thread asks it for every ready service every few seconds. It was psutil's ``net_connections()`` for each
process of the job's tree: every descriptor read and the host's whole socket tables parsed once per process — a job of
1,000 processes holding 800 sockets each, its listener in its last child, held the engine's thread a minute at a time
(others' starts 55 to 122 s). Now a look reads the listening part of the job's network namespace's TCP tables once (the
kernel lists listening sockets first, so the read stops at the first socket that is not listening), then looks for the
process holding that socket: first where it was found last time (one ``readlink``), else through the job's processes'
descriptors at most :data:`FDS_PER_LOOK` a look, the search going on at the next look where it stopped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Literal

from ..safefd import open_fd

__all__ = ["FDS_PER_LOOK", "Answer", "PortOwner", "listeners", "listening_inodes"]

FDS_PER_LOOK = 2048
"""Descriptors of the job's processes looked at (one ``readlink`` each) in one look, at most."""
_LISTEN = b"0A"
_TABLE_BYTES = 4 << 20
"""The most bytes of one table read in a look (listening sockets only: a host's listeners fit many times over)."""

Answer = Literal["yes", "no", "unknown", "searching"]
"""``yes``: a process of the job listens on the port; ``no``: none does; ``unknown``: their sockets cannot be read
(another account's, without the privilege); ``searching``: not found yet, the search goes on at the next look."""


def listeners(pid: int | str = "self") -> list[tuple[int, int, int]] | None:
    """``(port, uid, inode)`` of each TCP socket (IPv4 and IPv6) listening in ``pid``'s network namespace, read from
    ``/proc/<pid>/net/tcp{,6}`` up to the first socket that is not listening — the kernel lists listening sockets
    first, so the host's other sockets (any number: a job's or a terminal's) are never read — and at most
    :data:`_TABLE_BYTES` of each (None: neither table can be read)."""
    return _listeners(pid)[0]


def _listeners(pid: int | str) -> tuple[list[tuple[int, int, int]] | None, bool]:
    """:func:`listeners` and whether they are all (no table cut at :data:`_TABLE_BYTES`)."""
    found: list[tuple[int, int, int]] = []
    read, whole = False, True
    for table in ("tcp", "tcp6"):
        try:
            fd = open_fd(f"/proc/{pid}/net/{table}", os.O_RDONLY)
        except OSError:
            continue
        read = True
        try:
            with os.fdopen(fd, "rb") as fh:
                fh.readline()  # the header
                seen = 0
                for line in fh:
                    seen += len(line)
                    fields = line.split()
                    if seen > _TABLE_BYTES:
                        whole = False
                        break
                    if len(fields) < 10 or fields[3] != _LISTEN:
                        break  # listening sockets come first: the rest is none of them
                    found.append((int(fields[1].rsplit(b":", 1)[-1], 16), int(fields[7]), int(fields[9])))
        except (OSError, ValueError):
            continue
    return (found if read else None), whole


def listening_inodes(pid: int, port: int) -> set[int] | None:
    """Inodes of the TCP sockets listening on ``port`` in ``pid``'s network namespace (:func:`listeners`); None when
    that cannot be told: no table read, or none found in tables cut at :data:`_TABLE_BYTES` (a user who binds
    100,000 listening sockets never makes another's service read as not listening)."""
    found, whole = _listeners(pid)
    if found is None:
        return None
    inodes = {inode for bound, _, inode in found if bound == port}
    return inodes if inodes or whole else None


class PortOwner:
    """One service job's search for the process holding its listening socket (see the module docstring)."""

    def __init__(self) -> None:
        self._hit: tuple[int, str] | None = None
        self._search: Iterator[tuple[int, str, str | None]] | None = None
        self._looking_for: frozenset[int] = frozenset()
        self._unreadable = False

    def look(self, root_pid: int, members: Callable[[], Iterable[int]], port: int) -> Answer:
        """Whether a process of the job (``root_pid``, its wrapper, and ``members()``, asked when a search begins)
        listens on ``port``; at most :data:`FDS_PER_LOOK` descriptors read."""
        inodes = listening_inodes(root_pid, port)
        if inodes is None:
            return "unknown"
        if not inodes:
            self._search = None
            return "no"
        wanted = {f"socket:[{inode}]" for inode in inodes}
        if self._hit is not None and _link(*self._hit) in wanted:
            return "yes"
        self._hit = None
        if self._search is None or self._looking_for != frozenset(inodes):
            self._search, self._looking_for = _descriptors([root_pid, *members()]), frozenset(inodes)
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
                self._hit, self._search = (pid, name), None
                return "yes"
        return "searching"


def _descriptors(pids: Iterable[int]) -> Iterator[tuple[int, str, str | None]]:
    """``(pid, descriptor name, its link or None when unreadable)`` for each descriptor of ``pids`` (each pid once),
    listed as they are taken."""
    seen: set[int] = set()
    for pid in pids:
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with os.scandir(f"/proc/{pid}/fd") as entries:
                for entry in entries:
                    yield pid, entry.name, _link(pid, entry.name)
        except PermissionError:
            yield pid, "", None
        except OSError:
            continue


def _link(pid: int, name: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/{name}")
    except OSError:
        return None
