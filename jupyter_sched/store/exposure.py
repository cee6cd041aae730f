"""Who else can log in to the store's PostgreSQL as the service does (hubadmin 22, H5).

docs/admin.md ("Database"): with ``trust`` authentication, any user's job can rewrite every job, quota
and audit record (red team 6 did). A hub admin's quick setup — ``postgresql+psycopg://postgres@127.0.0.1/hub``,
``trust`` for loopback — ran the local executor (users' jobs on this very host) and nothing said so. The
service has the evidence itself: it logged in to a server on this host without a password. This module
reads that evidence from the open connection and says it in one sentence, for the service's start-up
log (:mod:`jupyter_sched.hub.central`) and ``jupyter-sched doctor``.

- :func:`db_access` asks the connection: the server's host and port, the role, whether the client sent a
  password (libpq's ``PQconnectionUsedPassword``; the URL's password where the driver cannot say), on
  PostgreSQL 16 and later whether the server authenticated the login at all (``SYSTEM_USER`` is NULL
  under ``trust``), and whether the role is a superuser (``pg_roles.rolsuper``).
- :func:`exposure_warning` turns it into the sentence, or None: a login without a password to a server
  on this host (a loopback or local address, or a Unix socket whose role is not this OS account's —
  ``peer`` authentication would have needed the same name) while jobs run on this host; and a word
  when the role is a superuser, whatever the password.

SQLite and other hosts: nothing to say (None). Best effort: a query that fails says nothing (the store's
own checks report a database that does not answer).
"""

from __future__ import annotations

import contextlib
import getpass
import ipaddress
import socket
from dataclasses import dataclass

import sqlalchemy as sa

__all__ = ["DbAccess", "db_access", "exposure_warning", "is_this_host"]

FIX = ("give the role a password (scram-sha-256 for it in pg_hba.conf, not trust) and pass the URL with it in "
       "$JUPYTER_SCHED_DB_URL_FILE")
ROLE_FIX = ("give the service a role of its own that owns only its database (CREATE ROLE jupyter_sched LOGIN "
            "PASSWORD …; CREATE DATABASE … OWNER jupyter_sched)")


@dataclass(frozen=True, slots=True)
class DbAccess:
    """How the store's connection logged in: ``host`` (a name or address; ``""`` for a Unix socket),
    ``port``, ``role``, ``password_used`` (the client sent one), ``authenticated`` (False: the server
    ran no authentication — ``trust``; None: it cannot say, before PostgreSQL 16), ``superuser``, and
    ``local`` (the server runs on this host), and ``socket_dir``: the folder of the Unix socket it logged in
    through (``""`` over TCP; ``port`` is then the socket's, ``.s.PGSQL.<port>``)."""

    host: str
    port: int | None
    role: str
    password_used: bool
    authenticated: bool | None
    superuser: bool
    local: bool
    socket_dir: str = ""

    @property
    def where(self) -> str:
        """``127.0.0.1:5432``, or ``a Unix socket`` of this host."""
        return f"{self.host}:{self.port}" if self.host else "a Unix socket of this host"


def is_this_host(host: str) -> bool:
    """Whether ``host`` (a name or address) is this machine: a loopback address, or one this host can
    bind to (an address of its own). A name that does not resolve is not."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    for family, _, _, _, address in infos:
        ip = str(address[0]).split("%", 1)[0]
        with contextlib.suppress(ValueError):
            if ipaddress.ip_address(ip).is_loopback:
                return True
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.bind((ip, 0))  # only an address of this host binds
            return True
        except OSError:
            continue
    return False


def db_access(engine: sa.Engine) -> DbAccess | None:
    """How ``engine`` logs in to its PostgreSQL server (see :class:`DbAccess`); None for another
    database or when the server cannot be asked."""
    if engine.dialect.name != "postgresql":
        return None
    url = engine.url
    try:
        with engine.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT current_user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
                "inet_server_addr()::text, inet_server_port(), current_setting('server_version_num')::int")).one()
            authenticated: bool | None = None
            if int(row[4]) >= 160000:  # SYSTEM_USER: NULL when no authentication ran (trust)
                authenticated = conn.execute(sa.text("SELECT system_user")).scalar() is not None
            pgconn = getattr(conn.connection.driver_connection, "pgconn", None)
            used = getattr(pgconn, "used_password", None)
            socket_dir, socket_port = _socket_of(pgconn) if row[2] is None else ("", None)
    except sa.exc.SQLAlchemyError:
        return None
    password_used = bool(used) if isinstance(used, bool) else bool(url.password)
    socket_login = row[2] is None  # inet_server_addr() is NULL over a Unix socket
    host = "" if socket_login else str(url.host or row[2])
    local = True if socket_login else is_this_host(str(row[2]).split("/", 1)[0]) or is_this_host(host)
    return DbAccess(host=host, port=socket_port if socket_login else int(row[3]), role=str(row[0]),
                    password_used=password_used, authenticated=authenticated, superuser=bool(row[1]), local=local,
                    socket_dir=socket_dir)


def _socket_of(pgconn: object) -> tuple[str, int | None]:
    """``(folder, port)`` of the Unix socket libpq connected through (psycopg's ``pgconn.host`` is the folder
    for a socket login); ``("", None)`` where the driver cannot say."""
    folder, port = getattr(pgconn, "host", b""), getattr(pgconn, "port", b"")
    folder = folder.decode(errors="replace") if isinstance(folder, bytes) else str(folder or "")
    port = port.decode(errors="replace") if isinstance(port, bytes) else str(port or "")
    if not folder.startswith("/") or not port.isdigit():
        return "", None
    return folder, int(port)


def exposure_warning(access: DbAccess | None, *, jobs_here: bool | None, os_user: str | None = None) -> str | None:
    """The sentence for a store whose database any job on this host could log in to as the service
    does, and for a superuser role; None when neither holds.

    ``jobs_here``: users' jobs run on this host (the local executor); None: not known here (the
    doctor), said as a condition. ``os_user``: the account the
    service runs as (default: this process's), for a Unix-socket login: ``peer`` admits only the role
    of the same name, so a login as another role without a password was ``trust``.
    """
    if access is None:
        return None
    open_login = not access.password_used and access.local and access.authenticated is not True
    if open_login and not access.host:  # Unix socket: peer authentication is not open to every account
        open_login = access.authenticated is False or access.role != (os_user or getpass.getuser())
    said = []
    if open_login and jobs_here is not False:
        when = "while users' jobs run on this host" if jobs_here else \
            "— if users' jobs run on this host (the local executor)"
        said.append(f"connected to {access.where} as {access.role} without a password {when}: any job can log in "
                    f"the same way and rewrite every job, quota and audit record (docs/admin.md: Database) — {FIX}")
    if access.superuser:
        said.append(f"the store's role {access.role} is a PostgreSQL superuser: whoever logs in as it also reads "
                    f"and changes every other database on that server and runs programs as its account — {ROLE_FIX}")
    return "; ".join(said) if said else None
