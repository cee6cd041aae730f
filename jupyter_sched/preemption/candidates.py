"""A victim candidate's numbers: what evicting one job (or taking one nomination) would cost.

The cycle decides *which* jobs are candidates (own-team jobs its
:class:`~.policy.PreemptionPolicy` allows, jobs of borrowing teams its team's
:class:`~.policy.ReclaimPolicy` allows — :mod:`jupyter_sched.scheduling.preempt.candidates`);
this module turns one into the :class:`~.victims.Candidate` whose cost :mod:`.victims` compares.
Units: GPUs in milli-GPUs (quota units, 1000 = one whole GPU), time in seconds, work in
GPU-seconds; nodes by their index in the cycle's placement state.

Kueue's candidate ordering (``pkg/scheduler/preemption``, ``candidatesOrdering``) ranks by
already evicted, other queues' workloads before the preemptor's own, lower priority, then newest
admission; here the minimum runtime, jobs broken, GPUs and pods evicted and work lost (GPU-seconds
run, 0 for a checkpointable job or an idle lease) come before age (:func:`~.victims.plan_cost`; issue 16).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from ..model import Allocation, Job, PriorityClass
from .victims import Candidate

__all__ = ["borrow_threshold", "candidate_of", "nomination_candidate"]


def candidate_of(job: Job, milli: int, kind: str, *, now: datetime, min_runtime_s: float,
                 node_index: Mapping[str, int], fresh: Allocation | None = None, idle: bool = False) -> Candidate:
    """The candidate for evicting ``job``, which holds ``milli`` milli-GPUs.

    Args:
        job: the running job (or one admitted earlier in this cycle: ``fresh`` is its allocation).
        milli: milli-GPUs it holds (its quota charge).
        kind: ``"priority"`` (own team, lower class), ``"reclaim"`` (a borrowing team's job),
            ``"departed"`` (own team's work whose owner left the team) or ``"class"``
            (another team's low job, no quota configured).
        now: the cycle's clock (injected), for the time it ran.
        min_runtime_s: the profile's minimum runtime, seconds: a job that ran less is ``protected``,
            and ``exempt`` too when it runs again after an eviction (``preempted_by`` set).
        node_index: node name → node index of the cycle's placement state.
        fresh: the allocation of an admission made earlier in this cycle: withdrawing it costs
            nothing (``fresh=True``, no start time, no work lost).
        idle: ``job`` is a lease that sits idle (the snapshot's ``idle_ends``: idle under a policy
            that releases it). Its time held is no work: evicting it loses none (``work_lost`` 0),
            and the minimum runtime, which keeps work that has just started from being thrown away,
            does not protect it (hubadmin22 H9: a reclaim spared a 1-minute-old idle lease with no
            kernel and took a job's 7 minutes of training instead). Ignored for other jobs.

    A single-node job names its node (the search tries clearing nodes for single-node jobs);
    a gang counts one pod per worker and its whole GPUs per node (``per_node``).
    """
    if fresh is not None:
        node = node_index.get(fresh.node, -1) if not fresh.workers else -1
        return Candidate(job_id=job.id, team=job.spec.team, user=job.spec.user, rank=job.spec.priority.rank,
                         milli=milli, started=None, kind=kind, pods=len(fresh.per_worker()), node=node, fresh=True)
    started = job.started_at or job.admitted_at
    ran = max(0.0, (now - started).total_seconds()) if started is not None else 0.0
    workers = job.allocation.per_worker() if job.allocation is not None else ()
    node = node_index.get(workers[0][0], -1) if len(workers) == 1 else -1
    per_node: dict[int, int] = {}
    if len(workers) > 1:
        for name, uuids in workers:
            n = node_index.get(name)
            if n is not None and uuids:
                per_node[n] = per_node.get(n, 0) + len(uuids)
    idle = idle and job.is_lease
    young = started is not None and ran < min_runtime_s and not idle
    return Candidate(
        job_id=job.id, team=job.spec.team, user=job.spec.user, rank=job.spec.priority.rank,
        milli=milli, started=started, kind=kind,
        protected=young, exempt=young and job.preempted_by is not None,
        pods=max(1, len(workers)), work_lost=0.0 if job.spec.checkpointable or idle else ran * milli / 1000,
        node=node, per_node=tuple(per_node.items()), idle=idle)


def nomination_candidate(owner: Job, milli: int, per_node: Mapping[int, int]) -> Candidate:
    """The free GPUs nominated to ``owner`` (a pending job of a borrowing team) as a reclaim
    candidate: ``milli`` milli-GPUs charged to its team, ``per_node`` whole GPUs by node index.
    Nothing runs on them, so taking them costs nothing (``fresh``); the nomination is dropped."""
    return Candidate(job_id=owner.id, team=owner.spec.team, user=owner.spec.user, rank=owner.spec.priority.rank,
                     milli=milli, started=None, kind="reclaim", fresh=True, nominated=True,
                     node=next(iter(per_node)) if len(per_node) == 1 else -1, per_node=tuple(per_node.items()))


def borrow_threshold(job: Job, threshold: str, *, reclaim: bool) -> int | None:
    """The highest class rank ``job`` may evict in other, *borrowing* teams while it borrows
    itself — Kueue's ``borrowWithinCohort`` with ``maxPriorityThreshold``: lower than its own
    class, at most ``threshold`` (the profile's ``borrow_within_cohort``, a class name; "" = off).
    None when off, when reclaim is off (``reclaim``), or when no class is low enough."""
    if not threshold or not reclaim:
        return None
    rank = min(job.spec.priority.rank - 1, PriorityClass(threshold).rank)
    return rank if rank >= 0 else None
