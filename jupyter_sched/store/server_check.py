"""Who answers at a loopback PostgreSQL address: the database server, or another account (red31 R3).

The store reaches PostgreSQL by TCP on loopback in the README's own example (``127.0.0.1:5432``, a port any
account may bind). While the server is down — a restart for an upgrade, a crash, a boot where the service
starts first — another local account could listen there: libpq logs in to a server that asks for no
password, ``pool_pre_ping`` reconnects on its own, and the service would lead that account's database and
start the jobs it lists *as their owners' accounts*. So, for a store on a loopback TCP address:

- before connecting, the port's listeners are looked up (``do_connect``): one held by a stranger is refused
  before libpq sends anything, so a password the server would ask for in clear or as MD5 stays here;
- after connecting, the CONNECTED socket's accepting end is looked up (``connect``: a squatter that opens its
  listener between the two looks cannot pass it), and nothing is read from or written to a connection that a
  stranger accepted.

"A stranger": not root, not this process's account, not the ``postgres`` account (Debian's and most
packages' server account), and not one of ``c.SchedApp.db_server_uids``. A refusal is an outage of the
store (:class:`~.store.StoreOutage` says it once, in these words); it ends when the real server listens again.
Unix-socket and remote stores are not looked at here (a socket folder only postgres may write; TLS with
``sslmode=verify-full`` for a remote one: the README says so).
"""

from __future__ import annotations

import os
import pwd
import socket
from collections.abc import Collection
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event as sa_event

__all__ = ["SERVER_ACCOUNT", "allowed_server_uids", "loopback_address", "watch_store_server"]

SERVER_ACCOUNT = "postgres"
"""The account PostgreSQL's packages run the server as: its uid may hold the store's address."""


def allowed_server_uids(configured: Collection[int] = ()) -> frozenset[int]:
    """The uids that may accept the store's loopback connections: root, this process's, the ``postgres``
    account's (when it exists) and ``configured`` (``c.SchedApp.db_server_uids``)."""
    from ..hub.peer import trusted_uids

    return trusted_uids((SERVER_ACCOUNT,), configured)


def loopback_address(url: str) -> tuple[str, int] | None:
    """``(host, port)`` of a PostgreSQL ``url`` that connects by TCP to a loopback address (``127.0.0.1``,
    ``::1``, ``localhost``); None for any other store (SQLite, a Unix socket, a remote host, several hosts)."""
    from ..extension.job_tokens import loopback_host

    parsed = sa.engine.make_url(url)
    if not parsed.drivername.startswith("postgresql"):
        return None
    host = parsed.host or ""
    query_host = parsed.query.get("host")
    if not host and isinstance(query_host, str):
        host = query_host
    if not host or host.startswith("/") or "," in host or not loopback_host(host):
        return None
    return host, int(parsed.port or 5432)


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
    """Refuse connections of ``engine`` (a PostgreSQL store at ``url``) whose loopback address another account
    holds (module docstring): ``do_connect`` looks at the port's listeners, ``connect`` at who accepted the
    connection. A refusal raises the driver's ``OperationalError`` (an unreachable store: the service's outage
    line, retried as any outage). No-op for stores not on a loopback TCP address."""
    address = loopback_address(url)
    if address is None:
        return
    host, port = address
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    allowed = allowed_server_uids(configured_uids)

    @sa_event.listens_for(engine, "do_connect")
    def _before(dialect: Any, _record: Any, _cargs: Any, _cparams: Any) -> None:
        from ..hub.listener import listener_uids

        uids = listener_uids(host, port) or []
        stranger = next((uid for uid in uids if uid not in allowed), None)
        if stranger is not None:
            raise dialect.loaded_dbapi.OperationalError(_refused(where, stranger))

    def _after(dbapi_conn: Any, _record: Any) -> None:
        from ..hub.peer import accepting_uid

        fd = getattr(getattr(dbapi_conn, "pgconn", None), "socket", None)
        if not isinstance(fd, int) or fd < 0:
            return
        sock = socket.socket(fileno=os.dup(fd))
        try:
            uid = accepting_uid(sock)
        except (OSError, ValueError):
            uid = None
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
