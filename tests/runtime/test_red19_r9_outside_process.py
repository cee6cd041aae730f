"""Red team 19, R9: a process of ANOTHER account with a context on a released lease's GPU kept the
lease held, charged to its owner, with no time limit — and the owner cannot end it.

Now such processes hold it at most the stop grace; then the lease ends (its owner's charge stops),
the audit names their pids and accounts (``lease_outside_process``), and the GPU — their memory still
on it — is given to nobody (used outside the scheduler) until they end. The owner's own kernel still
holds its lease with no time limit (its owner's cost, and theirs to restart).

Through the fake NVML at the wire (tests/hardware/fake_nvml.py), as tests/runtime/test_red18_r6_nvml_drain.py.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.nvml import NvmlInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0
from tests.runtime.test_red18_r6_nvml_drain import Host


class NvmlHost(Host):
    """:class:`Host` whose inventory is NVML's too (the fake library): a GPU that processes the
    scheduler did not start hold memory on is left out of placement (case 014), as in production."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.services.store.close()
        executor = LocalExecutor(tmp_path / "jobs2")
        inventory = NvmlInventory(self.nvml, node="vm",
                                  our_pids=lambda: executor.pids() | self.monitor.our_pids())
        self.services = Services(store=Store(sqlite_url(tmp_path / "sched2.sqlite"), now=self.clock.now),
                                 inventory=inventory, executor=executor, clock=self.clock, monitor=self.monitor,
                                 kernels=lambda: self.kernels)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    made = NvmlHost(tmp_path)
    yield made
    made.close()


def test_red19_r9_another_accounts_process_holds_a_released_lease_at_most_the_grace_then_the_gpu_is_nobodys(
        host: Host) -> None:
    """Failed before: the lease stayed running (ana's, counted as hers) for as long as nobody's process lived."""
    lease_id, uuid = host.lease()
    other = subprocess.Popen(["/bin/sleep", "300"], user=65534)
    host.others.append(other)
    host.on_gpu(uuid, other.pid)
    host.step()
    ana = host.services.caller("ana", admin=False)
    host.services.jobs.cancel(ana, lease_id)
    released = T0 + timedelta(seconds=2)
    grace = host.services.engine.stops.grace_s
    host.step()
    seen = host.view(lease_id)
    assert seen.state == "running", "held within the grace"
    assert seen.message.startswith(f"releasing: process(es) {other.pid} (nobody) of another account still have a "
                                   f"context on GPU {uuid}"), seen.message
    assert f"ends at the latest at {(released + timedelta(seconds=grace)):%H:%M:%S} UTC" in seen.message
    host.step(grace)
    seen = host.view(lease_id)
    assert seen.state == "cancelled", "ended past the grace: not ana's cost"
    assert seen.message.startswith(f"released by ana; process(es) {other.pid} (nobody) of another account still "
                                   f"have a context on GPU {uuid}"), seen.message
    boss = host.services.caller("boss", admin=True)
    (record,) = host.services.audit.list(boss, GetAuditRequest(action="lease_outside_process")).root
    assert record.details["pids"] == [other.pid] and record.details["accounts"] == {str(other.pid): "nobody"}
    assert record.user == "ana"
    # the GPU is nobody's while nobody's process is on it: a 2-GPU request waits, a 1-GPU one gets the other GPU
    bob = host.services.caller("bob", admin=False)
    both = host.services.leases.request(bob, SubmitJobRequest(gpus=2))
    host.step()
    assert host.services.jobs.get(bob, both.id).state == "pending"
    host.services.jobs.cancel(bob, both.id)
    one = host.services.leases.request(bob, SubmitJobRequest(gpus=1))
    host.step()
    got = host.services.jobs.get(bob, one.id).model_dump(mode="json")
    assert got["state"] == "running" and got["allocation"]["gpu_uuids"] != [uuid], got


def test_red19_r9_the_owners_own_kernel_still_holds_its_lease_past_the_grace(host: Host) -> None:
    """Only other accounts' processes are bounded: the owner's kernel context is the owner's to end."""
    lease_id, uuid = host.lease()
    host.on_gpu(uuid, host.kernel.pid)
    host.step()
    host.services.jobs.cancel(host.services.caller("ana", admin=False), lease_id)
    host.step(host.services.engine.stops.grace_s + 60)
    host.step()
    assert host.view(lease_id).state == "running"
