"""Red team 24, R6 through the real server: a kernel lease outlived its owner leaving the team.

ivan holds a 4-GPU lease of a real kernel charged to ``ml`` (guaranteed all 4 GPUs); the admin's ``PUT
quotas`` takes him out of ``ml`` (into ``cv``). Before: his keepalive answered 200 and extended the lease,
which kept holding ml's guarantee, and judy (still in ``ml``) waited with no word why. Now the
``team_left`` record names the lease as reclaimable, his keepalive answers 200 with a ``notice`` and
extends nothing, and judy's job takes the GPUs back (audited ``reclaim`` with ``details.departed``) and runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, JUDY_TOKEN, SLEEP_JOB, server_config, wait_for

LINES = [{"team": "ml", "guaranteed": 4, "borrowing_limit": 0}, {"team": "cv", "guaranteed": 0, "borrowing_limit": 4}]


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"ivan": ["ml", "cv"], "judy": ["ml"]}, quotas=LINES,
                         preemption_grace_s=1.0)


async def test_red24_r6_a_left_members_lease_is_not_renewed_and_judy_takes_it_back(sched_app: Any, api: Any,
                                                                                   kernel: Any) -> None:
    status, lease = await api("POST", "leases", {"gpus": 4, "team": "ml", "kernel_id": await kernel()},
                              params={"wait_ms": "5000"})
    assert status in (200, 201) and lease["state"] in ("admitted", "running"), lease

    _, quotas = await api("GET", "quotas", token=BOSS_TOKEN)
    status, body = await api("PUT", "quotas", {**quotas, "user_teams": {"ivan": ["cv"], "judy": ["ml"]}},
                             token=BOSS_TOKEN)
    assert status == 200, body
    _, rows = await api("GET", "audit", params={"action": "team_left", "user": "ivan"}, token=BOSS_TOKEN)
    assert [r["details"]["reclaimable"] for r in rows] == [[lease["id"]]], rows

    status, kept = await api("POST", f"leases/{lease['id']}/keepalive", {})
    assert status == 200, kept
    assert kept["keepalive_until"] is None and kept["notice"].startswith(
        f"GPUs held by your lease {lease['id']}; you left team ml (found "), kept
    assert "it is not renewed" in kept["notice"] and kept["notice"].endswith("%gpu request 4 --team cv"), kept
    _, kept_rows = await api("GET", "audit", params={"action": "idle_keepalive"}, token=BOSS_TOKEN)
    assert kept_rows == [], "nothing was extended"

    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "team": "ml"}, token=JUDY_TOKEN)
    assert status == 201, job

    async def judy_runs() -> bool:
        _, seen = await api("GET", f"jobs/{job['id']}", token=JUDY_TOKEN)
        return bool(seen["state"] == "running")

    await wait_for(judy_runs)
    _, reclaimed = await api("GET", "audit", params={"action": "reclaim"}, token=BOSS_TOKEN)
    (taken,) = [r for r in reclaimed if r["job_id"] == lease["id"]]
    assert taken["details"]["for_job"] == job["id"] and taken["details"]["departed"]["user"] == "ivan", taken
    _, after = await api("GET", f"leases/{lease['id']}")
    assert after["state"] not in ("admitted", "running"), after
