"""Defragmentation in the cycle: migrate checkpointable jobs so a ``Fragmented`` job gets one node.

Opt-in (``SchedulingProfile.defragment``). The plan comes from
:func:`jupyter_sched.preemption.defrag.plan_defrag`; here the movers are evicted on the ledger,
the cleared GPUs nominated for the waiting job, and each mover gets a ``Preempt`` of kind
``"migrate"`` (checkpoint signal, grace period, requeue — the engine's normal path) and an audit
record naming the plan (case 006: j2 node1→node2, j3 node1→node3, new4 on node1).
"""

from __future__ import annotations

from datetime import timedelta

from ..model import PendingReason, PriorityClass, ResourceRequest
from ..placement.placer import Flavor
from ..preemption.defrag import plan_defrag
from .context import CycleContext, Visit
from .snapshot import AuditRecord, Pend, Preempt
from .spare import hold_spare

__all__ = ["defragment"]


def defragment(ctx: CycleContext, visit: Visit) -> bool:
    """Issue the fewest migrations that give ``visit.job`` one node (True), else False."""
    job, req, flavors, outcomes = visit.job, visit.req, visit.flavors, visit.outcomes
    if not ctx.profile.defragment or ctx.preemption_attempts >= ctx.profile.max_preemption_attempts \
            or job.spec.no_preempt:  # a migration stops others' jobs too (newuser36 N6)
        return False
    fragmented = [f for f, o in zip(flavors, outcomes, strict=False) if o.capacity_code == "Fragmented"]
    if not fragmented:
        return False
    ctx.preemption_attempts += 1
    # high work is never moved: a high job within its guarantee is never preempted, even to migrate
    movable = {h.job.id: h.job.spec.resources for h in ctx.ledger.holders.values()
               if h.job.spec.checkpointable and h.job.spec.priority is not PriorityClass.HIGH
               and h.job.id not in ctx.victims and h.job.id not in ctx.in_flight}
    for flavor in fragmented:
        def flavor_of(r: ResourceRequest, model: str = flavor.model) -> Flavor | None:
            return next((f for f in ctx.placer.flavors(r) if f.model == model), None)

        plan = plan_defrag(ctx.state, ctx.placer, flavor, req, movable, flavor_of)
        if plan is None:
            continue
        freed = [(m.job_id, held) for m in plan.moves if (held := ctx.state.holdings.get(m.job_id)) is not None]
        with ctx.ledger.what_if() as trial:
            for move in plan.moves:
                ctx.ledger.evict(move.job_id)
            placement = ctx.placer.place(job.id, req, flavor)
            if placement is not None and placement.allocation.node == plan.node:
                trial.keep()
            else:
                placement = None
        if placement is None:
            continue
        ctx.book.claim(job, [g for g, _ in placement.holding.gpus])
        hold_spare(ctx, freed)  # what the job does not need stays held while the movers stop (issue 16 point 2)
        for move in plan.moves:
            ctx.victims.add(move.job_id)
            victim = ctx.ledger.holders[move.job_id].job
            sentence = (f"moved off {move.from_node} (to {move.to_node} when it restarts) to make room for "
                        f"{job.id}: defragmentation")
            ctx.preempts.append(Preempt(job_id=move.job_id, for_job=job.id, reason=sentence, kind="migrate",
                                         grace_s=ctx.profile.grace_s, checkpoint_signal=True))
            ctx.audit.append(AuditRecord(
                action="preempt", job_id=move.job_id, user=victim.spec.user,
                message=f"{move.job_id} {sentence}",
                details={"for_job": job.id, "kind": "migrate", "from_node": move.from_node,
                         "to_node": move.to_node, "gpus": move.gpus, "plan_moves": len(plan.moves)}))
        names = ", ".join(f"{m.job_id} {m.from_node}->{m.to_node}" for m in plan.moves)
        ctx.pends.append(Pend(job.id, PendingReason(
            code="WaitingForPreemption",
            message=f"migrating {names} to free {plan.node}; the GPUs are held for this job",
            details={"node": plan.node, "moves": [m.job_id for m in plan.moves], "model": flavor.model,
                     "gpus": list(placement.allocation.gpu_uuids)},
            unblock="starts as soon as the moved jobs have checkpointed and stopped (grace period)",
            eta=ctx.now + timedelta(seconds=ctx.profile.grace_s))))
        return True
    return False
