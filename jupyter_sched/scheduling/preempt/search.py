"""The victim search for one pending job on one flavor, inside a trial that is always undone.

:func:`search` runs :func:`jupyter_sched.preemption.plan_preemption` (the minimal set by cost:
class, jobs broken, GPUs and pods evicted, work lost, then age) on the cycle's ledger through
callbacks (STYLE §2: every trial eviction undone by ``what_if``). The job *fits* when its quota
check passes and the placer finds it a place; with a reclaim victim in the set it must also be
within its team's guarantee — decided with its own team's evictions counted (issue 16 R2, example
B: "evict our own low job and reclaim the rest"). Which reclaim victims may go at each step is
:class:`jupyter_sched.preemption.ReclaimRules`' (a team gives only while it borrows; withdrawals
never justify a running reclaim; borrow within cohort keeps the victim's team at its guarantee).

GPUs already being freed for the job's team (victims stopping) and spare GPUs (freed by victims,
nominated to nobody: :mod:`..spare`) count as free in the trial.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from ...backfill.easy import Reservation
from ...model import GPU_MILLI
from ...model.units import gpus_phrase
from ...placement.placer import Flavor, Placement
from ...placement.state import Holding
from ...preemption.reclaim_rules import LineKey, ReclaimRules
from ...preemption.victims import Candidate, PreemptionPlan, plan_preemption
from ...quota.ledger import QuotaCheck
from ..admit import placed_around, placed_check
from ..context import CycleContext, Visit
from ..spare import open_spare
from .candidates import holder_key, team_borrowing, team_lines

__all__ = ["placed_share_check", "search"]


def search(ctx: CycleContext, visit: Visit, flavor: Flavor, cands: list[Candidate], owners: list[str],
           stopping: list[str], *, borrowing: bool = False, reserved: Reservation | None = None
           ) -> tuple[PreemptionPlan, Placement | None]:
    """Find the plan inside a trial (always undone); returns it and the job's placement under it.

    Args:
        cands: the allowed victims (:mod:`.candidates`).
        owners: the jobs whose nominated GPUs ``visit.job`` may use (its own, lower classes of its team).
        stopping: victims still stopping on those GPUs: counted as gone.
        borrowing: the job borrows (borrow within cohort): reclaim victims need not make it
            within its guarantee, but each leaves its team at or above its own guarantee.
        reserved: the EASY reservation the job places around (:func:`..admit.keep_off`), as
            admission does: a plan that makes it fit only on those GPUs is no plan.

    An empty plan carries the refusal: the generic one of :func:`~jupyter_sched.preemption.plan_preemption`,
    or the withdrawals :class:`~jupyter_sched.preemption.ReclaimRules` kept (issue 16 point 5).
    """
    job, req = visit.job, visit.req
    spec = job.spec
    ledger, quota = ctx.ledger, ctx.quota

    def line_borrowing(key: LineKey, extra: int) -> bool:
        return team_borrowing(ctx, key, extra=extra)

    rules = ReclaimRules({c.job_id: team_lines(ctx, holder_key(c)) for c in cands if c.kind == "reclaim"},
                         line_borrowing, ctx.reclaimed_lines, borrow_within=borrowing)

    share = req.gpu_milli < GPU_MILLI and quota.held is not None
    share_refused: list[QuotaCheck] = []  # a place found, refused for what the share adds there

    def fits() -> bool:
        check = quota.check(spec.team, spec.user, flavor.model, req.total_milli)
        if not check.ok:
            return False
        # reclaim only for a within-guarantee job (that each team gives only while it borrows is
        # kept by ``removable`` at removal; putting victims back can never break it)
        if rules.guarantee_required and not check.within_guarantee:
            return False
        placement = placed_around(ctx, job, req, flavor, reserved)
        if placement is None or not share:
            return placement is not None
        placed = placed_share_check(ctx, visit, placement, flavor.model)  # what it adds there (red39 R1)
        if placed is None or (placed.ok and (placed.within_guarantee or not rules.guarantee_required)):
            return True
        share_refused[:] = [placed]
        return False

    masks: dict[str, tuple[Holding | None, int] | None] = {}  # what each nomination's mask held when trial-evicted

    def evict(c: Candidate) -> None:
        if c.nominated:
            masks[c.job_id] = ctx.book.unmask(c.job_id)
        else:
            ledger.evict(holder_key(c))
        rules.evicted(c)

    def restore(c: Candidate) -> None:
        fresh = ctx.fresh.get(c.job_id)
        if c.nominated:
            ctx.book.remask(c.job_id, masks.pop(c.job_id, None))
        elif fresh is None:
            ledger.load_holder(ledger.holders[c.job_id].job)
        else:
            holder = ctx.fresh_holder(c.job_id)
            ctx.state.take(c.job_id, fresh.holding)
            quota.charge(c.job_id, holder.job.spec.team, holder.job.spec.user, holder.model, holder.milli)
        rules.restored(c)

    @contextmanager
    def nested() -> Iterator[object]:
        saved = rules.save()
        with ledger.what_if() as trial:
            try:
                yield trial
            finally:
                rules.rollback(saved)

    need = req.gpus if req.workers == 1 and not req.fractional and not req.mig_profile and req.gpus else 0
    node_free = None
    if need:
        pools = set(flavor.pools)
        node_free = {c.node: ctx.state.node_free[c.node] for c in cands
                     if c.node >= 0 and ctx.state.node_pool[c.node] in pools}
    with ledger.what_if():
        ctx.book.open(owners)
        for h in stopping:  # GPUs already being freed for this team count as free in the plan
            ledger.evict(h)
        open_spare(ctx)  # and so do spare ones: freed by victims, nominated to nobody (..spare)
        plan = plan_preemption(cands, fits=fits, evict=evict, restore=restore, removable=rules.removable,
                               what_if=nested, need=need, node_free=node_free)
        placement = None
        if plan.victims:
            for c in plan.victims:
                evict(c)
            placement = placed_around(ctx, job, req, flavor, reserved) if fits() else None
    if not plan.victims:  # the reason names the rule and the jobs it kept (issue 16 point 5)
        plan = rules.refusal() or (_share_refusal(plan, spec.team, share_refused[0]) if share_refused else plan)
    return plan, placement


def placed_share_check(ctx: CycleContext, visit: Visit, placement: Placement, model: str) -> QuotaCheck | None:
    """The quota check of a share placed at ``placement`` by a plan or a wait on GPUs being freed (None: not a
    share, or no shares counted), charged what it adds to its team lines there
    (:func:`..share_charge.share_cost`: the whole GPU when it opens one of its own), as admission charges it
    (:func:`..admit.try_flavor`) — red team 39 R1: a plan that withdrew this cycle's borrowing admission for a
    0.1-GPU share "within its guarantee" let it open a GPU, the team 2.5 GPUs on a limit of 2; a share took
    over GPUs a stopping job frees that admission would then refuse it."""
    if visit.req.gpu_milli >= GPU_MILLI or ctx.quota.held is None:
        return None
    return placed_check(ctx, visit.job, model, placement)


def _share_refusal(plan: PreemptionPlan, team: str, check: QuotaCheck) -> PreemptionPlan:
    """The refusal of a plan whose evictions would give a share only a GPU of its own, counted whole against
    its team's quota (:func:`placed_share_check`) — not "would still not make it fit"."""
    if not check.ok:
        d = check.details
        why = f"{team} would be above its quota"
        if {"used", "requested", "quota"} <= d.keys():
            after = round(d["used"] + d["requested"], 3)
            why = f"{team} would use {gpus_phrase(after)}, above its limit of {gpus_phrase(d['quota'])}"
    else:
        why = f"{team} would be above its guarantee, and only work within its guarantee takes GPUs back"
    return replace(plan, refused=(f"evicting would leave it only a GPU of its own, which counts whole: {why}"),
                   details={**plan.details, "share_counts_whole": True})
