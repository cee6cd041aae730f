"""Which accounts of this host can open connections to the store's PostgreSQL (red38 R2).

PostgreSQL gives every incoming connection a backend slot (one of ``max_connections``) *before* it asks for a
password: an account that can reach the server's socket or port — any user's job, with the local executor —
can hold every slot with connections that never answer the password challenge, reconnecting as the server drops
them at ``authentication_timeout``. The service's pooled connections run on, but the first reconnect (a
PostgreSQL restart, a dropped connection, the service's own restart) is answered "sorry, too many clients
already", and every request of every user answers 503 while it lasts. A password stops none of this; only who can
reach the server does. docs/admin.md ("Database") says how to let only the service reach it.

:func:`open_ways` looks, from this host, at a server on this host (``access.local``): its Unix socket's file mode and
the folders above it (others may connect where the socket is writable to them and every folder on its path
searchable), and whether anything listens for TCP on its port (every account of a host may connect to a listener
at any of the host's addresses). :func:`reach_warning` says it in one sentence for the service's start-up log
and ``jupyter-sched doctor``. Best effort: what cannot be looked at (a socket in another mount namespace) says
nothing.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import socket
import stat
from pathlib import Path

from .. import sock_diag
from .exposure import DbAccess

__all__ = ["FIX", "open_ways", "reach_warning", "socket_open_to_others"]

FIX = ("let only the service reach it: listen_addresses = '' (the Unix socket alone) and "
       "unix_socket_permissions = 0770 with unix_socket_group = a group of the service's account only "
       "(root connects whatever the mode), or its socket folder searchable by that group only; "
       "docs/admin.md, \"Database\"")

_TRUSTED = ("root", "postgres")
"""Accounts that may connect whatever else holds: root (whom file modes do not stop) and the server's own."""


def _group_has_others(gid: int, service_user: str) -> bool:
    """Whether an account other than root, the server's (``postgres``) and ``service_user`` is in group ``gid``
    (listed as a member, or its primary group)."""
    trusted = {*_TRUSTED, service_user}
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        return False
    members |= {entry.pw_name for entry in pwd.getpwall() if entry.pw_gid == gid}
    return bool(members - trusted)


def socket_open_to_others(path: Path, *, service_user: str) -> bool:
    """Whether an account other than root, ``postgres`` and ``service_user`` may connect to the Unix socket at
    ``path``: connecting needs write permission on the socket and search (x) permission on every folder above it
    (for "others", or for a group with other members in it). False where the socket cannot be looked at."""
    def allows(st: os.stat_result, other_bit: int, group_bit: int) -> bool:
        return bool(st.st_mode & other_bit) or (bool(st.st_mode & group_bit)
                                                and _group_has_others(st.st_gid, service_user))

    try:
        st = path.stat()
    except OSError:
        return False
    if not stat.S_ISSOCK(st.st_mode) or not allows(st, stat.S_IWOTH, stat.S_IWGRP):
        return False
    for folder in path.parents:
        try:
            folder_st = folder.stat()
        except OSError:
            return False
        if not allows(folder_st, stat.S_IXOTH, stat.S_IXGRP):
            return False
    return True


def _tcp_open(port: int) -> list[str]:
    """The addresses on which a TCP socket listens on ``port`` (``127.0.0.1:5432``, ``*:5432``): every account of
    this host can connect to a listener at any of the host's addresses. Asked of the kernel (``sock_diag``: no
    connection made, nothing in the server's log); where it cannot be asked, a connect to the loopback addresses."""
    found = sock_diag.listeners(port)
    if found is not None:
        said = []
        for listening, _ in found:
            where = "*" if listening.is_unspecified else str(listening) if listening.version == 4 else f"[{listening}]"
            said.append(f"{where}:{port}")
        return sorted(set(said))
    probed = []
    for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(1.0)
            probe.connect((address, port))
            probed.append(f"{address}:{port}" if family == socket.AF_INET else f"[{address}]:{port}")
    return probed


def open_ways(access: DbAccess | None, *, service_user: str) -> list[str]:
    """How other accounts of this host can reach the store's PostgreSQL (``access``, from
    :func:`~.exposure.db_access`): ``["its Unix socket /run/postgresql/.s.PGSQL.5432 (mode 0777)", "TCP on
    127.0.0.1:5432"]``; empty for a server on another host, SQLite (None), or one only the service reaches."""
    if access is None or not access.local or access.port is None:
        return []
    ways = []
    if access.socket_dir:
        sock = Path(access.socket_dir) / f".s.PGSQL.{access.port}"
        if socket_open_to_others(sock, service_user=service_user):
            mode = stat.S_IMODE(sock.stat().st_mode)
            ways.append(f"its Unix socket {sock} (mode {mode:04o}, reachable through every folder above it)")
    ways.extend(f"TCP on {where}" for where in _tcp_open(access.port))
    return ways


def reach_warning(access: DbAccess | None, *, jobs_here: bool | None, service_user: str | None = None) -> str | None:
    """The sentence for a store whose PostgreSQL on this host other accounts can open connections to, while
    users' jobs run on this host (``jobs_here``; None: not known here, said as a condition); None otherwise.
    ``service_user``: the account the service runs as (default: this process's)."""
    if jobs_here is False:
        return None
    ways = open_ways(access, service_user=service_user or pwd.getpwuid(os.geteuid()).pw_name)
    if not ways or access is None:
        return None
    when = "users' jobs on this host" if jobs_here else "users' jobs, if they run on this host (the local executor),"
    return (f"{when} can open connections to the store's PostgreSQL ({'; '.join(ways)}): PostgreSQL gives each a "
            "connection slot before it asks for any password, so one job holding them all makes the service's next "
            "reconnect fail and every request answer 503 while it lasts — " + FIX)
