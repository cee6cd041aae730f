"""A new store is created in one step, not by its 29 migration steps (s35-migr), and is the same database.

A fresh store ran every migration step (~0.16 s on a SQLite file, ~0.24 s on PostgreSQL: 29 transactions' worth of
DDL, ``schema.tables_v1`` rebuilt 8 times), paid by every test that opens one and by a new user's first
``jupyter lab``. ``migrate`` now builds a version-0 database from ``schema.metadata`` and the steps' data parts
(``migrations._HEAD_DATA``) and records every version. These tests hold the two ways to the same result on SQLite
and PostgreSQL — tables, columns (order, type, nullability, default), primary, unique and foreign keys, indexes and
the rows a new store holds — and fail when a new step is added without the one-step creation following it.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.store import Store, migrations
from jupyter_sched.store.migrations import (
    Migration,
    applied_steps,
    describe_applied,
    describe_migration,
    latest_version,
    migrate,
)

_VARIES = {("schema_version", "applied_at"), ("store_identity", "value"), ("store_identity", "created_at")}
"""Columns whose values differ between any two new stores (when, and the random store id)."""


def _schema(engine: sa.Engine) -> dict[str, Any]:
    """Everything the database says of its tables, comparable with ``==`` (and readable in a failure's diff)."""
    inspector = sa.inspect(engine)
    found: dict[str, Any] = {}
    for table in sorted(inspector.get_table_names()):
        found[table] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"], c.get("default"), c.get("autoincrement"))
                        for c in inspector.get_columns(table)],
            "primary key": (inspector.get_pk_constraint(table).get("name"),
                            inspector.get_pk_constraint(table)["constrained_columns"]),
            "unique": sorted((u["name"], tuple(u["column_names"])) for u in inspector.get_unique_constraints(table)),
            "foreign keys": sorted((f["name"], tuple(f["constrained_columns"]), f["referred_table"],
                                    tuple(f["referred_columns"])) for f in inspector.get_foreign_keys(table)),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                              for i in inspector.get_indexes(table)),
        }
    if engine.dialect.name == "postgresql":
        found["(sequences)"] = sorted(inspector.get_sequence_names())
    return found


def _rows(engine: sa.Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted, with :data:`_VARIES`'s values replaced by whether they are set."""
    md = sa.MetaData()
    md.reflect(engine)
    rows: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for name, table in sorted(md.tables.items()):
            rows[name] = sorted(tuple(bool(value) if (name, column) in _VARIES else value
                                      for column, value in row._mapping.items())
                                for row in conn.execute(sa.select(table)))
    return rows


def _check_one_step_equals_every_step(url_a: str, url_b: str) -> None:
    """Build ``url_a`` as ``migrate`` builds a new database, ``url_b`` by running every step; assert they are the
    same database and that ``url_a`` was built in one step (no step's ALTER or DROP ran on it)."""
    assert migrations.HEAD_VERSION == latest_version(), (
        f"migration {latest_version()} was added after the one-step creation of a new store (HEAD_VERSION "
        f"{migrations.HEAD_VERSION}): add its tables/columns/indexes to schema.metadata (as every step must), its data part to "
        "migrations._HEAD_DATA if a new store needs its rows, then set HEAD_VERSION to it")
    # the store's own engines (its SQLite pragmas and BEGIN IMMEDIATE), with no migration run by the open
    one, every = Store(url_a, run_migrations=False).engine, Store(url_b, run_migrations=False).engine
    statements: list[str] = []
    sa.event.listen(one, "before_cursor_execute", lambda *args: statements.append(str(args[2])))
    try:
        assert migrate(one) == list(range(1, latest_version() + 1))
        assert migrate(every, every_step=True) == list(range(1, latest_version() + 1))
        assert not [s for s in statements if s.lstrip().upper().startswith(("ALTER", "DROP"))], \
            "a new store was not created in one step"
        assert _schema(one) == _schema(every)
        assert _rows(one) == _rows(every)
    finally:
        one.dispose()
        every.dispose()


def _pair(request: pytest.FixtureRequest, dialect: str, tmp_path: Any) -> tuple[str, str]:
    if dialect == "sqlite":
        from jupyter_sched.store import sqlite_url

        return sqlite_url(tmp_path / "one.sqlite"), sqlite_url(tmp_path / "every.sqlite")
    server = request.getfixturevalue("pg_server")
    suffix = uuid.uuid4().hex[:12]
    return server.create_database(f"s35_one_{suffix}"), server.create_database(f"s35_every_{suffix}")


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_s35_migr_a_new_store_built_in_one_step_is_the_database_every_step_builds(
        request: pytest.FixtureRequest, dialect: str, tmp_path: Any) -> None:
    _check_one_step_equals_every_step(*_pair(request, dialect, tmp_path))


def _add_column_step(conn: sa.Connection) -> None:
    conn.execute(sa.text("ALTER TABLE jobs ADD COLUMN next_thing VARCHAR(20)"))


def _seed_row_step(conn: sa.Connection) -> None:
    conn.execute(sa.text("INSERT INTO change_counters (name, value) VALUES ('next_thing', 0)"))


@pytest.mark.parametrize("step, moved", [
    pytest.param(_add_column_step, False, id="a step adding a column, HEAD_VERSION not moved"),
    pytest.param(_add_column_step, True, id="a step adding a column missing from schema.metadata"),
    pytest.param(_seed_row_step, True, id="a step writing a row a new store needs, missing from _HEAD_DATA"),
])
def test_s35_migr_a_new_step_the_one_step_creation_does_not_follow_fails_the_check(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any, step: Any, moved: bool) -> None:
    from jupyter_sched.store import sqlite_url

    nxt = latest_version() + 1
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, Migration(nxt, "the next thing", step)))
    if moved:
        monkeypatch.setattr(migrations, "HEAD_VERSION", nxt)
    with pytest.raises(AssertionError):
        _check_one_step_equals_every_step(sqlite_url(tmp_path / "one.sqlite"), sqlite_url(tmp_path / "every.sqlite"))
    if not moved:  # until HEAD_VERSION follows, the product runs every step: a new store is still right
        assert Store(sqlite_url(tmp_path / "three.sqlite")).migrated == list(range(1, nxt + 1))


def test_s35_migr_a_new_store_says_it_was_created_at_the_latest_version(tmp_path: Any) -> None:
    from jupyter_sched.store import sqlite_url

    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    assert store.migrated == list(range(1, latest_version() + 1))
    assert describe_migration(0, store.migrated) == f"store schema created (version {latest_version()})"
    with store.engine.connect() as conn:
        steps = applied_steps(conn)
    assert [v for v, _ in steps] == list(range(1, latest_version() + 1))
    assert describe_applied(steps) == f"1-{latest_version()} at {steps[0][1][:16]}"
    assert store.schema_version() == latest_version()
    assert Store(store.url).migrated == []  # the next open: up to date
    store.close()
