"""A hub's fractional jobs share a GPU only with their own user's work (red-team 5 finding 2).

On a real hub eve's 20 jobs of 1/1000 GPU were all packed onto the GPU of alice's 0.5-GPU job
(charged 0.02 GPU; a shared GPU is time-sliced with no isolation). The service built the way a
server builds it (``from_config``, real SQLite store, real local executor and processes) with
``share_gpus_across_users`` False — the hub's default — places eve's share on another GPU, both
through a full cycle and through the live ledger that decides a job submitted between cycles.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from jupyter_sched.services import SchedulerService
from jupyter_sched.store import sqlite_url


def _service(tmp_path: Path, **extra: Any) -> SchedulerService:
    return SchedulerService.from_config({
        "db_url": sqlite_url(tmp_path / "sched.sqlite"), "log_dir": str(tmp_path / "logs"),
        "inventory_source": "simulated", "simulated_gpus": 2, "node_name": f"share-{uuid.uuid4().hex[:8]}", **extra})


def _gpu_of(svc: SchedulerService, job: dict[str, Any]) -> str:
    """The GPU ``job`` starts on (the engine ticked as a server ticks it; a hang guard, not a timing)."""
    deadline = time.monotonic() + 60
    while True:
        svc.tick()
        allocation = svc.get_job(job["id"], user=job["user"])["allocation"]
        if allocation:
            return str(allocation["gpu_uuids"][0])
        assert time.monotonic() < deadline, f"{job['id']} never started"
        time.sleep(0.1)


def _stop_all(svc: SchedulerService, jobs: list[dict[str, Any]]) -> None:
    for job in jobs:
        svc.cancel(job["id"], user="root", is_admin=True)
    deadline = time.monotonic() + 60
    while svc.services.list_jobs(state="admitted,running") and time.monotonic() < deadline:
        svc.tick()
        time.sleep(0.1)


def test_a_hub_packs_a_users_fractional_jobs_together_but_never_beside_another_users(tmp_path: Path) -> None:
    svc = _service(tmp_path, share_gpus_across_users=False)
    jobs: list[dict[str, Any]] = []
    try:
        alice = svc.submit({"command": ["sleep", "60"], "gpus": 0.5}, user="alice")
        jobs.append(alice)
        first = _gpu_of(svc, alice)
        eve = svc.submit({"command": ["sleep", "60"], "gpus": 0.001}, user="eve")
        jobs.append(eve)
        assert _gpu_of(svc, eve) != first  # was: the GPU of alice's half
        again = svc.submit({"command": ["sleep", "60"], "gpus": 0.25}, user="alice")
        jobs.append(again)
        assert _gpu_of(svc, again) == first  # her own jobs still share
    finally:
        _stop_all(svc, jobs)
        svc.store.close()


def test_the_hub_service_shares_gpus_only_within_a_user_by_default_and_a_personal_server_as_before() -> None:
    from jupyter_sched.extension.app import SchedApp
    from jupyter_sched.hub.central import HubSchedApp

    assert HubSchedApp().share_gpus_across_users is False
    assert SchedApp().share_gpus_across_users is True
