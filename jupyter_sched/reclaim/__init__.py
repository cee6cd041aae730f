"""Idle reclamation (pure): detect idle work, walk the warning → grace → reclaim ladder, and
report GPUs held outside the scheduler. No clock, no I/O: ``now`` comes from the snapshot.

(Quota reclaim — taking borrowed GPUs back for a team within its guarantee — is a kind of
preemption: its rules are :mod:`jupyter_sched.preemption.reclaim_rules` and
:class:`jupyter_sched.preemption.ReclaimPolicy`, the cycle's phase
:mod:`jupyter_sched.scheduling.preempt`.)"""

from .candidates import IdleCandidate, idle_candidates, idle_state_text
from .codec import (
    idle_policies_from_dict,
    idle_policies_to_dict,
    idle_policy_from_dict,
    idle_policy_to_dict,
    longest_idle_window_s,
)
from .foreign import ForeignGpuReport, ForeignProcess, Occupancy, blocked_text, foreign_gpu_reports, gpu_occupancy
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
    judge_running,
    ladder_step,
    ladder_times,
    limit_text,
    window_evidence,
)
from .policy import IdlePolicies, IdlePolicy, ReclaimMode
from .settings import idle_policies_from_settings

__all__ = [
    "ForeignGpuReport", "ForeignProcess", "IdleArbiter", "IdleCandidate", "IdleInput", "IdlePolicies", "IdlePolicy",
    "IdleVerdict", "KernelActivity", "LadderState", "Occupancy", "ReclaimMode", "advance_ladder", "blocked_text",
    "default_idle_arbiter", "device_keys", "evaluate_idle", "extend_keepalive", "foreign_gpu_reports", "gpu_occupancy",
    "idle_candidates", "idle_policies_from_dict", "idle_policies_from_settings", "idle_policies_to_dict",
    "idle_policy_from_dict", "idle_policy_to_dict", "idle_state_text", "judge_running", "ladder_step", "ladder_times",
    "limit_text", "longest_idle_window_s", "window_evidence",
]
