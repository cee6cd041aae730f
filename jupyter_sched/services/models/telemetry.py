"""Request and response models of telemetry and the idle policy."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel, WithJsonSchema

from .base import CodecView, QueryModel, ResponseModel

__all__ = ["GetIdleResponse", "GetIdlePolicyResponse", "GetTelemetryHistoryRequest", "GetTelemetryHistoryResponse",
           "GetTelemetryRequest", "GetTelemetryResponse", "GpuSamples", "HistoryGap", "HistoryPoint", "IdleCandidate",
           "IdleWork", "SetIdlePolicyRequest"]


class GetTelemetryRequest(QueryModel):
    """``GET telemetry``: at most one of ``gpu``, ``job`` and ``lease`` narrows it."""

    gpu: str | None = Field(default=None, description="a GPU or MIG uuid (not admins: refused, 403, while "
                                                          "another user's job or lease holds it, as ?job= is)")
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


# components another module keeps (the reclaim codec's idle policy), referenced by name: "x-ref"
# becomes "$ref" in openapi.yaml (jupyter_sched.services.models.openapi)
_POLICY = "IdlePolicy"
_PATCH = "IdlePolicyPatch"
_SET_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "description": "Keys left out keep their current value; a priority block merges into the (new) default; "
                   "by_priority, when given, replaces the set of overrides.",
    "properties": {"default": {"x-ref": _PATCH},
                   "by_priority": {"type": "object", "additionalProperties": {"x-ref": _PATCH}},
                   "by_kind": {"type": "object",
                               "additionalProperties": {"x-ref": "IdlePolicyKindPatch"}}}}


class SetIdlePolicyRequest(RootModel[Annotated[dict[str, Any], WithJsonSchema(_SET_SCHEMA)]]):
    """``PUT idle-policy``: ``{"default": IdlePolicyPatch, "by_priority": {class: IdlePolicyPatch},
    "by_kind": {...}}``; keys left out keep their current value. The blocks are validated by
    :func:`jupyter_sched.reclaim.idle_policies_from_dict`, which owns the idle policy's rules and
    its schema components (``IdlePolicy*``) and names the field (``idle.normal.window_s``)."""

    model_config = ConfigDict(frozen=True)


class GetIdlePolicyResponse(CodecView):
    """The idle policy in force: :func:`jupyter_sched.reclaim.idle_policies_to_dict` (which owns the
    policy's keys, e.g. ``by_kind``) plus whether detection runs and the samples kept."""

    default: Annotated[dict[str, Any], WithJsonSchema({"x-ref": _POLICY})]
    by_priority: Annotated[dict[str, dict[str, Any]], WithJsonSchema(
        {"type": "object", "description": "Overrides keyed by priority class (high, normal, low).",
         "additionalProperties": {"x-ref": _POLICY}})]
    by_kind: Annotated[dict[str, dict[str, Any]], WithJsonSchema(
        {"type": "object", "description": "Overrides keyed by job kind (lease, training, inference), "
                                          "each with its own by_priority.",
         "additionalProperties": {"x-ref": "IdlePolicyKind"}})] = Field(default_factory=dict)
    active: bool = Field(description="false when telemetry is off: no idle detection runs")
    retention_s: float | None = Field(description="seconds of telemetry samples kept (null = no monitor)")
    source: dict[str, Any] | None = Field(
        default=None, description="who set the policy in force: {\"set_by\": \"config\" (c.SchedApp.idle_*) or the "
                                  "admin of the last PUT idle-policy, \"set_at\": ISO 8601 or null (not known), \"text\": "
                                  "in words, e.g. `the config file (c.SchedApp.idle_*) at 2026-12-05 08:31 UTC` or "
                                  "`PUT idle-policy by boss at 2026-12-05 08:41 UTC`}; a changed config replaces a "
                                  "PUT policy at the next start")


class GetTelemetryHistoryRequest(QueryModel):
    """``GET telemetry/history``: utilization and memory over time of one job's, lease's or GPU's
    devices (exactly one of ``job``, ``lease``, ``gpu``), from the stored one-minute rollups;
    ``step_s`` under 60 reads the live samples (the last hour or so)."""

    gpu: str | None = Field(default=None, description="a GPU or MIG uuid")
    job: str | None = Field(default=None, description="one of your jobs (admins: any)")
    lease: str | None = Field(default=None, description="one of your leases (admins: any)")
    since: str | None = Field(default=None, examples=["2026-01-01T10:00:00+00:00"],
                              description="ISO 8601 with offset (default: the work's start, or an hour ago)")
    until: str | None = Field(default=None, description="ISO 8601 with offset (default: now)")
    step_s: int = Field(default=60, ge=1, le=3600, examples=[60], description="seconds per point")


class HistoryPoint(ResponseModel):
    """One device and step: ``utilization_pct`` null in a gap (``validity`` and ``note`` say why)."""

    t: str
    gpu_uuid: str
    mig_instance: int | None
    utilization_pct: float | None
    memory_used_mib: float | None
    validity: Literal["valid", "blank", "suspect", "missing"]
    note: str


class HistoryGap(ResponseModel):
    """Consecutive gap steps of one device with one reason, ``[start, end)``."""

    gpu_uuid: str
    mig_instance: int | None
    start: str
    end: str
    validity: Literal["blank", "suspect", "missing"]
    note: str
    label: str = Field(examples=["blank: DCGM blank value (no data)"])


class GetTelemetryHistoryResponse(ResponseModel):
    """Points per device and step, and the gap spans to draw as gaps (never as numbers)."""

    since: str
    until: str
    step_s: int
    devices: list[dict[str, Any]]
    points: list[HistoryPoint]
    gaps: list[HistoryGap]


class IdleCandidate(ResponseModel):
    """Work idle now: when its warning and its reclaim are due (:class:`jupyter_sched.reclaim.IdleCandidate`)."""

    job_id: str
    user: str
    team: str
    kind: str
    gpu_uuids: list[str]
    idle_since: str
    warn_at: str
    deadline: str
    time_left_s: float
    stage: Literal["idle", "warned", "reclaimed"]
    action: str
    reason: str = Field(examples=[
        "idle for 6 min (limit: kernel idle and GPU < 5 % for 30 min): warning at 13:53 UTC, its GPUs are released at 14:03 UTC"],
        description="where the idle period stands: the idle time so far, the rule, when the warning and the reclaim are due")
    state: str = Field(examples=["allocated, no process on GPU (0 %, 0 MiB)"])
    grace_s: float = Field(default=0.0, examples=[0.0], description=(
        "seconds the idle policy adds after its window before the reclaim (0: none; the deadline includes it)"))
    rule: str = Field(default="", examples=["kernel idle and GPU < 5 % for 30 min"],
                      description="the idle policy's rule this work is measured against (its window, not the time elapsed)")
    keepalive_used: bool = Field(default=False, examples=[False], description=(
        "a lease's one keep-alive was used: only using its GPUs keeps them now (newuser23 N5)"))


class GetIdleResponse(RootModel[list[IdleCandidate]]):
    """``GET idle``: idle work, least time left first (your own; admins: everyone's)."""

    model_config = ConfigDict(frozen=True)

    def to_wire(self) -> Any:
        return self.model_dump(mode="json")
