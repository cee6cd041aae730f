"""Case 029: a kernel restart keeps (or, by policy, releases) its GPU grant; never leaves CUDA_VISIBLE_DEVICES unset.

Real kernels started and restarted by a real jupyter_server with jupyter_sched. The host's four
GPUs are declared in a static inventory (this machine has none); what CUDA would see is read
from each kernel *process's launch environment* (``/proc/<pid>/environ``), which is what CUDA
reads when it initialises — so it is checked before any user cell runs.
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

HOST_GPUS = ("GPU-aaaa", "GPU-bbbb", "GPU-cccc", "GPU-dddd")
INVENTORY = "nodes:\n  - name: host\n    gpus:\n" + "".join(
    f"      - {{uuid: {uuid}, model: A100-80GB, memory: 80GiB}}\n" for uuid in HOST_GPUS)


@pytest.fixture
def inventory_file(tmp_path: Path) -> str:
    path = tmp_path / "host.yaml"
    path.write_text(INVENTORY)
    return str(path)


@pytest.fixture
def sched_settings(inventory_file: str, release_on_restart: bool) -> dict[str, Any]:
    return {"inventory_source": "static", "inventory_file": inventory_file,
            "release_gpu_on_kernel_restart": release_on_restart}


@pytest.fixture
def release_on_restart() -> bool:
    return False


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


def launch_env(serverapp: Any, kernel: Kernel) -> dict[str, str]:
    """The environment the kernel process was started with (what CUDA reads at initialisation)."""
    pid = serverapp.kernel_manager.get_kernel(kernel.id).provisioner.process.pid
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


async def restart(serverapp: Any, kernel: Kernel) -> None:
    old_pid = serverapp.kernel_manager.get_kernel(kernel.id).provisioner.process.pid
    await serverapp.kernel_manager.restart_kernel(kernel.id)
    assert serverapp.kernel_manager.get_kernel(kernel.id).provisioner.process.pid != old_pid
    await kernel.client.wait_for_ready(timeout=60)


async def _occupy(api: AsyncSchedClient) -> list[str]:
    ids = [(await api.submit({"name": name, "gpus": 1, "command": ["sleep", "300"]}))["id"]
           for name in ("other-1", "other-2")]

    async def both_running() -> bool:
        jobs = [j for j in await api.jobs() if j["name"].startswith("other-")]
        return len(jobs) == 2 and all(j["state"] == "running" for j in jobs)

    await wait_for(both_running, timeout_s=20)
    return ids


@pytest.fixture
def occupy_first_two_gpus(api: AsyncSchedClient, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Two other jobs hold GPU-aaaa and GPU-bbbb, so fay's lease is granted GPU-cccc (as in the case).
    They are cancelled after the test: jobs outlive the server that started them (by design), so a
    test that leaves them running leaves two ``sleep 300`` processes behind."""
    ids = jp_asyncio_loop.run_until_complete(_occupy(api))
    yield
    for job_id in ids:
        jp_asyncio_loop.run_until_complete(api.cancel(job_id))


async def lease_of(api: AsyncSchedClient, kernel: Kernel) -> dict[str, Any]:
    [lease] = [lease for lease in await api.leases() if lease.get("kernel_id") == kernel.id]
    return lease


async def test_case_029_restart_keeps_the_grant_and_never_leaves_cuda_visible_devices_unset(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_serverapp: Any, sched_app: Any,
        occupy_first_two_gpus: None) -> None:
    """Case A (default: the grant survives) and case C (a kernel with no grant gets "")."""
    k1, k2 = await start_kernel(), await start_kernel()
    assert launch_env(jp_serverapp, k1)["CUDA_VISIBLE_DEVICES"] == "", "a kernel without a grant sees no GPU"
    granted = await k1.run("%gpu 1")
    assert granted.error is None, granted.text
    assert (await k1.run("import os; print(os.environ['CUDA_VISIBLE_DEVICES'])")).stdout.strip() == "GPU-cccc"
    lease = await lease_of(api, k1)

    await restart(jp_serverapp, k1)
    assert launch_env(jp_serverapp, k1)["CUDA_VISIBLE_DEVICES"] == "GPU-cccc", "set before the first cell runs"
    assert launch_env(jp_serverapp, k1)["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    first = await k1.run("import os; print(os.environ['CUDA_VISIBLE_DEVICES'])")
    assert first.stdout.strip() == "GPU-cccc"
    notice = await k1.run("%load_ext jupyter_sched")
    assert notice.stdout.strip() == (f"GPU-cccc re-attached (lease {lease['id']}); CUDA_VISIBLE_DEVICES is set in "
                                     "this kernel")
    status = await k1.run("%gpu")  # new user 4, finding 21: not a second "Allocated" of the same lease
    assert "Allocated" not in status.stdout and f"This kernel: lease {lease['id']}" in status.stdout, status.stdout
    after = await lease_of(api, k1)
    assert (after["id"], after["state"], after["allocation"]["gpu_uuids"]) == (lease["id"], "running", ["GPU-cccc"])
    mine = [row for row in sched_app.services.store.usage_rows() if row.job_id == lease["id"]]
    assert len(mine) == 1 and mine[0].ended_at is None, "one grant: one accounting interval, still open"

    await restart(jp_serverapp, k2)
    env2 = launch_env(jp_serverapp, k2)
    assert "CUDA_VISIBLE_DEVICES" in env2 and env2["CUDA_VISIBLE_DEVICES"] == "", "k2 never inherits GPU-cccc"
    assert (await k2.run("import os; print(repr(os.environ['CUDA_VISIBLE_DEVICES']))")).stdout.strip() == "''"

    k1.stop()
    await jp_serverapp.kernel_manager.shutdown_kernel(k1.id)

    async def released() -> bool:
        return (await api.lease(lease["id"]))["state"] == "cancelled"

    await wait_for(released, timeout_s=5.0)  # a shutdown (not a restart) releases within one cycle


@pytest.mark.parametrize("release_on_restart", [True])
async def test_case_029_release_gpu_on_kernel_restart_gives_the_new_kernel_an_empty_cuda_visible_devices(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_serverapp: Any, occupy_first_two_gpus: None) -> None:
    """Case B: the policy releases the grant at restart; the new kernel gets "" (never unset) and is told."""
    k1 = await start_kernel()
    assert (await k1.run("%gpu 1")).error is None
    lease = await lease_of(api, k1)
    assert lease["allocation"]["gpu_uuids"] == ["GPU-cccc"]
    await restart(jp_serverapp, k1)
    env = launch_env(jp_serverapp, k1)
    assert "CUDA_VISIBLE_DEVICES" in env and env["CUDA_VISIBLE_DEVICES"] == ""
    assert (await api.lease(lease["id"]))["state"] == "cancelled"
    notice = await k1.run("%load_ext jupyter_sched")
    assert notice.stdout.strip() == "GPU released on restart; run %gpu to request one"


async def test_newuser7_finding_19_release_after_a_restart_hides_the_gpu_it_gave_back(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_serverapp: Any, occupy_first_two_gpus: None) -> None:
    """New user 7, F19 (IMPORTANT): after a restart the server re-attached the lease's GPU, then
    ``%gpu release`` said "CUDA_VISIBLE_DEVICES is 'GPU-…' in this kernel, as before: this lease had
    not set it" and left it naming a GPU that went to the next job. It is cleared to '' as without a restart."""
    k1 = await start_kernel()
    assert (await k1.run("%gpu 1")).error is None
    await restart(jp_serverapp, k1)
    assert (await k1.run("import os; print(os.environ['CUDA_VISIBLE_DEVICES'])")).stdout.strip() == "GPU-cccc"
    released = await k1.run("%load_ext jupyter_sched\n%gpu release")
    assert released.error is None, released.text
    assert "CUDA_VISIBLE_DEVICES is now '' (empty) in this kernel" in released.stdout, released.stdout
    assert "had not set it" not in released.stdout
    assert (await k1.run("import os; print(repr(os.environ['CUDA_VISIBLE_DEVICES']))")).stdout.strip() == "''"
