"""This host's GPUs through NVML (``nvidia-ml-py``, import name ``pynvml``).

The NVML module is a constructor parameter (default: ``pynvml``) so that tests run against a fake
library that obeys NVML semantics; production passes nothing.

Never crash, never hang (case 015): initialisation runs in a helper thread bounded by
``init_timeout_s``; its failure becomes an :class:`~jupyter_sched.model.NvmlStatus` with one
sentence, and an error on one GPU (e.g. ``NVMLError_GpuIsLost`` after an Xid 79) marks that GPU
unhealthy instead of failing the inventory.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Any

import psutil

from ..model import GPU, Health, Inventory, MigDevice, Node, NvmlStatus
from ..reclaim.foreign import ForeignProcess
from .smi import DEFAULT_FOREIGN_THRESHOLD_MIB, foreign_memory_mib

__all__ = ["NvmlInventory", "describe_nvml_error", "load_pynvml", "normalize_bus_id"]

_MIB = 1024 * 1024
_MIG_PROFILE = re.compile(r"MIG (\S+)\s*$")

# NVML return codes (nvml.h); the pynvml exception subclasses carry them as ``.value``.
_LIBRARY_NOT_FOUND = 12
_FUNCTION_NOT_FOUND = 13
_DRIVER_NOT_LOADED = 9
_NOT_FOUND = 6

NO_DEVICES = "NVML ok, 0 devices"


def load_pynvml() -> ModuleType:
    """Import and return the real ``pynvml`` module (its import never fails; ``nvmlInit`` does)."""
    import pynvml

    module: ModuleType = pynvml
    return module


def describe_nvml_error(exc: BaseException, *, during_init: bool = True) -> str:
    """One sentence for an NVML failure (the texts case 015 expects).

    ``NVMLError_LibraryNotFound`` → ``NVML shared library not found (libnvidia-ml.so.1)``;
    ``NVMLError_FunctionNotFound`` during init (pynvml's ``nvmlInit`` calls ``nvmlInitWithFlags``)
    → ``NVML too old: nvmlInitWithFlags missing, driver upgrade needed``;
    ``NVMLError_DriverNotLoaded`` → ``NVIDIA driver not loaded``; others → ``NVML error: <text>``.
    """
    code = getattr(exc, "value", None)
    if code == _LIBRARY_NOT_FOUND:
        return "NVML shared library not found (libnvidia-ml.so.1)"
    if code == _FUNCTION_NOT_FOUND and during_init:
        return "NVML too old: nvmlInitWithFlags missing, driver upgrade needed"
    if code == _DRIVER_NOT_LOADED:
        return "NVIDIA driver not loaded"
    return f"NVML error: {exc}"


def normalize_bus_id(bus_id: str | bytes) -> str:
    """``b"00000000:83:00.0"`` or ``"0000:83:00.0"`` → ``"00000000:83:00.0"`` (upper-case hex,
    8-digit domain), so NVLink remote PCI ids match device PCI ids."""
    text = _text(bus_id).strip().upper()
    domain, _, rest = text.partition(":")
    return f"{domain.zfill(8)}:{rest}" if rest else text


def _descends_from(pid: int, ours: frozenset[int]) -> bool:
    """True when an ancestor of ``pid`` is one of ``ours`` (a job's python under its shell, a
    DataLoader worker under a kernel). Unknown pids (gone, another PID namespace) are not ours."""
    if not ours:
        return False
    try:
        return any(parent.pid in ours for parent in psutil.Process(pid).parents())
    except psutil.Error:
        return False


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class NvmlInventory:
    """Inventory source over NVML.

    Args:
        nvml: the NVML module (default: real ``pynvml``, imported lazily).
        node: node name (default: this host's name).
        our_pids: returns the pids the scheduler started (job process-group leaders, lease
            kernels); their descendants count as ours too (looked up with psutil). Memory of any
            other process counts as foreign (case 014).
        foreign_threshold_mib: unexplained used memory tolerated before it counts as foreign.
        init_timeout_s: seconds to wait for ``nvmlInit`` before giving up (a wedged driver).

    ``status`` holds the last :class:`NvmlStatus`. Not thread-safe; call from one thread.
    """

    def __init__(self, nvml: Any = None, *, node: str | None = None,
                 our_pids: Callable[[], Collection[int]] = frozenset,
                 foreign_threshold_mib: int = DEFAULT_FOREIGN_THRESHOLD_MIB, init_timeout_s: float = 10.0) -> None:
        self._nvml = nvml
        self._node = node or socket.gethostname()
        self._our_pids = our_pids
        self._threshold = foreign_threshold_mib
        self._timeout = init_timeout_s
        self._initialised = False
        self._init_thread: threading.Thread | None = None
        self.status = NvmlStatus(available=False, error="NVML not probed yet")
        self.foreign_pids: dict[str, tuple[int, ...]] = {}
        self.foreign_processes: dict[str, tuple[ForeignProcess, ...]] = {}
        """``{gpu uuid: processes}`` not started by the scheduler, with memory, age and user (case 025)."""

    @property
    def node(self) -> str:
        """Node name GPUs are reported under."""
        return self._node

    def probe(self) -> NvmlStatus:
        """Initialise NVML (once) and count devices; never raises.

        Returns:
            ``NvmlStatus(available=True, device_count>0, driver_version)`` when usable; else
            ``available=False`` with the one-sentence ``error`` (``"NVML ok, 0 devices"`` when
            the driver answers but has no GPU — nothing to schedule on, as case 015 expects).
        """
        if self._nvml is None:
            self._nvml = load_pynvml()
        nvml = self._nvml
        if self._init_thread is not None and self._init_thread.is_alive():
            return self.status  # a previous init is still wedged: never start a second one
        if not self._initialised:
            outcome: list[BaseException | None] = []

            def init() -> None:
                try:
                    nvml.nvmlInit()
                    outcome.append(None)
                except BaseException as exc:  # reported as status, never raised
                    outcome.append(exc)

            worker = threading.Thread(target=init, name="nvml-init", daemon=True)
            worker.start()
            worker.join(self._timeout)
            self._init_thread = worker
            if not outcome:
                self.status = NvmlStatus(available=False,
                                         error=f"NVML did not answer within {self._timeout:g} s (driver hung?)")
                return self.status
            if outcome[0] is not None:
                self.status = NvmlStatus(available=False, error=describe_nvml_error(outcome[0]))
                return self.status
            self._initialised = True
        try:
            count = int(nvml.nvmlDeviceGetCount())
            driver = _text(nvml.nvmlSystemGetDriverVersion())
        except nvml.NVMLError as exc:
            self.status = NvmlStatus(available=False, error=describe_nvml_error(exc, during_init=False))
            return self.status
        if count == 0:
            self.status = NvmlStatus(available=False, error=NO_DEVICES, device_count=0, driver_version=driver)
        else:
            self.status = NvmlStatus(available=True, device_count=count, driver_version=driver)
        return self.status

    def close(self) -> None:
        """Shut NVML down if this object initialised it."""
        if self._initialised and self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError:
                pass
            self._initialised = False

    def current(self) -> Inventory:
        """Return this host's GPUs (``source="nvml"``, ``nvml`` status attached); no GPUs when
        NVML is unavailable. Never raises for NVML errors."""
        status = self.probe()
        if not status.available:
            return Inventory(nodes=(), source="nvml", nvml=status)
        nvml = self._nvml
        ours = frozenset(self._our_pids())
        handles: list[Any] = []
        bus_to_index: dict[str, int] = {}
        for index in range(status.device_count):
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                bus_to_index[normalize_bus_id(nvml.nvmlDeviceGetPciInfo(handle).busId)] = index
            except nvml.NVMLError:
                handle = None
            handles.append(handle)
        gpus = []
        self.foreign_pids = {}
        self.foreign_processes = {}
        for index, handle in enumerate(handles):
            gpus.append(self._gpu(index, handle, bus_to_index, ours))
        return Inventory(nodes=(Node(name=self._node, gpus=tuple(gpus)),), source="nvml", nvml=status)

    def _gpu(self, index: int, handle: Any, bus_to_index: dict[str, int], ours: frozenset[int]) -> GPU:
        nvml = self._nvml
        uuid = ""
        try:
            if handle is None:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
            uuid = _text(nvml.nvmlDeviceGetUUID(handle))
            name = _text(nvml.nvmlDeviceGetName(handle))
            bus_id = normalize_bus_id(nvml.nvmlDeviceGetPciInfo(handle).busId)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            mig_enabled, migs = self._migs(handle)
            peers = self._nvlink_peers(handle, bus_to_index)
            procs = [(int(p.pid), None if p.usedGpuMemory is None else p.usedGpuMemory / _MIB)
                     for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)]
        except nvml.NVMLError as exc:
            return GPU(uuid=uuid or f"GPU-unreadable-{self._node}-{index}", index=index, node=self._node,
                       model="unknown", memory_mib=0, health=Health.UNHEALTHY,
                       health_reason=f"NVML error on GPU {index}: {exc}")
        ours = ours | {pid for pid, _ in procs if pid not in ours and _descends_from(pid, ours)}
        self.foreign_pids[uuid] = tuple(pid for pid, _ in procs if pid not in ours)
        self.foreign_processes[uuid] = tuple(_foreign_process(pid, mib) for pid, mib in procs if pid not in ours)
        return GPU(uuid=uuid, index=index, node=self._node, model=name, memory_mib=int(memory.total // _MIB),
                   pci_bus_id=bus_id, mig_enabled=mig_enabled, mig_devices=migs, nvlink_peers=peers,
                   foreign_memory_mib=foreign_memory_mib(memory.used / _MIB, procs, ours, threshold_mib=self._threshold))

    def _migs(self, handle: Any) -> tuple[bool, tuple[MigDevice, ...]]:
        nvml = self._nvml
        try:
            current, _pending = nvml.nvmlDeviceGetMigMode(handle)
        except nvml.NVMLError:  # NotSupported on GPUs without MIG
            return False, ()
        if current != 1:
            return False, ()
        devices = []
        for k in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
            try:
                mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, k)
            except nvml.NVMLError as exc:
                if getattr(exc, "value", None) == _NOT_FOUND:
                    continue
                raise
            profile = _MIG_PROFILE.search(_text(nvml.nvmlDeviceGetName(mig)))
            devices.append(MigDevice(uuid=_text(nvml.nvmlDeviceGetUUID(mig)),
                                     profile=profile.group(1) if profile else "unknown",
                                     gpu_instance_id=int(nvml.nvmlDeviceGetGpuInstanceId(mig)),
                                     memory_mib=int(nvml.nvmlDeviceGetMemoryInfo(mig).total // _MIB)))
        return True, tuple(devices)

    def _nvlink_peers(self, handle: Any, bus_to_index: dict[str, int]) -> tuple[int, ...]:
        nvml = self._nvml
        peers: set[int] = set()
        for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
            try:
                if not nvml.nvmlDeviceGetNvLinkState(handle, link):
                    continue
                remote = normalize_bus_id(nvml.nvmlDeviceGetNvLinkRemotePciInfo(handle, link).busId)
            except nvml.NVMLError:  # NotSupported (no NVLink, MIG mode) or past the last link
                break
            if remote in bus_to_index:  # NVSwitch or a GPU on another node is not a local peer
                peers.add(bus_to_index[remote])
        return tuple(sorted(peers))


def _foreign_process(pid: int, used_mib: float | None) -> ForeignProcess:
    """A foreign process with its age and OS user from psutil (unknown when it is not visible
    here, e.g. in another PID namespace)."""
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            age = max(0.0, time.time() - process.create_time())
            user = process.username()
    except (psutil.Error, OSError):
        return ForeignProcess(pid=pid, used_memory_mib=used_mib)
    return ForeignProcess(pid=pid, used_memory_mib=used_mib, age_s=age, user=user)
