"""A running kernel lease whose safe budget is spent is released (red30 R5; pure).

Under ``budget_admission = "safe"`` every piece of GPU work has a bound on what it may spend: a job its time
limit, counted ahead by the safe gate (:mod:`.budget_fit`); a kernel's lease, which has no time limit, starts only
while its GPUs x the lease horizon (``profile.lease_budget_s``) are left and holds that much ahead of its teammates'
jobs while it runs — and it is released once its team's (or user's) budget is spent: red29 R4 let a lease start on
any remainder and run on, so a 2-GPU lease ran 55 % over a 0.1 GPU-hour budget in 3 minutes (on by 2 GPU-hours
an hour) while every teammate's job pended "spent". Slurm's ``GrpTRESMins`` ends the association's running jobs
when the limit is reached; here only the lease is ended, and its kernel keeps running without the GPUs (as an
idle reclaim leaves it): DESIGN's "running work is not killed" holds — a batch job is bounded by its limit, which
safe admission counted before it started.

From the moment a budget governing a running lease is spent, each cycle returns a :class:`~.snapshot.Preempt`
(kind :data:`BUDGET_KIND`, for no job) for it, not already being released: the engine sets its stop intent
``budget`` (:mod:`jupyter_sched.engine.apply`), ends it with these words once no process holds its GPUs
(:mod:`jupyter_sched.engine.stops`), and the audit row ``budget_release`` names the numbers.
"""

from __future__ import annotations

from ..model import GPU_MILLI, Budget, Job, JobKind
from ..model.periods import this_period_text
from ..model.units import gpu_hours_phrase, gpu_hours_text, gpus_phrase
from .context import CycleContext
from .snapshot import AuditRecord, Preempt

__all__ = ["BUDGET_KIND", "budget_releases", "released_words"]

BUDGET_KIND = "budget"
"""``Preempt.kind`` of a lease released because its safe budget is spent."""


def released_words(lease: Job, budget: Budget, used: float) -> str:
    """``released: team vision's GPU-hour budget is spent (0.1 of 0.1 GPU-hours this month) and
    c.SchedApp.budget_admission is safe; the kernel keeps running without its 2 GPUs`` — the lease's message,
    its kernel's word and the audit row's."""
    whose = f"team {budget.team}'s" if budget.user is None else f"user {budget.user}'s (in {budget.team})"
    gpus = lease.spec.resources.total_milli / GPU_MILLI
    kept = "the kernel keeps running" if lease.spec.kernel_id else "whatever used them keeps running"
    return (f"released: {whose} GPU-hour budget is spent ({gpu_hours_text(used)} of "
            f"{gpu_hours_phrase(budget.gpu_hours)} {this_period_text(budget.period)}) and "
            f"c.SchedApp.budget_admission is safe; {kept} without its {gpus_phrase(gpus)}")


def budget_releases(ctx: CycleContext) -> None:
    """Append to ``ctx.preempts`` (and ``ctx.audit``) a release of each running GPU lease, not already being
    released, whose team's (or user's) budget for this period is spent, under ``budget_admission = "safe"``
    (module doc). Nothing without a safe profile or budgets."""
    budgets = ctx.snap.quotas.budgets
    if ctx.profile.budget_admission != "safe" or not budgets:
        return
    used_map = ctx.snap.usage.gpu_hours_this_period
    for job in ctx.snap.jobs:
        spec = job.spec
        if spec.kind is not JobKind.LEASE or not job.state.holds_gpus or job.stopping_since is not None \
                or not spec.resources.total_milli:
            continue
        for budget in budgets:
            if budget.team != spec.team or budget.user not in (None, spec.user):
                continue
            used = used_map.get((spec.team, budget.user), 0.0)
            if used < budget.gpu_hours:
                continue
            said = released_words(job, budget, used)
            ctx.preempts.append(Preempt(job_id=job.id, for_job="", reason=said, kind=BUDGET_KIND,
                                        grace_s=ctx.profile.grace_s, checkpoint_signal=False))
            ctx.audit.append(AuditRecord(action="budget_release", job_id=job.id, user=spec.user,
                                         message=f"{job.id} {said}",
                                         details={"kind": BUDGET_KIND, "team": spec.team, "budget_user": budget.user,
                                                  "used_gpu_hours": round(used, 4),
                                                  "budget_gpu_hours": budget.gpu_hours, "period": budget.period,
                                                  "gpus": spec.resources.total_milli / GPU_MILLI,
                                                  "kernel_id": spec.kernel_id}))
            break
