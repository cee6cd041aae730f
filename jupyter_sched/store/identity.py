"""Which store this is: a random id written once at schema creation, checked by the service at every connection
(red31 R3 addendum).

Red31 R3: while the service's PostgreSQL was down, a local account started its own PostgreSQL on the store's
address, created the schema with the project's own code, and the service went on with it: it led that database
and ran the jobs its rows listed, as their owners' accounts. The connected-socket check (:mod:`.server_check`)
now refuses a squatter on a loopback port; this is the defence in depth that also holds for a remote store and a
squatter that passes that check: the service noticed nothing when the store under it changed — other rows, an
empty jobs table, a job-token secret of generation 1 written by someone else, a new leader term.

* The schema's step 27 (:data:`TABLE`, ``store_identity``) writes a random id (:func:`new_store_id`, 128 bits)
  once: a new store at its creation, an older store at its upgrade. A backup restored with ``pg_restore`` keeps
  it (it is a row like any other); a new empty database gets a new one.
* The service keeps the id it ran on in a file of its own (``<log_dir>/.state/store_id``: the folder is the
  service's, mode 0700), written at its first start on a store that has one.
* Every new connection of the pool (a start, a reconnect after an outage: ``pool_pre_ping`` opens new ones) reads
  the store's id before anything else is read or written on it; an id other than the one kept — or none — closes
  the connection and raises the driver's ``OperationalError``: an outage of the store, said once by
  :class:`~.outage.StoreOutage` in :func:`mismatch_line`'s words, and over when the real store answers again.
  An admin who moved the store on purpose to a NEW database (not a restore) removes the file.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event as sa_event

from ..safefd import open_fd

__all__ = ["ID_KEY", "TABLE", "keep_id", "kept_id", "mismatch_line", "new_store_id", "record_identity", "store_id",
           "watch_store_identity", "write_identity"]

ID_KEY = "store_id"
"""The row of :data:`TABLE` that holds the id."""

TABLE = sa.Table(
    "store_identity", sa.MetaData(),
    sa.Column("key", sa.String(32), primary_key=True),
    sa.Column("value", sa.String(64), nullable=False),
    sa.Column("created_at", sa.String(32), nullable=False),
)
"""``store_identity(key, value, created_at)``: one row, ``store_id``."""

_READ = "SELECT value FROM store_identity WHERE key = 'store_id'"


def new_store_id() -> str:
    """A fresh store id: 32 hex digits (128 random bits)."""
    return secrets.token_hex(16)


def write_identity(conn: sa.Connection, created_at: str) -> None:
    """Create :data:`TABLE` and its id row where missing (schema step 27; idempotent)."""
    TABLE.create(conn, checkfirst=True)
    if conn.execute(sa.select(TABLE.c.value).where(TABLE.c.key == ID_KEY)).first() is None:
        conn.execute(sa.insert(TABLE).values(key=ID_KEY, value=new_store_id(), created_at=created_at))


def store_id(engine: sa.Engine) -> str | None:
    """The id of the store ``engine`` reaches (None: it has none — a schema older than step 27)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(TABLE.name):
            return None
        value = conn.execute(sa.select(TABLE.c.value).where(TABLE.c.key == ID_KEY)).scalar()
    return str(value) if value is not None else None


def kept_id(path: Path) -> str | None:
    """The id kept in ``path`` (None: no file, or not one this service wrote)."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) == 32 and all(c in "0123456789abcdef" for c in text) else None


def keep_id(path: Path, value: str) -> None:
    """Write ``value`` to ``path`` (its folder, ``<log_dir>/.state``, made mode 0700 where missing, and the log
    folder above it 0755 as the executor makes it), atomically."""
    path.parent.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = open_fd(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(value + "\n")
    os.replace(part, path)


def mismatch_line(where: str, found: str | None, expected: str, path: Path) -> str:
    """The refusal of a connection to a store whose id is ``found`` (None: none) where ``expected`` was kept in
    ``path``: one line, for the outage WARNING."""
    seen = f"id {found}" if found else "no store id"
    return (f"the database at {where} is not the store this service ran on ({seen} ≠ {expected}, kept in {path}): "
            "not using it — another database answers at its address (someone's own PostgreSQL started while the real "
            "one was down?). Fix: start the real PostgreSQL there; if you moved the store to a new database on "
            f"purpose, remove {path} (a restored backup keeps its id)")


def watch_store_identity(engine: sa.Engine, path: Path, where: str) -> None:
    """Check every new connection of ``engine`` against the id kept in ``path`` (module docstring); nothing while no
    id is kept yet (:func:`record_identity` keeps it after the schema is up to date)."""

    def _check(dbapi_conn: Any, _record: Any) -> None:
        expected = kept_id(path)
        if expected is None:
            return
        found = _read(dbapi_conn)
        if found == expected:
            return
        dbapi_conn.close()
        raise engine.dialect.loaded_dbapi.OperationalError(mismatch_line(where, found, expected, path))

    # before the dialect's own "connect" listeners; the socket check (:mod:`.server_check`) is inserted after this,
    # so it runs first: nothing is read on a connection a stranger accepted
    sa_event.listen(engine, "connect", _check, insert=True)


def record_identity(engine: sa.Engine, path: Path) -> str | None:
    """Keep the store's id in ``path`` where none is kept yet (the first start on a store with one); the id kept."""
    kept = kept_id(path)
    if kept is not None:
        return kept
    found = store_id(engine)
    if found is not None:
        keep_id(path, found)
    return found


def _read(dbapi_conn: Any) -> str | None:
    """The store id on a raw driver connection (None: no such table or row); its transaction rolled back."""
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute(_READ)
        row = cursor.fetchone()
        return str(row[0]) if row else None
    except Exception:  # the driver's own error class: no such table, not a store of ours
        return None
    finally:
        cursor.close()
        dbapi_conn.rollback()
