"""Fixtures of the definitions tests: a fresh SQLite file, and each database kind (SQLite, PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    from jupyter_sched.store import sqlite_url

    return sqlite_url(tmp_path / "sched.sqlite")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        from jupyter_sched.store import sqlite_url

        return sqlite_url(tmp_path / "sched.sqlite")
    return str(request.getfixturevalue("pg_url"))
