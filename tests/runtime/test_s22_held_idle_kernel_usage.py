"""Session 21's note: a hub-mode user's server that never shuts its reclaimed idle kernel down keeps the
lease held (GPU to nobody, audited ``idle_kernel_held``) — "the usage figures of such a lease were not
checked". Checked here, as the central service meets it: the shutdown is asked through the hub's own
:class:`~jupyter_sched.hub.idle_shutdown.HubKernelShutdown` (the user's server listed the kernel in a
report, then never takes the request), so the lease holds past ``SHUTDOWN_WAIT_S``.

What is right, and now said: the held GPU-hours are charged to the lease's owner (whose kernel keeps the
GPU), from the lease's start until the pass that finds the GPU free — never to the user waiting for the
GPU — and the accounting report says which part came after the reclaim
(``held_after_reclaim_gpu_seconds``/``_hours``). The lease's end no longer says "kernel k-1 shut down"
when its server never did it.

Real parts as tests/runtime/test_s20_idle_kernel.py (its ``Host``: SQLite store, engine, telemetry monitor
over the fake NVML, a real process standing for the kernel).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_sched.engine.idle_kernels import SHUTDOWN_WAIT_S
from jupyter_sched.hub.idle_shutdown import HubKernelShutdown
from jupyter_sched.hub.liveness import KernelReport, KernelReports
from jupyter_sched.model import parse_utc, to_iso
from jupyter_sched.services.models import GetUsageReportRequest, GetUsageRequest
from tests.runtime.test_s20_idle_kernel import Host


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    made = Host(tmp_path)
    made.lease_id = made.lease()
    made.step()
    yield made
    made.close()


def test_s22_a_lease_held_by_a_kernel_its_server_never_shuts_down_is_charged_to_its_owner_until_the_gpu_is_free(
        host: Host) -> None:
    reports = KernelReports()
    reports.record(KernelReport(user="ana", server="", kernels=frozenset({"k-1"}), received_at=host.clock.now()))
    hub = HubKernelShutdown(reports)
    host.services.set_idle_kernels("shutdown", hub)
    host.on_gpu(host.kernel.pid)
    started = parse_utc(host.view("ana", host.lease_id).started_at, field="at")
    host.until_reclaimed()
    revoked = parse_utc(host.view("ana", host.lease_id).stopping_since, field="at")  # the reclaim
    bob = host.lease("bob", "k-9")
    for _ in range(60):  # an hour: ana's server takes no request (hub.for_report is never called)
        host.step(60)
    assert hub.waiting(), "asked, never taken"
    assert host.audit("idle_kernel_held") and host.view("bob", bob).state == "pending"
    host.on_gpu()  # ana restarts the kernel herself at last
    host.step()
    ended = host.view("ana", host.lease_id)
    finished = parse_utc(ended.finished_at, field="at")
    assert ended.state == "cancelled" and finished == host.clock.now()
    assert ended.message.endswith("GPUs released once the kernel's process let go of them"), \
        f"it said the server shut the kernel down (failed before): {ended.message}"
    host.step()
    assert host.view("bob", bob).state == "running"
    bob_from = parse_utc(host.view("bob", bob).started_at, field="at")
    host.step(600)

    boss = host.services.caller("boss", admin=True)
    held_s = (finished - revoked).total_seconds()
    whole_s = (finished - started).total_seconds()
    assert held_s > SHUTDOWN_WAIT_S + 3000
    by_job = {r["job_id"]: r for r in host.services.accounting.report(
        boss, GetUsageReportRequest(all=True, by="job_id")).to_wire()}
    ana_row, bob_row = by_job[host.lease_id], by_job[bob]
    assert ana_row["allocated_gpu_seconds"] == whole_s, "charged from its start until the GPU was free"
    assert ana_row["held_after_reclaim_gpu_seconds"] == held_s, ana_row  # failed before: not said
    assert ana_row["held_after_reclaim_gpu_hours"] == round(held_s / 3600, 9)
    assert "held_after_reclaim_gpu_seconds" not in bob_row, "bob's lease was never held after a reclaim"
    assert bob_row["allocated_gpu_seconds"] == (host.clock.now() - bob_from).total_seconds(), \
        "bob is charged from when he got the GPU, nothing of ana's hold"
    by_user = {r["user"]: r for r in host.services.accounting.report(
        boss, GetUsageReportRequest(all=True, by="user")).to_wire()}
    assert by_user["ana"]["held_after_reclaim_gpu_seconds"] == held_s
    assert by_user["ana"]["allocated_gpu_seconds"] == whole_s
    half = revoked + timedelta(minutes=30)  # a window that starts inside the hold counts what lies in it
    (windowed,) = host.services.accounting.report(
        host.services.caller("ana", admin=False), GetUsageReportRequest(by="job_id", since=to_iso(half))).to_wire()
    assert windowed["held_after_reclaim_gpu_seconds"] == (finished - half).total_seconds()
    assert windowed["allocated_gpu_seconds"] == windowed["held_after_reclaim_gpu_seconds"]
    ana = host.services.caller("ana", admin=False)
    (own,) = host.services.accounting.usage(ana, GetUsageRequest(by="job_id")).to_wire()
    assert own["gpu_seconds"] == whole_s and host.services.accounting.me(ana).gpu_hours_7d == round(whole_s / 3600, 9)


def test_s22_a_lease_released_at_once_has_no_held_part(host: Host) -> None:
    host.services.set_idle_kernels("shutdown", None)
    host.until_reclaimed()  # no process on the GPU: released in the reclaim's own tick
    boss = host.services.caller("boss", admin=True)
    (row,) = host.services.accounting.report(boss, GetUsageReportRequest(all=True, by="job_id")).to_wire()
    assert "held_after_reclaim_gpu_seconds" not in row and row["allocated_gpu_seconds"] > 0
