"""red31 R3 addendum: when the database under the running service changed — red31's own PostgreSQL on the
store's address, its schema made with the project's own code — the service noticed nothing (other rows, an
empty jobs table, a job-token secret of generation 1 written by someone else, a new leader term 1) and led it.
Now the schema holds a random store id written once (step 27), the service keeps the id it ran on beside its
logs' records (``<log_dir>/.state/store_id``), and every new connection to a database with another id — or
none — is refused as an outage of the store, said once; it ends when the real store answers again. An older
store without an id gets one at its upgrade, and the first start on it keeps it.

A real PostgreSQL (``tests/pg.py``): the "other database at the same address" is made by renaming the
store's database away and creating a new one, with its own schema, under its name — what a client at that
address then reaches, as after red31's swap."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from jupyter_sched.errors import StoreError
from jupyter_sched.store import Store, latest_version
from jupyter_sched.store.identity import kept_id, store_id
from jupyter_sched.store.outage import unreachable
from tests.pg import PostgresServer


def _admin(server: PostgresServer, sql: str) -> None:
    with psycopg.connect(f"host=127.0.0.1 port={server.port} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(sql)


def _swap(server: PostgresServer, name: str, away: str) -> None:
    """``name`` renamed to ``away`` (its sessions ended first, as a server restart ends them)."""
    _admin(server, f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' "
                   "AND pid <> pg_backend_pid()")
    _admin(server, f'ALTER DATABASE "{name}" RENAME TO "{away}"')


def test_red31_r3_a_database_at_the_stores_address_that_is_not_its_store_is_refused(
        pg_server: PostgresServer, pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    kept = tmp_path / "jobs" / ".state" / "store_id"
    store = Store(pg_url, identity_file=kept)
    try:
        ours = store_id(store.engine)
        assert ours is not None and kept_id(kept) == ours, "the first start keeps the store's id"
        assert (kept.parent.stat().st_mode & 0o777) == 0o700
        assert store.count_jobs() == 0
        name = sa.make_url(pg_url).database
        assert name
        store.engine.dispose()
        _swap(pg_server, name, f"{name}_real")
        _admin(pg_server, f'CREATE DATABASE "{name}"')
        other = Store(pg_url)  # someone's own store, schema and all, under the same name and address
        theirs = store_id(other.engine)
        other.close()
        assert theirs is not None and theirs != ours
        caplog.set_level(logging.WARNING, logger="jupyter_sched.store")
        for _ in range(3):
            with pytest.raises(StoreError) as refused:
                store.count_jobs()
            assert unreachable(refused.value), refused.value
        said = [r.getMessage() for r in caplog.records if "does not answer" in r.getMessage()]
        assert len(said) == 1, said  # the outage line, once
        assert f"is not the store this service ran on (id {theirs} ≠ {ours}, kept in {kept}): not using it" in said[0]
        with pytest.raises(StoreError, match="is not the store this service ran on"):
            Store(pg_url, identity_file=kept)  # a start on it is refused too: nothing migrated or led there
        # the real store is back at its address: used again
        _admin(pg_server, f'DROP DATABASE "{name}" WITH (FORCE)')
        _swap(pg_server, f"{name}_real", name)
        assert store.count_jobs() == 0
    finally:
        store.close()


def test_red31_r3_an_older_store_without_an_id_gets_one_and_the_first_start_keeps_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
    Store(url).close()
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # as a store of the version before step 27 (and the steps after it)
        conn.execute(sa.text("DROP TABLE store_identity"))
        conn.execute(sa.text("DROP TABLE submit_keys"))  # step 28
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 27"))
    engine.dispose()
    kept = tmp_path / "jobs" / ".state" / "store_id"
    store = Store(url, identity_file=kept)
    try:
        assert store.migrated == list(range(27, latest_version() + 1))
        assert kept_id(kept) == store_id(store.engine) is not None
    finally:
        store.close()
