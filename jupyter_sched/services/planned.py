"""``preemption_planned`` on running work: the scheduler's plan to preempt it at a known time (new user 21, N5).

The leading engine keeps, beside the pending reasons, the running jobs the last full cycle will preempt
(or reclaim) once they pass the minimum runtime — read from their waiters' own ETAs
(:func:`~jupyter_sched.scheduling.planned.planned_preemptions`). The job answers carry it with its
words, so the CLI, the magics and the panel say the same sentence
(:func:`~jupyter_sched.wording.preemption.planned_preemption_text`).

Who sees it: whoever sees the job's line (the queue shows running work to everyone). It names the
waiter as the queue already does — its public name, owner, class and team — and the waiter's ETA,
which its own queue line says too: nothing a reader could not read in the queue before.

A server that does not lead has no plans (as it has no fresher reasons than the stored ones): its
answers leave the field out.
"""

from __future__ import annotations

from typing import Any

from ..model import Job
from ..model.units import to_iso
from ..scheduling.snapshot import PlannedPreemption
from ..wording.preemption import planned_preemption_text
from .context import Context

__all__ = ["plan_of", "with_plan"]


def plan_of(ctx: Context, job: Job) -> PlannedPreemption | None:
    """The leading engine's planned preemption of ``job`` while it holds GPUs; None otherwise."""
    engine = ctx.engine
    if not job.state.holds_gpus or not engine.is_leader:
        return None
    return engine.applier.planned.get(job.id)


def with_plan(data: dict[str, Any], plan: PlannedPreemption | None) -> None:
    """Put ``plan`` in the job dict ``data`` (REST shape) as ``preemption_planned``, with its words
    (``text``: the clock with its date, as a reason's ``text`` has it). Nothing when there is no plan
    or the job is stopping already (``stop_requested``: its stop is what its line says)."""
    if plan is None or data.get("stop_requested"):
        return
    view: dict[str, Any] = {"at": to_iso(plan.at), "for_job": plan.for_job, "for_name": plan.for_name or None,
                            "for_owner": plan.for_owner or None, "for_priority": plan.for_priority,
                            "for_team": plan.for_team, "same_team": plan.same_team, "verb": plan.verb}
    view["text"] = planned_preemption_text(view, None, lease=data.get("kind") == "lease")
    data["preemption_planned"] = view
