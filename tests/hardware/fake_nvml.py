"""A fake NVML *library* for tests: a real GPU and NVML are unavailable on this machine.

It is not a mock of our code: it stands in for ``pynvml`` at the library boundary and obeys
NVML semantics as ``nvidia-ml-py`` exposes them —

- the same function names and the *real* ``pynvml`` exception classes (``NVMLError`` with
  ``.value`` codes; ``pynvml.NVMLError(12)`` is an ``NVMLError_LibraryNotFound``);
- ``nvmlInit`` goes through ``nvmlInitWithFlags`` (an old driver without that symbol raises
  ``NVMLError_FunctionNotFound``, as pynvml does); every device call before init raises
  ``NVMLError_Uninitialized``;
- opaque handles; memory info objects with ``.total/.used/.free`` in **bytes**; power in **mW**;
  ``busId`` as bytes; strings returned as ``str``;
- ``nvmlDeviceGetUtilizationRates`` raises ``NotSupported`` on a GPU in MIG mode and on MIG
  devices; NVLink queries raise ``NotSupported`` in MIG mode and on GPUs without NVLink;
  ``nvmlDeviceGetProcessUtilization`` raises ``NotFound`` when no process ran since the timestamp.

Devices are built from the real ``nvidia-smi`` captures in ``shared/data/telemetry/nvidia-smi``
(H200, H100 with MIG, L40S; idle or load) via :meth:`FakeNvml.from_capture`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml

from jupyter_sched.inventory.smi import (
    capture_sections,
    parse_compute_apps_csv,
    parse_gpu_list,
    parse_mig_table,
    parse_query_gpu_csv,
    smi_number,
)

MIB = 1024 * 1024


@dataclass
class FakeMig:
    uuid: str
    profile: str
    gpu_instance_id: int
    total_mib: float
    used_mib: float


@dataclass
class FakeDevice:
    uuid: str
    name: str
    bus_id: str
    total_mib: float
    used_mib: float
    util_gpu: float | None = None
    util_mem: float | None = None
    power_w: float | None = None
    temperature_c: float | None = None
    mig_enabled: bool = False
    mig_supported: bool = True
    migs: list[FakeMig] = field(default_factory=list)
    processes: list[tuple[int, float | None, int | None]] = field(default_factory=list)  # pid, MiB, GI id
    process_sm: dict[int, int] = field(default_factory=dict)
    nvlinks: list[str] = field(default_factory=list)  # remote PCI bus id per active link
    nvlink_supported: bool = True
    lost: bool = False


@dataclass(frozen=True)
class _Handle:
    device: int
    mig: int | None = None


def _pmon_last_sm(text: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].isdigit() and parts[1].isdigit():
            if parts[3].isdigit():
                out[int(parts[1])] = int(parts[3])
    return out


class FakeNvml:
    """A stand-in for the ``pynvml`` module over a list of :class:`FakeDevice`.

    Args:
        devices: the GPUs, in NVML index order.
        init_error: NVML return code ``nvmlInit`` fails with (12 library not found, 9 driver not
            loaded); None = init succeeds.
        missing_symbols: library functions absent from the driver (e.g. ``{"nvmlInitWithFlags"}``).
        driver_version: what ``nvmlSystemGetDriverVersion`` answers.
    """

    def __init__(self, devices: list[FakeDevice], *, init_error: int | None = None,
                 missing_symbols: frozenset[str] = frozenset(), driver_version: str = "590.48.01") -> None:
        self.devices = devices
        self.init_error = init_error
        self.missing_symbols = missing_symbols
        self.driver_version = driver_version
        self.refcount = 0
        self.calls: list[str] = []
        for name in dir(pynvml):
            if name.startswith(("NVMLError", "NVML_")):
                setattr(self, name, getattr(pynvml, name))

    # ---- construction from captures -------------------------------------------------------
    @classmethod
    def from_capture(cls, path: Path, *, state: str = "load", **kwargs: Any) -> FakeNvml:
        """Build the single-GPU host of an nvidia_gpu_exporter capture in ``state`` (idle/load)."""
        sections = capture_sections(path.read_text(encoding="utf-8"))
        row = parse_query_gpu_csv(sections[f"{state} :: query-gpu (csv, what the exporter parses)"])[0]
        apps = parse_compute_apps_csv(sections[f"{state} :: query-compute-apps (per-process)"])
        _, migs = parse_gpu_list(sections["capabilities :: list (-L)"])
        migs = parse_mig_table(sections[f"{state} :: nvidia-smi (default table)"], migs)
        nvlink_text = sections["capabilities :: nvlink -s"]
        active = len(re.findall(r"Link \d+: [\d.]+ GB/s", nvlink_text))
        version = re.search(r"DRIVER version\s*:\s*(\S+)", sections["capabilities :: version"])
        table = sections[f"{state} :: nvidia-smi (default table)"]
        gi_of_pid = {int(m.group(2)): int(m.group(1))
                     for m in re.finditer(r"^\|\s+\d+\s+(\d+)\s+\d+\s+(\d+)\s+C", table, re.M)}
        device = FakeDevice(
            uuid=row.uuid, name=row.name, bus_id=row.pci_bus_id, total_mib=row.memory_total_mib or 0,
            used_mib=row.memory_used_mib or 0, util_gpu=row.utilization_pct,
            util_mem=smi_number(row.raw.get("utilization.memory")),
            mig_supported=row.raw.get("mig.mode.current", "[N/A]") in ("Enabled", "Disabled"),
            power_w=row.power_w, temperature_c=row.temperature_c, mig_enabled=row.mig_enabled,
            migs=[FakeMig(m.uuid, m.profile, m.gpu_instance_id or 0, m.memory_total_mib or 0, m.memory_used_mib or 0)
                  for m in migs],
            processes=[(p.pid, p.used_memory_mib, gi_of_pid.get(p.pid)) for p in apps],
            process_sm=_pmon_last_sm(sections[f"{state} :: pmon (per-process monitor)"]),
            # Remote ends of a single-GPU capture's links are NVSwitch ports, not local GPUs.
            nvlinks=[f"00000000:{0xE0 + k:02X}:00.0" for k in range(active)],
            nvlink_supported="not supported" not in nvlink_text.lower() and "not have or support" not in nvlink_text.lower())
        kwargs.setdefault("driver_version", version.group(1) if version else "unknown")
        return cls([device], **kwargs)

    @classmethod
    def from_topology(cls, template: FakeDevice, nvlink_pairs: dict[tuple[int, int], int], count: int) -> FakeNvml:
        """``count`` copies of ``template`` on one node, NVLink-bonded per ``{(i, j): links}``."""
        devices = []
        for i in range(count):
            devices.append(replace(template, uuid=f"GPU-{i:08x}-0000-0000-0000-00000000000{i % 10}",
                                   bus_id=f"00000000:{0x10 + 0x10 * i:02X}:00.0", processes=[], migs=[],
                                   mig_enabled=False, nvlinks=[], process_sm={}))
        for (i, j), links in nvlink_pairs.items():
            devices[i].nvlinks += [devices[j].bus_id] * links
            devices[j].nvlinks += [devices[i].bus_id] * links
        return cls(devices)

    # ---- NVML semantics -------------------------------------------------------------------
    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name in self.missing_symbols:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        if name not in ("nvmlInitWithFlags",) and self.refcount == 0:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_UNINITIALIZED)

    def _device(self, handle: _Handle) -> FakeDevice:
        if not isinstance(handle, _Handle) or handle.device >= len(self.devices):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        device = self.devices[handle.device]
        if device.lost:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)
        return device

    def _mig(self, handle: _Handle) -> FakeMig | None:
        return None if handle.mig is None else self._device(handle).migs[handle.mig]

    def nvmlInitWithFlags(self, flags: int) -> None:
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)
        self._call("nvmlInitWithFlags")
        self.refcount += 1

    def nvmlInit(self) -> None:
        self.nvmlInitWithFlags(0)

    def nvmlShutdown(self) -> None:
        self._call("nvmlShutdown")
        self.refcount -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        self._call("nvmlSystemGetDriverVersion")
        return self.driver_version

    def nvmlDeviceGetCount(self) -> int:
        self._call("nvmlDeviceGetCount")
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> _Handle:
        self._call("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.devices):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return _Handle(index)

    def nvmlDeviceGetUUID(self, handle: _Handle) -> str:
        self._call("nvmlDeviceGetUUID")
        mig = self._mig(handle)
        return mig.uuid if mig else self._device(handle).uuid

    def nvmlDeviceGetName(self, handle: _Handle) -> str:
        self._call("nvmlDeviceGetName")
        mig = self._mig(handle)
        device = self._device(handle)
        return f"{device.name} MIG {mig.profile}" if mig else device.name

    def nvmlDeviceGetPciInfo(self, handle: _Handle) -> Any:
        self._call("nvmlDeviceGetPciInfo")
        return SimpleNamespace(busId=self._device(handle).bus_id.encode())

    def nvmlDeviceGetMemoryInfo(self, handle: _Handle, version: int | None = None) -> Any:
        self._call("nvmlDeviceGetMemoryInfo")
        mig = self._mig(handle)
        total, used = (mig.total_mib, mig.used_mib) if mig else (self._device(handle).total_mib, self._device(handle).used_mib)
        return SimpleNamespace(total=int(total * MIB), used=int(used * MIB), free=int((total - used) * MIB))

    def nvmlDeviceGetMigMode(self, handle: _Handle) -> list[int]:
        self._call("nvmlDeviceGetMigMode")
        device = self._device(handle)
        if not device.mig_supported:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        mode = 1 if device.mig_enabled else 0
        return [mode, mode]

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: _Handle) -> int:
        self._call("nvmlDeviceGetMaxMigDeviceCount")
        self._device(handle)
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: _Handle, index: int) -> _Handle:
        self._call("nvmlDeviceGetMigDeviceHandleByIndex")
        device = self._device(handle)
        if not device.mig_enabled:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        if index >= len(device.migs):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return _Handle(handle.device, index)

    def nvmlDeviceGetGpuInstanceId(self, handle: _Handle) -> int:
        self._call("nvmlDeviceGetGpuInstanceId")
        mig = self._mig(handle)
        if mig is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return mig.gpu_instance_id

    def nvmlDeviceGetNvLinkState(self, handle: _Handle, link: int) -> int:
        self._call("nvmlDeviceGetNvLinkState")
        device = self._device(handle)
        if device.mig_enabled or not device.nvlink_supported or not device.nvlinks:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if link >= 18:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return 1 if link < len(device.nvlinks) else 0

    def nvmlDeviceGetNvLinkRemotePciInfo(self, handle: _Handle, link: int) -> Any:
        self._call("nvmlDeviceGetNvLinkRemotePciInfo")
        device = self._device(handle)
        if link >= len(device.nvlinks):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return SimpleNamespace(busId=device.nvlinks[link].encode())

    def nvmlDeviceGetComputeRunningProcesses(self, handle: _Handle) -> list[Any]:
        self._call("nvmlDeviceGetComputeRunningProcesses")
        device = self._device(handle)
        return [SimpleNamespace(pid=pid, usedGpuMemory=None if mib is None else int(mib * MIB),
                                gpuInstanceId=0xFFFFFFFF if gi is None else gi, computeInstanceId=0xFFFFFFFF if gi is None else 0)
                for pid, mib, gi in device.processes]

    def nvmlDeviceGetProcessUtilization(self, handle: _Handle, timestamp: int) -> list[Any]:
        self._call("nvmlDeviceGetProcessUtilization")
        device = self._device(handle)
        if device.mig_enabled:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if not device.process_sm:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return [SimpleNamespace(pid=pid, timeStamp=timestamp + 1, smUtil=sm, memUtil=0, encUtil=0, decUtil=0)
                for pid, sm in device.process_sm.items()]

    def nvmlDeviceGetUtilizationRates(self, handle: _Handle) -> Any:
        self._call("nvmlDeviceGetUtilizationRates")
        device = self._device(handle)
        if handle.mig is not None or device.mig_enabled or device.util_gpu is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return SimpleNamespace(gpu=int(device.util_gpu), memory=int(device.util_mem or 0))

    def nvmlDeviceGetPowerUsage(self, handle: _Handle) -> int:
        self._call("nvmlDeviceGetPowerUsage")
        device = self._device(handle)
        if device.power_w is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return round(device.power_w * 1000)

    def nvmlDeviceGetTemperature(self, handle: _Handle, sensor: int) -> int:
        self._call("nvmlDeviceGetTemperature")
        device = self._device(handle)
        if device.temperature_c is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return int(device.temperature_c)
