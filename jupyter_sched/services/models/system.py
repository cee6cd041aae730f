"""Response models of the system: inventory (``GET inventory``), engine status."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import CodecView, ResponseModel
from .jobs import JobKindName

__all__ = ["EngineStatus", "GetConfigResponse", "GetInventoryResponse", "Gpu", "GpuHolder", "Node"]


class GpuHolder(ResponseModel):
    """Work holding (a share of) one GPU."""

    job_id: str
    user: str
    kind: JobKindName
    gpu_milli: int


class MigDevice(CodecView):
    uuid: str
    profile: str
    gpu_instance_id: int
    memory_mib: int


class Gpu(CodecView):
    """One GPU (:func:`~jupyter_sched.model.codec.gpu_to_dict`); ``simulated`` is always present."""

    uuid: str
    index: int
    node: str
    model: str
    memory_mib: int
    pci_bus_id: str = ""
    mig_enabled: bool = False
    mig_devices: list[MigDevice] = Field(default_factory=list)
    nvlink_peers: list[int] = Field(default_factory=list)
    health: str = "healthy"
    health_reason: str = ""
    simulated: bool = Field(description="always present, so every surface can label simulated GPUs")
    foreign_memory_mib: int = 0


class Taint(CodecView):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


class Node(CodecView):
    """One node: its host CPU (millicores) and memory (MiB), labels, taints and GPUs."""

    name: str
    cpu_millis: int = 0
    memory_mib: int = 0
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)
    ready: bool = True
    unschedulable: bool = False
    gpus: list[Gpu] = Field(default_factory=list)


class NvmlStatus(CodecView):
    available: bool
    error: str | None = None
    device_count: int = 0
    driver_version: str | None = None


class GetInventoryResponse(CodecView):
    """Nodes and GPUs (:func:`~jupyter_sched.model.codec.inventory_to_dict`), plus who holds each GPU."""

    source: str
    simulated: bool
    nodes: list[Node]
    gpus: list[Gpu]
    nvml: NvmlStatus | None
    allocations: dict[str, list[GpuHolder]] = Field(description="per GPU uuid, who holds it")


class ConfigEvents(CodecView):
    transport: str
    path: str
    types: list[str]


class GetConfigResponse(CodecView):
    """What this backend supports (``GET config``), for the panel and the CLI."""

    version: str
    api: str
    mode: Literal["embedded", "hub"]
    identity: str
    owner: str | None = None
    executors: list[str]
    inventory_source: str
    events: ConfigEvents
    features: dict[str, bool]
    priorities: list[str]
    idle: dict[str, Any]
    telemetry: dict[str, Any]
    cycle_interval_s: float
    placement_policy: str = Field(description="c.SchedApp.placement_policy")


class EngineStatus(ResponseModel):
    """Whether this server leads the store, who does, and the schema version."""

    leader: bool
    engine_id: str
    leader_id: str | None
    term: int | None
    leader_expires_at: str | None
    store: str
    schema_version: int
