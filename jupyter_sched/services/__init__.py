"""Application services: one small service per resource behind the REST API (STYLE §14).

Each service takes the request's :class:`~jupyter_sched.admission.Caller` and a typed request
model (:mod:`.models`) and returns a typed response model; none knows about HTTP. The
composition root :class:`Services` builds them; :func:`build_services` does so from the
extension's settings. See :mod:`.root` for the list and how to add one.
"""

from .accounting import AccountingService
from .audit import AuditService
from .config import CachedInventory, build_services, idle_policies_from_settings
from .context import Context
from .facade import SchedulerService
from .idle import IDLE_RETENTION_MAX_S, IdlePolicyService
from .jobs import JobsService
from .leases import LeasesService
from .quotas import QuotasService
from .root import Services
from .system import SystemService
from .telemetry import TelemetryService

__all__ = [
    "IDLE_RETENTION_MAX_S",
    "AccountingService",
    "AuditService",
    "CachedInventory",
    "Context",
    "IdlePolicyService",
    "JobsService",
    "LeasesService",
    "QuotasService",
    "SchedulerService",
    "Services",
    "SystemService",
    "TelemetryService",
    "build_services",
    "idle_policies_from_settings",
]
