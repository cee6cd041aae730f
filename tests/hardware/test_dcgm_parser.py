"""dcgm-exporter text parsing on every real capture, plus the malformed-input rules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jupyter_sched.errors import TelemetryError
from jupyter_sched.telemetry import DcgmCollector, parse_dcgm_text, parse_nvidia_smi_exporter_text, skew_warnings
from jupyter_sched.telemetry.dcgm import is_blank, parse_counters_csv

from .conftest import PROM_SAMPLES, SMI, TELEMETRY, require

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Want:
    uuid: str
    mig: int | None
    util: float | None
    gr: float | None
    used: float
    total: float
    power: float
    temp: float
    profile: str | None = None


@dataclass(frozen=True)
class PromCase:
    file: str
    devices: int
    host: str
    bad_lines: int
    want: tuple[Want, ...]


A800_GPU0 = "GPU-1f027ee8-6e1e-2b8c-0108-3d370e5f0418"
PROM_CASES = [
    PromCase("a800-mig__535.129.03.prom", devices=10, host="msxf-hpc-64-35-ai", bad_lines=10, want=(
        Want(A800_GPU0, 3, 0.0, 0.0, 10, 19967, 78.174, 33, "2g.20gb"),
        Want(A800_GPU0, 5, 0.0, 0.0, 10, 19967, 78.174, 33, "2g.20gb"),
        Want(A800_GPU0, 6, 0.0, 0.0, 10, 19967, 78.446, 33, "2g.20gb"),
        Want("GPU-9e5b8fec-61bf-5124-a0a9-079af1b65cc6", None, 0.0, 0.0, 2, 81228, 55.942, 27),
        Want("GPU-4e75c9ab-0ed7-8a57-75f5-23761b9f053f", None, 0.0, 0.0, 2, 81228, 55.011, 29),
    )),
    PromCase("l40s-idle__595.58.03.prom", devices=1, host="gpu1-wl8sg", bad_lines=0, want=(
        Want("GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43", None, 0.0, 0.0, 0, 45459 + 0 + 608, 35.686, 32),)),
    PromCase("t4-load__590.48.01.prom", devices=1, host="cp-bm14r7", bad_lines=0, want=(
        Want("GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a", None, 91.0, 0.156205, 5120, 5120 + 9791 + 447, 68.244, 74),)),
    PromCase("l4-idle__580.105.08.prom", devices=1, host="i-030791dc5a37cd257", bad_lines=0, want=(
        Want("GPU-c2f76b33-7953-256e-8f33-1343419b1a1c", None, 0.0, 0.0, 0, 22563 + 0 + 470, 16.365, 31),)),
]


def test_every_prom_capture_has_expectations() -> None:
    files = {p.name for p in require(PROM_SAMPLES).glob("*.prom")}
    assert files == {c.file for c in PROM_CASES}


@pytest.mark.parametrize("case", PROM_CASES, ids=[c.file for c in PROM_CASES])
def test_real_capture_parses_to_exact_values(case: PromCase) -> None:
    scrape = parse_dcgm_text((require(PROM_SAMPLES) / case.file).read_text(), received_at=NOW)
    assert len(scrape.samples) == case.devices
    assert scrape.hosts == (case.host,)
    assert len(scrape.bad_lines) == case.bad_lines
    by_key = {s.key: s for s in scrape.samples}
    for want in case.want:
        got = by_key[(want.uuid, want.mig)]
        assert (got.utilization_pct, got.gr_engine_active) == (want.util, want.gr)
        assert (got.memory_used_mib, got.memory_total_mib) == (want.used, want.total)
        assert (got.power_w, got.temperature_c) == (want.power, want.temp)
        assert got.mig_profile == want.profile
        assert got.timestamp == NOW and got.node == case.host and got.pod == ""


def test_a800_mig_instances_stay_apart_and_use_engine_activity() -> None:
    scrape = parse_dcgm_text((require(PROM_SAMPLES) / "a800-mig__535.129.03.prom").read_text(), received_at=NOW)
    migs = [s for s in scrape.samples if s.gpu_uuid == A800_GPU0]
    assert [s.mig_instance for s in migs] == [3, 5, 6]
    assert all(s.note == "" and s.activity_pct == 0.0 for s in migs)


def test_a800_malformed_value_lines_are_reported_not_fatal() -> None:
    text = (require(PROM_SAMPLES) / "a800-mig__535.129.03.prom").read_text()
    scrape = parse_dcgm_text(text, received_at=NOW)
    lines = text.split("\n")
    assert [b.lineno for b in scrape.bad_lines] == [n for n, line in enumerate(lines, 1) if "FAILED TO CONVERT" in line]
    assert scrape.bad_lines[0].lineno == 210
    assert all(b.text.startswith("DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{") for b in scrape.bad_lines)
    assert "ERROR - FAILED TO CONVERT TO STRING" in scrape.bad_lines[0].error


def test_t4_activity_uses_engine_activity_not_gpu_util() -> None:
    scrape = parse_dcgm_text((require(PROM_SAMPLES) / "t4-load__590.48.01.prom").read_text(), received_at=NOW)
    assert scrape.samples[0].activity_pct == pytest.approx(15.6205)


LINE = ('DCGM_FI_{field}{{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",'
        'Hostname="{host}",container="",namespace="",pod=""{mig}}} {value}\n')


def line(field: str, value: str, host: str = "h1", mig: str = "") -> str:
    return LINE.format(field=field, value=value, host=host, mig=mig)


@dataclass(frozen=True)
class BadCase:
    name: str
    text: str
    message: str


BAD_CASES = [
    BadCase("empty body", "", "empty"),
    BadCase("html error page", "<html><body>502 Bad Gateway</body></html>\n", "not a Prometheus sample"),
    BadCase("cut off in the middle of a line", line("DEV_GPU_UTIL", "3") + 'DCGM_FI_DEV_FB_USED{gpu="0",UUI', "truncated"),
    BadCase("cut off inside the labels but with a line feed", line("DEV_GPU_UTIL", "3") + 'DCGM_FI_DEV_FB_USED{gpu="0",UUI\n',
            "line 2 is not a Prometheus sample"),
    BadCase("only comments", "# HELP DCGM_FI_DEV_GPU_UTIL x\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n", "no DCGM_FI_"),
    BadCase("metrics of another exporter", "node_load1 0.5\n", "no DCGM_FI_"),
]


@pytest.mark.parametrize("case", BAD_CASES, ids=[c.name for c in BAD_CASES])
def test_garbage_and_truncated_text_raise_a_clear_telemetry_error(case: BadCase) -> None:
    with pytest.raises(TelemetryError, match=case.message):
        parse_dcgm_text(case.text, received_at=NOW)


def test_collector_keeps_last_good_samples_when_a_scrape_is_garbage() -> None:
    answers = iter([line("DEV_GPU_UTIL", "42"), "<html>oops", line("DEV_GPU_UTIL", "7")[:40]])
    collector = DcgmCollector(lambda: next(answers))
    first = collector.collect(NOW)
    assert first[0].utilization_pct == 42.0
    for _ in range(2):
        with pytest.raises(TelemetryError):
            collector.collect(NOW + timedelta(seconds=1))
        assert collector.last_good == first and collector.last_error


@pytest.mark.parametrize("value", ["NaN", "+Inf", "9223372036854775794", "2147483632", "140737488355328.000000"],
                         ids=["nan", "infinity", "int64 blank sentinel", "int32 blank sentinel", "fp64 blank sentinel"])
def test_blank_and_sentinel_values_are_missing_not_numbers(value: str) -> None:
    text = line("DEV_GPU_TEMP", value) + line("DEV_GPU_UTIL", "12") + line("DEV_FB_USED", value)
    sample = parse_dcgm_text(text, received_at=NOW).samples[0]
    assert sample.temperature_c is None and sample.memory_used_mib is None
    assert sample.utilization_pct == 12.0
    assert is_blank(float(value))


def test_empty_pod_labels_and_several_hosts() -> None:
    text = (line("DEV_GPU_UTIL", "5", host="node-a")
            + line("DEV_GPU_UTIL", "6", host="node-b").replace("GPU-aaaa", "GPU-bbbb").replace('pod=""', 'pod="nb-0"'))
    scrape = parse_dcgm_text(text, received_at=NOW)
    assert scrape.hosts == ("node-a", "node-b")
    assert [(s.node, s.pod) for s in scrape.samples] == [("node-a", ""), ("node-b", "nb-0")]


def test_future_timestamps_are_clamped_and_large_skew_is_flagged() -> None:
    future_ms = int((NOW + timedelta(seconds=90)).timestamp() * 1000)
    near_ms = int((NOW - timedelta(seconds=5)).timestamp() * 1000)
    text = (line("DEV_GPU_UTIL", f"1 {future_ms}")
            + line("DEV_GPU_UTIL", f"2 {near_ms}").replace("GPU-aaaa", "GPU-bbbb"))
    far, near = parse_dcgm_text(text, received_at=NOW).samples
    assert far.timestamp == NOW and far.skew_s == pytest.approx(90) and far.skewed
    assert near.timestamp == NOW - timedelta(seconds=5) and not near.skewed


def test_case_010_telemetry_from_a_node_clock_ahead_is_clamped_and_the_node_warned() -> None:
    received = datetime(2025, 3, 30, 4, 30, 10, tzinfo=timezone.utc)
    stamped_ms = int(datetime(2025, 3, 30, 4, 35, tzinfo=timezone.utc).timestamp() * 1000)
    (s,) = parse_dcgm_text(line("DEV_GPU_UTIL", f"0 {stamped_ms}", host="gpu-3"), received_at=received).samples
    assert s.timestamp == received and s.skew_s == 290.0 and s.skewed
    assert skew_warnings([s]) == {
        "gpu-3": "node gpu-3 clock is 290 s ahead of the server; its telemetry timestamps were clamped to arrival time"}


@dataclass(frozen=True)
class CounterCase:
    file: str
    enabled: int
    has_engine_activity: bool


COUNTER_CASES = [
    CounterCase("default-counters.csv", 26, True),
    CounterCase("dcp-metrics-included.csv", 26, True),
    CounterCase("1.x-compatibility-metrics.csv", 22, False),
]


def test_every_counter_list_has_expectations() -> None:
    files = {p.name for p in require(TELEMETRY / "dcgm-exporter").glob("*.csv")}
    assert files == {c.file for c in COUNTER_CASES}


@pytest.mark.parametrize("case", COUNTER_CASES, ids=[c.file for c in COUNTER_CASES])
def test_counter_lists_parse(case: CounterCase) -> None:
    fields = parse_counters_csv((require(TELEMETRY / "dcgm-exporter") / case.file).read_text())
    assert len(fields) == case.enabled
    assert any(f.name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" for f in fields) is case.has_engine_activity
    assert all(f.type in ("gauge", "counter", "label") for f in fields)


def test_counter_list_with_a_broken_line_is_rejected() -> None:
    with pytest.raises(TelemetryError, match="line 2"):
        parse_counters_csv("DCGM_FI_DEV_GPU_UTIL, gauge, util\nDCGM_FI_DEV_FB_USED gauge used\n")


def test_nvidia_gpu_exporter_h200_load_metrics() -> None:
    path: Path = require(SMI) / "nvidia_gpu_exporter__h200__load.metrics"
    (sample,) = parse_nvidia_smi_exporter_text(path.read_text(), received_at=NOW)
    assert sample.gpu_uuid == "GPU-00000000-0000-0000-0000-000000000000"
    assert sample.utilization_pct == 100.0
    assert sample.memory_used_mib == 32362.0 and sample.memory_total_mib == 143771.0
    assert (sample.power_w, sample.temperature_c) == (627.4, 52.0)
    assert [(p.pid, p.used_memory_mib, p.name) for p in sample.processes] == [
        (10291, 2566, "/root/tools/memhog"), (10293, 1542, "/root/tools/memhog"), (10309, 28234, "./gpu_burn")]


def test_nvidia_gpu_exporter_garbage_is_a_telemetry_error() -> None:
    with pytest.raises(TelemetryError):
        parse_nvidia_smi_exporter_text("nvidia_smi_index{uuid=\"x\"} not-a-number\n", received_at=NOW)


def test_a_file_url_is_read_at_each_collection(tmp_path: Path) -> None:
    from jupyter_sched.telemetry import http_text_fetcher

    metrics = tmp_path / "metrics.prom"
    fetch = http_text_fetcher(f"file://{metrics}")
    with pytest.raises(TelemetryError, match="cannot read telemetry file"):
        fetch()
    metrics.write_text('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-f"} 9223372036854775792\n')
    (sample,) = DcgmCollector(fetch).collect(datetime(2026, 3, 2, tzinfo=timezone.utc))
    assert sample.label == "blank_dcgm_blank"
