"""Demand abstraction and resources: frozen dataclasses shared by every layer (pure).

The names below load on first use (PEP 562): ``from jupyter_sched.model.units import
format_duration`` — what the CLI and the reason wording need — then costs only that module, not
the whole model (validation, quotas, profiles), which was a third of a CLI call's start-up
(issue 20: each ``jupyter-sched`` call is a new process). ``from jupyter_sched.model import Job``
works as before.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    "ANY_MODEL": "quota",
    "Allocation": "job",
    "Budget": "quota",
    "GPU": "resources",
    "GPU_MILLI": "resources",
    "Health": "resources",
    "Inventory": "resources",
    "Job": "job",
    "JobKind": "job",
    "JobSpec": "job",
    "JobState": "job",
    "MigDevice": "resources",
    "Node": "resources",
    "NvmlStatus": "resources",
    "PendingReason": "job",
    "PriorityClass": "job",
    "Profile": "profiles",
    "Quota": "quota",
    "QuotaSet": "quota",
    "ResourceRequest": "job",
    "TERMINAL_STATES": "job",
    "Taint": "resources",
    "TeamPolicy": "quota",
    "WorkerGroup": "job",
    "format_duration": "units",
    "parse_duration": "units",
    "parse_gpus": "validation",
    "parse_memory_mib": "units",
    "parse_utc": "units",
    "profiles_from_config": "profiles",
    "spec_from_request": "validation",
    "to_iso": "units",
    "validate_quotas": "quota",
}
"""Each public name → the submodule that defines it."""

__all__ = [
    "ANY_MODEL", "GPU", "GPU_MILLI", "TERMINAL_STATES", "Allocation", "Budget", "Health",
    "Inventory", "Job", "JobKind", "JobSpec", "JobState", "MigDevice", "Node", "NvmlStatus",
    "PendingReason", "PriorityClass", "Profile", "Quota", "QuotaSet", "ResourceRequest", "Taint",
    "TeamPolicy", "WorkerGroup", "format_duration", "parse_duration", "parse_gpus", "parse_memory_mib",
    "parse_utc", "profiles_from_config", "spec_from_request", "to_iso", "validate_quotas",
]


def __getattr__(name: str) -> Any:
    """Load ``name`` from its submodule on first use (then it is a plain module attribute)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
