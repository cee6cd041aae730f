"""Fixtures of the reliability tests: a real PostgreSQL server (skips when absent), stray-job cleanup.

The tests here start real ``jupyter server`` subprocesses (``harness.EmbeddedServer``); each
test kills, at its end, every process whose command line names its tmp dir, so a failing run
never leaves servers or jobs behind.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # ``tests.pg`` and ``tests.reliability`` importable however pytest started
    sys.path.insert(0, str(ROOT))

from tests.pg import PostgresServer, skip_reason  # noqa: E402
from tests.reliability.harness import kill_strays  # noqa: E402

_db_counter = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the session; skips with the reason when the binaries are absent."""
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
    return pg_server.create_database(f"rel_{next(_db_counter)}")


@pytest.fixture(autouse=True)
def _no_strays(tmp_path: Path) -> Iterator[None]:
    yield
    kill_strays(tmp_path)
