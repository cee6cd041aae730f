"""Case 015 in a real kernel: on a host with no GPUs, %gpu says so and allocates nothing.

The server runs with ``simulated_gpus = 0``: the inventory an NVML-less host without simulation
reports (``gpus: []``); this machine has no NVIDIA driver, so NVML is genuinely missing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from nb_harness import TOKEN, Kernel

from jupyter_sched.client import AsyncSchedClient, Connection

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    return {"simulated_gpus": 0}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


async def test_case_015_gpu_request_on_a_host_without_gpus_says_so_and_allocates_nothing(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    kernel = await start_kernel()
    result = await kernel.run("%gpu 1")
    assert result.error is None, result.text
    assert result.stdout.startswith("No NVIDIA GPUs available on this host (")
    assert "Use the Kubernetes executor or a GPU node." in result.stdout
    assert await api.leases() == []
    status = await kernel.run("%gpu")
    assert "No NVIDIA GPUs available on this host" in status.stdout
    assert "Traceback" not in status.text
