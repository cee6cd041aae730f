"""Red39 R8: a lease's "kernel busy" is its user's word — on a hub, ``PUT api/sched/kernels`` with the
user's token (which every kernel of theirs holds) reported a made-up kernel busy, and busy deferred idle
reclaim of its lease's GPUs; the busy-kernel rule only warned (notify) after 4 h, so the GPUs were kept
for as long as the user kept saying "busy".

Now the GPU's own utilization bounds it: on a hub (``HubSchedApp``) the busy-kernel rule releases after
``idle_busy_kernel_window_s`` by default (embedded keeps notify: its own kernel manager says busy), the
reclaim's audit record says what it rests on (the kernel's said state, who said it, the valid samples),
and every lease line shows the bound.

Real parts: the service built by ``from_config`` on SQLite with test-sized idle windows
(``conftest.IDLE_SETTINGS``), its engine, the simulated GPUs' telemetry (utilization from the real CPU
use of the holder's processes: none here, so the GPU is idle) and the idle ladder; the hub's kernel-state
source, :class:`~jupyter_sched.hub.liveness.KernelReports`, fed as the report handler feeds it (its own
parsers); the traitlets apps for the defaults. The pure ladder for the evidence's numbers.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.extension.app import SchedApp
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.hub.liveness import KernelReport, KernelReports, parse_report, parse_states
from jupyter_sched.model import Allocation, Job, JobKind, JobSpec, JobState
from jupyter_sched.model.samples import GpuSample, Validity
from jupyter_sched.reclaim import (
    IdlePolicy,
    KernelActivity,
    LadderState,
    ReclaimMode,
    default_idle_arbiter,
    idle_policies_from_settings,
    ladder_step,
)
from jupyter_sched.reclaim.idle import USER_SERVER_REPORT
from jupyter_sched.wording.jobs import busy_bound_words, ends_by

from .conftest import Driver, make_service

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=timezone.utc)


def test_red39_r8_a_hub_releases_the_idle_gpus_of_a_busy_kernel_after_the_bound_embedded_only_reports() -> None:
    """Failed before: both modes defaulted to ``notify`` — a kernel said busy kept idle GPUs for ever."""
    hub = idle_policies_from_settings(HubSchedApp().idle_settings()).default
    embedded = idle_policies_from_settings(SchedApp().idle_settings()).default
    assert hub.busy_kernel_mode is ReclaimMode.RELEASE, hub
    assert embedded.busy_kernel_mode is ReclaimMode.NOTIFY, embedded
    assert hub.busy_kernel_window_s is not None and hub.busy_kernel_window_s + hub.grace_s == 14400.0
    # an admin's choice still wins in either mode
    assert HubSchedApp(idle_busy_kernel_action="notify").idle_busy_kernel_action == "notify"
    assert SchedApp(idle_busy_kernel_action="release").idle_busy_kernel_action == "release"


def _lease() -> Job:
    spec = JobSpec(name="l-1", user="r39c", kind=JobKind.LEASE, kernel_id="fake-kernel-1")
    return Job(id="l-1", spec=spec, state=JobState.RUNNING, started_at=NOW - timedelta(hours=6),
               allocation=Allocation(node="n1", gpu_uuids=("GPU-1",)))


def _sample(minutes_ago: int, pct: float | None, validity: Validity = Validity.VALID) -> GpuSample:
    return GpuSample(gpu_uuid="GPU-1", mig_instance=None, timestamp=NOW - timedelta(minutes=minutes_ago),
                     utilization_pct=pct, memory_used_mib=0.0, memory_total_mib=81920.0, validity=validity)


def test_red39_r8_the_busy_kernel_reclaim_says_what_it_rests_on() -> None:
    """5 h of idle GPU under a kernel its user's server calls busy, three blank readings among them:
    the bound (4 h) is past, the warning was given, so the step is a release whose evidence names the
    said state, who said it and the valid samples (the blank ones left out, the peak under the threshold)."""
    samples = [_sample(m, 0.4 if m == 90 else 0.0) for m in range(0, 301) if m not in (200, 201, 202)]
    samples += [_sample(m, None, Validity.BLANK) for m in (200, 201, 202)]
    policy = IdlePolicy(window_s=1800, warning_s=600, busy_kernel_window_s=14400, busy_kernel_mode=ReclaimMode.RELEASE)
    kernel = KernelActivity("busy", NOW, source=USER_SERVER_REPORT)
    verdict = default_idle_arbiter(job=_lease(), samples=samples, kernel=kernel, policy=policy, now=NOW)
    assert verdict.rule == "gpu_busy_kernel" and verdict.mode is ReclaimMode.RELEASE, verdict
    since = verdict.idle_since
    assert since is not None
    warned = LadderState(warned_at=NOW - timedelta(minutes=50), warned_idle_since=since)
    step = ladder_step(job=_lease(), verdict=verdict, ladder=warned, policy=policy, now=NOW, samples=samples)
    assert step is not None and step.stage == "reclaim" and step.action == "release", step
    kernel_said = step.evidence["kernel"]
    assert kernel_said["state"] == "busy" and kernel_said["source"] == USER_SERVER_REPORT, kernel_said
    assert kernel_said["valid_samples"] == 298 and kernel_said["left_out_samples"] == 3, kernel_said
    assert kernel_said["max_activity_pct"] == 0.4 and kernel_said["threshold_pct"] == 5.0, kernel_said
    assert kernel_said["summary"] == ("kernel reported busy while its GPUs were idle for 5h00m (its user's server's "
                                      "report; valid samples: 298, all < 5 %, max 0.4 %; 3 blank or suspect left out)")


def _report(reports: KernelReports, body: dict[str, Any], *, at: datetime) -> None:
    server, kernels = parse_report(body)
    reports.record(KernelReport(user="r39c", server=server, kernels=kernels, received_at=at,
                                states=parse_states(body, kernels, now=at)))


def _audit(svc: Any, job_id: str) -> list[dict[str, Any]]:
    return list(reversed(svc.audit(job_id=job_id, limit=1000)))


def _state(svc: Any, job_id: str) -> str:
    return str(svc.get_job(job_id, user="r39c", is_admin=True)["state"])


def test_red39_r8_a_made_up_kernel_reported_busy_for_ever_loses_its_idle_gpus_at_the_bound_on_a_hub(
        tmp_path: Path) -> None:
    """The repro's shape: r39c reports a kernel no server of theirs runs as busy, again and again, and
    holds a lease bound to it. With the hub's busy-kernel action (its default, not set here) and a
    test-sized bound, the lease is warned, then released once its GPU stayed idle for the bound — its
    lines said so beforehand. Failed before: reported as idle, nothing freed."""
    action = HubSchedApp().idle_busy_kernel_action  # the hub's own default
    svc = make_service(tmp_path, idle_busy_kernel_window_s=8.0, idle_busy_kernel_action=action)
    reports = KernelReports()
    svc.set_kernel_source(lambda: reports.activity(datetime.now(timezone.utc)))
    drive = Driver(svc)

    def busy() -> dict[str, Any]:
        now = datetime.now(timezone.utc).isoformat()
        return {"server": "", "kernels": ["fake-kernel-1"],
                "states": {"fake-kernel-1": {"execution_state": "busy", "last_activity": now}}}

    _report(reports, busy(), at=datetime.now(timezone.utc))
    lease = svc.submit({"gpus": 1, "kernel_id": "fake-kernel-1"}, user="r39c", kind="lease")
    drive.run(lambda: _state(svc, lease["id"]) == "running", timeout_s=30, what="the lease to run")
    row = svc.get_job(lease["id"], user="r39c")
    assert row["idle_release"]["busy_after_s"] == 8.0 and row["idle_release"]["busy_action"] == "release", row
    line = ends_by(row, datetime.now(timezone.utc), cancel="jupyter-sched cancel")
    assert "or reclaimed after 6s idle (kept while its kernel is busy, up to 8s with idle GPUs)" in line, line

    def said_busy_until_released() -> bool:  # "busy" at every check, as a forged report every few seconds
        _report(reports, busy(), at=datetime.now(timezone.utc))
        return _state(svc, lease["id"]) == "cancelled"

    drive.run(said_busy_until_released, timeout_s=90, what="the busy kernel's idle lease to be released")
    records = _audit(svc, lease["id"])
    warning = [r for r in records if r["action"] == "idle_warning" and r["details"].get("stage") == "warn"]
    reclaim = [r for r in records if r["action"] == "idle_reclaim"]
    assert warning and reclaim, [r["action"] for r in records]
    details = reclaim[-1]["details"]
    assert details["action"] == "release" and details["evidence"]["rule"] == "gpu_busy_kernel", details
    assert "while the kernel is busy" in reclaim[-1]["message"], reclaim[-1]["message"]
    kernel_said = details["evidence"]["kernel"]
    assert kernel_said["source"] == USER_SERVER_REPORT and kernel_said["valid_samples"] > 0, kernel_said
    assert kernel_said["summary"].startswith("kernel reported busy while its GPUs were idle for "), kernel_said
    # the bound was kept: released no sooner than 8 s of idle GPU after the idle period began
    idle_since = datetime.fromisoformat(details["idle_since"])
    assert datetime.fromisoformat(reclaim[-1]["at"]) - idle_since >= timedelta(seconds=8), details


def test_red39_r8_lease_lines_say_the_bound() -> None:
    assert busy_bound_words({"action": "release", "after_s": 1800, "busy_after_s": 14400, "busy_action": "release"}) \
        == "kept while its kernel is busy, up to 4h00m with idle GPUs"
    assert busy_bound_words({"action": "release", "after_s": 1800, "busy_after_s": 14400, "busy_action": "notify"}) \
        == "kept while its kernel is busy; 4h00m with idle GPUs is reported, not reclaimed"
    assert busy_bound_words({"action": "release", "after_s": 1800}) == ""  # an older server: nothing made up
