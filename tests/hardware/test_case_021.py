"""Case 021: dcgm-exporter rows with empty or wrong ``pod`` labels are attributed by GPU UUID and
allocation interval; usage on a GPU nobody was allocated is reported as unattributed; a label
that disagrees with the allocation is one rate-limited warning."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.accounting import UsageInterval, rollup
from jupyter_sched.accounting.attribution import Attribution, attribute_usage
from jupyter_sched.accounting.waste import unattributed_usage
from jupyter_sched.model.samples import GpuSample, ProcessUsage
from jupyter_sched.telemetry import parse_dcgm_text, rollup_minutes, rollup_to_dict

DAY = datetime(2026, 3, 2, tzinfo=timezone.utc)


def hhmm(text: str) -> datetime:
    h, m = text.split(":")
    return DAY + timedelta(hours=int(h), minutes=int(m))


SCRAPES = {
    "10:00": """\
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",Hostname="n1",container="",namespace="",pod=""} 80
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbbb",Hostname="n1",container="",namespace="",pod=""} 40
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-cccc",Hostname="n1",container="",namespace="",pod=""} 75
""",
    "10:15": """\
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",Hostname="n1",container="main",namespace="team-vision",pod="j-101-abcde"} 90
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbbb",Hostname="n1",container="main",namespace="team-x",pod="other-pod-zzz"} 60
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-cccc",Hostname="n1",container="",namespace="",pod=""} 85
""",
    "10:30": """\
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",Hostname="n1"} 100
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbbb",Hostname="n1"} 0
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-cccc",Hostname="n1"} 80
""",
    "10:45": """\
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",Hostname="n1",container="",namespace="",pod=""} 90
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbbb",Hostname="n1",container="",namespace="",pod=""} 0
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-cccc",Hostname="n1",container="",namespace="",pod=""} 80
""",
}
ALLOCATIONS = [
    UsageInterval("j-101", 1, "ana", "vision", "training", "GPU-aaaa", "A100", 1.0, hhmm("10:00"), hhmm("11:00")),
    UsageInterval("j-102", 1, "ben", "nlp", "training", "GPU-bbbb", "A100", 1.0, hhmm("10:00"), hhmm("10:30")),
]
SCRAPE_INTERVAL_S = 15 * 60


def samples() -> list[GpuSample]:
    return [s for when, text in SCRAPES.items() for s in parse_dcgm_text(text, received_at=hhmm(when)).samples]


def attribution() -> Attribution:
    return attribute_usage(ALLOCATIONS, samples(), now=hhmm("11:00"), max_gap_s=SCRAPE_INTERVAL_S)


def test_case_021_j101_is_charged_all_four_samples_mean_90() -> None:
    j101 = attribution().jobs["j-101"]
    assert (j101.samples, j101.mean_utilization_pct) == (4, 90.0)


def test_case_021_j102_half_open_interval_takes_two_samples_mean_50() -> None:
    j102 = attribution().jobs["j-102"]
    assert (j102.samples, j102.mean_utilization_pct) == (2, 50.0)


def test_case_021_wrong_pod_label_is_one_warning_and_the_allocation_wins() -> None:
    result = attribution()
    (mismatch,) = result.mismatches
    assert (mismatch.gpu_uuid, mismatch.at, mismatch.label, mismatch.job_id) == (
        "GPU-bbbb", hhmm("10:15"), "team-x/other-pod-zzz", "j-102")
    # Rate limited: the same mismatch on every scrape is still one warning.
    again = attribute_usage(ALLOCATIONS, samples() + [s for s in samples() if s.gpu_uuid == "GPU-bbbb"],
                            now=hhmm("11:00"), max_gap_s=SCRAPE_INTERVAL_S)
    assert len(again.mismatches) == 1


def test_case_021_bbbb_after_the_allocation_is_unallocated_not_j102() -> None:
    assert [(g, t, u) for g, t, u in attribution().unallocated] == [
        ("GPU-bbbb", hhmm("10:30"), 0.0), ("GPU-bbbb", hhmm("10:45"), 0.0)]


def test_case_021_cccc_is_unattributed_usage_never_assigned_to_a_user() -> None:
    (usage,) = attribution().unattributed
    assert usage.message() == "GPU-cccc: 1.0 GPU-hour of activity with no scheduler allocation (10:00\u201311:00)"
    assert "GPU-cccc" not in {iv.gpu_uuid for iv in ALLOCATIONS}


def test_case_021_gpu_hours_come_from_allocations_regardless_of_telemetry() -> None:
    hours = {r["user"]: r["gpu_hours"] for r in rollup(ALLOCATIONS, now=hhmm("12:00"), by=("user",))}
    assert hours == {"ana": pytest.approx(1.0), "ben": pytest.approx(0.5)}
    # No series at all for GPU-aaaa in the scrapes changes nothing about GPU-hours, and j-101
    # simply has no telemetry.
    without = attribute_usage(ALLOCATIONS, [s for s in samples() if s.gpu_uuid != "GPU-aaaa"],
                              now=hhmm("11:00"), max_gap_s=SCRAPE_INTERVAL_S)
    assert without.jobs["j-101"].mean_utilization_pct is None


def test_case_021_a_time_sliced_gpu_is_split_by_process_data_where_it_exists_else_by_share() -> None:
    shared = [UsageInterval(j, 1, u, "t", "training", "GPU-s", "A100", 0.5, hhmm("10:00"), hhmm("11:00"))
              for j, u in (("a", "ana"), ("b", "ben"))]
    with_procs = GpuSample(gpu_uuid="GPU-s", mig_instance=None, timestamp=hhmm("10:00"), utilization_pct=80.0,
                           processes=(ProcessUsage(pid=1, sm_util_pct=60.0), ProcessUsage(pid=2, sm_util_pct=20.0)),
                           process_count=2)
    by_process = attribute_usage(shared, [with_procs], now=hhmm("10:01"), pids={"a": [1], "b": [2]})
    assert (by_process.jobs["a"].mean_utilization_pct, by_process.jobs["b"].mean_utilization_pct) == (60.0, 20.0)
    plain = GpuSample(gpu_uuid="GPU-s", mig_instance=None, timestamp=hhmm("10:00"), utilization_pct=80.0)
    by_share = attribute_usage(shared, [plain], now=hhmm("10:01"))
    assert (by_share.jobs["a"].mean_utilization_pct, by_share.jobs["b"].mean_utilization_pct) == (40.0, 40.0)


def test_case_021_admins_waste_report_shows_cccc_as_one_gpu_hour_nobody_was_allocated() -> None:
    """What reaches an admin (``GET usage/waste``'s ``unattributed``): the stored rollups of the
    same scrapes, each standing for its 15 minutes, against the allocations."""
    rows = [rollup_to_dict(r) for r in rollup_minutes(samples(), bucket_s=60)]
    (cccc,) = unattributed_usage(ALLOCATIONS, rows, now=hhmm("11:00"), max_gap_s=SCRAPE_INTERVAL_S)
    assert (cccc.gpu_uuid, cccc.active_gpu_hours, cccc.activity_max_pct) == ("GPU-cccc", 1.0, 85.0)
    assert (cccc.first_minute, cccc.last_minute) == (hhmm("10:00"), hhmm("10:45"))
    # GPU-bbbb after j-102's interval reads 0 %: unallocated but idle, so not usage of anybody's
    assert "GPU-bbbb" not in {r.gpu_uuid for r in unattributed_usage(ALLOCATIONS, rows, now=hhmm("11:00"),
                                                                      max_gap_s=SCRAPE_INTERVAL_S)}


def test_case_021_a_mig_slice_nobody_was_allocated_is_unattributed_its_allocated_sibling_is_not() -> None:
    """dcgm-exporter keys MIG slices by the parent's UUID and ``GPU_I_ID``; allocations name the
    slice's ``MIG-...`` uuid. With the inventory's names, slice 1 (busy, nobody's) is unattributed
    and slice 2 (busy, j-201's) is not; without them the slices are left out, never guessed."""
    def scrape(gi: int, active: float) -> str:
        return (f'DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu="0",UUID="GPU-mmmm",GPU_I_ID="{gi}",GPU_I_PROFILE="3g.40gb",'
                f'Hostname="n1"}} {active}\n')

    text = scrape(1, 0.6) + scrape(2, 0.9)
    rows = [rollup_to_dict(r) for r in rollup_minutes(
        [s for m in range(0, 15) for s in parse_dcgm_text(text, received_at=hhmm("10:00") + timedelta(minutes=m)).samples],
        bucket_s=60)]
    held = [UsageInterval("j-201", 1, "ana", "vision", "training", "MIG-bbbb", "A100", 3 / 7, hhmm("10:00"),
                          hhmm("11:00"))]
    names = {("GPU-mmmm", 1): "MIG-aaaa", ("GPU-mmmm", 2): "MIG-bbbb"}
    (nobody,) = unattributed_usage(held, rows, now=hhmm("10:15"), max_gap_s=60, mig_uuids=names)
    assert (nobody.gpu_uuid, nobody.active_gpu_hours, nobody.to_dict()["activity_max_pct"]) == ("MIG-aaaa", 0.25, 60.0)
    assert unattributed_usage(held, rows, now=hhmm("10:15"), max_gap_s=60) == ()
