"""Request and response models of accounting (usage, the usage report) and the audit log."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, RootModel

from ...model.periods import Period
from .base import CodecView, QueryModel, ResponseModel

__all__ = ["AuditRecord", "GetAuditRequest", "GetAuditResponse", "GetUsageReportRequest", "GetUsageReportResponse",
           "GetUsageRequest", "GetUsageResponse", "GetUsageWasteRequest", "GetUsageWasteResponse", "UnattributedGpu",
           "UnattributedProcess", "UsageReportPage",
           "UsageReportRow", "UsageRow", "WasteRow"]


class GetUsageRequest(QueryModel):
    """``GET usage``: allocated GPU-seconds rolled up (your own; admins: ``all=true``)."""

    by: str = Field(default="user", examples=["user,gpu_model"], description="comma list of user, team, gpu_model, job_id, kind")
    since: str | None = Field(default=None, examples=["2026-01-01T00:00:00+00:00"], description=(
        "start of the period (ISO 8601 with offset); default: 7 days before until — the one usage period, "
        "as GET me's gpu_hours_7d, jupyter-sched status and usage, and the panel say"))
    until: str | None = Field(default=None, description="end of the period (ISO 8601 with offset); default and "
                                                         "at most: now")
    all: bool = Field(default=False, description="admins only: everyone's usage")
    user: str | None = Field(default=None, max_length=256,
                             description="admins only (or yourself): that user's usage; another user's is 403")


class GetUsageReportRequest(GetUsageRequest):
    """``GET usage/report``: allocated and utilized GPU-hours, coverage, efficiency, cost."""

    period: Period = Field(default="month", description="for by=period")
    format: Literal["json", "csv"] = "json"
    limit: int = Field(default=1000, ge=1, le=10_000, examples=[1000], description=(
        "at most this many groups (by job_id: jobs) a page, ordered by job id; a page also ends once it passes "
        "4 MiB of answer (a Link: rel=next header gives the next page; an X-Total-Count header, how many groups "
        "in all when more follow)"))
    cursor: str | None = Field(default=None, max_length=1024,
                               description="the cursor of the next page (from the Link header)")


class GetUsageWasteRequest(QueryModel):
    """``GET usage/waste`` (admins): jobs and users ranked by allocated-but-idle GPU-hours."""

    since: str | None = Field(default=None, examples=["2026-01-01T00:00:00+00:00"])
    until: str | None = None


class WasteRow(ResponseModel):
    """One job's or user's idle allocation (:class:`jupyter_sched.accounting.waste.WasteRow`)."""

    key: str
    user: str
    team: str
    kind: str
    allocated_gpu_hours: float
    idle_gpu_hours: float
    unknown_gpu_hours: float = Field(description="allocated hours without a valid reading (never counted idle)")
    idle_share: float


class UnattributedProcess(ResponseModel):
    """A process seen on a GPU nobody was allocated (from the telemetry rollups)."""

    pid: int
    user: str = Field(description='its account ("" when unknown)')
    age_s: float | None = Field(description="seconds since it started, at the last minute it was seen (null: unknown)")


class UnattributedGpu(ResponseModel):
    """A GPU busy while nobody was allocated it (:class:`jupyter_sched.accounting.waste.UnattributedRow`)."""

    gpu_uuid: str
    node: str
    first_minute: str
    last_minute: str
    active_gpu_hours: float = Field(description="rollup minutes with valid activity >= the threshold and no allocation")
    activity_max_pct: float
    processes_max: int | None
    processes: list[UnattributedProcess] = Field(
        default_factory=list, description="processes seen on it then, where the telemetry named them (NVML)")


class GetUsageWasteResponse(ResponseModel):
    """Largest waste first: ``jobs`` and ``users``; the threshold used (%); and ``unattributed``:
    GPUs busy while nobody was allocated them (case 021; default window the last 24 h), with the
    processes' pid, user and age where known (the live ones are also in ``GET telemetry``'s ``foreign``)."""

    threshold_pct: float
    jobs: list[WasteRow]
    users: list[WasteRow]
    unattributed: list[UnattributedGpu]


class UsageRow(CodecView):
    """One group: the grouping fields asked for (user, team, gpu_model, job_id, kind) plus the sums."""

    gpu_seconds: float
    gpu_hours: float
    jobs: int
    since: str | None = Field(default=None, description=(
        "start of the period this row's figures cover (ISO 8601 UTC; by default 7 days before until)"))
    until: str | None = Field(default=None, description=(
        "end of that period (ISO 8601 UTC): the until asked for, else the time of the answer"))


class UsageReportRow(UsageRow):
    """One group of the accounting report; utilized and efficiency are null where no telemetry
    covered the group (unknown, not idle)."""

    allocated_gpu_seconds: float
    allocated_gpu_hours: float
    utilized_gpu_seconds: float | None
    utilized_gpu_hours: float | None
    telemetry_coverage: float = Field(description="covered / allocated GPU-seconds, 0..1")
    efficiency: float | None = Field(description="utilized / covered allocated GPU-seconds, 0..1")
    cost: float | None = Field(description=(
        "allocated GPU-hours times the price per GPU-hour of c.HubSchedApp.gpu_prices in force at the time, in "
        "cost_unit; null without gpu_prices, or where some of the usage had no price in force (the row's warnings "
        "name the model)"))
    cost_unit: str | None = Field(default=None, examples=["USD"], description=(
        "the currency of cost: c.HubSchedApp.gpu_price_unit (e.g. USD), or \"price units\" when the admin "
        "named none (then cost is in whatever gpu_prices were priced in); null when cost is null"))
    telemetry_pending: bool = Field(default=False, description=(
        "true when some of the group's allocated time is after the last minute of telemetry rolled up "
        "into the store (about a minute after it passes): its utilization is not in utilized_*/efficiency "
        "yet, which is not a telemetry gap"))
    moved: str | None = Field(default=None, description=(
        "by team: present when an admin moved this team's work to another team, or another's to it, in the period "
        "(POST teams/{team}/move, after a hub group rename): one sentence saying when, so the two rows add up"))
    held_after_reclaim_gpu_seconds: float | None = Field(default=None, description=(
        "present when some of allocated_gpu_seconds came after idle reclaim revoked a kernel's lease whose "
        "kernel process still had a context on the GPU (audited idle_kernel_held): the GPU stayed held, "
        "given to nobody else, until that process let go, and is charged to the lease's owner, whose "
        "kernel held it; this is that part, included in allocated_gpu_seconds and cost"))
    held_after_reclaim_gpu_hours: float | None = Field(default=None, description=(
        "held_after_reclaim_gpu_seconds in GPU-hours"))
    unpriced_gpu_hours: float | None = Field(default=None, description=(
        "present when cost is null because some of the usage had no price in force: those GPU-hours (every "
        "model the warnings name)"))
    priced_cost: float | None = Field(default=None, description=(
        "present with unpriced_gpu_hours: the cost of the rest of the row's usage, in cost_unit — a lower bound "
        "of its cost (the panel says \"≥ priced_cost; N GPU-hours unpriced\")"))


class _Rows(RootModel[Any]):
    model_config = ConfigDict(frozen=True)

    def to_wire(self) -> Any:
        return self.model_dump(mode="json", exclude_unset=True)


class GetUsageResponse(_Rows):
    """GPU-seconds rolled up, largest first."""

    root: list[UsageRow]


class GetUsageReportResponse(_Rows):
    """The accounting report's rows."""

    root: list[UsageReportRow]


class UsageReportPage(ResponseModel):
    """One page of the accounting report: its rows, the cursor of the next (None on the last page) and
    how many groups the report has in all (sent as ``X-Total-Count`` when more follow)."""

    rows: GetUsageReportResponse
    next_cursor: str | None = None
    total: int = 0


class GetAuditRequest(QueryModel):
    """``GET audit`` (admins): the decision log, newest first."""

    limit: int = Field(default=100, ge=1, le=10_000)
    since: str | None = None
    until: str | None = None
    user: str | None = None
    job_id: str | None = None
    action: str | None = Field(default=None, examples=["refused"])
    exclude: str | None = Field(default=None, examples=["eta_moved"],
                                description="actions left out, comma-separated (limit counts the rows kept); a name "
                                            "no audit record has nor can have is refused (400, field exclude), "
                                            "naming the action it is close to")
    actor: str | None = Field(default=None, examples=["boss"],
                              description="only the records this actor made (an admin's acts; user matches records "
                                          "about a user and by them)")


class GetEtaAccuracyRequest(QueryModel):
    """``GET eta-accuracy`` (admins): how good the ETAs were over the last started jobs."""

    limit: int = Field(default=1000, ge=1, le=10_000, description="the last this many admissions are read")


class GetEtaAccuracyResponse(ResponseModel):
    """Predicted start when queued against the actual start, over the jobs that waited among the
    last ``window`` admissions (case 034; :func:`jupyter_sched.backfill.accuracy.accuracy_from_admits`)."""

    window: int = Field(description="admissions read (the newest)")
    jobs: int = Field(description="of them, jobs that waited before starting (a job waiting now counts once it "
                                  "starts: an ETA is checked against its job's start)")
    coverage: float | None = Field(description="share (0..1) of those jobs that had an ETA when queued; null when "
                                               "no waiting job has started yet (nothing measured, not 0 %)")
    median_abs_error_s: float | None = Field(description="median |actual - predicted start|, seconds")
    median_wait_s: float | None = Field(description="median time those jobs waited, seconds")
    error_of_wait: float | None = Field(description="median_abs_error_s / median_wait_s (the goal is <= 0.15)")
    p90_abs_error_s: float | None
    max_abs_error_s: float | None
    mean_signed_error_s: float | None = Field(description="positive: jobs started later than predicted")


class AuditRecord(CodecView):
    id: int
    at: str
    actor: str
    action: str
    job_id: str | None
    user: str | None
    message: str
    details: dict[str, Any]


class GetAuditResponse(RootModel[list[AuditRecord]]):
    model_config = ConfigDict(frozen=True)

    def to_wire(self) -> Any:
        return self.model_dump(mode="json", exclude_unset=True)
