"""Demand abstraction and resources: frozen dataclasses shared by every layer (pure)."""

from .job import (
    TERMINAL_STATES,
    Allocation,
    Job,
    JobKind,
    JobSpec,
    JobState,
    PendingReason,
    PriorityClass,
    ResourceRequest,
    WorkerGroup,
)
from .profiles import Profile, profiles_from_config
from .quota import ANY_MODEL, Budget, Quota, QuotaSet, TeamPolicy, validate_quotas
from .resources import GPU, GPU_MILLI, Health, Inventory, MigDevice, Node, NvmlStatus, Taint
from .units import format_duration, parse_duration, parse_memory_mib, parse_utc, to_iso
from .validation import parse_gpus, spec_from_request

__all__ = [
    "ANY_MODEL", "GPU", "GPU_MILLI", "TERMINAL_STATES", "Allocation", "Budget", "Health",
    "Inventory", "Job", "JobKind", "JobSpec", "JobState", "MigDevice", "Node", "NvmlStatus",
    "PendingReason", "PriorityClass", "Profile", "Quota", "QuotaSet", "ResourceRequest", "Taint",
    "TeamPolicy", "WorkerGroup", "format_duration", "parse_duration", "parse_gpus", "parse_memory_mib",
    "parse_utc", "profiles_from_config", "spec_from_request", "to_iso", "validate_quotas",
]
