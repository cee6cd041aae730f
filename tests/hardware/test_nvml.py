"""NVML inventory and collector against a fake NVML library built from real nvidia-smi captures.

A real GPU (and libnvidia-ml.so.1) is unavailable on this machine, so the tests inject
``FakeNvml`` (tests/hardware/fake_nvml.py), which obeys NVML semantics with pynvml's own
exception classes. Production code receives the module as a parameter; nothing is patched.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import pynvml
import pytest

from jupyter_sched.errors import TelemetryError
from jupyter_sched.inventory import NvmlInventory, SimulatedInventory, default_inventory_source, parse_topology
from jupyter_sched.model import Health
from jupyter_sched.model.codec import inventory_to_dict
from jupyter_sched.telemetry import NvmlCollector

from .conftest import SMI, require
from .fake_nvml import FakeNvml
from .test_smi_parsers import NODE_B

NOW = datetime(2026, 7, 3, 22, 11, tzinfo=timezone.utc)
H200 = "linux-x86_64__nvidia-h200__590.48.01.txt"
H100_MIG = "linux-x86_64__nvidia-h100-mig__590.48.01.txt"
L40S = "linux-x86_64__nvidia-l40s__595.80.txt"


def fake(file: str, state: str = "load", **kwargs: Any) -> FakeNvml:
    return FakeNvml.from_capture(require(SMI) / file, state=state, **kwargs)


# ---- inventory --------------------------------------------------------------------------------
@pytest.mark.parametrize("file,model,memory,bus,driver", [
    (H200, "NVIDIA H200", 143771, "00000000:83:00.0", "590.48.01"),
    (H100_MIG, "NVIDIA H100 80GB HBM3", 81559, "00000000:00:09.0", "590.48.01"),
    (L40S, "NVIDIA L40S", 46068, "00000000:01:00.0", "595.80"),
], ids=["H200", "H100 MIG", "L40S"])
def test_nvml_inventory_reads_each_captured_host(file: str, model: str, memory: int, bus: str, driver: str) -> None:
    inventory = NvmlInventory(fake(file, "idle"), node="gpu-host").current()
    assert inventory.source == "nvml" and inventory.nvml is not None
    assert (inventory.nvml.available, inventory.nvml.device_count, inventory.nvml.driver_version) == (True, 1, driver)
    (gpu,) = inventory.gpus()
    assert (gpu.uuid, gpu.index, gpu.node) == ("GPU-00000000-0000-0000-0000-000000000000", 0, "gpu-host")
    assert (gpu.model, gpu.memory_mib, gpu.pci_bus_id) == (model, memory, bus)
    assert gpu.healthy and not gpu.simulated and gpu.foreign_memory_mib == 0


def test_nvml_inventory_lists_mig_devices_of_the_h100() -> None:
    (gpu,) = NvmlInventory(fake(H100_MIG)).current().gpus()
    assert gpu.mig_enabled
    assert [(m.uuid, m.profile, m.gpu_instance_id, m.memory_mib) for m in gpu.mig_devices] == [
        ("MIG-00000000-0000-0000-0000-000000000000", "3g.40gb", 2, 40448),
        ("MIG-00000001-0000-0000-0000-000000000001", "2g.20gb", 3, 20096),
        ("MIG-00000002-0000-0000-0000-000000000002", "1g.10gb", 9, 9984),
        ("MIG-00000003-0000-0000-0000-000000000003", "1g.10gb", 10, 9984)]


@pytest.mark.parametrize("file,ours,foreign", [
    (H200, set(), 2566 + 1542 + 28234),
    (H200, {10309}, 2566 + 1542),
    (H200, {10291, 10293, 10309}, 0),
    (L40S, {20037}, 681),
    (H100_MIG, {21180, 21181, 21198}, 0),
], ids=["H200: nobody is ours", "H200: gpu_burn is ours, memhogs are foreign", "H200: all ours",
        "L40S: one ffmpeg foreign", "H100 MIG: all ours"])
def test_nvml_inventory_foreign_memory_counts_processes_we_did_not_start(file: str, ours: set[int],
                                                                         foreign: int) -> None:
    source = NvmlInventory(fake(file), our_pids=lambda: ours)
    (gpu,) = source.current().gpus()
    assert gpu.foreign_memory_mib == foreign
    assert set(source.foreign_pids[gpu.uuid]) == {pid for pid, *_ in fake(file).devices[0].processes} - ours


def test_nvml_inventory_nvlink_peers_come_from_remote_pci_ids() -> None:
    topo = parse_topology(NODE_B)
    template = fake(H200).devices[0]
    nvml = FakeNvml.from_topology(template, {pair: topo.nvlink_count(*pair) for pair in topo.nvlink_pairs}, 8)
    gpus = list(NvmlInventory(nvml).current().gpus())
    assert [g.nvlink_peers for g in gpus] == [(2,), (3,), (0,), (1,), (5,), (4,), (7,), (6,)]


def test_nvml_inventory_ignores_links_to_nvswitch_ports() -> None:
    (gpu,) = NvmlInventory(fake(H200)).current().gpus()
    assert gpu.nvlink_peers == ()


def test_a_lost_gpu_is_marked_unhealthy_and_the_others_stay() -> None:
    nvml = FakeNvml.from_topology(fake(L40S).devices[0], {}, 2)
    nvml.devices[1].lost = True
    healthy, lost = NvmlInventory(nvml).current().gpus()
    assert healthy.healthy
    assert lost.health is Health.UNHEALTHY and lost.index == 1
    assert lost.health_reason == "NVML error on GPU 1: GPU is lost"


# ---- case 015 ---------------------------------------------------------------------------------
HOSTS = [
    ("cpu-node", dict(init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND), "NVML shared library not found (libnvidia-ml.so.1)"),
    ("old-driver", dict(missing_symbols=frozenset({"nvmlInitWithFlags"})),
     "NVML too old: nvmlInitWithFlags missing, driver upgrade needed"),
    ("driver-no-gpu", dict(devices=[]), "NVML ok, 0 devices"),
    ("driver-not-loaded", dict(init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED), "NVIDIA driver not loaded"),
]


def host(kind: dict[str, Any]) -> FakeNvml:
    devices = kind.pop("devices", None)
    nvml = fake(L40S, **kind)
    if devices is not None:
        nvml.devices = []
    return nvml


@pytest.mark.parametrize("kind,error", [(k, e) for _, k, e in HOSTS], ids=[h for h, _, _ in HOSTS])
def test_case_015_nvml_missing_provider_reports_no_gpus_with_one_warning(
        kind: dict[str, object], error: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="jupyter_sched.inventory")
    source, status = default_inventory_source(nvml=host(dict(kind)), simulated_gpus=0, node="cpu-box")
    assert status is not None and (status.available, status.error) == (False, error)
    body = inventory_to_dict(source.current())
    assert body["gpus"] == [] and body["nvml"]["available"] is False and body["nvml"]["error"] == error
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and error in warnings[0].getMessage()
    assert all(r.exc_info is None for r in caplog.records)


@pytest.mark.parametrize("kind,error", [(k, e) for _, k, e in HOSTS], ids=[h for h, _, _ in HOSTS])
def test_case_015_nvml_missing_falls_back_to_labelled_simulated_gpus(kind: dict[str, object], error: str) -> None:
    source, status = default_inventory_source(nvml=host(dict(kind)), node="cpu-box")
    assert isinstance(source, SimulatedInventory)
    inventory = source.current()
    assert inventory.source == "simulated" and inventory.simulated and inventory.nvml == status
    assert [g.uuid for g in inventory.gpus()] == [f"GPU-sim-cpu-box-{i}" for i in range(4)]
    assert inventory_to_dict(inventory)["nvml"]["error"] == error


def test_case_015_nvml_present_is_used() -> None:
    source, status = default_inventory_source(nvml=fake(H200))
    assert isinstance(source, NvmlInventory) and status is not None and status.available


def test_case_015_nvml_init_that_hangs_does_not_hang_the_server() -> None:
    release = threading.Event()

    class Wedged(FakeNvml):
        def nvmlInitWithFlags(self, flags: int) -> None:
            release.wait(30)

    source = NvmlInventory(Wedged([]), init_timeout_s=0.2)
    try:
        status = source.probe()
        again = source.current()
    finally:
        release.set()
    assert status.error == "NVML did not answer within 0.2 s (driver hung?)"
    assert again.nvml == status and again.nodes == ()
    assert sum(t.name == "nvml-init" for t in threading.enumerate()) <= 1


def test_device_calls_before_init_raise_uninitialized_like_real_nvml() -> None:
    nvml = fake(H200)
    with pytest.raises(pynvml.NVMLError_Uninitialized):
        nvml.nvmlDeviceGetCount()


# ---- collector --------------------------------------------------------------------------------
@pytest.mark.parametrize("file,state,util,used,total,power,temp", [
    (H200, "idle", 0.0, 0.0, 143771.0, 77.71, 28.0),
    (H200, "load", 100.0, 32362.0, 143771.0, 627.4, 52.0),
    (L40S, "idle", 100.0, 0.0, 46068.0, 144.97, 63.0),
    (L40S, "load", 9.0, 1235.0, 46068.0, 110.23, 54.0),
], ids=["H200 idle", "H200 load", "L40S idle (the capture really says 100 %)", "L40S load"])
def test_nvml_collector_device_samples(file: str, state: str, util: float, used: float, total: float,
                                       power: float, temp: float) -> None:
    (sample,) = NvmlCollector(fake(file, state), node="n").collect(NOW)
    assert (sample.gpu_uuid, sample.mig_instance, sample.timestamp) == ("GPU-00000000-0000-0000-0000-000000000000", None, NOW)
    assert (sample.utilization_pct, sample.memory_used_mib, sample.memory_total_mib) == (util, used, total)
    assert (sample.power_w, sample.temperature_c) == (power, temp)


def test_nvml_collector_per_process_memory_and_utilization() -> None:
    (sample,) = NvmlCollector(fake(H200)).collect(NOW)
    assert [(p.pid, p.used_memory_mib, p.sm_util_pct) for p in sample.processes] == [
        (10291, 2566, 19.0), (10293, 1542, None), (10309, 28234, 99.0)]


def test_nvml_collector_mig_instances_have_unknown_utilization_and_their_processes() -> None:
    parent, *migs = NvmlCollector(fake(H100_MIG)).collect(NOW)
    assert parent.utilization_pct is None and parent.memory_used_mib == 11125.0
    assert [(m.mig_instance, m.mig_profile, m.memory_used_mib, m.memory_total_mib) for m in migs] == [
        (2, "3g.40gb", 11091.0, 40448.0), (3, "2g.20gb", 17.0, 20096.0), (9, "1g.10gb", 9.0, 9984.0),
        (10, "1g.10gb", 9.0, 9984.0)]
    assert all(m.utilization_pct is None and m.activity_pct is None for m in migs)
    assert migs[0].note == "no utilization signal for MIG device (profiling metrics unavailable)"
    assert [p.pid for p in migs[0].processes] == [21180, 21181, 21198] and migs[1].processes == ()


def test_nvml_collector_skips_a_lost_gpu_and_reports_it() -> None:
    nvml = FakeNvml.from_topology(fake(L40S).devices[0], {}, 2)
    nvml.devices[0].lost = True
    collector = NvmlCollector(nvml)
    (sample,) = collector.collect(NOW)
    assert sample.gpu_uuid == nvml.devices[1].uuid
    assert collector.errors == {0: "NVML error on GPU 0: GPU is lost"}


def test_nvml_collector_without_nvml_raises_telemetry_error() -> None:
    with pytest.raises(TelemetryError, match="NVML shared library not found"):
        NvmlCollector(fake(L40S, init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)).collect(NOW)


@pytest.mark.gpu
def test_real_nvml_when_a_gpu_is_present() -> None:
    status = NvmlInventory().probe()
    if not status.available:
        pytest.skip(f"no real GPU here: {status.error}")
    samples = NvmlCollector().collect(datetime.now(timezone.utc))
    assert samples and all(s.memory_total_mib for s in samples)




def test_case_016_inventory_index_is_nvml_pci_order_and_every_gpu_has_its_uuid() -> None:
    """Mixed-model host of case 016: the executor pins by UUID, so the inventory must carry the
    UUID and PCI id of every NVML index (NVML enumerates in PCI bus order)."""
    rows = [("0000:01:00.0", "GeForce RTX 3090", "GPU-3090-a"), ("0000:21:00.0", "GeForce RTX 3090", "GPU-3090-b"),
            ("0000:41:00.0", "TITAN RTX", "GPU-titan-a"), ("0000:61:00.0", "Quadro GV100", "GPU-gv100"),
            ("0000:81:00.0", "RTX A6000", "GPU-a6000-a"), ("0000:a1:00.0", "TITAN RTX", "GPU-titan-b"),
            ("0000:c1:00.0", "RTX A6000", "GPU-a6000-b")]
    template = fake(L40S).devices[0]
    nvml = FakeNvml([replace(template, bus_id=bus, name=name, uuid=uuid, processes=[], process_sm={})
                     for bus, name, uuid in rows])
    gpus = list(NvmlInventory(nvml).current().gpus())
    assert [(g.index, g.pci_bus_id, g.model, g.uuid) for g in gpus] == [
        (i, "0000" + bus.upper(), name, uuid) for i, (bus, name, uuid) in enumerate(rows)]
    assert gpus[1].uuid == "GPU-3090-b"


def test_descendants_of_our_processes_are_ours_not_foreign() -> None:
    import subprocess
    import time

    import psutil

    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 30; true"])
    try:
        deadline = time.monotonic() + 10
        while not psutil.Process(shell.pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        (child,) = psutil.Process(shell.pid).children()
        nvml = fake(L40S)
        nvml.devices[0].processes = [(child.pid, 1000.0, None)]
        nvml.devices[0].used_mib = 1000.0
        source = NvmlInventory(nvml, our_pids=lambda: {shell.pid})
        (gpu,) = source.current().gpus()
        assert gpu.foreign_memory_mib == 0 and source.foreign_pids[gpu.uuid] == ()
        (stranger,) = NvmlInventory(nvml).current().gpus()
        assert stranger.foreign_memory_mib == 1000
    finally:
        shell.kill()
        shell.wait()
