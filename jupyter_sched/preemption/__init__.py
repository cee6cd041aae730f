"""Preemption (pure): who may evict whom (policies), the minimal victim set, defragmentation moves.

Kueue classical preemption (``pkg/scheduler/preemption``) and kube-scheduler's default
preemption, adapted to GPUs: :mod:`.policy` decides which running jobs are candidates for a
pending one, :mod:`.victims` picks the cheapest set that makes it fit, :mod:`.defrag` plans
migrations for fragmented single-node jobs; :mod:`.candidates` gives a candidate its cost
numbers and :mod:`.reclaim_rules` holds quota reclaim's rules during a search (a team gives only
while it borrows). The cycle's phase that gathers candidates from the cycle state and issues the
plan is :mod:`jupyter_sched.scheduling.preempt`. (Idle reclamation is :mod:`jupyter_sched.reclaim`.)
"""

from .candidates import borrow_threshold, candidate_of, nomination_candidate
from .defrag import DefragPlan, Move, plan_defrag
from .policy import (
    PREEMPTION_POLICIES,
    RECLAIM_POLICIES,
    PreemptionPolicy,
    ReclaimPolicy,
    preemption_policy,
    reclaim_policy,
)
from .reclaim_rules import LineKey, ReclaimRules, withheld_text
from .victims import Candidate, PreemptionPlan, plan_cost, plan_preemption

__all__ = ["PREEMPTION_POLICIES", "RECLAIM_POLICIES", "Candidate", "DefragPlan", "LineKey", "Move", "PreemptionPlan",
           "PreemptionPolicy", "ReclaimPolicy", "ReclaimRules", "borrow_threshold", "candidate_of",
           "nomination_candidate", "plan_cost", "plan_defrag", "plan_preemption", "preemption_policy",
           "reclaim_policy", "withheld_text"]
