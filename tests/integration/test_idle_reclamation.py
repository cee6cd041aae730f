"""Issue 5 end to end on a GPU-less machine: telemetry → idle detection → warning → grace → reclaim.

Real parts: the service built by ``from_config``, a real SQLite store, the local executor
running real subprocesses, the simulated collector measuring their real CPU use (a simulated
GPU's utilization = CPU use of the processes holding it), the engine thread's ladder. Kernels
are real processes registered through the service's kernel source, the hook the extension fills
from the Jupyter kernel manager (``{"execution_state", "last_activity", "pid"}``): a double of
the kernel manager's *table*, since a kernel's GPU idleness here is its process's real CPU use.

Windows are test-sized (see ``conftest.IDLE_SETTINGS``): warning after 4 s idle, reclaim 2 s
later, keepalive at most 5 s.
"""

from __future__ import annotations

import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import ConflictError, ValidationError
from jupyter_sched.model import parse_utc
from jupyter_sched.services import SchedulerService

from .conftest import Driver, make_service, settings_for, sleeper

COMPUTE_THEN_SLEEP = """
import time
while True:
    start = time.process_time()
    while time.process_time() - start < 0.5:   # compute (0.5 s of CPU, however busy the machine) ...
        sum(i * i for i in range(1000))
    time.sleep(3)                              # ... then a 3-second pause, over and over
"""


def at(text: str) -> datetime:
    """An API timestamp as an aware datetime."""
    return parse_utc(text, field="at")


def trail(svc: SchedulerService, job_id: str) -> list[dict[str, Any]]:
    """The job's audit records, oldest first."""
    return list(reversed(svc.audit(job_id=job_id, limit=1000)))


def idle_records(svc: SchedulerService, job_id: str) -> list[dict[str, Any]]:
    return [r for r in trail(svc, job_id) if r["action"].startswith("idle_")]


def state_of(svc: SchedulerService, job_id: str) -> str:
    return str(svc.get_job(job_id, user="ana", is_admin=True)["state"])


def kernels(*entries: tuple[str, str, int]) -> Any:
    """A kernel source: ``(kernel id, execution state, pid)`` per kernel, last active long ago."""
    long_ago = datetime.now(timezone.utc) - timedelta(hours=1)
    return lambda: {kid: {"execution_state": state, "last_activity": long_ago, "pid": pid}
                    for kid, state, pid in entries}


def test_an_idle_lease_is_warned_then_reclaimed_after_window_and_grace_with_evidence(tmp_path: Path) -> None:
    svc = make_service(tmp_path)
    kernel = sleeper(tmp_path)
    svc.set_kernel_source(kernels(("k-ana", "idle", kernel.pid)))
    drive = Driver(svc)
    lease = svc.submit({"gpus": 1, "kernel_id": "k-ana"}, user="ana", kind="lease")
    drive.run(lambda: state_of(svc, lease["id"]) == "cancelled", timeout_s=60, what="the idle lease to be reclaimed")

    warning, reclaim = idle_records(svc, lease["id"])
    assert (warning["action"], reclaim["action"]) == ("idle_warning", "idle_reclaim")
    gpu = svc.get_job(lease["id"], user="ana")["allocation"]["gpu_uuids"][0]
    for record in (warning, reclaim):
        rows = record["details"]["evidence"]["samples"]
        assert rows and {r["device"] for r in rows} == {gpu}, record
        assert all(r["max_activity_pct"] is not None and r["max_activity_pct"] < 5.0 for r in rows), rows
    assert reclaim["details"]["action"] == "release"
    assert reclaim["details"]["evidence"]["rule"] == "kernel_and_gpu"
    assert "kernel idle and GPU < 5 %" in reclaim["message"] and "the kernel keeps running" in reclaim["message"]
    # the ladder: warning, then at least the grace period before the reclaim
    assert at(reclaim["at"]) >= at(warning["at"]) + timedelta(seconds=2)
    assert at(reclaim["at"]) >= at(warning["details"]["idle_since"]) + timedelta(seconds=6)
    # the GPU is free again, the kernel process was not touched, the client was told
    assert gpu not in svc.inventory()["allocations"]
    assert kernel.poll() is None
    told = drive.of("idle_warning", lease["id"])
    assert [e["stage"] for e in told] == ["warn", "reclaim"] and told[0]["kernel_id"] == "k-ana"
    assert drive.of("lease", lease["id"])[-1]["state"] == "cancelled"
    assert svc.idle_stats()["reclaims"] == 1


def test_a_job_computing_with_periodic_3_second_sleeps_is_never_warned(tmp_path: Path) -> None:
    svc = make_service(tmp_path)
    drive = Driver(svc)
    job = svc.submit({"gpus": 1, "command": [sys.executable, "-c", COMPUTE_THEN_SLEEP]}, user="ana")
    drive.run(lambda: state_of(svc, job["id"]) == "running", timeout_s=30, what="the job to run")
    drive.run_for(13.0)  # three compute/sleep rounds

    assert state_of(svc, job["id"]) == "running"
    assert idle_records(svc, job["id"]) == []
    assert drive.of("idle_warning", job["id"]) == []
    # the telemetry did see both phases: busy compute and the idle pauses
    seen = svc.telemetry(user="ana", job=job["id"], limit=3600)["gpus"][0]["recent"]
    activity = [s["activity_pct"] for s in seen]
    assert max(activity) > 5.0 and min(activity) < 5.0, activity
    svc.cancel(job["id"], user="ana")
    drive.run(lambda: state_of(svc, job["id"]) == "cancelled", timeout_s=30, what="the cancel")


def test_case_012_engine_busy_kernel_at_zero_gpu_keeps_its_gpus_and_is_only_reported(tmp_path: Path) -> None:
    """Case 012: a busy kernel whose GPU sits at 0 % (data loading, a CPU loop) is not idle; only
    the separate, longer busy-kernel limit applies, and its default action frees nothing."""
    svc = make_service(tmp_path, idle_busy_kernel_window_s=8.0)
    busy, idle = sleeper(tmp_path), sleeper(tmp_path)
    svc.set_kernel_source(kernels(("k-busy", "busy", busy.pid), ("k-idle", "idle", idle.pid)))
    drive = Driver(svc)
    busy_lease = svc.submit({"gpus": 1, "kernel_id": "k-busy"}, user="ana", kind="lease")
    idle_lease = svc.submit({"gpus": 1, "kernel_id": "k-idle"}, user="ana", kind="lease")
    drive.run(lambda: state_of(svc, idle_lease["id"]) == "cancelled", timeout_s=60, what="the idle kernel's lease")
    assert state_of(svc, busy_lease["id"]) == "running"
    assert all(r["action"] != "idle_reclaim" for r in idle_records(svc, busy_lease["id"]))
    drive.run(lambda: any(r["action"] == "idle_reclaim" for r in idle_records(svc, busy_lease["id"])),
              timeout_s=60, what="the busy-kernel limit")
    drive.run_for(1.0)

    warning, report = idle_records(svc, busy_lease["id"])
    assert (warning["action"], report["action"]) == ("idle_warning", "idle_reclaim")
    assert report["details"]["action"] == "notify" and report["details"]["evidence"]["rule"] == "gpu_busy_kernel"
    assert "while the kernel is busy" in report["message"] and "nothing freed" in report["message"]
    assert state_of(svc, busy_lease["id"]) == "running"  # notify frees nothing
    assert busy.poll() is None and idle.poll() is None   # no kernel is ever killed
    assert svc.idle_stats()["reclaims"] == 1              # only the idle kernel's lease was reclaimed


def test_case_014_engine_foreign_held_gpu_is_excluded_with_a_reason_and_never_reclaimed(tmp_path: Path) -> None:
    """Case 014 through the engine, on NVML: GPU0 holds 73.6 GiB with no owning process. It is
    not placed on, the reason names it, the reclaimer only reports it. Memory our lease's kernel
    allocates on its GPU is *not* foreign (the kernel's pid is in the engine's registry)."""
    from tests.hardware.fake_nvml import FakeDevice, FakeNvml

    devices = [FakeDevice(uuid=f"GPU-{i}1111111-aaaa-bbbb-cccc-000000000000", name="NVIDIA H100 80GB HBM3",
                          bus_id=f"00000000:{0x10 + i:02X}:00.0", total_mib=81559, used_mib=4, util_gpu=0,
                          power_w=70, temperature_c=30) for i in range(4)]
    devices[0].used_mib = 75412  # held by a zombie: no process listed
    nvml = FakeNvml(devices)
    svc = SchedulerService.from_config(
        {**_case_014_settings(tmp_path)}, nvml=nvml)
    kernel = sleeper(tmp_path)
    svc.set_kernel_source(kernels(("k-dave", "busy", kernel.pid)))
    drive = Driver(svc)
    lease = svc.submit({"gpus": 1, "kernel_id": "k-dave"}, user="dave", kind="lease")
    drive.run(lambda: state_of(svc, lease["id"]) == "running", timeout_s=30, what="dave's lease")
    dave_gpu = svc.get_job(lease["id"], user="dave")["allocation"]["gpu_uuids"][0]
    assert dave_gpu != devices[0].uuid
    held = next(d for d in devices if d.uuid == dave_gpu)  # dave's kernel allocates 17.6 GiB there
    held.used_mib, held.processes = 18020, [(kernel.pid, 18016, None)]
    wide = svc.submit({"gpus": 4, "command": ["true"]}, user="erin")
    drive.run(lambda: bool((svc.get_job(wide["id"], user="erin")["reason"] or {}).get("message")),
              timeout_s=30, what="a pending reason")
    drive.run_for(4.0)

    reason = svc.get_job(wide["id"], user="erin")["reason"]
    assert svc.get_job(wide["id"], user="erin")["state"] == "pending"
    assert "GPU 0" in reason["message"] and "75412 MiB" in reason["message"], reason
    inventory = {g["uuid"]: g for g in svc.inventory()["gpus"]}
    assert inventory[devices[0].uuid]["foreign_memory_mib"] == 75412
    assert inventory[dave_gpu]["foreign_memory_mib"] == 0  # our kernel's memory is ours
    foreign = svc.telemetry(user="admin", is_admin=True)["foreign"]
    assert [(f["gpu_uuid"], f["message"], f["releasable"]) for f in foreign] == [
        (devices[0].uuid, "GPU0 holds 73.6 GiB with no owning process", False)]
    # the reclaimer ran (dave's idle-GPU lease was reported) but never touched GPU0
    everything = svc.audit(limit=10_000)
    assert any(r["action"].startswith("idle_") for r in everything)
    assert not [r for r in everything if r["action"].startswith("idle_")
                and devices[0].uuid in r["details"].get("gpu_uuids", [])]


def _case_014_settings(tmp_path: Path) -> dict[str, Any]:
    settings = settings_for(tmp_path, idle_busy_kernel_window_s=6.0)
    settings.update(inventory_source="auto", telemetry_source="nvml", simulated_gpus=0)
    return settings


def test_keepalive_extends_once_up_to_the_admin_max_and_survives_a_restart(tmp_path: Path) -> None:
    node = f"itest-{uuid.uuid4().hex[:8]}"
    svc = make_service(tmp_path, node_name=node)
    kernel = sleeper(tmp_path)
    source = kernels(("k-ana", "idle", kernel.pid))
    svc.set_kernel_source(source)
    drive = Driver(svc)
    lease = svc.submit({"gpus": 1, "kernel_id": "k-ana"}, user="ana", kind="lease")
    drive.run(lambda: [r["action"] for r in idle_records(svc, lease["id"])] == ["idle_warning"],
              timeout_s=60, what="the first warning")
    with pytest.raises(ValidationError) as too_long:
        svc.keepalive(lease["id"], user="ana", seconds=60)
    assert too_long.value.field == "keepalive.seconds"
    kept = svc.keepalive(lease["id"], user="ana")
    until = at(kept["keepalive_until"])
    assert until - at(idle_records(svc, lease["id"])[-1]["at"]) <= timedelta(seconds=5)
    with pytest.raises(ConflictError):
        svc.keepalive(lease["id"], user="ana")  # once per allocation

    # a restart (new engine, same store) resumes the ladder from the audit trail
    svc.engine.resign()
    svc.store.close()
    svc = make_service(tmp_path, node_name=node)
    svc.set_kernel_source(source)
    drive = Driver(svc)
    with pytest.raises(ConflictError):
        svc.keepalive(lease["id"], user="ana")
    drive.run(lambda: state_of(svc, lease["id"]) == "cancelled", timeout_s=60, what="the reclaim after the keepalive")

    actions = [r["action"] for r in idle_records(svc, lease["id"])]
    assert actions == ["idle_warning", "idle_keepalive", "idle_warning", "idle_reclaim"]
    reclaim = idle_records(svc, lease["id"])[-1]
    assert at(reclaim["at"]) >= until
    assert kernel.poll() is None


def test_an_idle_job_is_listed_as_a_candidate_before_its_warning(tmp_path: Path) -> None:
    svc = make_service(tmp_path, idle_window_s=30.0, idle_grace_s=10.0, idle_job_action="stop")
    drive = Driver(svc)
    job = svc.submit({"gpus": 1, "command": [sys.executable, "-c", "import time; time.sleep(120)"]}, user="ana")
    drive.run(lambda: any(c.job_id == job["id"] for c in svc.engine.idle.candidates), timeout_s=30,
              what="the sleeping job to be listed as idle")
    (candidate,) = [c for c in svc.engine.idle.candidates if c.job_id == job["id"]]
    assert candidate.stage == "idle" and candidate.action == "stop" and candidate.user == "ana"
    assert candidate.warn_at == candidate.idle_since + timedelta(seconds=30)
    assert 0 < candidate.time_left_s <= 40 and candidate.state.startswith("allocated, ")
    assert idle_records(svc, job["id"]) == [], "listed before any warning"
    svc.cancel(job["id"], user="ana")
    drive.run(lambda: state_of(svc, job["id"]) == "cancelled", timeout_s=30, what="the cancel")
