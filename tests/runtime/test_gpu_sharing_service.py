"""A server's fractional jobs share a GPU only within a team, and never below its smallest share
(red-team 5 finding 2; the lead's decision: the trust boundary is the team).

On a real hub eve's 20 jobs of 1/1000 GPU were all packed onto the GPU of alice's 0.5-GPU job
(charged 0.02 GPU; a shared GPU is time-sliced with no isolation). The service built the way a
server builds it (``from_config``, real SQLite store, real local executor and processes) with a
server's defaults (``gpu_sharing="team"``, ``min_gpu_fraction=0.1``) places eve's share on another
GPU — through a full cycle and through the live ledger that decides a job submitted between
cycles — and refuses a 1/1000 share with 400 naming gpus.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

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


SERVER_DEFAULTS = {"gpu_sharing": "team", "min_gpu_fraction": 0.1, "user_teams": {"alice": "ml", "eve": "ev"}}


def test_a_server_packs_a_teams_fractional_jobs_together_but_never_beside_another_teams(tmp_path: Path) -> None:
    svc = _service(tmp_path, **SERVER_DEFAULTS)
    jobs: list[dict[str, Any]] = []
    try:
        alice = svc.submit({"command": ["sleep", "60"], "gpus": 0.5}, user="alice")
        jobs.append(alice)
        first = _gpu_of(svc, alice)
        eve = svc.submit({"command": ["sleep", "60"], "gpus": 0.1}, user="eve")
        jobs.append(eve)
        assert _gpu_of(svc, eve) != first  # was: the GPU of alice's half
        again = svc.submit({"command": ["sleep", "60"], "gpus": 0.25}, user="alice")
        jobs.append(again)
        assert _gpu_of(svc, again) == first  # her team's jobs still share
    finally:
        _stop_all(svc, jobs)
        svc.store.close()


def test_a_share_below_the_servers_smallest_is_refused_naming_gpus(tmp_path: Path) -> None:
    from jupyter_sched.errors import ValidationError

    svc = _service(tmp_path, **SERVER_DEFAULTS)
    try:
        with pytest.raises(ValidationError) as refused:
            svc.submit({"command": ["true"], "gpus": 0.001}, user="eve")
        assert refused.value.field == "gpus"
        assert "below the smallest share of a GPU this server gives, 0.1" in refused.value.message
        assert refused.value.hint == "ask for at least 0.1 of a GPU, or a whole GPU"
    finally:
        svc.store.close()


def test_a_server_shares_gpus_within_a_team_and_gives_at_least_a_tenth_by_default() -> None:
    from jupyter_sched.extension.app import SchedApp
    from jupyter_sched.hub.central import HubSchedApp

    for app in (SchedApp(), HubSchedApp()):
        assert (app.gpu_sharing, app.min_gpu_fraction) == ("team", 0.1)
