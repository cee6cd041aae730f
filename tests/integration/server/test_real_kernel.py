"""Issue 5 through a real server: a real kernel holds a lease, goes idle, and loses the lease.

Everything is real: jupyter_server with the extension, its kernel manager and an ipykernel, the
engine thread, the telemetry thread (a simulated GPU's utilization = the real CPU use of the
kernel process holding it), SQLite. The kernel is found through the kernel manager (its pid and
execution state), not through any environment variable.
"""

from __future__ import annotations

import json
from typing import Any

from tests.web.conftest import BOSS_TOKEN, wait_for
from tests.web.test_kernels import run_in_kernel


async def test_a_real_idle_kernel_is_warned_loses_its_lease_and_keeps_running(
        sched_app: Any, jp_serverapp: Any, jp_fetch: Any, api: Any) -> None:
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    km = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    assert (await run_in_kernel(km, "print(6 * 7)")).strip() == "42"
    pid = km.provisioner.process.pid

    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": kernel_id})
    assert status == 201, lease

    async def telemetry_names_the_kernel() -> Any:
        status, body = await api("GET", "telemetry", params={"lease": lease["id"]})
        current = body["gpus"][0]["current"] if status == 200 and body["gpus"] else None
        return body if current and pid in [p["pid"] for p in current["processes"]] else None

    seen = await wait_for(telemetry_names_the_kernel, timeout_s=60)
    assert seen["enabled"] and seen["simulated"] and seen["source"] == "simulated"

    async def lease_state() -> str:
        _, current = await api("GET", f"leases/{lease['id']}")
        return str(current["state"])

    async def reclaimed() -> bool:
        return await lease_state() == "cancelled"

    await wait_for(reclaimed, timeout_s=90, poll_s=0.5)
    status, audit = await api("GET", "audit", token=BOSS_TOKEN, params={"job_id": lease["id"], "limit": "1000"})
    idle = [r for r in reversed(audit) if r["action"].startswith("idle_")]
    assert [r["action"] for r in idle][-2:] == ["idle_warning", "idle_reclaim"], idle
    assert idle[-1]["details"]["evidence"]["samples"], idle[-1]
    assert "kernel idle and GPU < 5 %" in idle[-1]["message"]
    # the kernel was told nothing by force: it still runs and answers
    assert jp_serverapp.kernel_manager.get_kernel(kernel_id).provisioner.process.poll() is None
    assert (await run_in_kernel(km, "print('still here')")).strip() == "still here"
    status, config = await api("GET", "config")
    assert config["features"]["telemetry"] is True
    response = await jp_fetch("api", "sched", "metrics", method="GET")
    text = response.body.decode()
    assert "jupyter_sched_reclaims_total 1.0" in text and "jupyter_sched_idle_gpus 0.0" in text
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")
