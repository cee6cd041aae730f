"""Idle reclamation (pure): detect idle work, walk the warning → grace → reclaim ladder, and
report GPUs held outside the scheduler. No clock, no I/O: ``now`` comes from the snapshot."""

from .codec import (
    idle_policies_from_dict,
    idle_policies_to_dict,
    idle_policy_from_dict,
    idle_policy_to_dict,
    longest_idle_window_s,
)
from .foreign import ForeignGpuReport, Occupancy, foreign_gpu_reports, gpu_occupancy
from .idle import (
    IdleArbiter,
    IdleInput,
    IdleVerdict,
    KernelActivity,
    LadderState,
    advance_ladder,
    default_idle_arbiter,
    device_keys,
    evaluate_idle,
    extend_keepalive,
    ladder_step,
    window_evidence,
)
from .policy import IdlePolicies, IdlePolicy, ReclaimMode

__all__ = [
    "ForeignGpuReport", "IdleArbiter", "IdleInput", "IdlePolicies", "IdlePolicy", "IdleVerdict", "KernelActivity",
    "LadderState", "Occupancy", "ReclaimMode", "advance_ladder", "default_idle_arbiter", "device_keys", "evaluate_idle",
    "extend_keepalive", "foreign_gpu_reports", "gpu_occupancy", "idle_policies_from_dict", "idle_policies_to_dict",
    "idle_policy_from_dict", "idle_policy_to_dict", "ladder_step", "longest_idle_window_s", "window_evidence",
]
