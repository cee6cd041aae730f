"""Case 009: DCGM blank sentinels are missing values, a 101 % reading is rejected (logged once,
never shown or summed), and blank samples pause the idle clock: neither advance nor reset it."""

from __future__ import annotations

import logging

import pytest

from jupyter_sched.accounting import samples_from_rollups
from jupyter_sched.model.samples import GpuSample, Validity
from jupyter_sched.reclaim import IdlePolicy, ReclaimMode
from jupyter_sched.telemetry import parse_dcgm_text, rollup_minutes, rollup_to_dict, sample_to_dict
from jupyter_sched.telemetry.validity import SampleValidator
from jupyter_sched.telemetry.views import cluster_utilization, telemetry_state

from .idle_harness import T0, at, gpu_sample, make_job, run_ladder

CASE_009 = """\
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA A100-PCIE-40GB",Hostname="n1"} 9223372036854775792
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbbb",device="nvidia1",modelName="NVIDIA A100-PCIE-40GB",Hostname="n1"} 9.223372036854776e+18
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-cccc",device="nvidia2",modelName="NVIDIA A100-PCIE-40GB",Hostname="n1"} 2147483632
DCGM_FI_DEV_FB_USED{gpu="2",UUID="GPU-cccc",device="nvidia2",modelName="NVIDIA A100-PCIE-40GB",Hostname="n1"} 140737488355328
DCGM_FI_DEV_GPU_UTIL{gpu="3",UUID="GPU-dddd",device="nvidia3",modelName="NVIDIA A100-PCIE-40GB",Hostname="n1"} 42
DCGM_FI_DEV_GPU_UTIL{gpu="4",UUID="GPU-eeee",device="nvidia4",modelName="NVIDIA A100-PCIE-40GB",Hostname="n1"} 101
DCGM_FI_DEV_GPU_UTIL{gpu="5",UUID="GPU-ffff",device="nvidia5",modelName="NVIDIA A100-PCIE-40GB",Hostname="n1"} NaN
"""


def parsed() -> dict[str, GpuSample]:
    return {s.gpu_uuid: s for s in parse_dcgm_text(CASE_009, received_at=T0).samples}


@pytest.mark.parametrize(("uuid", "want_util", "want_label"), [
    ("GPU-aaaa", None, "blank_dcgm_blank"),     # DCGM_INT64_BLANK as an integer
    ("GPU-bbbb", None, "blank_dcgm_blank"),     # the same sentinel as a float (>= 9.2e18)
    ("GPU-cccc", None, "blank_dcgm_blank"),     # DCGM_INT32_BLANK
    ("GPU-dddd", 42.0, "valid"),
    ("GPU-eeee", None, "suspect_out_of_range"),  # 101 %: rejected
    ("GPU-ffff", None, "blank_nan"),
], ids=["int64 sentinel", "float sentinel", "int32 sentinel", "normal", "101 %", "NaN"])
def test_case_009_parsed_values(uuid: str, want_util: float | None, want_label: str) -> None:
    s = parsed()[uuid]
    assert s.utilization_pct == want_util
    assert s.label == want_label


def test_case_009_fp64_blank_memory_is_missing_not_a_number() -> None:
    assert parsed()["GPU-cccc"].memory_used_mib is None


def test_case_009_out_of_range_is_logged_once_and_never_displayed_above_100(caplog: pytest.LogCaptureFixture) -> None:
    validator = SampleValidator()
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.telemetry.validity"):
        for minute in range(5):
            validator.check(parse_dcgm_text(CASE_009, received_at=at(minute)).samples)
    messages = [r.getMessage() for r in caplog.records if "outside 0-100" in r.getMessage()]
    assert messages == ["telemetry: GPU-eeee reported utilization 101.0 %, outside 0-100 %; the reading is "
                        "rejected (shown as suspect, left out of totals)"]
    wire = {s.gpu_uuid: sample_to_dict(s) for s in parsed().values()}
    assert all(w["utilization_pct"] is None or w["utilization_pct"] <= 100 for w in wire.values())
    assert wire["GPU-eeee"]["utilization_pct"] is None and wire["GPU-eeee"]["validity"] == "suspect"
    assert wire["GPU-eeee"]["display"] == "unknown (suspect: 101 % is outside 0-100 %)"


def test_case_009_suspect_and_blank_samples_stay_out_of_totals_and_reports() -> None:
    samples = [s for m in range(3) for s in parse_dcgm_text(CASE_009, received_at=at(m)).samples]
    rows = {r.gpu_uuid: r for r in rollup_minutes(samples)}
    assert rows["GPU-eeee"].utilization_avg is None and rows["GPU-eeee"].suspect_samples == 1
    assert rows["GPU-eeee"].rules == "out_of_range"
    assert rows["GPU-dddd"].utilization_avg == 42.0 and rows["GPU-dddd"].valid_samples == 1
    # The usage report reads rollups: the rejected GPU is simply unknown there, never an error.
    reported = samples_from_rollups([rollup_to_dict(r) for r in rollup_minutes(samples)])
    assert {(s.gpu_uuid, s.utilization_percent) for s in reported} == {("GPU-dddd", 42.0)}
    total = cluster_utilization(parsed().values())
    assert total.utilization_pct == 42.0 / 6 and total.valid == 1 and total.suspect == 1 and total.blank == 4


def test_case_009_a_gpu_with_only_blank_recent_samples_is_unknown_never_idle_or_busy() -> None:
    samples = parsed()
    for uuid in ("GPU-aaaa", "GPU-bbbb", "GPU-cccc", "GPU-ffff"):
        assert telemetry_state(samples[uuid]) == "unknown"
        assert samples[uuid].validity is Validity.BLANK
    assert telemetry_state(samples["GPU-dddd"]) == "busy"
    assert telemetry_state(samples["GPU-eeee"]) == "unknown"


POLICY = IdlePolicy(threshold_pct=5, window_s=60 * 60, warning_s=0, grace_s=0, job_mode=ReclaimMode.STOP)


def blank_between(start: float, end: float) -> object:
    """0 % every minute, but DCGM answers blank between ``start`` and ``end``."""
    def sampler(m: float) -> list[GpuSample]:
        if start <= m < end:
            line = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",Hostname="n1"} 9223372036854775792\n'
            return list(parse_dcgm_text(line, received_at=at(m)).samples)
        return [gpu_sample("GPU-aaaa", at(m), 0.0, process_count=0)]
    return sampler


def test_case_009_blank_samples_pause_the_idle_clock_neither_advancing_nor_resetting_it() -> None:
    job = make_job("j", ["GPU-aaaa"])
    no_blank = run_ladder([job], blank_between(0, 0), POLICY, until=100)  # type: ignore[arg-type]
    assert no_blank.stages("j") == [(60, "warn"), (61, "reclaim")]
    # 30 min idle, 20 min blank, then idle again: the deadline moves by exactly the 20 blank
    # minutes (not reset to 50 + 60 = 110, not reached at 60).
    paused = run_ladder([job], blank_between(30, 50), POLICY, until=120)  # type: ignore[arg-type]
    assert paused.stages("j") == [(80, "warn"), (81, "reclaim")]
    assert paused.of("j", "warn").idle_since == T0


def test_case_009_an_all_blank_gpu_is_never_idle() -> None:
    run = run_ladder([make_job("j", ["GPU-aaaa"])], blank_between(0, 1000), POLICY, until=180)  # type: ignore[arg-type]
    assert run.steps == [] and all(not c for c in run.candidates.values())
