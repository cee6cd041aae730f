"""The telemetry answers of a real server: history with gaps, idle candidates, the waste report
and the inventory's telemetry view (issue 18). Everything is real: jupyter_server with the
extension, the engine and telemetry threads (simulated GPUs: utilization = the job process's real
CPU use), the local executor, SQLite."""

from __future__ import annotations

import sys
from typing import Any

from tests.web.conftest import BOSS_TOKEN, wait_for

SLEEPER = [sys.executable, "-c", "import time; time.sleep(300)"]


async def running_job(api: Any) -> dict[str, Any]:
    status, job = await api("POST", "jobs", {"gpus": 1, "name": "idle-sleeper", "command": SLEEPER})
    assert status == 201, job

    async def running() -> Any:
        _, current = await api("GET", f"jobs/{job['id']}")
        return current if current["state"] == "running" else None

    return dict(await wait_for(running, timeout_s=60))


async def test_history_idle_waste_and_inventory_telemetry_answer_as_documented(sched_app: Any, api: Any) -> None:
    job = await running_job(api)
    gpu = job["allocation"]["gpu_uuids"][0]

    async def history() -> Any:
        status, body = await api("GET", "telemetry/history", params={"job": job["id"], "step_s": "1"})
        assert status == 200, body
        valid = [p for p in body["points"] if p["validity"] == "valid"]
        return body if len(valid) >= 3 else None

    body = await wait_for(history, timeout_s=60)
    assert {p["gpu_uuid"] for p in body["points"]} == {gpu} and body["step_s"] == 1
    assert all(p["utilization_pct"] is None or 0 <= p["utilization_pct"] <= 100 for p in body["points"])
    assert all(g["label"].startswith(("blank", "suspect", "missing")) for g in body["gaps"])

    # A sleeping job is idle: listed with when its warning is due, before the warning.
    async def listed() -> Any:
        status, rows = await api("GET", "idle")
        assert status == 200, rows
        return [r for r in rows if r["job_id"] == job["id"]] or None

    (candidate,) = await wait_for(listed, timeout_s=60)
    assert candidate["gpu_uuids"] == [gpu] and candidate["stage"] in ("idle", "warned")
    assert candidate["state"].startswith("allocated")
    status, others = await api("GET", "idle", token=BOSS_TOKEN)
    assert status == 200 and any(r["job_id"] == job["id"] for r in others), "admins see everyone's"

    status, refused = await api("GET", "usage/waste")
    assert status == 403, refused
    status, waste = await api("GET", "usage/waste", token=BOSS_TOKEN)
    assert status == 200, waste
    assert waste["threshold_pct"] == 5.0 and any(r["key"] == job["id"] for r in waste["jobs"])
    assert waste["unattributed"] == []  # the other simulated GPU has no process: nothing busy unallocated

    status, inventory = await api("GET", "inventory")
    assert status == 200, inventory
    view = inventory["telemetry"]["gpus"][gpu]
    assert view["telemetry"] in ("idle", "busy", "unknown") and view["state"].startswith("allocated")
    node = inventory["gpus"][0]["node"]
    assert inventory["telemetry"]["nodes"][node] == {"physical": 2, "schedulable": 2, "unhealthy": 0,
                                                      "warnings": [], "mig_strategy": "none"}
    assert inventory["telemetry"]["warnings"] == []  # no exporter labels here (and other users' pods: admins only)
    status, _ = await api("DELETE", f"jobs/{job['id']}")
    assert status == 200


async def test_history_needs_exactly_one_target_and_hides_others_work(sched_app: Any, api: Any) -> None:
    status, body = await api("GET", "telemetry/history")
    assert status == 400 and body["error"]["field"] == "job"  # a bad query is 400 (web.py maps ValidationError)
    job = await running_job(api)
    status, body = await api("GET", "telemetry/history", token=BOSS_TOKEN, params={"job": job["id"]})
    assert status == 200
    status, body = await api("GET", "telemetry/history", params={"gpu": "GPU-none"})
    assert status == 404 and body["error"]["field"] == "gpu"
    await api("DELETE", f"jobs/{job['id']}")
