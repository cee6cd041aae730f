"""Phase 3d: one plan of preemption and reclaim for a job that does not fit.

:func:`preempt`, per flavor the job may use (DESIGN.md *Reclaim*, issue 16):

1. **candidates** (:mod:`.candidates`) — never another team's job that runs again after an
   eviction and is younger than the profile's minimum runtime (``min_runtime_s``, as Slurm's
   ``PreemptExemptTime``: the job waits, its reason saying until when; red team 15 R13: one
   team's 4-second reclaimers evicted another's borrower five times). A job never evicted keeps
   the preference only (young victims where no other choice exists): DESIGN.md *Reclaim*
   protects young victims "where possible", and case 032 reclaims borrowers 10 s after they
   were seen running; own-team jobs the profile's
   :class:`~jupyter_sched.preemption.PreemptionPolicy` allows, and jobs of *borrowing* teams its
   team's :class:`~jupyter_sched.preemption.ReclaimPolicy` allows; whether the job is within its
   team's guarantee is decided *after* its own team's evictions are counted (:func:`_within_after`;
   issue 16 R2, example B). A job that borrows itself may instead evict borrowing teams' lower
   classes up to the profile's threshold (Kueue ``borrowWithinCohort``). With no quota
   configured, a job of a higher class whose team holds less than an equal share may evict
   other teams' ``low`` work (:func:`.candidates.class_candidates`; red team 18, R8). Running
   work of its own team whose owner is no longer a member of it is outside the guarantee: it is
   not counted against the job's guarantee, and a job within it takes that work back as a
   reclaim victim (:func:`.candidates.departed_candidates`; red team 24, R6);
2. **wait, don't evict** (:mod:`.waiting`) — a job that fits on spare GPUs of stopping victims
   takes them and waits (case 032);
3. **search** (:mod:`.search`) — the minimal victim set by (class, jobs broken, GPUs/pods
   evicted, work lost, age) whose eviction makes the job fit, under the reclaim rules of
   :class:`~jupyter_sched.preemption.ReclaimRules`. For a within-guarantee job the team's *own*
   running work goes last (session 19, property counterexample 7), because an own-team victim
   requeued within the same guarantee reclaims the borrower in the next cycle anyway — the
   borrower evicted as well (or twice), one more job's work lost:

   a. a job within its guarantee even with all its team's running work counted (so is each
      own-team victim, requeued) evicts own-team work only when no set of *borrowed* work
      makes it fit (DESIGN.md *Preemption*: borrowers first, then lower classes), whatever
      the classes;
   b. GPUs *nominated* to pending borrowers (borrowed capacity nothing runs on yet, taken
      back at no cost) come after running borrowed work — a nomination stands for evictions
      already made for its job, which taking it wastes (hypothesis seed 777) — but before
      running own-team work;
   c. across GPU models: a plan that evicts own-team running work on one model is issued only
      when no other model the job may use offers a plan without it (for a job within its
      guarantee only after its own evictions, issue 16 R2: a plan that stops no running work
      — nominations, this cycle's admissions withdrawn).

   The borrower that loses its nomination pends (``WaitingForCapacity``, ``reclaimed_by``); its
   own victims have already stopped and may start again on what the job left;
4. **higher class first** (:func:`_higher_first`) — before the job evicts running work, a higher
   class of its team passed over earlier in the cycle that would fit once those victims are gone
   searches first (no priority inversion; hypothesis seed 12345);
5. **issue** (:mod:`.issue`) — evictions, withdrawals of this cycle's admissions, dropped
   nominations, the GPUs nominated to the job, and its ``WaitingForPreemption`` reason;
6. **refusal** (:mod:`.refusals`) — when nothing is evicted, the reason says which rule applied.

A job that asked never to preempt (``JobSpec.no_preempt``, newuser36 N6) skips all of it: it waits for free
GPUs, its reason saying why (:data:`~jupyter_sched.wording.preemption.NO_PREEMPT_WAIT`).

An eviction that cannot make the job fit never happens (case 001; issue 16 example B).
"""

from __future__ import annotations

from collections.abc import Collection

from ...backfill.easy import Reservation
from ...placement.placer import Flavor, Placement
from ...preemption.candidates import borrow_threshold
from ...preemption.reclaim_rules import RECLAIMING
from ...preemption.victims import Candidate, PreemptionPlan, plan_cost
from ...wording.preemption import NO_PREEMPT_WAIT
from ..admit import keep_off, room_held
from ..context import CycleContext, Visit
from ..owed import note_owed
from ..spare import open_spare
from ..takeover import readmit
from .candidates import (
    borrow_candidates,
    class_candidates,
    departed_candidates,
    holder_key,
    nomination_candidates,
    own_candidates,
    reclaim_candidates,
    with_below,
)
from .cooldown import cooldown_until, say_cooldown
from .issue import issue_plan
from .refusals import explain, explain_reserved
from .search import search
from .waiting import wait_on_spare

__all__ = ["preempt"]


def preempt(ctx: CycleContext, visit: Visit) -> bool:
    """Issue the cheapest preemption/reclaim plan that makes ``visit.job`` fit (True), else False.

    On False, ``visit.refusal`` says why nothing was evicted when that explains the wait.
    """
    if ctx.preemption is None and not ctx.profile.reclaim:
        return False
    if visit.job.spec.no_preempt:  # it asked for free GPUs only: no victim, no nomination (newuser36 N6)
        visit.refusal, visit.refusal_details = NO_PREEMPT_WAIT, {"rule": "no_preempt"}
        note_owed(ctx, visit)  # within its guarantee, what frees is not lent to another team's borrowing (s38)
        return False
    if ctx.preemption_attempts >= ctx.profile.max_preemption_attempts:
        return False
    ctx.preemption_attempts += 1
    job = visit.job
    owners = ctx.book.eligible(job)
    pool = ctx.book.pool(owners)
    stopping = [h for h in ctx.book.holders_on(pool) if h in ctx.in_flight] if pool else []
    deferred: tuple[Flavor, PreemptionPlan, Placement, bool] | None = None  # a plan evicting own work
    deferred_alone = False  # its job was within its guarantee with all its team's work counted
    refusal = (visit.refusal, visit.refusal_details)
    for flavor in visit.flavors:
        if not flavor.pools:
            continue
        if ctx.headroom and room_held(ctx, job, flavor.model, job.spec.resources.total_milli) is not None:
            continue  # its quota line's room is held for a job ahead of it (newuser36 N1): no eviction brings it in
        own = own_candidates(ctx, job, flavor)
        # work its owner left the team behind is outside the guarantee: not counted against it (red team 24, R6)
        departed, kept = departed_candidates(ctx, job, flavor)
        outside = [c.job_id for c in departed] + [j.id for j in kept]  # whether its team's rule lets them go or not
        within = ctx.quota.enabled and _within_after(ctx, visit, flavor, {c.job_id for c in own} | set(outside))
        alone = within and _within_after(ctx, visit, flavor, outside)
        below = None if within or not ctx.quota.enabled else \
            borrow_threshold(job, ctx.profile.borrow_within_cohort, reclaim=ctx.profile.reclaim)
        others, ruled_out = reclaim_candidates(ctx, job, flavor) if within else \
            (borrow_candidates(ctx, job, flavor, below), []) if below is not None else \
            (class_candidates(ctx, job, flavor), [])  # no quota: other teams' low work (red team 18, R8)
        if any(c.kind == "reclaim" for c in others) and (cooled := cooldown_until(ctx, job)) is not None:
            # a job of its team dropped what a reclaim took back lately: no other team's running borrowed work
            # for it meanwhile, within its guarantee or borrowing over classes (red31 R5, red32 R5)
            others, ruled_out = [c for c in others if c.kind != "reclaim"], []
            if not visit.refusal:
                say_cooldown(ctx, visit, *cooled)
        if within:  # taken back as reclaim, not preempted by class (.candidates.departed_candidates)
            own = [c for c in own if c.job_id not in outside]
            others, ruled_out = others + departed, ruled_out + kept
        # for another team's work that was evicted before, the minimum runtime is a rule, not a
        # preference (red team 15 R13: a reclaimer cancelled 4 s after each eviction made a
        # borrower lose its work 5 times); otherwise it stays a preference (module doc)
        # ... unless its own team's higher class, evicted instead, would preempt it (new user 19, N2)
        cands, young = with_below(ctx, own, others)
        # GPUs nominated to borrowers, after running borrowed work: each nomination stands for
        # evictions already made for its job, which taking it wastes — and its victims come back
        # onto GPUs that job will evict them from again (property counterexample 4) — but before
        # the team's own running work (module doc, step 3)
        nominated = nomination_candidates(ctx, job, flavor) if within else []
        # it places around the EASY reservation as admission does (.admit.keep_off)
        reserved = keep_off(ctx, job, flavor.model, within=within)
        cands, young = _lift_only_if_moved(ctx, visit, flavor, cands, young, owners, stopping,
                                           borrowing=below is not None, reserved=reserved)
        if (cands or nominated) and wait_on_spare(ctx, visit, flavor, owners, stopping, reserved):
            return True
        if not cands and not nominated and not ruled_out:
            explain(ctx, visit, flavor, PreemptionPlan(refused="no preemptible job"), cands, ruled_out, owners,
                    stopping, within, young=young)
            continue
        plan, placement = search(ctx, visit, flavor, cands, owners, stopping, borrowing=below is not None,
                                 reserved=reserved)
        found = bool(plan.victims) and placement is not None
        borrowed = [c for c in cands if c.kind != "priority"]
        if alone and found and _evicts_own(plan) and borrowed:  # step 3a
            b_plan, b_at = search(ctx, visit, flavor, borrowed, owners, stopping, reserved=reserved)
            if b_plan.victims and b_at is not None:
                plan, placement = b_plan, b_at
        if nominated and (not found or _evicts_own(plan)):
            taking, taking_at = search(ctx, visit, flavor, cands + nominated, owners, stopping, reserved=reserved)
            if taking.victims and taking_at is not None and \
                    (not found or plan_cost(taking.victims) < plan_cost(plan.victims)):
                plan, placement, found = taking, taking_at, True
        if found and placement is not None:
            if deferred is not None and (_evicts_own(plan) if deferred_alone else any(not c.fresh for c in plan.victims)):
                continue  # not a plan that beats the deferred one (step 3c)
            if deferred is None and within and _evicts_own(plan) and flavor is not visit.flavors[-1]:
                # the team's own running work goes only when no other GPU model of the job offers a
                # plan without it (property counterexample 7, module doc step 3c)
                deferred, deferred_alone = (flavor, plan, placement, below is not None), alone
                continue
            return _issue(ctx, visit, flavor, plan, placement, borrowing=below is not None)
        if deferred is None and (reserved is None or not explain_reserved(
                ctx, visit, flavor, cands, owners, stopping, reserved, borrowing=below is not None)):
            explain(ctx, visit, flavor, plan, cands, ruled_out, owners, stopping, within, young=young,
                    reserved=reserved)
    if deferred is not None:
        visit.refusal, visit.refusal_details = refusal
        flavor, plan, placement, borrowing = deferred
        return _issue(ctx, visit, flavor, plan, placement, borrowing=borrowing)
    return False


def _lift_only_if_moved(ctx: CycleContext, visit: Visit, flavor: Flavor, cands: list[Candidate],
                        young: list[Candidate], owners: list[str], stopping: list[str], *, borrowing: bool,
                        reserved: Reservation | None) -> tuple[list[Candidate], list[Candidate]]:
    """``(cands, young)`` with the exempt jobs :func:`.candidates.with_below` kept as candidates left
    out again (young) unless their protection is really not possible: a plan without them exists and
    evicts a job that, requeued, would preempt them (new user 19, N2). Otherwise the job waits for
    the minimum runtime as promised (new user 24, N3: mlC, backfilled beside the protected lowB, named
    lowB in its ``below``; mlC alone freed too little, so the search took lowB 4 minutes before the
    promised time). Runs a search only when such a kept job exists."""
    lifted = {c.job_id for c in cands if c.exempt}
    if not lifted:
        return cands, young
    strict = [c for c in cands if not c.exempt]
    if strict:
        plan, placement = search(ctx, visit, flavor, strict, owners, stopping, borrowing=borrowing, reserved=reserved)
        if plan.victims and placement is not None and any(lifted & set(c.below) for c in plan.victims):
            return cands, young
    return strict, young + [c for c in cands if c.exempt]


def _evicts_own(plan: PreemptionPlan) -> bool:
    """Does ``plan`` stop running work of the job's own team (a ``priority`` victim not admitted this cycle)?"""
    return any(c.kind == "priority" and not c.fresh for c in plan.victims)


def _issue(ctx: CycleContext, visit: Visit, flavor: Flavor, plan: PreemptionPlan, placement: Placement, *,
           borrowing: bool) -> bool:
    """Issue ``plan`` for ``visit.job`` on ``flavor`` (steps 4-5 of the module doc); True when it was
    issued or the job was served another way, else the result of searching again."""
    if any(not c.fresh for c in plan.victims) and _higher_first(ctx, visit, flavor, plan):
        # a higher class of its team passed over earlier is served first (its own plan)
        return readmit(ctx, visit) or preempt(ctx, visit)
    if issue_plan(ctx, visit.job, flavor, plan, placement, borrowing=borrowing):
        return True
    # a higher class of its team took GPUs the plan withdrew admissions for: the job takes
    # what they left if it fits there, else searches again (the withdrawn are no candidates)
    return readmit(ctx, visit) or preempt(ctx, visit)


def _higher_first(ctx: CycleContext, visit: Visit, flavor: Flavor, plan: PreemptionPlan) -> bool:
    """Before ``visit.job`` evicts running work, a job of a higher class of its team passed over
    earlier in this cycle that would fit once those victims are gone searches for its own plan
    first (True: one was served). A change after its visit — another team's borrowing admission —
    can make a reclaim possible that was not at its turn; the GPUs then went to the lower class
    and the higher one waited beside them, nominated to it (no priority inversion, DESIGN.md
    *Reclaim*; hypothesis seed 12345: a's high j4 waited while a's normal j6 reclaimed b's j3)."""
    job = visit.job
    if ctx.passed is None or not ctx.passed.get(job.spec.team):
        return False
    rank = job.spec.priority.rank
    keys = [holder_key(c) for c in plan.victims]
    reclaims = any(c.kind in RECLAIMING for c in plan.victims)
    for _, other in list(ctx.passed[job.spec.team]):
        if other.job.spec.priority.rank <= rank or other.job.id in ctx.admitted \
                or not _fits_without(ctx, other, keys, reclaims):
            continue
        before = len(ctx.pends)
        other.refusal = ""
        if preempt(ctx, other):
            first = next(i for i, p in enumerate(ctx.pends) if p.job_id == other.job.id)
            if first < before:  # its earlier pending reason gives way to the new decision
                del ctx.pends[first]
            ctx.passed[job.spec.team] = [e for e in ctx.passed[job.spec.team] if e[1] is not other]
            for model in [m for m, res in ctx.reservations.items() if res.job_id == other.job.id]:
                del ctx.reservations[model]
            return True
    return False


def _fits_without(ctx: CycleContext, visit: Visit, keys: list[str], within: bool) -> bool:
    """Would ``visit.job`` fit (quota, placement; ``within``: its team's guarantee) once the
    ledger holders ``keys`` are gone, with the nominations it may use and spare GPUs opened?"""
    job, req = visit.job, visit.req
    spec = job.spec
    with ctx.ledger.what_if():
        ctx.book.open(ctx.book.eligible(job))
        open_spare(ctx)
        for key in keys:
            ctx.ledger.evict(key)
        for flavor in visit.flavors:
            if not flavor.pools:
                continue
            check = ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli)
            if check.ok and (check.within_guarantee or not within) and ctx.placer.place(job.id, req, flavor):
                return True
    return False



def _within_after(ctx: CycleContext, visit: Visit, flavor: Flavor, own: Collection[str]) -> bool:
    """Would the job be within its team's guarantee once ``own``, the ids of its own team's
    preemptible jobs and the work outside its guarantee (its owner left the team), were evicted?
    (Issue 16 R2: decided after own-team preemption is counted, not before.)"""
    spec, req = visit.job.spec, visit.req
    owners = ctx.book.eligible(visit.job)
    if not owners and not own:  # nothing to open or evict: the check alone, no trial (issue 16: twice per attempt)
        return ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli).within_guarantee
    with ctx.ledger.what_if():
        ctx.book.open(owners)  # quota held for it (or taken over by it) is its own
        check = ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli)
        if check.within_guarantee or not own:
            return check.within_guarantee
        for job_id in sorted(own):
            ctx.ledger.evict(job_id)
        return ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli).within_guarantee
