"""Red41 R3: on a hub, a lease whose kernel was reported "idle, active just now" every few seconds kept
its idle GPUs for ever — the busy-kernel bound (red39 R8) covered "busy" only, while the whole report
(``execution_state`` and ``last_activity``) is its user's word: a forged ``PUT api/sched/kernels``, or a
real kernel whose daemon thread prints every 20 s, moved ``idle_since`` and the deadline never came.

Now every path where a hub kernel's word defers reclaim has the one bound: the GPUs idle for
``busy_kernel_window_s`` reclaim the lease whatever the reports say (busy, idle with fresh or future
activity, starting, or any alternation of them), the period being the GPUs' own (no report restarts
the ladder), warned first, and the reclaim says the GPUs were idle that long while the kernel was said
active, and whose word that was. An embedded server's kernel manager is not a user's report: its
kernel's own output is activity there (DESIGN.md *Idle reclamation*: "no execution").

Real parts: the pure arbiter and ladder driven cycle by cycle over sample sequences; then the service
built by ``from_config`` on SQLite (test-sized windows), its engine, the simulated GPUs' telemetry and
the hub's kernel-state source (:class:`~jupyter_sched.hub.liveness.KernelReports`, fed through its own
report parsers, as the report handler feeds it).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.hub.liveness import KernelReport, KernelReports, parse_report, parse_states
from jupyter_sched.model import Allocation, Job, JobKind, JobSpec, JobState
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.reclaim import (
    IdlePolicy,
    KernelActivity,
    LadderState,
    ReclaimMode,
    default_idle_arbiter,
    ladder_step,
)
from jupyter_sched.reclaim.idle import KERNEL_MANAGER, USER_SERVER_REPORT, advance_ladder

from .conftest import Driver, make_service

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=timezone.utc)
"""The GPU's last active sample; idle from then on."""
CYCLE_S = 15
POLICY = IdlePolicy(window_s=600, warning_s=120, grace_s=60, busy_kernel_window_s=1800,
                    busy_kernel_mode=ReclaimMode.RELEASE, lease_mode=ReclaimMode.RELEASE)
BOUND_END = T0 + timedelta(seconds=1800 + 60)
"""GPU idle since T0: the bound (1800 s) plus the grace: the latest a hub lease may be reclaimed."""

Report = Callable[[int, datetime], KernelActivity]
"""A kernel report at cycle ``i`` and time ``now``."""


def _lease() -> Job:
    spec = JobSpec(name="l-1", user="r41c", kind=JobKind.LEASE, kernel_id="kc")
    return Job(id="l-1", spec=spec, state=JobState.RUNNING, started_at=T0 - timedelta(hours=1),
               allocation=Allocation(node="n1", gpu_uuids=("GPU-1",)))


SAMPLES = [GpuSample(gpu_uuid="GPU-1", mig_instance=None, timestamp=T0 + timedelta(seconds=30 * i),
                     utilization_pct=60.0 if i == -1 else 0.0, memory_used_mib=0.0, memory_total_mib=81920.0)
           for i in range(-4, 2 * 3600 // 30)]


def _drive(report: Report, *, hours: float = 2.0) -> tuple[datetime | None, list[Any]]:
    """Run the arbiter and the ladder every CYCLE_S from T0 as the engine does (the step delivered, the
    ladder advanced): ``(when reclaimed or None, the steps)``."""
    ladder, steps, lease = LadderState(), [], _lease()
    now = T0
    i = 0
    while now < T0 + timedelta(hours=hours):
        verdict = default_idle_arbiter(job=lease, samples=SAMPLES, kernel=report(i, now), policy=POLICY, now=now)
        step = ladder_step(job=lease, verdict=verdict, ladder=ladder, policy=POLICY, now=now, samples=SAMPLES)
        if step is not None:
            steps.append(step)
            ladder = advance_ladder(ladder, step, now=now)
            if step.stage == "reclaim":
                return now, steps
        i += 1
        now += timedelta(seconds=CYCLE_S)
    return None, steps


def _hub(state: str, active: datetime | None) -> KernelActivity:
    return KernelActivity(state, active, source=USER_SERVER_REPORT)


SEQUENCES: dict[str, Report] = {
    "busy": lambda i, now: _hub("busy", now),
    "idle_active_now": lambda i, now: _hub("idle", now),
    "idle_active_ten_years_ahead": lambda i, now: _hub("idle", now + timedelta(days=3650)),
    "busy_then_idle_now": lambda i, now: _hub("busy" if i % 2 else "idle", now),
    # a forged alternation: busy, then idle with an old activity just after the GPU went idle (its own
    # deadline long past), which moved the period's start at each turn and cleared every warning
    "busy_then_idle_long_ago": lambda i, now: _hub("busy", now) if i % 2 else _hub("idle", T0 + timedelta(seconds=5)),
    "starting_then_idle_now": lambda i, now: _hub("starting" if i % 3 == 0 else "idle", now),
    "idle_now_every_20_s_printing_thread": lambda i, now: _hub("idle", now - timedelta(seconds=(i * CYCLE_S) % 20)),
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_red41_r3_a_hub_kernels_word_never_keeps_idle_gpus_past_the_bound(name: str) -> None:
    """Whatever a user's server reports, cycle by cycle, the lease whose GPU stays idle is warned and
    released by the bound plus the grace. Failed before for idle_active_now, ten_years_ahead,
    busy_then_idle_now, busy_then_idle_long_ago and the printing thread: never reclaimed in 2 h."""
    reclaimed, steps = _drive(SEQUENCES[name])
    assert reclaimed is not None and reclaimed <= BOUND_END + timedelta(seconds=CYCLE_S), (name, steps[-3:])
    warned = [s for s in steps if s.stage == "warn"]
    assert warned and warned[0].idle_since == T0, (name, steps)
    final = steps[-1]
    assert final.action == "release" and final.idle_since == T0, final
    if name.startswith("idle_"):  # what the bound overrode, said: GPUs idle that long, whose word
        assert final.reason.startswith("GPU < 5 % for 30 min while the kernel is idle, active at "), final.reason
        assert f"({USER_SERVER_REPORT}; the kernel keeps running)" in final.reason, final.reason
        kernel_said = final.evidence["kernel"]
        assert kernel_said["state"] == "idle" and kernel_said["source"] == USER_SERVER_REPORT, kernel_said
        assert kernel_said["last_activity_said"] is not None, kernel_said
        assert kernel_said["summary"].startswith("kernel reported idle, active at "), kernel_said
        assert "while its GPUs were idle for 31m" in kernel_said["summary"], kernel_said


def test_red41_r3_a_hub_kernel_that_went_idle_is_still_reclaimed_by_its_window_and_warned_again_if_it_runs() -> None:
    """The ordinary case keeps its times: a kernel last active 5 min after the GPU went idle is reclaimed
    window + grace after that activity (not sooner: the user's word may shorten nothing); a cell run after
    the warning clears the warning and the next one is given before the reclaim."""
    ran = T0 + timedelta(minutes=5)
    reclaimed, steps = _drive(lambda i, now: _hub("idle", ran))
    assert reclaimed == ran + timedelta(seconds=600 + 60), steps
    assert [s.stage for s in steps] == ["warn", "reclaim"], steps
    assert "limit 10 + 1 min" in steps[0].reason and steps[-1].reason.startswith("kernel idle and GPU < 5 %"), steps

    again = ran + timedelta(seconds=600 + 30)  # after the warning (due at ran + 480 s), before the reclaim

    def one_more_cell(i: int, now: datetime) -> KernelActivity:
        return _hub("idle", ran if now < again else again)

    reclaimed, steps = _drive(one_more_cell)
    assert [s.stage for s in steps] == ["warn", "clear", "warn", "reclaim"], steps
    assert steps[1].reason.startswith("active again: the kernel ran at "), steps[1]
    assert reclaimed == again + timedelta(seconds=600 + 60), steps


def test_red41_r3_an_embedded_kernel_managers_own_activity_still_defers_reclaim() -> None:
    """Decided by DESIGN.md *Idle reclamation* ("the kernel must also be idle: not busy, no execution"):
    on an embedded server the state and last_activity are its own kernel manager's, not a report; a
    kernel whose code prints every 20 s is executing there, so its GPUs are not reclaimed by the window
    (the busy bound stays for busy, notify by default in embedded). Only a hub report is bounded."""
    reclaimed, steps = _drive(lambda i, now: KernelActivity("idle", now, source=KERNEL_MANAGER), hours=1.0)
    assert reclaimed is None and steps == [], steps
    # the admin's "no bound" (idle_busy_kernel_window_s = 0) still trusts the hub report, as for busy
    unbounded = IdlePolicy(window_s=600, warning_s=120, grace_s=60, busy_kernel_window_s=None)
    verdict = default_idle_arbiter(job=_lease(), samples=SAMPLES, kernel=_hub("idle", T0 + timedelta(hours=1)),
                                   policy=unbounded, now=T0 + timedelta(hours=1))
    assert verdict.rule == "kernel_and_gpu" and verdict.idle_since == T0 + timedelta(hours=1), verdict


def _report(reports: KernelReports, body: dict[str, Any], *, at: datetime) -> None:
    server, kernels = parse_report(body)
    reports.record(KernelReport(user="r41c", server=server, kernels=kernels, received_at=at,
                                states=parse_states(body, kernels, now=at)))


def test_red41_r3_a_kernel_reported_idle_active_just_now_loses_its_idle_gpus_at_the_bound_on_a_hub(
        tmp_path: Path) -> None:
    """The repro's shape, end to end: r41c's report says its kernel is idle with last_activity = now
    at every check; the hub's default busy-kernel action and a test-sized bound (window 4 + grace 2,
    bound 6): warned, then released, the audit saying the GPUs were idle while the kernel was said
    active and whose word it was. Failed before: never warned, never released."""
    svc = make_service(tmp_path, idle_busy_kernel_window_s=6.0,
                       idle_busy_kernel_action=HubSchedApp().idle_busy_kernel_action)
    reports = KernelReports()
    svc.set_kernel_source(lambda: reports.activity(datetime.now(timezone.utc)))
    drive = Driver(svc)

    def idle_now() -> None:
        now = datetime.now(timezone.utc)
        _report(reports, {"server": "", "kernels": ["kc"], "states": {
            "kc": {"execution_state": "idle", "last_activity": now.isoformat()}}}, at=now)

    idle_now()
    lease = svc.submit({"gpus": 1, "kernel_id": "kc"}, user="r41c", kind="lease")

    def state() -> str:
        return str(svc.get_job(lease["id"], user="r41c", is_admin=True)["state"])

    def said_active_until_released() -> bool:
        idle_now()
        return state() == "cancelled"

    drive.run(said_active_until_released, timeout_s=90, what="the idle-but-active kernel's lease to be released")
    records = list(reversed(svc.audit(job_id=lease["id"], limit=1000)))
    warning = [r for r in records if r["action"] == "idle_warning" and r["details"].get("stage") == "warn"]
    reclaim = [r for r in records if r["action"] == "idle_reclaim"]
    assert warning and reclaim, [r["action"] for r in records]
    details = reclaim[-1]["details"]
    assert details["action"] == "release" and details["evidence"]["rule"] == "gpu_busy_kernel", details
    assert "while the kernel is idle, active at " in reclaim[-1]["message"], reclaim[-1]["message"]
    kernel_said = details["evidence"]["kernel"]
    assert kernel_said["source"] == USER_SERVER_REPORT and kernel_said["state"] == "idle", kernel_said
    assert kernel_said["summary"].startswith("kernel reported idle, active at "), kernel_said
    idle_since = datetime.fromisoformat(details["idle_since"])
    assert datetime.fromisoformat(reclaim[-1]["at"]) - idle_since >= timedelta(seconds=6), details
