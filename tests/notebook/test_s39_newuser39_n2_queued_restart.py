"""newuser39 N2: a kernel restart kept a *granted* lease (case 029) but silently withdrew a *pending* one —
whether a restart kept your GPUs depended on whether the queue had reached you yet, and the ``jobs`` line said
only "request withdrawn by server before any GPU was granted".

Real kernels started and restarted by a real jupyter_server with jupyter_sched; one GPU declared in a static
inventory (this machine has none) and held by a real ``sleep`` job, so the kernel's request waits in the queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection

StartKernel = Callable[..., Awaitable[Kernel]]

INVENTORY = "nodes:\n  - name: host\n    gpus:\n      - {uuid: GPU-aaaa, model: A100-80GB, memory: 80GiB}\n"


@pytest.fixture
def release_on_restart() -> bool:
    return False


@pytest.fixture
def sched_settings(tmp_path: Path, release_on_restart: bool) -> dict[str, Any]:
    path = tmp_path / "host.yaml"
    path.write_text(INVENTORY)
    return {"inventory_source": "static", "inventory_file": str(path),
            "release_gpu_on_kernel_restart": release_on_restart}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


@pytest.fixture
def holder(api: AsyncSchedClient, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[str]:
    """A job holding the one GPU (cancelled after the test: jobs outlive the server that started them)."""
    async def occupy() -> str:
        job_id = str((await api.submit({"name": "holder", "gpus": 1, "command": ["sleep", "300"]}))["id"])

        async def running() -> bool:
            return (await api.job(job_id))["state"] == "running"

        await wait_for(running, timeout_s=20)
        return job_id

    async def end() -> None:
        if (await api.job(job_id))["state"] in ("pending", "admitted", "running"):
            await api.cancel(job_id)

    job_id = jp_asyncio_loop.run_until_complete(occupy())
    yield job_id
    jp_asyncio_loop.run_until_complete(end())


async def restart(serverapp: Any, kernel: Kernel) -> None:
    old_pid = serverapp.kernel_manager.get_kernel(kernel.id).provisioner.process.pid
    await serverapp.kernel_manager.restart_kernel(kernel.id)
    assert serverapp.kernel_manager.get_kernel(kernel.id).provisioner.process.pid != old_pid
    await kernel.client.wait_for_ready(timeout=60)


async def queued_lease(api: AsyncSchedClient, kernel: Kernel) -> dict[str, Any]:
    requested = await kernel.run("%gpu request 1 --no-wait")
    assert requested.error is None, requested.text
    [lease] = [lease for lease in await api.leases() if lease.get("kernel_id") == kernel.id]
    assert lease["state"] == "pending", lease
    return lease


async def test_newuser39_N2_a_restart_keeps_the_kernels_queued_request_and_its_place(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_serverapp: Any, holder: str) -> None:
    k1 = await start_kernel()
    lease = await queued_lease(api, k1)

    await restart(jp_serverapp, k1)
    kept = await api.lease(lease["id"])
    assert kept["state"] == "pending" and kept["kernel_id"] == k1.id, "still queued, still this kernel's"
    notice = await k1.run("%load_ext jupyter_sched")
    said = notice.stdout.strip()
    assert said.startswith(f"lease {lease['id']} kept across the restart: pending, 1 GPU · "), said
    assert said.endswith("granted GPUs are set here once it starts (%gpu status sets them)"), said
    status = await k1.run("%gpu status")
    assert f"This kernel: lease {lease['id']}" in status.stdout and "pending" in status.stdout, status.stdout
    assert "holds no GPUs" not in status.stdout

    await api.cancel(holder)  # the GPU frees: the kept request is granted to the restarted kernel

    async def granted() -> bool:
        return (await api.lease(lease["id"]))["state"] == "running"

    await wait_for(granted, timeout_s=20)
    applied = await k1.run("%gpu status\nimport os; print('VISIBLE=' + os.environ['CUDA_VISIBLE_DEVICES'])")
    assert applied.error is None, applied.text
    assert "VISIBLE=GPU-aaaa" in applied.stdout, applied.stdout


@pytest.mark.parametrize("release_on_restart", [True])
async def test_newuser39_N2_a_request_withdrawn_at_restart_says_why_on_its_record_and_in_the_kernel(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_serverapp: Any, holder: str) -> None:
    k1 = await start_kernel()
    lease = await queued_lease(api, k1)

    await restart(jp_serverapp, k1)
    ended = await api.lease(lease["id"])
    assert ended["state"] == "cancelled"
    assert ended["message"] == ("request withdrawn by the server before any GPU was granted: "
                                "its kernel was restarted"), ended["message"]
    notice = await k1.run("%load_ext jupyter_sched")
    assert notice.stdout.strip() == (f"your queued request {lease['id']} was withdrawn when this kernel restarted "
                                     "(release_gpu_on_kernel_restart); run %gpu request to ask again")
