"""Red39 R8, embedded side: a kernel's busy state defers idle reclaim only for a bound anybody can read,
and an embedded server believes its own kernel manager's state — no ``PUT api/sched/kernels`` is taken.

A real jupyter_server with jupyter_sched and a real kernel; the simulated inventory's telemetry drives
idle detection (this machine has no GPU: a simulated GPU's utilization is the CPU use of its holder's
processes, so a kernel busy in ``time.sleep`` leaves its GPU idle, as a kernel waiting on I/O does).
Test-sized windows: idle 4 s + 2 s grace, the busy-kernel bound 10 s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection
from jupyter_sched.reclaim.idle import KERNEL_MANAGER

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    # the busy-kernel window at its least, idle_window_s + idle_grace_s (it was 10 s until session 41: 4 s more waited)
    return {"idle_window_s": 4.0, "idle_grace_s": 2.0, "idle_busy_kernel_window_s": 6.0, "idle_max_gap_s": 5.0,
            "telemetry_interval_s": 0.5}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


async def test_red39_r8_embedded_a_busy_kernel_is_its_kernel_managers_word_bounded_and_said(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_http_port: int) -> None:
    k1 = await start_kernel()
    granted = await k1.run("%gpu request 1")
    assert granted.error is None, granted.text
    [lease] = [lease for lease in await api.leases() if lease.get("kernel_id") == k1.id]
    release = lease.get("idle_release") or {}
    # embedded keeps the busy-kernel rule to a report (its own kernel manager says busy); the bound is on the wire
    assert release.get("busy_after_s") == 6.0 and release.get("busy_action") == "notify", release
    status = await k1.run("%gpu status")
    assert "Busy kernel: kept while its kernel is busy; 6s with idle GPUs is reported, not reclaimed." \
        in status.stdout, status.stdout

    # the user's token says the kernel is idle: an embedded server takes no kernel report at all
    async with httpx.AsyncClient(base_url=f"http://localhost:{jp_http_port}/") as http:
        forged = await http.put("api/sched/kernels", headers={"Authorization": f"token {TOKEN}"}, json={
            "server": "", "kernels": [k1.id], "states": {k1.id: {"execution_state": "idle"}}})
    assert forged.status_code in (404, 405), (forged.status_code, forged.text)
    assert "Traceback" not in forged.text

    _, running = k1.start_run("import time; time.sleep(90)")  # busy, GPU idle
    try:
        async def reported() -> list[dict[str, Any]]:
            return [r for r in await api.audit(job_id=lease["id"], limit=200) if r.get("action") == "idle_reclaim"]

        [reclaim, *_] = await wait_for(reported, timeout_s=60)
        details = reclaim["details"]
        assert details["evidence"]["rule"] == "gpu_busy_kernel", details  # busy: the kernel manager said so
        assert details["action"] == "notify", details
        kernel_said = details["evidence"]["kernel"]
        assert kernel_said["state"] == "busy" and kernel_said["source"] == KERNEL_MANAGER, kernel_said
        assert kernel_said["summary"].startswith("kernel reported busy while its GPUs were idle for "), kernel_said
        assert f"({KERNEL_MANAGER}; valid samples: " in kernel_said["summary"], kernel_said
        assert (await api.lease(lease["id"]))["state"] == "running"  # reported, nothing freed
    finally:
        await k1.serverapp.kernel_manager.interrupt_kernel(k1.id)
        running.cancel()
