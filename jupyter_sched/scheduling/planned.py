"""Preemptions planned at a known time, read from the waiters' own ETA records (new user 21, N5).

A pending job whose ETA is the moment its victims pass the minimum runtime (:data:`.eta.MIN_RUNTIME`:
``details["eta_code"] == "MinRuntime"``, the victims in ``details["eta_waits_on"]``, the rule's
numbers in ``details["preemption_rule"]``, the moment in ``reason.eta``) starts by preempting them
then — its line says so ("ETA 02:11 UTC: then lowml … is preempted for it", new user 20, N18). The
victim's own line said only "ends by 02:16 UTC, its 10m time limit". This turns those ETA records
into one plan per victim — no second model, so the victim is told exactly what its waiter is told.

Pure: reads the cycle's pending decisions (after :mod:`.eta` gave them their ETAs) and its jobs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..model import Job
from ..model.job import public_name
from .eta import MIN_RUNTIME
from .snapshot import Pend, PlannedPreemption

__all__ = ["planned_preemptions"]


def planned_preemptions(pends: Iterable[Pend], by_id: Mapping[str, Job]) -> dict[str, PlannedPreemption]:
    """The running jobs each pending job's ETA says will be preempted (or reclaimed) for it, and when.

    Args:
        pends: the cycle's pending decisions, in queue order, with their ETAs (:func:`.eta.estimate_all`).
        by_id: the cycle's jobs by id (the waiters and the victims).

    Returns:
        ``{victim id: PlannedPreemption}``. A victim named by several waiters gets the earliest
        moment (the first in queue order on a tie): it is stopped once. Victims no longer holding
        GPUs, or already stopping, get none (their lines say their stop).
    """
    plans: dict[str, PlannedPreemption] = {}
    for pend in pends:
        reason = pend.reason
        details = reason.details
        at = reason.eta
        if at is None or details.get("eta_code") != MIN_RUNTIME:
            continue
        rule, victims = details.get("preemption_rule"), details.get("eta_waits_on")
        waiter = by_id.get(pend.job_id)
        if waiter is None or not isinstance(rule, Mapping) or not isinstance(victims, Sequence) \
                or isinstance(victims, str):
            continue
        spec = waiter.spec
        name = public_name(spec).strip()[:80]  # as the ETA names jobs (.eta._waited_on): public, at most 80
        for victim_id in victims:
            victim = by_id.get(str(victim_id))
            if victim is None or not victim.state.holds_gpus or victim.stopping_since is not None:
                continue
            if (known := plans.get(victim.id)) is not None and known.at <= at:
                continue
            same = victim.spec.team == spec.team
            plans[victim.id] = PlannedPreemption(
                at=at, for_job=waiter.id, for_name="" if name == waiter.id else name,
                for_owner="" if spec.user == victim.spec.user else spec.user, for_priority=spec.priority.value,
                for_team=spec.team, same_team=same,
                # of its own team a class preemption; across teams as the waiter's ETA says it
                verb="reclaimed" if not same and rule.get("evicted_as") == "reclaimed" else "preempted")
    return plans
