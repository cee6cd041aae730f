"""A failing database never crashes the engine's loop: it backs off and says "reconnecting to the
database (attempt n, next in s)" (issue 17 item 5).

Real PostgreSQL (the test's own database on the session's server): connections to it are
refused (``ALLOW_CONNECTIONS false``) and the open ones terminated, as a database restart or a
network cut would; then allowed again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from jupyter_sched.backoff import Backoff
from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store
from tests.runtime.builders import T0


def admin(url: str) -> psycopg.Connection[Any]:
    parsed = sa.make_url(url)
    return psycopg.connect(f"host={parsed.host} port={parsed.port} user=postgres dbname=postgres", autocommit=True)


@pytest.fixture
def cut(pg_url: str) -> Iterator[Any]:
    name = sa.make_url(pg_url).database

    def set_reachable(reachable: bool) -> None:
        with admin(pg_url) as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"true" if reachable else "false"}')
            if not reachable:
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))

    yield set_reachable
    set_reachable(True)


def test_the_engine_backs_off_while_the_database_is_gone_and_says_so(pg_url: str, tmp_path: Path, cut: Any) -> None:
    events: list[dict[str, Any]] = []
    svc = SchedulerService(store=Store(pg_url), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0), cycle_interval_s=0.0)
    svc.engine._publish = events.append  # the engine's event sink (the service's bus is async-only)
    svc.engine.database_retries.backoff = Backoff(base_s=0.2, cap_s=5.0, jitter=0.0)
    assert svc.tick().leader
    cut(False)
    failed = svc.tick()  # the database is gone: the tick ends quietly
    assert not failed.decided
    state = svc.engine.database
    assert state is not None and state.attempt == 1
    assert state.message.startswith("reconnecting to the database (attempt 1, next in ")
    assert 0.0 < svc.engine.wait_hint_s(1.0) <= 0.2  # the driver waits out the backoff …
    assert svc.tick().decided is False and svc.engine.database.attempt == 1  # … and a tick before it does nothing
    connection = [e for e in events if e["type"] == "connection"]
    assert connection and connection[-1]["data"]["database"]["attempt"] == 1
    cut(True)
    time.sleep(0.25)
    assert svc.tick().leader and svc.engine.database is None  # back, and it says so
    assert events[-1] == {"type": "connection", "data": {"database": None}}
