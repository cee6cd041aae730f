"""Case 025: GPUs held by a job that runs no process count as idle and show up — in the idle list
before the warning, in the waste report — and a GPU held by a foreign process shows its pid and
age and is named in the queue."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest

from jupyter_sched.accounting import UsageInterval, rollup
from jupyter_sched.accounting.waste import waste_report
from jupyter_sched.inventory import NvmlInventory
from jupyter_sched.model import GPU, Inventory, Job, JobSpec, JobState, Node, ResourceRequest
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.placement.state import ClusterState
from jupyter_sched.reclaim import ForeignProcess, IdlePolicy, ReclaimMode, foreign_gpu_reports, gpu_occupancy
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import Snapshot
from jupyter_sched.telemetry import rollup_to_dict
from jupyter_sched.telemetry.views import inventory_state_text

from .fake_nvml import FakeDevice, FakeNvml
from .idle_harness import T0, at, gpu_sample, make_job, run_ladder

RECLAIM = IdlePolicy(threshold_pct=5, window_s=60 * 60, warning_s=15 * 60, job_mode=ReclaimMode.STOP)
NOTIFY = IdlePolicy(threshold_pct=5, window_s=60 * 60, warning_s=15 * 60, job_mode=ReclaimMode.NOTIFY)


def nvml_samples(m: float) -> list[GpuSample]:
    """nvml_samples_every_5min_from_0900_to_1200."""
    return [
        gpu_sample("GPU-1111", at(m), 0.0, mem=0.0, process_count=0),
        gpu_sample("GPU-2222", at(m), 0.0, mem=0.0, process_count=0),
        gpu_sample("GPU-3333", at(m), 85.0, mem=30500.0, pids=[5151]),
        gpu_sample("GPU-4444", at(m), 0.0, mem=642.0, pids=[4242]),
    ]


def jobs() -> list[Job]:
    return [make_job("j-301", ["GPU-1111", "GPU-2222"], user="dana"), make_job("j-302", ["GPU-3333"], user="eli")]


def test_case_025_no_process_job_is_an_idle_candidate_from_the_first_sample() -> None:
    run = run_ladder(jobs(), nvml_samples, RECLAIM, until=0, every=5)
    (first,) = run.candidates[0]
    assert (first.job_id, first.stage, first.state) == ("j-301", "idle", "allocated, no process on GPU (0 %, 0 MiB)")
    assert (first.idle_since, first.warn_at, first.deadline, first.time_left_s) == (T0, at(45), at(60), 3600.0)


def test_case_025_warned_at_0945_reclaimed_at_1000_and_j302_never_flagged() -> None:
    run = run_ladder(jobs(), nvml_samples, RECLAIM, until=180, every=5)
    assert run.stages("j-301") == [(45, "warn"), (60, "reclaim")]
    reclaim = run.of("j-301", "reclaim")
    assert reclaim.reason == "no process and < 5 % for 60 min"
    assert reclaim.action == "stop" and reclaim.gpu_uuids == ("GPU-1111", "GPU-2222")
    assert run.stages("j-302") == []
    assert all(c.job_id != "j-302" for cs in run.candidates.values() for c in cs)


def intervals(end_301: float | None) -> list[UsageInterval]:
    ended = None if end_301 is None else at(end_301)
    return [UsageInterval("j-301", 1, "dana", "vision", "training", uuid, "H100", 1.0, T0, ended)
            for uuid in ("GPU-1111", "GPU-2222")] + [
        UsageInterval("j-302", 1, "eli", "nlp", "training", "GPU-3333", "H100", 1.0, T0, None)]


def test_case_025_dana_is_charged_two_gpu_hours_for_the_reclaimed_job() -> None:
    rows = {r["user"]: r["gpu_hours"] for r in rollup(intervals(60), now=at(180), by=("user",))}
    assert rows["dana"] == pytest.approx(2.0)


def test_case_025_notify_only_at_1200_shows_six_wasted_gpu_hours_ranked_first() -> None:
    run = run_ladder(jobs(), nvml_samples, NOTIFY, until=180, every=5)
    assert [a.action for m, a in run.steps if a.job_id == "j-301"] == ["notify", "notify"], "no reclaim"
    rollups = [rollup_to_dict(r) for r in run.store.drain_rollups(at(181))]
    report = waste_report(intervals(None), rollups, now=at(180), threshold_pct=5.0, max_gap_s=600)
    assert report.jobs[0].key == "j-301" and report.jobs[0].idle_gpu_hours == pytest.approx(6.0)
    assert report.jobs[1].key == "j-302" and report.jobs[1].idle_gpu_hours == 0.0
    assert report.users[0].key == "dana" and report.users[0].idle_gpu_hours == pytest.approx(6.0)
    latest = run.candidates[180]
    assert [(c.job_id, c.stage) for c in latest] == [("j-301", "reclaimed")], "notify-only work stays listed"


INVENTORY = Inventory(nodes=(Node(name="gpu-n1", gpus=tuple(
    GPU(uuid=u, index=i, node="gpu-n1", model="H100", memory_mib=81559, foreign_memory_mib=642 if i == 3 else 0)
    for i, u in enumerate(("GPU-1111", "GPU-2222", "GPU-3333", "GPU-4444")))),))


def test_case_025_foreign_process_is_shown_with_pid_memory_and_age_and_not_placeable() -> None:
    foreign = {"GPU-4444": (ForeignProcess(pid=4242, used_memory_mib=642, age_s=48 * 3600),)}
    (report,) = foreign_gpu_reports(INVENTORY, foreign_processes=foreign, utilization={"GPU-4444": "0 %"})
    assert report.state == "blocked: unmanaged process pid 4242 (642 MiB, 0 %, running 48 h)"
    assert report.pids == (4242,) and "stop process(es) 4242 on gpu-n1" in report.action
    occupancy = gpu_occupancy(INVENTORY, [])
    last = nvml_samples(180)[3]
    assert inventory_state_text(occupancy["GPU-4444"], last, foreign=foreign["GPU-4444"]) == report.state
    assert ClusterState(INVENTORY).placeable == [True, True, True, False]


def test_case_025_queue_reason_names_the_gpu_blocked_by_an_unmanaged_process() -> None:
    running = [replace(j, allocation=replace(j.allocation, node="gpu-n1")) for j in jobs() if j.allocation]
    waiting = Job(id="ft-1", spec=JobSpec(name="ft-1", user="fay", resources=ResourceRequest(gpus=1),
                                          command=("python", "train.py")), submitted_at=T0, state=JobState.PENDING)
    result = run_cycle(Snapshot(now=T0 + timedelta(hours=3), inventory=INVENTORY, jobs=(*running, waiting)))
    (pend,) = [p for p in result.pending if p.job_id == "ft-1"]
    assert "1 GPU blocked by unmanaged process" in pend.reason.message
    assert pend.reason.details["blocked_by_unmanaged"] == {"gpu-n1": [3]}


@pytest.fixture
def stray() -> Iterator[int]:
    """A real process that is not ours (stands for pid 4242)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_case_025_nvml_inventory_attaches_the_foreign_process_user_and_age(stray: int) -> None:
    device = FakeDevice(uuid="GPU-4444", name="NVIDIA H100 80GB HBM3", bus_id="00000000:04:00.0", total_mib=81559,
                        used_mib=642, util_gpu=0, processes=[(stray, 642.0, None)])
    inventory = NvmlInventory(FakeNvml([device]), node="gpu-n1")
    inv = inventory.current()
    assert inv.nodes[0].gpus[0].foreign_memory_mib > 0
    (proc,) = inventory.foreign_processes["GPU-4444"]
    assert proc.pid == stray and proc.used_memory_mib == 642.0 and proc.user == "root"
    assert proc.age_s is not None and 0 <= proc.age_s < 60
