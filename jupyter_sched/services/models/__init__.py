"""Typed request and response models of the REST API (pydantic v2), one module per resource.

Names are verb + noun (``SubmitJobRequest``, ``GetQueueResponse``) as in ``openapi.yaml``.
:func:`parse` validates a body or query against a request model and raises the package's
:class:`~jupyter_sched.errors.ValidationError` naming the field.
"""

from .accounting import (
    AuditRecord,
    GetAuditRequest,
    GetAuditResponse,
    GetUsageReportRequest,
    GetUsageReportResponse,
    GetUsageRequest,
    GetUsageResponse,
    UsageReportRow,
    UsageRow,
)
from .base import CodecView, ErrorBody, ErrorResponse, QueryModel, RequestModel, ResponseModel, parse
from .jobs import (
    Allocation,
    DryrunJobResponse,
    GetJobLogsRequest,
    GetJobLogsResponse,
    GetQueueRequest,
    GetQueueResponse,
    Job,
    JobsPage,
    KeepaliveLeaseRequest,
    KeepaliveLeaseResponse,
    ListJobsRequest,
    ListJobsResponse,
    PendingReason,
    QueueEntry,
    SubmitJobRequest,
)
from .quotas import (
    BudgetLine,
    GetMeResponse,
    GetQuotasResponse,
    ListProfilesResponse,
    Profile,
    QuotaLine,
    SetQuotasRequest,
    TeamPolicyLine,
)
from .system import EngineStatus, GetConfigResponse, GetInventoryResponse, Gpu, Node
from .telemetry import GetIdlePolicyResponse, GetTelemetryRequest, GetTelemetryResponse, SetIdlePolicyRequest

__all__ = [
    "Allocation",
    "AuditRecord",
    "BudgetLine",
    "DryrunJobResponse",
    "CodecView",
    "EngineStatus",
    "ErrorBody",
    "ErrorResponse",
    "GetAuditRequest",
    "GetAuditResponse",
    "GetConfigResponse",
    "GetIdlePolicyResponse",
    "GetInventoryResponse",
    "GetJobLogsRequest",
    "GetJobLogsResponse",
    "GetMeResponse",
    "GetQueueRequest",
    "GetQueueResponse",
    "GetQuotasResponse",
    "GetTelemetryRequest",
    "GetTelemetryResponse",
    "GetUsageReportRequest",
    "GetUsageReportResponse",
    "GetUsageRequest",
    "GetUsageResponse",
    "Gpu",
    "Job",
    "JobsPage",
    "KeepaliveLeaseRequest",
    "KeepaliveLeaseResponse",
    "ListJobsRequest",
    "ListJobsResponse",
    "ListProfilesResponse",
    "Node",
    "PendingReason",
    "Profile",
    "QueryModel",
    "QueueEntry",
    "QuotaLine",
    "RequestModel",
    "ResponseModel",
    "SetIdlePolicyRequest",
    "SetQuotasRequest",
    "SubmitJobRequest",
    "TeamPolicyLine",
    "UsageReportRow",
    "UsageRow",
    "parse",
]
