"""newuser40 n7: right at grant ``%gpu status`` printed "Warning: idle since …: its GPUs are released at …" — a
newcomer who just got the GPU read a warning before doing anything. The idle rule is information then; "Warning:"
only inside the warning window (stage ``warned``), as the README says owners are warned first.

A real jupyter_server with jupyter_sched and a real kernel; the simulated inventory's telemetry drives idle
detection (this machine has no GPU), so the lease's idle entry is the engine's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def sched_settings() -> dict[str, Any]:  # the tester's 30-minute rule, read from quick telemetry
    return {"idle_window_s": 1800.0, "idle_max_gap_s": 5.0, "telemetry_interval_s": 0.5}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


async def test_newuser40_n7_gpu_status_at_grant_says_the_idle_rule_not_a_warning(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    k1 = await start_kernel()
    granted = await k1.run("%gpu request 1")
    assert granted.error is None, granted.text
    [lease] = [lease for lease in await api.leases() if lease.get("kernel_id") == k1.id]

    async def idle_entry() -> bool:  # the engine's first idle sample of the new lease
        return any(e.get("job_id") == lease["id"] and e.get("stage") == "idle" for e in await api.idle_candidates())

    try:
        await wait_for(idle_entry, timeout_s=60)
    except AssertionError:
        raise AssertionError(await api.idle_candidates()) from None
    status = await k1.run("%gpu status")
    assert status.error is None, status.text
    lines = status.stdout.splitlines()
    assert not [line for line in lines if line.startswith("Warning:")], status.stdout
    rule = [line for line in lines if line.startswith("Idle rule: idle since ")]
    assert rule and "its GPUs are released at " in rule[0], status.stdout
