"""Response models of the system: inventory (``GET inventory``), engine status."""

from __future__ import annotations

from typing import Any

from .base import CodecView, ResponseModel
from .jobs import JobKindName

__all__ = ["EngineStatus", "GetInventoryResponse", "GpuHolder"]


class GpuHolder(ResponseModel):
    """Work holding (a share of) one GPU."""

    job_id: str
    user: str
    kind: JobKindName
    gpu_milli: int


class GetInventoryResponse(CodecView):
    """Nodes and GPUs (:func:`~jupyter_sched.model.codec.inventory_to_dict`), plus who holds each GPU."""

    source: str
    simulated: bool
    nodes: list[dict[str, Any]]
    gpus: list[dict[str, Any]]
    nvml: dict[str, Any] | None
    allocations: dict[str, list[GpuHolder]]


class EngineStatus(ResponseModel):
    """Whether this server leads the store, who does, and the schema version."""

    leader: bool
    engine_id: str
    leader_id: str | None
    term: int | None
    leader_expires_at: str | None
    store: str
    schema_version: int
