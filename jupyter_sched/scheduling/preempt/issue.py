"""Issuing a preemption plan: the decisions, the nominations and the reasons it produces.

:func:`issue_plan` acts on the cycle's ledger and decision lists only (STYLE §1: the core returns
decisions; the engine stops the victims). Per victim kind:

* a running job → a :class:`~..snapshot.Preempt` decision (``kind`` ``priority`` or ``reclaim``,
  ``grace_s`` seconds to stop, a checkpoint signal for checkpointable jobs) and an audit record
  (``preempt`` / ``reclaim``) with the plan; the GPUs it frees are nominated to the job
  (:mod:`..nominations`), the rest held as spare while it stops (:mod:`..spare`);
* an admission made earlier in this cycle (``fresh``) → withdrawn (:func:`_withdraw`): nothing
  runs yet, so it costs nothing; it pends with a reason naming the reclaiming team and job;
* GPUs nominated to a borrowing team's pending job → the nomination is dropped
  (:func:`_reclaim_nomination`).

The job pends ``WaitingForPreemption`` with the victims, nodes and GPUs held for it and an ETA of
one grace period (seconds), or is admitted at once when no running job had to go.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from ...model import Allocation, Job, PendingReason
from ...model.job import public_name, work_noun
from ...model.units import format_duration, said_time
from ...placement.placer import Flavor, Placement
from ...preemption.reclaim_rules import DEPARTED, RECLAIMING
from ...preemption.victims import Candidate, PreemptionPlan
from ...wording.reasons import departed_text, departed_victim_text, work_named
from ..admit import admit_placed
from ..context import CycleContext
from ..snapshot import AuditRecord, Pend, Preempt
from ..spare import claim, hold_spare
from ..takeover import offer_freed, offer_passed_over
from .candidates import class_share, departed_hold, team_lines
from .waiting import hold_and_wait, stopping_on

__all__ = ["issue_plan"]


def issue_plan(ctx: CycleContext, job: Job, flavor: Flavor, plan: PreemptionPlan, placement: Placement, *,
               borrowing: bool = False) -> bool:
    """Evict the plan's victims for real, nominate the freed GPUs, record decisions and the reason.

    Victims admitted earlier in this cycle have their admission withdrawn instead (nothing runs
    yet), and GPUs nominated to a borrower are taken from its nomination; when those are all the
    victims, the job is admitted at once. GPUs withdrawals free go first to higher-class jobs of
    its team passed over earlier in the cycle (:mod:`..takeover`): when one takes any, nothing more
    is done and False is returned (the caller searches again). What a dropped nomination frees
    beyond the job's need goes to the jobs passed over earlier (:func:`..takeover.offer_freed`).
    """
    spec = job.spec
    withdrawn = [c for c in plan.victims if c.fresh and not c.nominated]
    reclaimed = [c for c in plan.victims if c.nominated]
    for c in withdrawn:
        _withdraw(ctx, c, job)
    for c in reclaimed:
        _reclaim_nomination(ctx, c, job)
    if (withdrawn or reclaimed) and offer_passed_over(ctx, job):
        return False
    running = [c for c in plan.victims if not c.fresh]
    if not running:
        waiting_on = stopping_on(ctx, placement)
        if waiting_on:  # the plan counted spare GPUs still held by stopping jobs: wait for them
            hold_and_wait(ctx, job, flavor.model, placement, waiting_on, tuple(c.job_id for c in withdrawn))
        else:
            owners = ctx.book.eligible(job)  # the plan counted GPUs nominated to it or lower classes of its team
            ctx.book.open(owners)
            admit_placed(ctx, job, placement, flavor.model)
            ctx.book.after_admit(job, {g for g, _ in placement.holding.gpus}, owners)
        if reclaimed:
            offer_freed(ctx)
        return True
    names = []
    said: list[str] = []  # each victim as the line names it: whose, which, which team (newuser36 N6)
    whose: dict[str, str] = {}
    teams: dict[str, str] = {}
    freed = []
    departed: dict[str, dict[str, str]] = {}  # victims whose owner left the team: who, which team, since when
    left: list[str] = []  # and in words, for the members who wait (red team 24, R6: they were told nothing)
    for c in running:
        victim = ctx.ledger.holders[c.job_id].job
        if c.kind == "reclaim":  # a withdrawal later in the cycle must leave it justified (search)
            for key in team_lines(ctx, c.job_id):
                ctx.reclaimed_lines.setdefault(key, []).append((c.job_id, c.milli))
        holding = ctx.state.holdings.get(c.job_id)
        if holding is not None:
            freed.append((c.job_id, holding))
        ctx.ledger.evict(c.job_id)
        ctx.victims.add(c.job_id)
        names.append(c.job_id)
        whose[c.job_id], teams[c.job_id] = victim.spec.user, victim.spec.team
        # before it happens the asker reads whose work goes — the owner and team, as the queue shows them to
        # everyone (newuser36 N6: "preempting j-1m97ckdmb-hdxpbf" named another team's colleague by id only)
        said.append(work_named(c.job_id, public_name(victim.spec), victim.spec.user)
                    + (f" of team {victim.spec.team}" if victim.spec.team != spec.team else ""))
        if c.kind == "reclaim" and borrowing:
            sentence = (f"preempted (its team borrows) by higher-priority {spec.priority.value} {work_noun(spec)} {job.id} of "
                        f"{spec.team}, which may borrow over classes up to {ctx.profile.borrow_within_cohort} "
                        "(borrow within cohort)")
        elif c.kind == "reclaim" and c.milli < 1000 and ctx.shares_held:
            # its share held a whole GPU from the reclaimer's team (red team 15 R5: held_away)
            sentence = (f"preempted to return a whole GPU to {spec.team}: {c.team}'s shares occupy more GPUs than "
                        f"{c.team} is guaranteed, and this share kept a GPU from {spec.team}'s guaranteed work")
        elif c.kind == "reclaim":
            sentence = f"preempted to return borrowed quota to {spec.team}"
        elif c.kind == DEPARTED and (hold := departed_hold(ctx, victim)) is not None:
            # its owner left the team: outside the team's guarantee, taken back for a member (red team 24, R6)
            sentence = departed_victim_text(c.user, c.team, said_time(hold.since), work_noun(victim.spec), job.id)
            departed[c.job_id] = {"user": c.user, "team": c.team, "since": hold.since.isoformat()}
            left.append(departed_text(work_named(c.job_id, public_name(victim.spec), c.user), c.user, c.team,
                                      said_time(hold.since)))
        elif c.kind == "class":  # no quota: another team's low work (red team 18, R8)
            share = class_share(ctx, spec.team)
            holds = f"{share[0]:g} GPU{'s' if share[0] != 1 else ''}, share {share[1]:.3g}" if share else ""
            sentence = (f"preempted by higher-priority {spec.priority.value} {work_noun(spec)} {job.id} of team "
                        f"{spec.team}: low work is always preemptible, and with no quotas set a team holding less "
                        f"than an equal share of the GPUs ({spec.team}: {holds}) takes them from other teams' low work")
        else:
            # the preemptor by its kind: a kernel's lease is no "job" (new user 16, N12)
            sentence = f"preempted by higher-priority {spec.priority.value} {work_noun(spec)} {job.id} of team {spec.team}"
        kind = "reclaim" if c.kind in RECLAIMING else c.kind  # the owner's departure: a reclaim, said in details
        ctx.preempts.append(Preempt(
            job_id=c.job_id, for_job=job.id, reason=sentence, kind=kind, grace_s=ctx.profile.grace_s,
            checkpoint_signal=ctx.profile.checkpoint_signal and victim.spec.checkpointable))
        ctx.audit.append(AuditRecord(
            action="reclaim" if kind == "reclaim" else "preempt", job_id=c.job_id, user=c.user,
            message=f"{c.job_id} ({c.team}, {victim.spec.priority.value}) {sentence}{_spared_clause(ctx, plan)}",
            details={"for_job": job.id, "for_team": spec.team, "kind": kind, "victim_team": c.team,
                     **({"departed": departed[c.job_id]} if c.job_id in departed else {}),
                     "gpus": c.milli / 1000, "protected_min_runtime": c.protected,
                     "node": victim.allocation.node if victim.allocation else None,
                     "grace_s": ctx.profile.grace_s, "plan": [v.job_id for v in plan.victims],
                     # why this one (hubadmin22 H9): an idle lease loses nothing; young ones kept by the rule
                     **({"idle": True} if c.idle else {}),
                     **({"spared_min_runtime": list(plan.spared)} if plan.spared else {})}))
    if withdrawn:
        ctx.audit[-1] = replace(ctx.audit[-1], details={**ctx.audit[-1].details, "withdrawn": [
            c.job_id for c in withdrawn]})
    claim(ctx, job, [g for g, _ in placement.holding.gpus])
    hold_spare(ctx, freed)  # what the job does not need stays held while the victims stop
    if reclaimed:
        offer_freed(ctx)
    alloc: Allocation = placement.allocation
    # the nodes of its GPUs, not its first worker's: a gang's GPU-less launcher may sit elsewhere
    nodes = list(dict.fromkeys(n for n, uuids in alloc.per_worker() if uuids)) or [alloc.node]
    ctx.pends.append(Pend(job.id, PendingReason(
        code="WaitingForPreemption",
        message=f"preempting {', '.join(said)} to free GPUs on {', '.join(nodes)}; the GPUs are held for this job"
                + "".join(f"; {words}" for words in left),
        details={"victims": names, "victim_owners": whose, "victim_teams": teams, "node": nodes[0], "nodes": nodes,
                 "gpus": list(alloc.all_gpu_uuids()),
                 "model": flavor.model, "kinds": {c.job_id: c.kind for c in plan.victims if not c.nominated},
                 **({"departed": departed} if departed else {}),
                 **({"nominations_reclaimed": [c.job_id for c in reclaimed]} if reclaimed else {})},
        unblock="starts as soon as the preempted jobs have stopped (grace period)",
        eta=ctx.now + timedelta(seconds=ctx.profile.grace_s))))
    return True


def _spared_clause(ctx: CycleContext, plan: PreemptionPlan) -> str:
    """The audit's words for the young candidates the plan left running (hubadmin22 H9: why an older
    job went, not the younger work that borrowed too), e.g. ``; kept l-1 (run less than the minimum
    runtime, 5m)``; "" when none. Where the victims were young too, that is no reason: the rule spares young
    work only where another choice frees the GPUs, and the others were kept because fewer were needed
    (newuser42 N3: "kept a1, a2 (run less than the minimum runtime)" beside victims exactly as old)."""
    if not plan.spared:
        return ""
    least = format_duration(ctx.profile.min_runtime_s)
    if any(v.protected for v in plan.victims if not v.fresh):
        return (f"; kept {', '.join(plan.spared)}: fewer were needed (every candidate had run less than the minimum "
                f"runtime, {least}, which spares young work only where another choice frees the GPUs)")
    return f"; kept {', '.join(plan.spared)} (run less than the minimum runtime, {least})"


def _withdraw(ctx: CycleContext, c: Candidate, job: Job) -> None:
    """Take back an admission made earlier in this cycle: it borrowed GPUs ``job`` reclaims."""
    holder = ctx.fresh_holder(c.job_id)
    placement = ctx.fresh.pop(c.job_id)
    ctx.fresh_shares.pop(c.job_id, None)
    ctx.ledger.evict(c.job_id)
    ctx.victims.add(c.job_id)
    del ctx.admitted[c.job_id]
    ctx.admits[:] = [a for a in ctx.admits if a.job_id != c.job_id]
    ctx.audit[:] = [a for a in ctx.audit if not (a.action == "admit" and a.job_id == c.job_id)]
    spec = job.spec
    ctx.pends.append(Pend(c.job_id, PendingReason(
        code="WaitingForCapacity",
        message=f"would borrow {c.milli / 1000:g} {holder.model} GPUs that {spec.team} reclaims for {job.id} "
                f"within its guarantee; {c.team} is above its own guarantee",
        details={"reclaimed_by": job.id, "reclaiming_team": spec.team, "requested": c.milli / 1000,
                 "model": holder.model, "team": c.team, "withdrawn": True},
        unblock=f"starts when {c.team} is within its guarantee or GPUs free up",
        eta_reason="recomputed next cycle")))
    ctx.audit.append(AuditRecord(
        action="admit_withdrawn", job_id=c.job_id, user=c.user,
        message=f"{c.job_id} not admitted: {spec.team} reclaims the GPUs it would borrow for {job.id}",
        details={"for_job": job.id, "for_team": spec.team, "victim_team": c.team, "gpus": c.milli / 1000,
                 "node": placement.allocation.node}))


def _reclaim_nomination(ctx: CycleContext, c: Candidate, job: Job) -> None:
    """Take back the GPUs nominated to ``c.job_id``, a pending job of a borrowing team, for
    ``job`` (within its team's guarantee): the nomination is dropped. A job decided earlier in this
    cycle gets a reason saying so; one visited later adds it to its own (``ctx.reclaimed``)."""
    owner, spec = c.job_id, job.spec
    alloc = ctx.book.allocation(owner)
    ctx.book.drop(owner)
    ctx.reclaimed[owner] = job.id
    gpus = list(alloc.all_gpu_uuids())
    reason = PendingReason(
        code="WaitingForCapacity",
        message=f"the GPUs held for it ({len(gpus)} on {alloc.node}) were reclaimed by {spec.team} for {job.id} "
                f"within its guarantee; {c.team} is above its own guarantee",
        details={"reclaimed_by": job.id, "reclaiming_team": spec.team, "team": c.team, "gpus": gpus,
                 "nomination_reclaimed": True},
        unblock=f"starts when {c.team} is within its guarantee or GPUs free up", eta_reason="recomputed next cycle")
    ctx.pends[:] = [Pend(owner, reason) if p.job_id == owner else p for p in ctx.pends]
    ctx.audit.append(AuditRecord(
        action="nomination_reclaimed", job_id=owner, user=c.user,
        message=f"GPUs nominated to {owner} ({c.team}) reclaimed by {spec.team} for {job.id}, within its guarantee",
        details={"for_job": job.id, "for_team": spec.team, "victim_team": c.team, "gpus": gpus}))
