"""One scheduling cycle: ``run_cycle(snapshot, profile) -> CycleResult`` (pure; STYLE §1, §3).

Table of contents (Kueue ``scheduler.schedule()``; kube-scheduler framework):

1. **Ledger** — capacity and quota usage from the snapshot, GPUs nominated to pending jobs
   masked (:mod:`.ledger`, :mod:`.nominations`); work on a drained node past its deadline is
   stopped (:mod:`.drain`); a reclaim's taker that did not hold what it took is audited, once
   (:mod:`.preempt.cooldown`).
2. **Order** — class, fair share, user usage with the next job's expected work, submit time
   (:mod:`jupyter_sched.queues.order`), a job an admin topped first in its class;
   jobs that would borrow go after every job that fits its team's guarantee (Kueue's entry
   ordering: guarantees first), a team's own jobs keeping their order.
3. For each pending job, in order (:func:`_visit`):

   a. never fits the inventory → ``Reject`` with numbers (and no preemption — case 004);
   b. gates: held (by a person, or its owner left the team), class not allowed for the team, requeue backoff, admit window, budget (:mod:`.gates`);
   c. per flavor: quota check, borrow window, placement around the EASY reservation, with the GPUs
      nominated to it or to lower-class jobs of its team opened (:mod:`.admit`);
   d. else wait on nominated GPUs still held by stopping victims (taking them over from a
      lower-class job of its team — case 032), else the cheapest preemption/reclaim plan
      (:mod:`.preempt`), else migration of checkpointable jobs for a ``Fragmented`` job
      (:mod:`.defrag`);
   e. else ``Pend`` with exactly one primary reason (:mod:`.pending`).
4. **ETAs** — every pending job, in queue order, on a projection of future free capacity; moves
   beyond the margin recorded with their cause (:mod:`.eta`). A failure there leaves the
   decisions standing and every ETA unknown (:mod:`.eta_guard`, red team 21 R5).
5. **Positions** — 1-based queue position of every job left pending, set with its ETA (a job
   above a quota ceiling holds none); nominations.
6. **Planned preemptions** — the running jobs those ETAs say will be preempted at a known time
   (:mod:`.planned`, new user 21, N5).
7. **Projected ends** — the running jobs the ETA pass projects to end before their time limits, from
   their progress reports or learnt runtimes, for their owners' lines (:mod:`.ends`, new user 22, N10).

The cycle never reads the clock (``snapshot.now``) and never makes ids.
"""

from __future__ import annotations

from functools import partial

from ..model import Job, JobState, PendingReason, ResourceRequest
from ..placement.placer import Flavor, Placement
from ..placement.reasons import FitReason, never_fits
from ..queues.order import QUEUE_SORTS, QueueContext, elect_overdue, elected_behind, holdings, topped_first
from ..quota.ceiling import UNLISTED_SETTING, binding_ceiling, ceiling_exceeded, no_gpus_fix
from ..quota.ledger import QuotaLedger
from .admit import admit_on_flavors, try_flavor
from .budget_spent import budget_releases
from .context import CycleContext, Visit
from .defrag import defragment
from .drain import drain_evictions
from .eta import Plan, expected_runtime
from .eta_guard import ends_guarded, estimate_guarded
from .gates import gate_unheld, held_gate
from .pending import pend
from .planned import planned_preemptions
from .preempt import preempt, wait_on_nominated
from .preempt.cooldown import note_dropped
from .profile import SchedulingProfile
from .reasons import FlavorOutcome
from .runtimes import charged_runtime_of, elected_in
from .snapshot import AuditRecord, CycleResult, Pend, Reject, Snapshot
from .takeover import drop_nomination, offer_freed, passed_over

__all__ = ["run_cycle", "run_on", "visit"]


def run_cycle(snapshot: Snapshot, profile: SchedulingProfile | None = None) -> CycleResult:
    """Decide admissions, preemptions, rejections and pending reasons for one cycle.

    Args:
        snapshot: the frozen cluster state (``snapshot.now`` is the cycle's time, UTC).
        profile: the policy; default :class:`SchedulingProfile`.

    Returns:
        The decisions; nothing has been applied.

    Raises:
        ValidationError: the profile names an unknown plugin.
    """
    return run_on(CycleContext(snapshot, profile or SchedulingProfile()))


def run_on(ctx: CycleContext) -> CycleResult:
    """:func:`run_cycle` on a context built from its snapshot (kept alive by :mod:`.live`)."""
    snapshot = ctx.snap
    waiting = JobState.PENDING  # looked up once: a member read on an Enum class is slow
    pending = [j for j in snapshot.jobs if j.state is waiting]
    if pending and ctx.profile.backfill and ctx.profile.backfill_mode == "conservative":
        ctx.plan = Plan(ctx, at_end=False)
    usage = snapshot.usage.decayed_gpu_seconds_by_user
    deferred: list[tuple[Job, tuple[tuple[Flavor, ...], FitReason | None, str]]] = []
    waiting_teams: set[str] = set()
    # no quota configured: what each user and team holds now orders the queue first (red team 15, R4)
    held = ctx.held = None if ctx.quota.enabled else holdings(snapshot.jobs, snapshot.inventory.gpu_count())
    if held is not None:  # the teams with work: a live one-job decision adds its job's (.preempt.candidates.class_share)
        ctx.held_teams = (frozenset(j.spec.team for j in snapshot.jobs if j.state is waiting or j.state.holds_gpus),
                          snapshot.inventory.gpu_count())
    order = QueueContext(now=snapshot.now, team_share=ctx.quota.team_share, user_usage=usage,
                         expected_runtime=partial(expected_runtime, ctx), held=held,
                         charged_runtime=charged_runtime_of(ctx))
    quota = ctx.quota if ctx.quota.enabled else None
    pause = ctx.pause
    drain_evictions(ctx)  # work on a drained node past its deadline is stopped (hubadmin24)
    budget_releases(ctx)  # a running lease whose safe budget is spent is released (red30 R5)
    note_dropped(ctx)  # a reclaim's taker that did not hold what it took: told to admins, once (red32 R5)
    # a job waited past elect_overdue x its promised wait goes first in its class (issue 16, queues.order),
    # after the jobs an admin topped (hubadmin25 B18)
    elected = elected_in(ctx, pending)
    ctx.elected = frozenset(job.id for job in elected)
    ctx.elected_behind = elected_behind(elected) if len(elected) > 1 else {}
    ordered = topped_first(pending, elect_overdue(QUEUE_SORTS[ctx.profile.queue_sort](pending, order), elected))
    for job in ordered:
        shape = _shape(ctx, job.spec.resources)
        if quota is not None and (job.spec.team in waiting_teams or _would_borrow(quota, job, shape[2])):
            deferred.append((job, shape))
            waiting_teams.add(job.spec.team)
        else:
            _visit(ctx, job, shape)
            pause()
    for later, shape in deferred:
        _visit(ctx, later, shape)
        pause()
    ctx.passed = None
    failure = estimate_guarded(ctx)  # ETAs and queue positions; a failure there never fails the decisions
    ends, ends_failure = ends_guarded(ctx) if not failure else ({}, "")  # what the failed pass read: not again
    return CycleResult(admits=tuple(ctx.admits), preemptions=tuple(ctx.preempts), pending=tuple(ctx.pends),
                       rejects=tuple(ctx.rejects), nominations=ctx.book.result(), audit=tuple(ctx.audit),
                       eta_failure=failure or ends_failure, planned=planned_preemptions(ctx.pends, ctx.by_id),
                       projected=ends)


def _would_borrow(quota: QuotaLedger, job: Job, model: str) -> bool:
    """Would ``job`` borrow on its first flavor? Such jobs go after those that fit their team's
    guarantee (Kueue's entry ordering: borrowing last, whatever the class), so that one cycle
    never admits a borrower onto GPUs a within-guarantee job then has to reclaim (case 001)."""
    milli = job.spec.resources.total_milli
    return bool(milli and model) and quota.would_borrow(job.spec.team, job.spec.user, model, milli)


def _shape(ctx: CycleContext, req: ResourceRequest) -> tuple[tuple[Flavor, ...], FitReason | None, str]:
    """The request's flavors, why it can never fit (None: it may) and its first usable GPU model
    (``""``: none), memoised per request shape."""
    key = (req.gpus, req.gpu_milli, req.workers, req.gpu_models, req.min_memory_mib, req.mig_profile,
           req.tolerations, tuple(req.node_selector.items()) if req.node_selector else (), req.groups,
           req.cpu_millis, req.memory_mib)  # never_fits reads the host asks (red38 R4: one job's reason was another's)
    shape = ctx.shapes.get(key)
    if shape is None:
        flavors = ctx.placer.flavors(req)
        shape = ctx.shapes[key] = (flavors, never_fits(req, flavors, ctx.state, host_share=ctx.placer.config.host_share),
                                   next((f.model for f in flavors if f.pools), ""))
    return shape


def _above_ceiling(ctx: CycleContext, job: Job, flavors: tuple[Flavor, ...]) -> bool:
    """A job above a quota ceiling on every GPU model it may use — the quota was lowered under it
    after it was queued — pends with the sentence its submission would now be refused with, holding
    nothing (new user 18, N12: it waited as if its owner's running work could make room). It stays
    pending, as Kueue keeps an inadmissible workload, because an admin may raise the quota again;
    its owner is told once, by an audit row under their name."""
    milli = job.spec.resources.total_milli
    if milli <= 0 or not flavors:
        return False
    spec = job.spec
    team, user = spec.team, spec.user
    # binding_ceiling's first step first (issue 16: this check was ~5 % of a 100-node cycle, its memo
    # keyed per user mostly missing): a request that exceeds no ceiling on its first GPU model is bound
    # by none — the same lines read (the ledger's memo, which the queue order's would_borrow filled)
    quota = ctx.quota
    if not quota.exceeds_ceiling(team, user, flavors[0].model, milli):
        return False
    key = (team, user, milli, id(flavors))  # flavors: one object per shape (ctx.shapes)
    if key in ctx.ceilings:
        line = ctx.ceilings[key]
    else:
        line = ctx.ceilings[key] = binding_ceiling(quota, team, user, milli, dict.fromkeys(f.model for f in flavors))
    if line is None:
        return False
    # a queued job's reason is read by others too (the queue): its user named, not "you"; the words
    # depend on the line, the models, the user and the request's shape only: built once per cycle for
    # them (session 22: a backlog of 1,000 jobs above one team's ceiling built the same sentence 1,000
    # times each cycle); each job's details get their own lists
    req = job.spec.resources
    words_key = (*key, req.gpus, req.gpu_milli, req.workers, req.groups)
    over = ctx.ceiling_words.get(words_key)
    if over is None:
        over = ctx.ceiling_words[words_key] = ceiling_exceeded(line, req, (f.model for f in flavors), user=user,
                                                               ledger=quota, to_user=False)
    details = {k: list(v) if isinstance(v, list) else v for k, v in over.details.items()}
    reason = PendingReason(code="Unschedulable", message=over.message,
                           details={**details, "field": over.field, "never": "quota", "rule":
                                    "user cap" if line.user is not None else "team borrowing limit"},
                           unblock=no_gpus_fix(line.team, line.user, queued=True)  # a line of 0 (newuser34 n2)
                           if not over.unlisted and not over.details.get("ceiling") else
                           f"cancel it and resubmit with {over.most}, or ask an admin to "
                                   + (f"add a quota line for it (or to raise {UNLISTED_SETTING})" if over.unlisted
                                      else "raise the quota"))  # a scope without a line has none to raise
    drop_nomination(ctx, job.id)
    ctx.pends.append(Pend(job.id, reason))
    if ctx.plan is not None:
        ctx.plan.reserve_pending(job, reason)
    before = job.reason
    if before is None or before.details.get("never") != "quota" or before.message != reason.message:
        ctx.audit.append(AuditRecord(action="never_fits_quota", job_id=job.id, user=job.spec.user,
                                     message=f"{job.spec.name or job.id}: {over.message}; it waits until the quota "
                                             f"is raised — {reason.unblock}", details={"reason": over.details}))
    return True


def visit(ctx: CycleContext, job: Job) -> None:
    """Phase 3 for one job (see :func:`_visit`); public for :mod:`.live`."""
    _visit(ctx, job, _shape(ctx, job.spec.resources))


def _visit(ctx: CycleContext, job: Job, shape: tuple[tuple[Flavor, ...], FitReason | None, str]) -> None:
    """Phase 3 for one job: reject, gate, admit, wait on nominated GPUs, preempt, defragment or pend."""
    req = job.spec.resources
    flavors, never, _ = shape
    if never is not None:
        drop_nomination(ctx, job.id)  # a job that can never run holds nothing
        reason = PendingReason(code=never.code, message=never.message, details=never.details,
                               unblock=never.unblock or "resubmit asking for fewer GPUs per worker or another GPU model")
        if never.waits:  # only an admin's change to the inventory lets it run (case 022 r1): it pends, holding nothing
            ctx.pends.append(Pend(job.id, reason))
            if ctx.plan is not None:
                ctx.plan.reserve_pending(job, reason)
        else:
            ctx.rejects.append(Reject(job.id, reason))
        return
    # a held job is held for that first: its hold, not the quota of a team it may no longer charge (hubadmin23 A9)
    closed = held_gate(ctx, job) if ctx.gated else None
    if closed is None and ctx.quota.has_ceilings and _above_ceiling(ctx, job, flavors):  # none: nothing is above one
        return
    if closed is None and ctx.gated:
        closed = gate_unheld(ctx, job)  # its hold was asked above
    if closed is not None:
        drop_nomination(ctx, job.id)  # a gated job gives up GPUs held for it
        ctx.pends.append(Pend(job.id, closed))
        if ctx.plan is not None:
            ctx.plan.reserve_pending(job, closed)
        return
    if ctx.plan is None and not ctx.book.gpus:  # the common case: nothing nominated, EASY backfill
        # admit_on_flavors inlined: most jobs are admitted on their first flavor, and their Visit
        # (per-flavor outcomes for a pending reason) is built only when they are not
        outcomes: list[FlavorOutcome] = []
        for flavor in flavors:
            placement, outcome = try_flavor(ctx, job, req, flavor)
            if placement is not None:
                return
            assert outcome is not None
            outcomes.append(outcome)
        visit, waiting = Visit(job, req, flavors, outcomes), False
    else:
        visit = Visit(job, req, flavors)
        placement, waiting = _admit(ctx, visit)
        if placement is not None:
            if ctx.plan is not None:
                ctx.plan.reserve_placed(job, placement)
            return
    if not (waiting or preempt(ctx, visit) or defragment(ctx, visit)):
        pend(ctx, visit)
        passed_over(ctx, visit)
    if ctx.plan is not None:
        ctx.plan.reserve_pending(job, ctx.pends[-1].reason)


def _admit(ctx: CycleContext, visit: Visit) -> tuple[Placement | None, bool]:
    """``(placement, waiting)``: admitted on free GPUs or on GPUs nominated to it or to lower-class
    jobs of its team; or left waiting (pended) on nominated GPUs still held by stopping victims.
    With conservative backfill a job starts only if the plan says that delays no job reserved
    before it."""
    job = visit.job
    owners = ctx.book.eligible(job)
    if owners:
        unused = False
        with ctx.ledger.what_if() as trial:
            ctx.book.open(owners)
            placement = admit_on_flavors(ctx, visit)
            if placement is not None:
                used = {g for g, _ in placement.holding.gpus}
                unused = any(g not in used for g in ctx.book.gpus.get(job.id, ()))
                ctx.book.after_admit(job, used, owners)
                trial.keep()
        if placement is not None:
            if unused:  # placed off (part of) its own nomination: what it left is free, and the jobs
                offer_freed(ctx)  # passed over for it come first, as for a dropped nomination
            return placement, False
        if wait_on_nominated(ctx, visit, owners):
            return None, True
        if job.id in ctx.book and not any(h in ctx.in_flight for h in ctx.book.holders_on(ctx.book.pool([job.id]))):
            drop_nomination(ctx, job.id)  # stale: its victims are gone but it still does not fit
        return None, False
    held_back = ctx.plan is not None and not ctx.plan.starts_now(job)
    return admit_on_flavors(ctx, visit, held_back=held_back), False
