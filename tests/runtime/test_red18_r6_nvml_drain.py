"""Red team 18, R6 leftover and the kernel-lease drain: a released lease's GPU is given away only
when the GPU's own process list (NVML) shows nothing of it still there.

The drain scanned the owner's processes' ``fd/`` and ``maps`` only (and only for a lease lent to a
job): a leased GPU's fd passed by ``SCM_RIGHTS`` to a process of ANOTHER account, or a kernel that
released its lease but kept its CUDA context, went unseen, and the GPU went to the next user under
a live context. What ``nvidia-smi`` shows is the answer: NVML's
``nvmlDeviceGetComputeRunningProcesses`` lists every process with a context on a GPU by pid,
whatever its account, and the telemetry monitor samples it. A released lease now stays held while a
process no other holder of the GPU owns is on that list, said with what it waits for and since when;
nothing is killed (a kernel is its user's; another account's process is not the scheduler's to end).

Real parts: SQLite store, the engine, the local executor, the telemetry monitor and its NVML
collector over the fake NVML library (tests/hardware/fake_nvml.py: the real ``pynvml`` shapes),
real processes (one of another account, uid 65534) standing for the kernel and the fd's receiver.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.client import SchedClient
from jupyter_sched.client.discovery import Connection
from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.stops import SAMPLE_WAIT_S
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.extension.kernel_gpus import restart_plan
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.telemetry import NvmlCollector
from jupyter_sched.wording import cancel_outcome
from tests.hardware.fake_nvml import FakeDevice, FakeNvml
from tests.runtime.builders import T0

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


class Host:
    """Two simulated GPUs whose NVML view is the fake library's; one kernel process ``k-1``."""

    def __init__(self, tmp_path: Path) -> None:
        self.clock = ManualClock(T0)
        self.nvml = FakeNvml([FakeDevice(uuid=f"GPU-sim-vm-{i}", name="NVIDIA H200", bus_id=f"00000000:{16 + i:02X}:00.0",
                                         total_mib=143771.0, used_mib=0.0, util_gpu=0.0) for i in range(2)])
        self.monitor = TelemetryMonitor(NvmlCollector(self.nvml, node="vm"), source="nvml", clock=self.clock)
        self.kernel = subprocess.Popen(SLEEPER)
        self.kernels: dict[str, dict[str, Any]] = {"k-1": {"pid": self.kernel.pid, "execution_state": "idle"}}
        self.services = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=self.clock.now),
                                 inventory=SimulatedInventory(2, node="vm"), executor=LocalExecutor(tmp_path / "jobs"),
                                 clock=self.clock, monitor=self.monitor, kernels=lambda: self.kernels)
        self.others: list[subprocess.Popen[bytes]] = []

    def on_gpu(self, uuid: str, *pids: int) -> None:
        """NVML lists ``pids`` (500 MiB each) on ``uuid`` from the next sample on."""
        device = next(d for d in self.nvml.devices if d.uuid == uuid)
        device.processes = [(pid, 500.0, None) for pid in pids]
        device.used_mib = 500.0 * len(pids)

    def step(self, seconds: float = 1.0) -> None:
        """Time passes, the monitor samples (its thread's work), the engine ticks."""
        self.clock.advance(seconds)
        self.monitor.sample()
        self.services.engine.tick()

    def lease(self) -> tuple[str, str]:
        ana = self.services.caller("ana", admin=False)
        lease = self.services.leases.request(ana, SubmitJobRequest(gpus=1, kernel_id="k-1"))
        self.step()
        seen = self.services.jobs.get(ana, lease.id)
        assert seen.state == "running", seen
        (uuid,) = seen.model_dump(mode="json")["allocation"]["gpu_uuids"]
        return lease.id, uuid

    def view(self, lease_id: str) -> Any:
        return self.services.jobs.get(self.services.caller("ana", admin=False), lease_id)

    def close(self) -> None:
        for process in (self.kernel, *self.others):
            process.kill()
            process.wait()
        self.services.store.close()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    made = Host(tmp_path)
    yield made
    made.close()


def _drain_records(host: Host) -> list[Any]:
    boss = host.services.caller("boss", admin=True)
    return list(host.services.audit.list(boss, GetAuditRequest(action="lease_draining")).root)


def test_newuser18_kernel_lease_released_with_a_live_context_stays_held_and_says_why_and_since_when(
        host: Host) -> None:
    """Failed before: the lease ended at once and its GPU was free for the next request while the
    kernel's context was still on it."""
    lease_id, uuid = host.lease()
    host.on_gpu(uuid, host.kernel.pid)
    host.step()
    answer = host.services.jobs.cancel(host.services.caller("ana", admin=False), lease_id)  # %gpu release
    said = cancel_outcome(None, answer.to_wire())  # what %gpu release prints
    assert said == (f"released lease {lease_id} (was running); {uuid} goes back once no process still uses it "
                    "(if CUDA was initialised, restart the kernel; the scheduler ends any process of ana's account "
                    "still on it after the stop grace)"), said
    host.step()
    seen = host.view(lease_id)
    assert seen.state == "running", "held while the kernel's context is on the GPU"
    released = (T0 + timedelta(seconds=2)).strftime("%H:%M:%S")
    assert seen.message == (
        f"releasing: process(es) {host.kernel.pid} (root) still have a context on GPU {uuid} (the GPU's process "
        f"list); released at {released} UTC, the GPU stays held, given to nobody else and counted as this lease's, "
        f"until they free it — no time limit: restart the kernel (Kernel > Restart) or end the process "
        f"(kill {host.kernel.pid}); the scheduler does not kill kernels"), seen.message
    for _ in range(3):
        host.step(60)
    assert host.view(lease_id).state == "running" and host.kernel.poll() is None, "waits; kills nothing"
    assert len(_drain_records(host)) == 1, "said and audited once"

    draining = answer.to_wire()
    plan = restart_plan([draining], release_on_restart=False, isolate=True)  # Kernel > Restart, as told
    assert plan.env["CUDA_VISIBLE_DEVICES"] == "" and plan.release == (), "a released lease is not re-attached"
    host.on_gpu(uuid)  # the kernel restarted: its context is gone
    host.step()
    seen = host.view(lease_id)
    assert seen.state == "cancelled" and seen.message == "released by ana", seen.message


def test_red18_r6_a_process_of_another_account_on_the_released_gpu_keeps_it_held_and_is_named(host: Host) -> None:
    """The fd passed to another account's process: no scan of ana's processes finds it; NVML does."""
    lease_id, uuid = host.lease()
    other = subprocess.Popen(["/bin/sleep", "120"], user=65534)
    host.others.append(other)
    host.on_gpu(uuid, other.pid)
    host.step()
    host.services.jobs.cancel(host.services.caller("ana", admin=False), lease_id)
    host.step()
    seen = host.view(lease_id)
    assert seen.state == "running", seen
    assert seen.message.startswith(f"releasing: process(es) {other.pid} (nobody) of another account still have a "
                                   f"context on GPU {uuid}"), seen.message  # at most the grace (red team 19, R9)
    (record,) = _drain_records(host)
    assert record.details["pids"] == [other.pid] and record.details["accounts"] == {str(other.pid): "nobody"}
    host.on_gpu(uuid)
    host.step()
    assert host.view(lease_id).state == "cancelled"


def test_red18_r6_a_stalled_collector_never_keeps_a_released_lease(host: Host) -> None:
    lease_id, _ = host.lease()
    host.services.jobs.cancel(host.services.caller("ana", admin=False), lease_id)
    host.clock.advance(1)
    host.services.engine.tick()  # no sample since the release: not known yet
    seen = host.view(lease_id)
    assert seen.state == "running" and seen.message.startswith("releasing: checking that no process still uses GPU")
    host.clock.advance(SAMPLE_WAIT_S)
    host.services.engine.tick()
    assert host.view(lease_id).state == "cancelled", "past the bounded wait it ends on what is known"


def test_red18_r6_the_processes_of_the_gpus_other_holder_do_not_hold_a_released_lease(host: Host) -> None:
    """Another lease's kernel on another GPU (or the same GPU, shared) is that holder's, not this lease's."""
    lease_id, uuid = host.lease()
    host.on_gpu(uuid)  # nothing of ana's kernel is on its GPU any more
    other = next(d.uuid for d in host.nvml.devices if d.uuid != uuid)
    host.on_gpu(other, os.getpid())  # a process on the other GPU is not this lease's concern
    host.step()
    host.services.jobs.cancel(host.services.caller("ana", admin=False), lease_id)
    host.step()
    assert host.view(lease_id).state == "cancelled"


def test_newuser18_a_released_lease_still_draining_is_not_this_kernels_lease_in_the_magic() -> None:
    """``%gpu`` after ``%gpu release``: the lease draining its GPU (state running, stop requested) is
    not taken up again as the kernel's (which would set CUDA_VISIBLE_DEVICES to a GPU given back)."""
    draining = {"id": "l-1", "kind": "lease", "state": "running", "kernel_id": "k-1", "user": "ana",
                "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-0"]},
                "stop_requested": {"at": "2025-03-30T12:00:02Z", "by": "ana", "grace_s": 10.0}}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/leases/l-1"):
            return httpx.Response(200, json=draining)
        return httpx.Response(200, json=[draining])

    client = SchedClient(Connection("http://sched.test/", kernel_id="k-1"), transport=httpx.MockTransport(handler))
    magics = SchedMagics(None, client_factory=lambda: client)
    assert magics._my_lease() is None, "found by its kernel id"
    magics.lease = dict(draining)
    assert magics._my_lease() is None, "the remembered one, refreshed"


def test_red18_r6_without_a_gpu_process_list_a_lent_leases_end_says_what_it_could_not_check(tmp_path: Path) -> None:
    """Where the server cannot see another account's processes (no NVML telemetry), the lease says so."""
    clock = ManualClock(T0)
    services = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                        inventory=SimulatedInventory(2, node="vm"), executor=LocalExecutor(tmp_path / "jobs"),
                        clock=clock)
    ana = services.caller("ana", admin=False)
    job = services.jobs.submit(ana, SubmitJobRequest(gpus=1, name="train", command=["sleep", "60"]))
    services.engine.tick()
    assert services.jobs.get(ana, job.id).state == "running"
    lease = services.leases.request(ana, SubmitJobRequest(gpus=1, parent_job_id=job.id))
    services.engine.tick()
    assert services.jobs.get(ana, lease.id).state == "running"
    services.jobs.cancel(ana, lease.id)
    clock.advance(1)
    services.engine.tick()
    seen = services.jobs.get(ana, lease.id)
    assert seen.state == "cancelled", seen
    assert seen.message == (
        f"released by ana; checked: the processes of job {job.id} and of ana's account — a process of another "
        "account still using the GPU is not visible to this server (it reads no GPU process list; an admin's "
        "c.SchedApp.telemetry_source = 'nvml' makes it read one)"), seen.message
    services.jobs.cancel(ana, job.id)
    services.store.close()


def test_newuser18_gpu_status_after_release_names_the_lease_still_draining() -> None:
    """``%gpu`` after ``%gpu release`` while the kernel's context still holds the GPU: not just "holds
    no GPUs" — the released lease, what it still holds and its message; forgotten once it ended."""
    draining = {"id": "l-1", "kind": "lease", "state": "running", "kernel_id": "k-1", "user": "ana",
                "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-0"]},
                "stop_requested": {"at": "2025-03-30T12:00:02Z", "by": "ana", "grace_s": 10.0},
                "message": "releasing: process(es) 4242 (ana) still have a context on GPU GPU-sim-vm-0 (…)"}
    answers = [draining, {**draining, "state": "cancelled", "stop_requested": None, "message": "released by ana"}]

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/leases/l-1"), request.url
        return httpx.Response(200, json=answers.pop(0))

    client = SchedClient(Connection("http://sched.test/", kernel_id="k-1"), transport=httpx.MockTransport(handler))
    magics = SchedMagics(None, client_factory=lambda: client)
    magics._released = "l-1"  # as _gpu_release leaves it
    assert magics._draining() == ("lease l-1, released, still holds GPU-sim-vm-0: releasing: process(es) 4242 (ana) "
                                  "still have a context on GPU GPU-sim-vm-0 (…)")
    assert magics._draining() == "" and magics._released is None, "ended: said no more, not asked again"
    assert magics._draining() == ""
