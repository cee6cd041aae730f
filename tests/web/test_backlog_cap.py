"""One user cannot flood the queue (red-team finding 2): at most ``max_unfinished_per_user`` jobs and
leases unfinished per user; beyond it a submit is 429 naming the limit, audited, and other users are
unaffected. Through the real server (pytest-jupyter), SQLite, simulated GPUs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, JUDY_TOKEN, server_config, wait_for

HOLD = {"gpus": 4, "command": [sys.executable, "-c", "import time; time.sleep(60)"]}
"""All four simulated GPUs: the first runs, the next pends (a pending job is cancelled at once)."""


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, max_unfinished_per_user=2)


async def test_a_user_at_the_cap_is_told_the_limit_and_others_still_submit(sched_app: Any, api: Any, kernel: Any) -> None:
    first = [(await api("POST", "jobs", {**HOLD, "name": f"hold-{i}"}))[1]["id"] for i in range(2)]
    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()})
    assert status == 429, lease
    error = lease["error"]
    assert (error["code"], error["field"], error["details"]) == (
        "busy", "max_unfinished_per_user", {"unfinished": 2, "limit": 2}), error
    status, judys = await api("POST", "jobs", HOLD, token=JUDY_TOKEN)
    assert status == 201, "another user's work is not counted against her"

    async def refused() -> list[Any]:
        _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
        return [r for r in audit if r["details"]["field"] == "max_unfinished_per_user"]

    (record,) = await wait_for(refused, timeout_s=10)
    assert record["details"]["request"] == "request lease" and record["details"]["status"] == 429
    status, cancelled = await api("DELETE", f"jobs/{first[1]}")  # the pending one
    assert status == 200 and cancelled["state"] == "cancelled", cancelled
    status, job = await api("POST", "jobs", HOLD)
    assert status == 201, "a slot freed by cancelling is usable at once"
    for job_id in (first[0], job["id"], judys["id"]):
        await api("DELETE", f"jobs/{job_id}", token=BOSS_TOKEN)
