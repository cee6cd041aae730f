"""Answers are written by pydantic-core straight from the response model (``wire_json``, issue 17:
building the Python value and then ``json.dumps`` of a 50-job page was a third of a polled
request's CPU); the JSON must be the same value ``to_wire()`` gives, for every kind of answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest, SubmitJobRequest, wire_json
from jupyter_sched.store import Store, sqlite_url


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                   executor=LocalExecutor(tmp_path / "jobs"))
    yield svc
    svc.store.close()


def test_wire_json_is_the_value_to_wire_gives_for_every_polled_answer(services: Services) -> None:
    ana, root = services.caller("ana", admin=False), services.caller("root", admin=True)
    for i in range(3):  # the first holds both GPUs' worth; names outside ASCII travel as UTF-8
        services.jobs.submit(ana, SubmitJobRequest(gpus=2, command=["sleep", "60"], name=f"r\u00e9sum\u00e9-{i}"))
    answers = [services.jobs.queue(ana, GetQueueRequest()), services.jobs.queue(root, GetQueueRequest(limit=1)),
               services.jobs.list(ana, ListJobsRequest(limit=2)).jobs, services.accounting.me(ana),
               services.system.inventory(ana), services.quotas.get(ana), {"plain": ["data", 1.5, None]}]
    for answer in answers:
        wire = answer.to_wire() if hasattr(answer, "to_wire") else answer
        assert json.loads(wire_json(answer)) == json.loads(json.dumps(wire)), type(answer).__name__
