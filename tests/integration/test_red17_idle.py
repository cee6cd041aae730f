"""Red team 17, R8 (bypass of red team 15, R6): a lease asked for without a kernel, or whose
kernel's state is unknown or still ``starting``, fell under the busy-kernel rule (notify-only by
default) and kept its GPUs for ever, its reason saying "the kernel keeps running".

Real parts: the service built by ``from_config`` on SQLite with test-sized idle windows
(``conftest.IDLE_SETTINGS``), its engine, simulated GPUs' telemetry and the idle ladder; the pure
arbiter for the wording of each kernel state.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.model import Allocation, Job, JobKind, JobSpec, JobState
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.reclaim import IdlePolicy, KernelActivity, ReclaimMode, default_idle_arbiter

from .conftest import Driver, make_service

NOW = datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc)
POLICY = IdlePolicy(window_s=600, warning_s=60, busy_kernel_window_s=7200, lease_mode=ReclaimMode.RELEASE,
                    busy_kernel_mode=ReclaimMode.NOTIFY)


def _lease(kernel_id: str | None) -> Job:
    spec = JobSpec(name="l-1", user="mallory", kind=JobKind.LEASE, kernel_id=kernel_id)
    return Job(id="l-1", spec=spec, state=JobState.RUNNING, started_at=NOW - timedelta(hours=2),
               allocation=Allocation(node="n1", gpu_uuids=("GPU-1",)))


def _idle_samples() -> list[GpuSample]:
    return [GpuSample(gpu_uuid="GPU-1", mig_instance=None, timestamp=NOW - timedelta(minutes=m), utilization_pct=0.0,
                      memory_used_mib=0.0, memory_total_mib=81920.0) for m in range(0, 50)]


@pytest.mark.parametrize(
    "kernel_id, kernel, want_rule, want_limit, want_words",
    [
        pytest.param(None, None, "gpu_no_kernel", 600, "no kernel is bound to this lease", id="no kernel at all"),
        pytest.param("k-1", None, "kernel_unknown", 660, "kernel state unknown (none reported)",
                     id="a kernel never reported"),
        pytest.param("k-1", KernelActivity("unknown", unknown_why="kernel state unknown in hub mode: its server's "
                                           "last kernel report is 3 min old"), "kernel_unknown", 660,
                     "last kernel report is 3 min old", id="a stale report"),
        pytest.param("k-1", KernelActivity("starting"), "kernel_unknown", 660, "kernel is still starting",
                     id="a kernel started and never attached"),
        pytest.param("k-1", KernelActivity("dead"), "kernel_unknown", 660, "kernel is dead (not busy)",
                     id="a dead kernel"),
    ],
)
def test_red17_r8_leases_without_a_busy_kernel_fall_under_the_lease_rule_and_never_say_it_keeps_running(
        kernel_id: str | None, kernel: KernelActivity | None, want_rule: str, want_limit: float,
        want_words: str) -> None:
    """Failed before the fix: each of these was rule ``gpu_busy_kernel`` (2 h, notify) saying
    "(the kernel keeps running)"."""
    verdict = default_idle_arbiter(job=_lease(kernel_id), samples=_idle_samples(), kernel=kernel, now=NOW,
                                   policy=POLICY)
    assert verdict.idle and verdict.rule == want_rule, verdict
    assert verdict.mode is ReclaimMode.RELEASE and verdict.limit_s == want_limit
    assert want_words in verdict.reason and "keeps running" not in verdict.reason, verdict.reason
    assert "is busy" not in verdict.reason, verdict.reason


def test_red17_r8_a_busy_kernel_keeps_the_busy_kernel_rule() -> None:
    verdict = default_idle_arbiter(job=_lease("k-1"), samples=_idle_samples(), kernel=KernelActivity("busy"), now=NOW,
                                   policy=POLICY)
    assert verdict.rule == "gpu_busy_kernel" and verdict.mode is ReclaimMode.NOTIFY
    assert "while the kernel is busy (the kernel keeps running)" in verdict.reason


def _audit(svc: Any, job_id: str) -> list[dict[str, Any]]:
    return list(reversed(svc.audit(job_id=job_id, limit=1000)))


def _state(svc: Any, job_id: str) -> str:
    return str(svc.get_job(job_id, user="ana", is_admin=True)["state"])


def test_red17_r8_a_lease_asked_for_without_a_kernel_is_released_by_the_normal_window(tmp_path: Any) -> None:
    """The shipped modes (lease release, busy-kernel notify) with the busy-kernel window far away:
    only the normal lease window can release it. Failed before the fix (reported, never freed)."""
    svc = make_service(tmp_path, idle_busy_kernel_window_s=3600.0)
    drive = Driver(svc)
    lease = svc.submit({"gpus": 1}, user="ana", kind="lease")
    drive.run(lambda: _state(svc, lease["id"]) == "cancelled", timeout_s=60,
              what="the kernel-less lease to be released")
    drive.run(lambda: any(r["action"] == "idle_reclaim" for r in _audit(svc, lease["id"])), timeout_s=30,
              what="its reclaim to be audited")
    reclaim = [r for r in _audit(svc, lease["id"]) if r["action"] == "idle_reclaim"][-1]
    assert reclaim["details"]["evidence"]["rule"] == "gpu_no_kernel", reclaim
    assert reclaim["details"]["action"] == "release"
    assert "no kernel is bound to this lease" in reclaim["message"], reclaim["message"]
    assert "keeps running" not in reclaim["message"], reclaim["message"]
