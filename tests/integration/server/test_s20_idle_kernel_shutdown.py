"""Idle reclaim frees a kernel's GPU through a real server: the idle kernel that still has its
context on the GPU is shut down by the server's kernel manager, and the GPU goes to nobody else
until its process is gone (DESIGN.md *Idle reclamation*; session 19 leftover).

Real: jupyter_server with the extension, its kernel manager and an ipykernel, the engine and
telemetry threads, SQLite. At the wire: NVML is the fake library (tests/hardware/fake_nvml.py, the
real ``pynvml`` shapes) installed as the ``pynvml`` module the server imports — there is no GPU
here — and, like NVML, it lists the kernel's pid on the GPU while the process lives.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hardware.fake_nvml import FakeDevice, FakeNvml
from tests.web.conftest import BOSS_TOKEN, JUDY_TOKEN, server_config, wait_for
from tests.web.test_kernels import run_in_kernel

GPU = "GPU-1d7e6f1c-5a2b-4c3d-8e9f-0a1b2c3d4e5f"


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeNvml]:
    """One idle H200 seen through the fake NVML library, as the server's ``import pynvml`` finds it."""
    fake = FakeNvml([FakeDevice(uuid=GPU, name="NVIDIA H200", bus_id="00000000:10:00.0", total_mib=143771.0,
                                used_mib=0.0, util_gpu=0.0)])
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    yield fake


@pytest.fixture  # type: ignore[no-redef]  # overrides the plugin's fixture
def jp_server_config(tmp_path: Path, nvml: FakeNvml) -> dict[str, Any]:
    return server_config(tmp_path, inventory_source="nvml", telemetry_source="nvml",
                         node_name=f"itest-{uuid.uuid4().hex[:8]}", idle_window_s=4.0, idle_grace_s=2.0,
                         telemetry_interval_s=0.5, inventory_refresh_s=0.5, stop_grace_s=1.0)


async def test_s20_a_real_idle_kernel_holding_its_gpu_is_shut_down_and_the_gpu_waits_for_its_process(
        sched_app: Any, jp_serverapp: Any, jp_fetch: Any, api: Any, nvml: FakeNvml) -> None:
    """Failed before: the lease ended at the reclaim with the kernel still on the GPU, and judy's
    request was granted that GPU."""
    assert sched_app.idle_kernel_action == "shutdown", "the default"
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    manager = jp_serverapp.kernel_manager
    km = manager.get_kernel(kernel_id)
    assert (await run_in_kernel(km, "print(6 * 7)")).strip() == "42"
    pid = km.provisioner.process.pid
    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": kernel_id})
    assert status == 201, lease
    monitor = sched_app.services.monitor

    async def granted_and_known() -> bool:  # the kernel's pid is the lease's, not an outsider's (case 014)
        _, seen = await api("GET", f"leases/{lease['id']}")
        return seen["state"] == "running" and pid in monitor.our_pids()

    await wait_for(granted_and_known, timeout_s=60)
    nvml.devices[0].processes = [(pid, 2048.0, None)]  # the kernel initialised CUDA: its context is on the GPU
    nvml.devices[0].used_mib = 2048.0

    async def shut_down() -> bool:
        return kernel_id not in manager

    await wait_for(shut_down, timeout_s=90, poll_s=0.2)
    _, held = await api("GET", f"leases/{lease['id']}")
    assert held["state"] == "running", "held: NVML still lists the process"
    assert held["message"].startswith(f"kernel {kernel_id} shut down: it held GPU {GPU} idle for "), held["message"]
    status, judy = await api("POST", "leases", {"gpus": 1}, token=JUDY_TOKEN)
    assert status == 201, judy
    status, audit = await api("GET", "audit", token=BOSS_TOKEN, params={"job_id": lease["id"], "limit": "1000"})
    (shutdown,) = [r for r in audit if r["action"] == "idle_kernel_shutdown"]
    assert shutdown["details"]["pids"] == [pid] and shutdown["details"]["kernel_id"] == kernel_id, shutdown
    _, waiting = await api("GET", f"leases/{judy['id']}", token=JUDY_TOKEN)
    assert waiting["state"] == "pending", "the GPU is given to nobody while the kernel's process holds it"

    nvml.devices[0].processes = []  # the process is gone: NVML lists nothing on the GPU
    nvml.devices[0].used_mib = 0.0

    async def ended() -> Any:
        _, seen = await api("GET", f"leases/{lease['id']}")
        return seen if seen["state"] == "cancelled" else None

    seen = await wait_for(ended, timeout_s=30)
    assert seen["message"].endswith(f"; kernel {kernel_id} shut down, GPUs released"), seen["message"]

    async def judy_granted() -> bool:
        _, seen = await api("GET", f"leases/{judy['id']}", token=JUDY_TOKEN)
        return seen["state"] == "running"

    await wait_for(judy_granted, timeout_s=30)
