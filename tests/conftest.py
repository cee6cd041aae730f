"""Fixtures shared by every test package: one real PostgreSQL server per session.

PostgreSQL: a throw-away server started from Debian's binaries on loopback (``tests/pg.py``),
a fresh database per test. Tests that need it skip with a clear message only when the
binaries are absent.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # make ``tests.pg`` importable however pytest was started
    sys.path.insert(0, str(ROOT))

from tests.pg import PostgresServer, skip_reason  # noqa: E402

_db_counter = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session (skips when PostgreSQL is not installed)."""
    reason = skip_reason()
    if reason:
        pytest.skip(f"PostgreSQL not available: {reason}")
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:
    """URL of a fresh, empty PostgreSQL database."""
    return pg_server.create_database(f"db_{next(_db_counter)}")
