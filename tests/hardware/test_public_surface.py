"""The public names of the hardware packages are pinned (STYLE §11): changing them is deliberate."""

from __future__ import annotations

import importlib

import pytest

SURFACE = {
    "jupyter_sched.inventory": [
        "DEFAULT_FOREIGN_THRESHOLD_MIB", "InventorySource", "NvmlInventory", "SimulatedInventory", "StaticInventory",
        "Topology", "default_inventory_source", "describe_nvml_error", "foreign_memory_mib", "gpus_from_smi",
        "inventory_from_mapping", "parse_compute_apps_csv", "parse_gpu_list", "parse_query_gpu_csv", "parse_topology",
        "simulated_uuid"],
    "jupyter_sched.telemetry": [
        "CLOCK_SKEW_LIMIT_S", "UNKNOWN_MIG_UTILIZATION", "BadLine", "Collector", "DcgmCollector", "DcgmScrape",
        "GpuSample", "NvmlCollector", "ProcessUsage", "PrometheusCollector", "RingBuffer", "RollupRow", "SampleStore",
        "SimulatedCollector", "foreign_report_to_dict", "http_text_fetcher", "idle_input", "normalize_timestamp",
        "parse_dcgm_text", "parse_nvidia_smi_exporter_text", "rollup_minutes", "rollup_to_dict", "sample_to_dict",
        "skew_warnings"],
    "jupyter_sched.reclaim": [
        "ForeignGpuReport", "ForeignProcess", "IdleArbiter", "IdleCandidate", "IdleInput", "IdlePolicies", "IdlePolicy",
        "IdleVerdict", "KernelActivity", "LadderState", "Occupancy", "ReclaimMode", "advance_ladder", "blocked_text",
        "default_idle_arbiter", "device_keys", "evaluate_idle", "extend_keepalive", "foreign_gpu_reports",
        "gpu_occupancy", "idle_candidates", "idle_policies_from_dict", "idle_policies_from_settings",
        "idle_policies_to_dict", "idle_policy_from_dict", "idle_policy_to_dict", "idle_state_text", "judge_running",
        "ladder_step", "ladder_times", "limit_text", "longest_idle_window_s", "window_evidence"],
}


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_exported_members(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(SURFACE[module])
    assert all(hasattr(mod, name) for name in mod.__all__)


def test_collectors_and_sources_satisfy_their_protocols() -> None:
    from jupyter_sched.inventory import InventorySource, SimulatedInventory
    from jupyter_sched.telemetry import Collector, DcgmCollector, SimulatedCollector

    assert isinstance(SimulatedInventory(1), InventorySource)
    assert isinstance(DcgmCollector(lambda: ""), Collector)
    assert isinstance(SimulatedCollector(list), Collector)
