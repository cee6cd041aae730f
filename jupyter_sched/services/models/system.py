"""Response models of the system: inventory (``GET inventory``), engine status."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import CodecView, QueryModel, ResponseModel
from .jobs import JobKindName
from .nodes import NodeCordon

__all__ = ["EngineStatus", "GetConfigResponse", "GetInventoryResponse", "Gpu", "GpuHolder", "GpuTelemetryView",
           "InventoryTelemetry", "Node", "NodeTelemetryView"]


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
    unschedulable: bool = Field(default=False, description="cordoned: no new work is placed on it (by an admin here, "
                                                           "see cordon, or by Kubernetes)")
    cordon: NodeCordon | None = Field(default=None, description="an admin's maintenance cordon: why, who, when "
                                                                "(null: none here)")
    gpus: list[Gpu] = Field(default_factory=list)


class NvmlStatus(CodecView):
    available: bool
    error: str | None = None
    device_count: int = 0
    driver_version: str | None = None


class GpuTelemetryView(ResponseModel):
    """What one GPU's newest reading says (:func:`jupyter_sched.telemetry.report.inventory_telemetry`)."""

    state: str = Field(examples=["free (latch suspected: 100 %, 0 MiB, no process)"],
                       description="one phrase: occupancy, reading, health, foreign processes (admins)")
    telemetry: Literal["busy", "idle", "latch suspected", "unknown"]
    utilization: str | None = Field(examples=["100 % (suspect: no process, 0 MiB)"],
                                    description="as shown, note included; null without a sample")
    validity: str | None = Field(examples=["suspect_util_latch"], description="valid, or validity_rule")
    health: str = Field(examples=["Xid 79, since 2024-10-25T02:19:08Z"], description="empty when healthy")
    health_hint: str | None = Field(description="what an admin can do (restart the device plugin, drain)")


class NodeTelemetryView(ResponseModel):
    """GPU counts of one node (case 018: physical 8, schedulable 7) and its warnings."""

    physical: int
    schedulable: int = Field(description="healthy GPUs on a ready, uncordoned node")
    unhealthy: int
    warnings: list[str] = Field(description="e.g. MIG label/allocatable disagreements naming the node")
    mig_strategy: str | None


class ClusterUtilization(ResponseModel):
    percent: float = Field(description="mean over valid readings; suspect and blank ones add 0 %")
    note: str


class InventoryTelemetry(ResponseModel):
    """The telemetry half of ``GET inventory`` (present when telemetry is on)."""

    gpus: dict[str, GpuTelemetryView] = Field(description="per GPU uuid")
    nodes: dict[str, NodeTelemetryView] = Field(description="per node name")
    utilization: ClusterUtilization
    warnings: list[str] = Field(description="admins: exporter pod labels that disagree with the allocation "
                                            "(the allocation wins; case 021), from the last hour")


class GetInventoryResponse(CodecView):
    """Nodes and GPUs (:func:`~jupyter_sched.model.codec.inventory_to_dict`), plus who holds each
    GPU, and with telemetry on what each GPU's readings and health say (``telemetry``)."""

    source: str
    simulated: bool
    nodes: list[Node]
    gpus: list[Gpu]
    nvml: NvmlStatus | None
    allocations: dict[str, list[GpuHolder]] = Field(description="per GPU uuid, who holds it")
    telemetry: InventoryTelemetry | None = Field(default=None, description="absent when telemetry is off")
    warnings: list[str] = Field(default_factory=list, description="admins: the inventory source's failed re-read in "
                                "force (setting, field, fix; the last good inventory, read at HH:MM UTC, is kept); "
                                "work holding GPUs the inventory no longer lists (\"2 GPUs held off the inventory by 1 "
                                "piece of work (4 GPUs allocated in all, 2 in the inventory) — …\": each job, its owner "
                                "and GPUs, the fix); GPU models with no price in force while gpu_prices are set "
                                "(\"GPU model 'H100-80GB' (4 GPUs) has no price per GPU-hour in force: …\")")


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
    lease_heartbeat_interval_s: float | None = Field(default=None, description=(
        "c.SchedApp.lease_heartbeat_interval_s: seconds between the heartbeats (POST leases/{id}/heartbeat) a "
        "kernel the server did not start sends for its lease; null from a server without heartbeats"))
    gpu_node_host_share: bool = Field(default=True, description=(
        "c.SchedApp.gpu_node_host_share: a GPU node's CPUs and host memory are split among its GPUs (one worker "
        "reserves at most its GPUs' part; a job without GPUs none of a GPU node's host). False: the split is off"))
    reinstalled: str | None = Field(default=None, description=(
        "jupyter_sched was reinstalled under this running server: the notice (restart it; batch jobs are held until "
        "then, leases still granted); null when it runs what is installed (newuser38 n12)"))


class EngineStatus(ResponseModel):
    """Whether this server leads the store, who does, and the schema version."""

    leader: bool
    engine_id: str
    leader_id: str | None
    term: int | None
    leader_expires_at: str | None
    store: str
    schema_version: int


class GetZoneLabelsRequest(QueryModel):
    """``GET zone-labels?zone=``: the names of a time zone's offsets, as every surface names a clock's zone."""

    zone: str = Field(min_length=1, max_length=255, description="an IANA time zone name (the browser's own, e.g. "
                                                                 "Europe/Berlin)")


class ZoneLabel(ResponseModel):
    """One UTC offset of a zone and its name (``60``: ``CET``)."""

    offset_minutes: int = Field(description="minutes east of UTC")
    label: str = Field(description="the tz database's letters (CET, EST, IST), else UTC+4 / UTC-3:30")


class GetZoneLabelsResponse(ResponseModel):
    """The zone's offsets within about a year of now, each with its name (newuser35 n12: the panel said
    ``UTC+1`` where the CLI and the magics said ``CET``; :func:`jupyter_sched.model.units.zone_labels`)."""

    zone: str
    labels: list[ZoneLabel] = Field(description="one per offset the zone has within 400 days of now")
