"""One user cannot fill the host with CPU-only jobs (red-team 15 R2, new user 15 N9): at most
``max_running_cpu_jobs_per_user`` 0-GPU jobs of one user run at once; the rest are accepted (201)
and pend with a reason naming the setting and the numbers, and start when one of theirs ends.
Another user's are not held. Through the real server (pytest-jupyter), SQLite, real subprocesses."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, JUDY_TOKEN, server_config, wait_for

CAP = 2
CPU = {"gpus": 0, "command": [sys.executable, "-c", "import time; time.sleep(60)"]}
LINE = (f"ivan runs {CAP} CPU-only jobs; at most {CAP} per user (c.SchedApp.max_running_cpu_jobs_per_user)"
        " · starts when one of them ends")


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, max_running_cpu_jobs_per_user=CAP)


async def test_cap_plus_two_cpu_jobs_run_cap_and_pend_two_naming_the_rule(sched_app: Any, api: Any) -> None:
    ids = []
    for i in range(CAP + 2):
        status, job = await api("POST", "jobs", {**CPU, "name": f"cpu-{i}"})
        assert status == 201, job  # accepted: over the cap it pends, never refused
        ids.append(job["id"])

    async def split() -> tuple[list[str], list[dict[str, Any]]] | None:
        jobs = [(await api("GET", f"jobs/{job_id}"))[1] for job_id in ids]
        started = [j["id"] for j in jobs if j["state"] in ("admitted", "running")]
        waiting = [j for j in jobs if j["state"] == "pending" and (j.get("reason") or {}).get("code") == "CpuJobLimit"]
        return (started, waiting) if len(started) == CAP and len(waiting) == 2 else None

    started, waiting = await wait_for(split, timeout_s=20)
    assert sorted(started) == sorted(ids[:CAP]), "the first submitted run"
    for job in waiting:
        reason = job["reason"]
        assert reason["details"]["running"] == CAP and reason["details"]["limit"] == CAP, reason
        assert reason["text"]["line"].endswith(LINE), reason["text"]
    status, judys = await api("POST", "jobs", CPU, token=JUDY_TOKEN)
    assert status == 201

    async def judy_runs() -> bool:
        return (await api("GET", f"jobs/{judys['id']}", token=JUDY_TOKEN))[1]["state"] in ("admitted", "running")

    assert await wait_for(judy_runs, timeout_s=20), "another user's CPU-only job is not held by ivan's"
    status, cancelled = await api("DELETE", f"jobs/{started[0]}")
    assert status == 200, cancelled

    async def next_started() -> bool:
        return (await api("GET", f"jobs/{ids[CAP]}"))[1]["state"] in ("admitted", "running")

    assert await wait_for(next_started, timeout_s=20), "one ending lets the next start"
    for job_id in (*ids, judys["id"]):
        await api("DELETE", f"jobs/{job_id}", token=BOSS_TOKEN)
