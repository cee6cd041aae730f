"""Case 026: a "ghost" 100 % utilization with 0 MiB and no process is a telemetry latch: suspect
after 3 samples, idle evidence for an allocated GPU, placeable when free, left out of totals."""

from __future__ import annotations

from jupyter_sched.model import GPU, Inventory, Node
from jupyter_sched.model.samples import GpuSample, Validity
from jupyter_sched.placement.state import ClusterState
from jupyter_sched.reclaim import IdlePolicy, ReclaimMode, gpu_occupancy
from jupyter_sched.telemetry.validity import validate_series
from jupyter_sched.telemetry.views import cluster_utilization, inventory_state_text, telemetry_state

from .idle_harness import at, gpu_sample, make_job, run_ladder

POLICY = IdlePolicy(threshold_pct=5, window_s=60 * 60, warning_s=15 * 60, job_mode=ReclaimMode.STOP)


def case_026(m: float) -> list[GpuSample]:
    """samples_every_60s_for_6h; GPU-d has only its first 2 samples."""
    out = [
        gpu_sample("GPU-a", at(m), 100.0, mem=0.0, process_count=0),
        gpu_sample("GPU-b", at(m), 100.0, mem=0.0, process_count=0),
        gpu_sample("GPU-c", at(m), 100.0, mem=30720.0, pids=[7001]),
    ]
    if m < 2:
        out.append(gpu_sample("GPU-d", at(m), 100.0, mem=0.0, process_count=0))
    return out


def history(until: float = 360) -> dict[str, list[GpuSample]]:
    samples = validate_series([s for m in range(int(until) + 1) for s in case_026(m)])
    by_gpu: dict[str, list[GpuSample]] = {}
    for s in samples:
        by_gpu.setdefault(s.gpu_uuid, []).append(s)
    return by_gpu


def test_case_026_three_latched_samples_are_labelled_suspect_util_latch_from_the_first() -> None:
    by_gpu = history()
    assert {s.label for s in by_gpu["GPU-a"]} == {"suspect_util_latch"}
    assert {s.label for s in by_gpu["GPU-b"]} == {"suspect_util_latch"}
    assert {s.label for s in by_gpu["GPU-c"]} == {"valid"}


def test_case_026_gpu_d_with_two_samples_is_not_yet_labelled_and_unknown() -> None:
    d = history()["GPU-d"]
    assert [s.label for s in d] == ["blank_latch_unconfirmed", "blank_latch_unconfirmed"]
    assert telemetry_state(d[-1]) == "unknown"


def test_case_026_gpu_a_free_is_placeable_and_shown_as_suspect_not_busy() -> None:
    a = history()["GPU-a"][-1]
    inventory = Inventory(nodes=(Node(name="n1", gpus=(GPU(uuid="GPU-a", index=0, node="n1", model="RTX PRO 6000",
                                                              memory_mib=97887),)),))
    occupancy = gpu_occupancy(inventory, [])
    assert occupancy == {"GPU-a": "free"}
    assert ClusterState(inventory).placeable == [True], "the latch is telemetry-only: the GPU works"
    assert inventory_state_text(occupancy["GPU-a"], a) == "free (telemetry: utilization latch suspected)"
    assert a.display_utilization() == "100 % (suspect: no process, 0 MiB)"
    assert telemetry_state(a) == "latch suspected"


def test_case_026_gpu_b_allocated_is_idle_warned_at_45_and_reclaimed_at_60() -> None:
    jobs = [make_job("j-401", ["GPU-b"]), make_job("j-402", ["GPU-c"])]
    run = run_ladder(jobs, case_026, POLICY, until=360)
    assert run.stages("j-401") == [(45, "warn"), (60, "reclaim")]
    reclaim = run.of("j-401", "reclaim")
    assert reclaim.idle_since == at(0), "the idle clock starts at the first latched sample"
    assert reclaim.reason == "no process and 0 MiB for 60 min (utilization 100 % ignored: latch suspected)"
    assert run.stages("j-402") == [], "GPU-c is busy: never flagged"


def test_case_026_cluster_totals_exclude_suspect_samples_with_a_note() -> None:
    by_gpu = history()
    latest = [by_gpu[g][-1] for g in ("GPU-a", "GPU-b", "GPU-c")]
    total = cluster_utilization(latest)
    assert total.utilization_pct == 100.0 / 3, "GPU-a and GPU-b contribute 0 %"
    assert total.suspect == 2 and total.valid == 1
    assert total.note == "2 with suspect readings counted as 0 %: GPU-a (util_latch), GPU-b (util_latch)"
    assert all(s.validity is Validity.SUSPECT for s in latest[:2])
