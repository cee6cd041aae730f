"""The application services on a real SQLite store, for the modules of this folder.

``services``: four simulated GPUs on node ``vm`` and a manual clock at ``T0`` — the panel and
first-hour modules' set-up (new users 17 and 18). A module that needs another inventory, clock or
policy defines its own ``services`` fixture, which takes precedence over this one.

``db_url``: a store URL, once on SQLite and once on the session's real PostgreSQL (restart tests:
:mod:`tests.services.restarts`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.store import Store, sqlite_url
from tests.leftovers import end_jobs
from tests.runtime.builders import T0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                   inventory=SimulatedInventory(4, node="vm"), executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    yield svc
    assert end_jobs(svc.executor) == []  # a started job ends with its test (its wrapper outlived the session before)
    svc.store.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL per parameter: a SQLite file in ``tmp_path``, or the session's real PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sched.sqlite'}"
    return str(request.getfixturevalue("pg_url"))
