"""Request and response models of telemetry and the idle policy."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, RootModel

from .base import CodecView, QueryModel, ResponseModel

__all__ = ["GetIdlePolicyResponse", "GetTelemetryRequest", "GetTelemetryResponse", "GpuSamples", "IdleWork",
           "SetIdlePolicyRequest"]


class GetTelemetryRequest(QueryModel):
    """``GET telemetry``: at most one of ``gpu``, ``job`` and ``lease`` narrows it."""

    gpu: str | None = Field(default=None, description="a GPU or MIG uuid")
    job: str | None = Field(default=None, description="one of your jobs (admins: any)")
    lease: str | None = Field(default=None, description="one of your leases (admins: any)")
    since: str | None = Field(default=None, examples=["2026-01-01T10:00:00+00:00"], description="ISO 8601 with offset")
    limit: int = Field(default=600, ge=1, le=3600, examples=[600], description="recent samples per device")


class GpuSamples(ResponseModel):
    gpu_uuid: str
    mig_instance: int | None
    current: dict[str, Any] | None
    recent: list[dict[str, Any]]


class IdleWork(ResponseModel):
    job_id: str
    gpu_uuids: list[str]


class GetTelemetryResponse(ResponseModel):
    """Current and recent samples per GPU, foreign GPU users and work with an idle warning."""

    enabled: bool
    source: str | None
    interval_s: float | None
    simulated: bool
    at: str
    job_id: str | None
    gpus: list[GpuSamples]
    foreign: list[dict[str, Any]]
    idle: list[IdleWork]


class SetIdlePolicyRequest(RootModel[dict[str, Any]]):
    """``PUT idle-policy``: ``{"default": IdlePolicyPatch, "by_priority": {class: IdlePolicyPatch}}``;
    keys left out keep their current value. The blocks are validated by
    :func:`jupyter_sched.reclaim.idle_policies_from_dict`, which owns the idle policy's rules and
    names the field (``idle.normal.window_s``, ``idle.urgent``)."""

    model_config = ConfigDict(frozen=True)


class GetIdlePolicyResponse(CodecView):
    """The idle policy in force: :func:`jupyter_sched.reclaim.idle_policies_to_dict` (which owns the
    policy's keys, e.g. ``by_kind``) plus whether detection runs and the samples kept."""

    default: dict[str, Any]
    by_priority: dict[str, dict[str, Any]]
    active: bool = Field(description="false when telemetry is off: no idle detection runs")
    retention_s: float | None = Field(description="seconds of telemetry samples kept (null = no monitor)")
