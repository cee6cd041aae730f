"""A preemption that ends its victim at once publishes the same ``preempted`` event as one that requeues it.

A lease has no process to stop and no place to keep in the queue: a preempted lease ends at once
(``cancelled``), whatever the grace. Its end was published as a ``lease`` event only, so the panel's
Preempted toast (and the hub's preemption count) never saw it (session 20's closing note, "a
preemption through the stop-at-once path publishes no toast"). Real store, core, engine and
subprocesses, as tests/runtime/test_engine.py; the events are read at the engine's publish sink.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import SchedulerService
from jupyter_sched.scheduling import SchedulingProfile
from tests.leftovers import end_jobs
from tests.runtime.test_engine import gated, lease_body, make_service, state_of, wait_until


def spied(svc: SchedulerService) -> list[dict[str, Any]]:
    """Every event the engine publishes from now on, in order."""
    seen: list[dict[str, Any]] = []
    sink = svc.engine.writer.publish

    def spy(event: dict[str, Any]) -> None:
        seen.append(event)
        sink(event)

    svc.engine.writer.publish = spy
    return seen


@pytest.mark.parametrize("grace_s", [0.0, 60.0], ids=["grace 0", "grace 60 s"])
@pytest.mark.parametrize("victim", ["lease", "job"])
def test_stop_at_once_preemption_toast(sqlite_db: str, tmp_path: Path, grace_s: float, victim: str) -> None:
    """A low lease (ended at once) or job (requeued) preempted by bob's high job: one ``preempted``
    event for it, naming its preemptor with its name and why, as the panel's toast says it; the
    lease's says it ended (``cancelled``), the job's that it waits again (``pending``)."""
    svc = make_service(sqlite_db, tmp_path, gpus=1, priority_grants={"users": {"bob": ["high"]}},
                       scheduling_profile=SchedulingProfile(min_runtime_s=0, grace_s=grace_s))
    seen = spied(svc)
    body = {**lease_body(1)} if victim == "lease" else {"command": gated(tmp_path, "never")}
    low = svc.submit({**body, "name": "lowone", "priority": "low"}, user="ana")
    wait_until(lambda: state_of(svc, low["id"]) == "running", "lowone to run", tick=svc.tick)
    hi = svc.submit({"name": "hi", "priority": "high", "command": gated(tmp_path, "never-hi")}, user="bob")
    try:
        wait_until(lambda: state_of(svc, hi["id"]) == "running", "hi to run", tick=svc.tick)
        events = [e["data"] for e in seen if e["type"] == "preempted"]
        assert [e["id"] for e in events] == [low["id"]], seen
        event = events[0]
        assert event["state"] == ("cancelled" if victim == "lease" else "pending")
        assert (event["user"], event["name"], event["kind"]) == ("ana", "lowone", "lease" if victim == "lease" else "training")
        assert (event["preempted_by"], event["preempted_by_name"]) == (hi["id"], "hi")
        assert event["preempted_by_text"] == f'by bob\'s job "hi" ({hi["id"]}), a higher-priority high job of team default'
    finally:
        svc.cancel(hi["id"], user="bob")
        if victim == "job":
            svc.cancel(low["id"], user="ana")
        assert end_jobs(svc.engine.executor) == []  # the cancelled jobs' wrappers end with the test (session 22)


def test_a_lease_its_owner_releases_publishes_no_preempted_event(sqlite_db: str, tmp_path: Path) -> None:
    """The control: a lease ended by its owner's release is no preemption (no toast)."""
    svc = make_service(sqlite_db, tmp_path, gpus=1)
    seen = spied(svc)
    lease = svc.submit({**lease_body(1), "name": "mine"}, user="ana")
    wait_until(lambda: state_of(svc, lease["id"]) == "running", "the lease to run", tick=svc.tick)
    svc.cancel(lease["id"], user="ana")
    wait_until(lambda: state_of(svc, lease["id"]) == "cancelled", "the release", tick=svc.tick)
    svc.tick()
    assert [e for e in seen if e["type"] == "preempted"] == []
