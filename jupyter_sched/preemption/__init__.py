"""Preemption (pure): who may evict whom (policies), the minimal victim set, defragmentation moves.

Kueue classical preemption (``pkg/scheduler/preemption``) and kube-scheduler's default
preemption, adapted to GPUs: :mod:`.policy` decides which running jobs are candidates for a
pending one, :mod:`.victims` picks the cheapest set that makes it fit, :mod:`.defrag` plans
migrations for fragmented single-node jobs.
"""

from .defrag import DefragPlan, Move, plan_defrag
from .policy import (
    PREEMPTION_POLICIES,
    RECLAIM_POLICIES,
    PreemptionPolicy,
    ReclaimPolicy,
    preemption_policy,
    reclaim_policy,
)
from .victims import Candidate, PreemptionPlan, plan_cost, plan_preemption

__all__ = ["PREEMPTION_POLICIES", "RECLAIM_POLICIES", "Candidate", "DefragPlan", "Move", "PreemptionPlan",
           "PreemptionPolicy", "ReclaimPolicy", "plan_cost", "plan_defrag", "plan_preemption",
           "preemption_policy", "reclaim_policy"]
