"""What the scheduler allocates: GPUs on nodes, as an immutable inventory.

GPU capacity is counted in *milli-GPUs* (1000 = one whole GPU) so that fractional requests
(Run:ai-style sharing; the openb trace's ``gpu_milli``) and whole GPUs use one arithmetic.
Memory is in MiB, CPU in millicores.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

__all__ = [
    "GPU",
    "GPU_MILLI",
    "Cordon",
    "Health",
    "Inventory",
    "MigDevice",
    "Node",
    "NvmlStatus",
    "Taint",
]

GPU_MILLI = 1000
"""Milli-GPUs in one whole GPU."""
MAX_CPU_MILLIS = 100_000 * 1000
"""Most CPU a node may declare, or a worker ask for: 100,000 cores, in millicores. Beyond any
machine, and low enough that arithmetic on it stays in 64-bit integers."""
MAX_MEMORY_MIB = 1 << 30
"""Most host memory a node may declare, or a worker ask for: 1 PiB, in MiB."""



class Health(str, Enum):
    """Whether a GPU may receive new work."""

    HEALTHY = "healthy"
    UNHEALTHY = "unhealthy"


@dataclass(frozen=True, slots=True)
class MigDevice:
    """One MIG instance of a GPU in MIG mode.

    Attributes:
        uuid: ``MIG-...`` UUID; what ``CUDA_VISIBLE_DEVICES`` must carry (case 016).
        profile: MIG profile name, e.g. ``"3g.40gb"``.
        gpu_instance_id: the GPU instance id (``GPU_I_ID`` in dcgm-exporter).
        memory_mib: memory of the instance in MiB.
    """

    uuid: str
    profile: str
    gpu_instance_id: int
    memory_mib: int


@dataclass(frozen=True, slots=True)
class GPU:
    """One physical GPU.

    Attributes:
        uuid: ``GPU-...`` UUID (stable identity; used in ``CUDA_VISIBLE_DEVICES``).
        index: NVML index on its node (PCI bus order), *not* the CUDA default index.
        node: name of the node holding it.
        model: product name, e.g. ``"NVIDIA A100-SXM4-80GB"`` or a short form ``"A100-80GB"``.
        memory_mib: total memory in MiB.
        pci_bus_id: ``0000:17:00.0`` style PCI address.
        mig_enabled: whether MIG mode is on.
        mig_devices: the MIG instances when ``mig_enabled``.
        nvlink_peers: NVML indices of GPUs on the same node reachable by NVLink.
        health: healthy or not; unhealthy GPUs get no new work.
        health_reason: why it is unhealthy (e.g. ``"Xid 79: GPU fell off the bus"``).
        simulated: True for GPUs of the simulated inventory (no silicon behind them).
        foreign_memory_mib: memory held by processes the scheduler did not start (case 014);
            such a GPU is in use by an unknown owner and is not placeable.
        health_since: when it turned unhealthy, as the evidence says (e.g. the Xid's time; case 018).
        health_hint: what an admin can do about it, one sentence (e.g. restart the device plugin).
    """

    uuid: str
    index: int
    node: str
    model: str
    memory_mib: int
    pci_bus_id: str = ""
    mig_enabled: bool = False
    mig_devices: tuple[MigDevice, ...] = ()
    nvlink_peers: tuple[int, ...] = ()
    health: Health = Health.HEALTHY
    health_reason: str = ""
    simulated: bool = False
    foreign_memory_mib: int = 0
    health_since: datetime | None = None
    health_hint: str = ""

    @property
    def healthy(self) -> bool:
        """True when the GPU may receive new work."""
        return self.health is Health.HEALTHY


@dataclass(frozen=True, slots=True)
class Taint:
    """A Kubernetes-style node taint ``key=value:effect``."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Cordon:
    """An admin's maintenance cordon of a node (``jupyter-sched nodes cordon|drain``): no new work
    (jobs, leases, backfill) is placed on it; what runs there runs on — to its own limit, or until
    ``evict_at`` when the node is drained with ``--evict-after``, when it is preempted (normal grace
    and checkpoint signal) and requeued. Slurm's ``state=drain reason=…``, ``kubectl cordon/drain``.

    Attributes:
        reason: why, the admin's words (e.g. ``"PSU swap"``); said in pending reasons and inventory.
        by: the admin who cordoned it.
        at: when (UTC).
        evict_at: when the work still running on it is asked to stop (UTC); None: it runs to its end.
    """

    reason: str
    by: str
    at: datetime
    evict_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Node:
    """A machine holding GPUs.

    Attributes:
        name: unique node name.
        gpus: its GPUs, ordered by NVML index.
        cpu_millis: allocatable CPU in millicores (0 = not tracked).
        memory_mib: allocatable host memory in MiB (0 = not tracked).
        labels: node labels (e.g. GPU feature discovery labels on Kubernetes).
        taints: taints; a job must tolerate them to be placed here.
        ready: False when the node is down or NotReady; its GPUs get no work.
        unschedulable: cordoned (by Kubernetes' ``spec.unschedulable`` or by :attr:`cordon`).
        mig_strategy: how the node advertises MIG devices (NVIDIA device plugin): ``none``,
            ``single`` (every device is one MIG profile, requested as ``nvidia.com/gpu``) or
            ``mixed`` (``nvidia.com/mig-<profile>`` per profile). Manifests follow it (case 022).
        warnings: what the source found inconsistent about the node, one sentence each (e.g. a GPU
            count label that disagrees with the allocatable resources).
        cordon: an admin's maintenance cordon (its reason, who, when); None when not cordoned here.
    """

    name: str
    gpus: tuple[GPU, ...] = ()
    cpu_millis: int = 0
    memory_mib: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    ready: bool = True
    unschedulable: bool = False
    mig_strategy: str = "none"
    warnings: tuple[str, ...] = ()
    cordon: Cordon | None = None

    @property
    def schedulable(self) -> bool:
        """True when new work may be placed on this node at all."""
        return self.ready and not self.unschedulable


@dataclass(frozen=True, slots=True)
class NvmlStatus:
    """Outcome of NVML discovery on this host (case 015).

    Attributes:
        available: NVML initialised and answered.
        error: one sentence saying why not, e.g. ``"NVML shared library not found
            (libnvidia-ml.so.1)"``; empty when available.
        device_count: devices NVML reported (0 when unavailable).
        driver_version: driver version string when available.
    """

    available: bool
    error: str = ""
    device_count: int = 0
    driver_version: str = ""


@dataclass(frozen=True, slots=True)
class Inventory:
    """All nodes and GPUs the scheduler may place work on, at one instant.

    Attributes:
        nodes: the nodes, in a stable order.
        source: where it came from: ``"nvml"``, ``"static"``, ``"simulated"`` or ``"kubernetes"``.
        nvml: NVML status when the source involved NVML discovery.
    """

    nodes: tuple[Node, ...] = ()
    source: str = "static"
    nvml: NvmlStatus | None = None
    # Whole-inventory answers, worked out once per (immutable) inventory: each walks every GPU
    # (40,000 at 5,000 nodes, ~10 ms), and a submit asked them up to three times (issue 17).
    # Not part of the value (compare/hash/repr); dataclasses.replace() starts an empty one.
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @property
    def simulated(self) -> bool:
        """True when any GPU in the inventory is simulated."""
        found = self._memo.get("simulated")
        if found is None:
            found = self._memo["simulated"] = any(gpu.simulated for gpu in self.gpus())
        return bool(found)

    def gpus(self) -> Iterator[GPU]:
        """Iterate over every GPU of every node."""
        for node in self.nodes:
            yield from node.gpus

    def gpu_count(self) -> int:
        """Number of GPUs in the inventory."""
        found = self._memo.get("gpu_count")
        if found is None:
            found = self._memo["gpu_count"] = sum(len(node.gpus) for node in self.nodes)
        return int(found)

    def node(self, name: str) -> Node:
        """Return the node called ``name``.

        Raises:
            KeyError: no such node.
        """
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def device_uuids(self) -> frozenset[str]:
        """Every GPU and MIG device uuid the inventory lists (worked out once per inventory: a job
        answer marks the work on devices no longer listed, hubadmin 22 H3, and every page asks)."""
        found = self._memo.get("device_uuids")
        if found is None:
            found = self._memo["device_uuids"] = frozenset(
                uuid for gpu in self.gpus() for uuid in (gpu.uuid, *(mig.uuid for mig in gpu.mig_devices)))
        return frozenset(found)

    def unhealthy_gpus(self) -> Mapping[str, GPU]:
        """The unhealthy GPUs by uuid, MIG devices by theirs too (worked out once per inventory: every
        job answer of work holding GPUs says one that turned unhealthy under it, hubadmin24 B14)."""
        found = self._memo.get("unhealthy_gpus")
        if found is None:
            found = self._memo["unhealthy_gpus"] = {
                uuid: gpu for gpu in self.gpus() if not gpu.healthy
                for uuid in (gpu.uuid, *(mig.uuid for mig in gpu.mig_devices))}
        kept: Mapping[str, GPU] = found  # the same object while the inventory is (read caches compare it)
        return kept

    def drained_nodes(self) -> Mapping[str, Cordon]:
        """``{node: cordon}`` of the nodes drained with a deadline (``cordon.evict_at`` set; worked out once per
        inventory: every job answer of work on one says its drain, hubadmin26 B1)."""
        found = self._memo.get("drained_nodes")
        if found is None:
            found = self._memo["drained_nodes"] = {
                node.name: node.cordon for node in self.nodes
                if node.cordon is not None and node.cordon.evict_at is not None}
        kept: Mapping[str, Cordon] = found  # the same object while the inventory is (read caches compare it)
        return kept

    def gpu_by_uuid(self) -> dict[str, GPU]:
        """Map GPU uuid -> GPU (also MIG uuids -> their parent GPU)."""
        out: dict[str, GPU] = {}
        for gpu in self.gpus():
            out[gpu.uuid] = gpu
            for mig in gpu.mig_devices:
                out[mig.uuid] = gpu
        return out

    def models(self) -> dict[str, int]:
        """GPU model -> number of GPUs of that model (a new dict each call; counted once)."""
        counts = self._memo.get("models")
        if counts is None:
            counts = {}
            for gpu in self.gpus():
                counts[gpu.model] = counts.get(gpu.model, 0) + 1
            self._memo["models"] = counts
        return dict(counts)

    def healthy_models(self) -> dict[str, int]:
        """GPU model -> GPUs of that model that may receive work (healthy, on a ready node): the
        capacity quotas may promise and reports divide by (case 018: allocatable, not capacity).
        Models whose GPUs are all unavailable stay listed with 0."""
        counts = self._memo.get("healthy_models")
        if counts is None:
            counts = {}
            for node in self.nodes:
                for gpu in node.gpus:
                    counts[gpu.model] = counts.get(gpu.model, 0) + int(gpu.healthy and node.ready)
            self._memo["healthy_models"] = counts
        return dict(counts)
