"""Who answers at the store's PostgreSQL address on this host: the database server, or another account
(red31 R3, red32 R1).

The store reaches PostgreSQL by TCP on this host in the README's own example (``127.0.0.1:5432``, a port any
account may bind). While the server is down — a restart for an upgrade, a crash, a boot where the service
starts first — another local account could listen there: libpq logs in to a server that asks for no
password, ``pool_pre_ping`` reconnects on its own, and the service would lead that account's database and
start the jobs it lists *as their owners' accounts*; a server that asks for the password in clear gets it, and
with it the REAL store. So, for a store on a TCP address of this host — however the URL spells it: a loopback
address, ``localhost``, the host's name, its LAN address, ``hostaddr=`` (red32 R1: only the loopback spellings
were looked at, and a URL naming the host ``@vm:5432`` handed its password to the squatter):

- before connecting, the address is resolved and, where it is this host's
  (:func:`~jupyter_sched.hub.peer.is_local_address`), the port's listeners are looked up (``do_connect``): one held
  by a stranger is refused before libpq sends anything;
- a URL carrying a password connects with ``require_auth=scram-sha-256`` (libpq 16 or later; unless the URL says
  ``require_auth`` itself): the password never leaves in clear, so a squatter that takes the port between that
  look and libpq's own connect learns nothing it can log in with. A store whose role still has an MD5 password
  (PostgreSQL 13 or older, or upgraded from one; red32 R6: the service refused to start on one) is connected with
  MD5 — which never sends the password itself — and admins read one WARNING with the fix; once this process has
  logged in by SCRAM it never falls back to MD5 (a squatter asking for MD5 is then refused);
- after connecting, the CONNECTED socket's accepting end is looked up (``connect``: a squatter that opens its
  listener between the two looks cannot pass it) wherever the connection reached this host, and nothing is read
  from or written to a connection that a stranger accepted.

"A stranger": not root, not this process's account, not the ``postgres`` account (Debian's and most
packages' server account), and not one of ``c.SchedApp.db_server_uids``. A refusal is an outage of the
store (:class:`~.store.StoreOutage` says it once, in these words); it ends when the real server listens again.
Unix-socket stores are not looked at here (a socket folder only postgres may write), nor stores on other hosts
(TLS with ``sslmode=verify-full``: the README says so).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import pwd
import socket
from collections.abc import Collection
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event as sa_event

__all__ = ["SERVER_ACCOUNT", "allowed_server_uids", "tcp_address", "watch_store_server"]

log = logging.getLogger(__name__)

SERVER_ACCOUNT = "postgres"
"""The account PostgreSQL's packages run the server as: its uid may hold the store's address."""


def allowed_server_uids(configured: Collection[int] = ()) -> frozenset[int]:
    """The uids that may accept the store's loopback connections: root, this process's, the ``postgres``
    account's (when it exists) and ``configured`` (``c.SchedApp.db_server_uids``)."""
    from ..hub.peer import trusted_uids

    return trusted_uids((SERVER_ACCOUNT,), configured)


def tcp_address(url: str) -> tuple[str, int] | None:
    """``(host, port)`` of a PostgreSQL ``url`` that connects by TCP (``hostaddr=`` where given: the address libpq
    connects to); None for any other store (SQLite, a Unix socket, several hosts). The host may be of another
    machine: :func:`_local_targets` tells whether a connection to it reaches this one."""
    parsed = sa.engine.make_url(url)
    if not parsed.drivername.startswith("postgresql"):
        return None
    host = parsed.host or ""
    for key in ("hostaddr", "host"):
        given = parsed.query.get(key)
        if isinstance(given, str) and given and (key == "hostaddr" or not host):
            host = given
            break
    if not host or host.startswith("/") or "," in host:
        return None
    return host.strip("[]"), _port_of(parsed)


def unix_socket(url: str) -> Path | None:
    """The socket file (``<folder>/.s.PGSQL.<port>``) of a PostgreSQL ``url`` that connects over a Unix socket in a
    folder another account may write (upstream's default ``/tmp``; red32 R1b: a squatter's socket there got the
    password in clear); None for any other store (a folder only root and ``postgres`` may write needs no look)."""
    parsed = sa.engine.make_url(url)
    if not parsed.drivername.startswith("postgresql"):
        return None
    folder = parsed.query.get("host") if not parsed.host else parsed.host
    if not isinstance(folder, str) or not folder.startswith("/") or "," in folder:
        return None
    try:
        info = os.stat(folder)
    except OSError:
        return None
    if not info.st_mode & 0o022 and info.st_uid in (0, os.geteuid()):
        return None
    return Path(folder) / f".s.PGSQL.{_port_of(parsed)}"


def _port_of(parsed: sa.engine.URL) -> int:
    """The port a URL names (``:5433`` or ``?port=5433``; 5432 by default)."""
    given = parsed.query.get("port")
    try:
        return int(parsed.port or (given if isinstance(given, str) and given else 5432))
    except ValueError:
        return 5432


def _socket_holder(path: Path) -> int | None:
    """Who made the socket file ``path`` (its owner's uid); None when there is none yet (libpq finds nothing)."""
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def _peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process that accepted the connected Unix socket ``sock`` (``SO_PEERCRED``; None elsewhere)."""
    cred = getattr(socket, "SO_PEERCRED", None)
    if cred is None:
        return None
    import struct

    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, cred, struct.calcsize("3i")))
    return int(uid)


def _local_targets(host: str, port: int) -> list[str]:
    """The addresses of ``host`` (a name or an address) that are this host's own — where another local account could
    be the one listening at ``port``; [] when it resolves to another machine only, or not at all (libpq then fails
    on its own)."""
    from ..hub.peer import is_local_address

    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
    except (OSError, UnicodeError):
        return []
    targets = []
    for text in sorted(found):
        try:
            address = ipaddress.ip_address(str(text).split("%")[0])
        except ValueError:
            continue
        if is_local_address(address):
            targets.append(str(address))
    return targets


MD5_ASKED = "server requested a hashed password"
"""libpq's words when ``require_auth`` refused a server that asked for MD5."""


def _require_scram(cparams: dict[str, Any]) -> bool:
    """Make libpq send the store's password by SCRAM only (``require_auth``; libpq 16 or later) unless the URL chose
    a method itself: a squatter asking for it in clear or as MD5 is refused by libpq before it is sent. True when
    it was set here."""
    if not cparams.get("password") or "require_auth" in cparams:
        return False
    try:
        import psycopg

        if psycopg.pq.version() < 160000:
            return False
    except (ImportError, AttributeError):
        return False
    cparams["require_auth"] = "scram-sha-256"
    return True


def md5_store_line(where: str) -> str:
    """The one WARNING of a store whose role's password is MD5 (red32 R6)."""
    return (f"the store at {where} asked for the password as MD5: connected so, but an MD5 answer can be cracked offline "
            "by whoever holds the port while PostgreSQL is down. Fix: in postgresql.conf password_encryption = "
            "'scram-sha-256', set the role's password again (ALTER ROLE … PASSWORD …), and use scram-sha-256 in "
            "pg_hba.conf; or connect over the Unix socket (?host=/var/run/postgresql)")


def _who(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _refused(where: str, uid: int) -> str:
    """The one line of a refusal (what, why, the fix)."""
    return (f"the store's address {where} is held by {_who(uid)}, not the database server: not connecting (another "
            "account may have taken the port while PostgreSQL was down). Fix: stop that process and restart "
            "PostgreSQL; better, connect over its Unix socket (?host=/var/run/postgresql) or a port below 1024; if the "
            f"database server really runs as uid {uid}, add it to c.SchedApp.db_server_uids")


def watch_store_server(engine: sa.Engine, url: str, configured_uids: Collection[int] = ()) -> None:
    """Refuse connections of ``engine`` (a PostgreSQL store at ``url``) whose address on this host another account
    holds (module docstring): ``do_connect`` looks at the port's listeners and asks for SCRAM, ``connect`` at who
    accepted the connection. A refusal raises the driver's ``OperationalError`` (an unreachable store: the
    service's outage line, retried as any outage). No-op for SQLite and Unix-socket stores."""
    address = tcp_address(url)
    socket_path = unix_socket(url) if address is None else None
    if address is None and socket_path is None:
        return
    host, port = address or (str(socket_path), 0)
    allowed = allowed_server_uids(configured_uids)

    seen = {"scram": False, "md5_said": False}

    @sa_event.listens_for(engine, "do_connect")
    def _before(dialect: Any, _record: Any, cargs: Any, cparams: dict[str, Any]) -> Any:
        from ..hub.listener import listener_uids

        if socket_path is not None:  # red32 R1b: a socket folder anyone may write (upstream's default /tmp)
            holder = _socket_holder(socket_path)
            if holder is not None and holder not in allowed:
                raise dialect.loaded_dbapi.OperationalError(_refused(str(socket_path), holder))
            targets = [str(socket_path)]
        else:
            targets = _local_targets(host, port)
        ours = bool(targets) and _require_scram(cparams)
        if socket_path is not None:
            targets = []
        for target in targets:
            uids = listener_uids(target, port) or []
            stranger = next((uid for uid in uids if uid not in allowed), None)
            if stranger is not None:
                raise dialect.loaded_dbapi.OperationalError(_refused(_where(target, port), stranger))
        if not ours:
            return None  # libpq connects as the URL says
        try:
            connection = dialect.connect(*cargs, **cparams)
        except dialect.loaded_dbapi.OperationalError as exc:
            if seen["scram"] or MD5_ASKED not in str(exc):
                raise  # a server that logged this process in by SCRAM before never gets the MD5 answer
            cparams["require_auth"] = "md5"
            connection = dialect.connect(*cargs, **cparams)
            if not seen["md5_said"]:
                seen["md5_said"] = True
                log.warning("%s", md5_store_line(str(socket_path) if socket_path else _where(host, port)))
            return connection
        seen["scram"] = True
        return connection

    def _after(dbapi_conn: Any, _record: Any) -> None:
        from ..hub.peer import accepting_uid, is_local_address

        fd = getattr(getattr(dbapi_conn, "pgconn", None), "socket", None)
        if not isinstance(fd, int) or fd < 0:
            return
        sock = socket.socket(fileno=os.dup(fd))
        try:
            if sock.family == socket.AF_UNIX:  # the server's uid, from the kernel (SO_PEERCRED; red32 R1b)
                where = str(sock.getpeername() or socket_path)
                uid = _peer_uid(sock)
            else:
                peer = sock.getpeername()
                if sock.family not in (socket.AF_INET, socket.AF_INET6) or not is_local_address(
                        ipaddress.ip_address(str(peer[0]).split("%")[0])):
                    return  # another machine
                where = _where(str(peer[0]), int(peer[1]))
                uid = accepting_uid(sock)
        except (OSError, ValueError):
            return
        finally:
            sock.close()
        if uid is None:  # not Linux: nothing to ask
            return
        if uid is False or uid not in allowed:
            import psycopg

            dbapi_conn.close()
            said = _refused(where, uid) if uid is not False else (
                f"the connection to the store's address {where} was not accepted by a live socket on this host: not "
                "using it (another account may be taking the port in turns while PostgreSQL is down). Fix: restart "
                "PostgreSQL; better, connect over its Unix socket (?host=/var/run/postgresql) or a port below 1024")
            raise psycopg.OperationalError(said)

    # first of the "connect" listeners: the dialect's own (its first-connect queries) come after it
    sa_event.listen(engine, "connect", _after, insert=True)


def _where(host: str, port: int) -> str:
    return f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
