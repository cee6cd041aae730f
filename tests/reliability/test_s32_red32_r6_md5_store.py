"""red32 R6 (a regression of red32 R1's fix): ``require_auth=scram-sha-256`` stopped the service on a store whose role
still has an MD5 password (PostgreSQL 13 or older, or a cluster upgraded from one) — "authentication method requirement
… failed: server requested a hashed password. Fix: check the database URL". MD5 never sends the password itself, so
such a store is connected with MD5 and admins read one WARNING with the fix; but once this process has logged in by
SCRAM, a server asking for MD5 (a squatter in a restart's window) is refused.

Real PostgreSQL (the suite's server, tests/pg.py): roles of this test's own with an md5 or a scram-sha-256 line of
their own in pg_hba.conf, put first (other tests log in as ``postgres``, whose trust line is untouched) and reloaded.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterator

import psycopg
import pytest
import sqlalchemy as sa

from jupyter_sched.store import Store
from jupyter_sched.store.server_check import MD5_ASKED
from tests.pg import PostgresServer

_names = itertools.count()


def _admin(pg: PostgresServer) -> psycopg.Connection:
    return psycopg.connect(f"host=127.0.0.1 port={pg.port} user=postgres dbname=postgres", autocommit=True)


def _role(pg: PostgresServer, method: str) -> tuple[str, str]:
    """A new role whose password is kept as ``method`` (``md5`` / ``scram-sha-256``) and logs in only by it, with a
    database of its own: (its URL, its name)."""
    name = f"r6_{method.split('-')[0]}_{os.getpid()}_{next(_names)}"
    with _admin(pg) as conn:
        conn.execute(f"SET password_encryption = '{method}'")
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'pw-{name}'")
        conn.execute(f"CREATE DATABASE {name} OWNER {name}")
    _hba(pg, name, method)
    return f"postgresql+psycopg://{name}:pw-{name}@127.0.0.1:{pg.port}/{name}", name


def _hba(pg: PostgresServer, name: str, method: str) -> None:
    hba = pg.data_dir / "pg_hba.conf"
    lines = [line for line in hba.read_text().splitlines() if f" {name} " not in line]
    hba.write_text(f"host all {name} 127.0.0.1/32 {method}\n" + "\n".join(lines) + "\n")
    with _admin(pg) as conn:
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture
def pg(pg_server: PostgresServer) -> Iterator[PostgresServer]:
    if psycopg.pq.version() < 160000:
        pytest.skip("require_auth takes libpq 16 or later")
    yield pg_server


def test_red32_r6_a_store_whose_role_has_an_md5_password_connects_and_admins_are_told(
        pg: PostgresServer, caplog: pytest.LogCaptureFixture) -> None:
    url, name = _role(pg, "md5")
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.store.server_check"):
        store = Store(url)
        try:
            with store.engine.connect() as conn:
                assert conn.execute(sa.text("SELECT current_user")).scalar() == name
        finally:
            store.engine.dispose()
    said = [r.getMessage() for r in caplog.records if "asked for the password as MD5" in r.getMessage()]
    assert len(said) == 1, caplog.text  # once, not per connection
    assert f"the store at 127.0.0.1:{pg.port} asked for the password as MD5" in said[0]
    assert "password_encryption = 'scram-sha-256'" in said[0] and "Unix socket" in said[0]


def test_red32_r6_after_a_scram_login_a_server_asking_for_md5_is_refused(
        pg: PostgresServer, caplog: pytest.LogCaptureFixture) -> None:
    url, name = _role(pg, "scram-sha-256")
    store = Store(url)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT current_user")).scalar() == name
        assert "asked for the password as MD5" not in caplog.text
        # the port now asks this role for MD5 (what a squatter in a restart's window would ask): not answered
        with _admin(pg) as admin:
            admin.execute("SET password_encryption = 'md5'")
            admin.execute(f"ALTER ROLE {name} PASSWORD 'pw-{name}'")
        _hba(pg, name, "md5")
        store.engine.dispose()
        with pytest.raises(sa.exc.OperationalError) as refused, store.engine.connect():
            pass
        assert MD5_ASKED in str(refused.value), refused.value
    finally:
        store.engine.dispose()
