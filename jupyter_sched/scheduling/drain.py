"""Drained nodes: the work still on a node past its cordon's ``evict_at`` is asked to stop (pure).

``jupyter-sched nodes drain n3 --evict-after 2h --reason "PSU swap"`` cordons ``n3`` (nothing new
is placed there) and sets when the work still running there is stopped: from that moment each cycle
returns a :class:`~.snapshot.Preempt` (kind ``drain``) for every job or lease holding a GPU of the
node that is not already stopping — delivered like any preemption (checkpoint signal for
checkpointable jobs, SIGTERM, SIGKILL after the profile's grace) and requeued when it has ended
(a lease just ends). Without ``--evict-after`` the work runs to its own end or time limit. Slurm's
``scontrol update state=drain`` with a deadline; ``kubectl drain`` evicts at once.
"""

from __future__ import annotations

from ..model import JobState
from ..model.resources import Cordon
from ..wording.cordons import drained_sentence
from .context import CycleContext
from .snapshot import AuditRecord, Preempt

__all__ = ["DRAIN_KIND", "drain_evictions"]

DRAIN_KIND = "drain"
"""``Preempt.kind`` of a stop asked by a drained node's deadline."""


def drain_evictions(ctx: CycleContext) -> None:
    """Append to ``ctx.preempts`` (and ``ctx.audit``) a stop for each job holding GPUs on a node whose
    cordon's ``evict_at`` has passed (``ctx.snap.now``), not already stopping."""
    now = ctx.snap.now
    due: dict[str, Cordon] = {node.name: node.cordon for node in ctx.snap.inventory.nodes
                              if node.cordon is not None and node.cordon.evict_at is not None
                              and node.cordon.evict_at <= now}
    if not due:
        return
    running = (JobState.ADMITTED, JobState.RUNNING)
    for job in ctx.snap.jobs:
        if job.state not in running or job.allocation is None or job.stopping_since is not None:
            continue
        nodes = [node for node, _ in job.allocation.per_worker() if node in due]
        if not nodes:
            continue
        node = nodes[0]
        cordon = due[node]
        reason = f"preempted: {drained_sentence(node, cordon)}"
        ctx.preempts.append(Preempt(job_id=job.id, for_job="", reason=reason, kind=DRAIN_KIND,
                                    grace_s=ctx.profile.grace_s,
                                    checkpoint_signal=ctx.profile.checkpoint_signal and job.spec.checkpointable))
        ctx.audit.append(AuditRecord(action="preempt", job_id=job.id, user=job.spec.user,
                                     message=f"{job.id} {reason}",
                                     details={"kind": DRAIN_KIND, "node": node, "for_job": "",
                                              "evict_at": cordon.evict_at.isoformat() if cordon.evict_at else None}))
