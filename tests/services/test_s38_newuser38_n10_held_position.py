"""newuser38 n10: a held job kept ``POS 1`` in ``jupyter-sched queue`` while the next waiting job was the one to
start (README: "#1 is the next to start when its GPUs are free"). Held jobs have no start position (Slurm); the
next waiting job is #1 — REST ``position`` is null for a held job, on the engine's numbering and on the store's
fallback (a server that has not numbered the queue). Real services over SQLite, a real engine tick."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest, SubmitJobRequest, UpdateJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.leftovers import end_jobs


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                   executor=LocalExecutor(tmp_path / "jobs"))
    yield svc
    assert end_jobs(svc.executor) == []
    svc.store.close()


def test_newuser38_n10_a_held_job_has_no_position_and_the_next_waiting_job_is_1(services: Services) -> None:
    ana, bo = services.caller("ana", admin=False), services.caller("bo", admin=False)
    services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["sleep", "30"], time_limit_s=60))
    services.engine.tick()  # bo's job takes the only GPU: the rest waits
    p1 = services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"], time_limit_s=60)).id
    p2 = services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["true"], time_limit_s=60)).id
    unnumbered = {e.id: e.position for e in services.jobs.queue(ana, GetQueueRequest()).root if e.id in (p1, p2)}
    services.jobs.update(ana, p1, UpdateJobRequest(held=True))
    # before the engine numbers the queue again: the store's order, the held job left out
    assert {e.id: e.position for e in services.jobs.queue(bo, GetQueueRequest()).root
            if e.id in (p1, p2)}[p1] is None
    services.engine.tick()
    seen = {e.id: e.position for e in services.jobs.queue(bo, GetQueueRequest()).root if e.id in (p1, p2)}
    assert seen == {p1: None, p2: 1}, (seen, unnumbered)
    services.jobs.update(ana, p1, UpdateJobRequest(held=False))
    services.engine.tick()
    seen = {e.id: e.position for e in services.jobs.queue(bo, GetQueueRequest()).root if e.id in (p1, p2)}
    assert seen[p2] in (1, 2) and seen[p1] in (1, 2) and seen[p1] != seen[p2], seen  # released: numbered again
