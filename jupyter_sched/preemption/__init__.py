"""Preemption (pure): victim candidates, ordering and the minimal set (Kueue classical preemption)."""

from .defrag import DefragPlan, Move, plan_defrag
from .victims import Candidate, PreemptionPlan, covered_jobs, keeps_guarantee, order_candidates, plan_preemption

__all__ = ["Candidate", "DefragPlan", "Move", "plan_defrag", "PreemptionPlan", "covered_jobs", "keeps_guarantee", "order_candidates", "plan_preemption"]
