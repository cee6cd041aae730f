"""Phase 3d: preemption and reclaim in one plan, and waiting on nominated GPUs.

* :func:`wait_on_nominated` — a job that does not fit with the free GPUs nominated to it (or to
  lower-class jobs of its team) but would once the stopping victims holding the rest exit takes
  those GPUs over and waits: no new victim is picked (case 032).
* :func:`preempt` — the victim search. Candidates (DESIGN.md *Reclaim*, issue 16):

  - own-team jobs the profile's :class:`~jupyter_sched.preemption.PreemptionPolicy` allows
    (``priority``), and
  - jobs of *borrowing* teams (using more than their guarantee on a line the job is charged to)
    that the job's team's :class:`~jupyter_sched.preemption.ReclaimPolicy` allows (``reclaim``);
  - last, for a within-guarantee job, the free GPUs *nominated* to pending jobs that would borrow
    on them: borrowed capacity nothing runs on yet, taken back at no cost (the nomination is
    dropped), but only when no set of running jobs makes the job fit — a nomination stands for
    evictions already made for its job, which taking it wastes. Before, the job waited until the
    borrower started and then evicted it (issue 16, hypothesis seed 777).

  One plan combines both: the job fits (quota and placement) once the set is evicted, and if the
  set reclaims anything the job is within its team's guarantee *after* the own-team evictions
  (so "evict our own low job and reclaim the rest" is found — issue 16 example B). Reclaim takes
  from a team only while it borrows: every victim of a team but the last is evicted while the
  team is still above its guarantee; the last may be larger than what remains borrowed, so that
  team may end below its guarantee through its own borrowing (example A; case 004). An evicted
  borrower can never reclaim back: returning would put its team above its guarantee again. The
  minimal set is :func:`jupyter_sched.preemption.plan_preemption`'s.

  Withdrawing an admission of this cycle is free, so it never justifies a reclaim of running
  work: for a team that loses running jobs to reclaim in a cycle, its withdrawn admissions go
  first and the rule above must still hold (a later job withdrawing the borrower that justified
  an earlier reclaim is refused — hypothesis seed 12345). And before a job evicts running work, a
  higher class of its team passed over earlier in the cycle that would fit once those victims are
  gone searches first (:func:`_higher_first`): another team's borrowing admission after its visit
  may have made a reclaim possible that was not at its turn.

Victims already stopping (:attr:`CycleContext.in_flight`) are never picked again; the GPUs freed
are nominated to the preemptor (:class:`~.nominations.NominationBook`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta

from ..model import Allocation, Job, PendingReason, PriorityClass
from ..placement.placer import Flavor, Placement
from ..preemption.victims import Candidate, PreemptionPlan, plan_preemption
from .admit import admit_placed
from .context import CycleContext, Visit
from .ledger import NOMINATION_PREFIX, Holder
from .snapshot import AuditRecord, Pend, Preempt
from .spare import STOPPING_PREFIX, claim, hold_spare, open_spare
from .takeover import offer_freed, offer_passed_over, readmit

__all__ = ["preempt", "wait_on_nominated"]

_LineKey = tuple[str, str | None, str]


# ---------------------------------------------------------------------------------- nominations
def wait_on_nominated(ctx: CycleContext, visit: Visit, owners: list[str]) -> bool:
    """Take over nominated GPUs still held by stopping victims and wait for them (True), else False."""
    book = ctx.book
    pool = book.pool(owners)
    holders = [h for h in book.holders_on(pool) if h in ctx.in_flight]
    if not holders:
        return False
    job, req = visit.job, visit.req
    found: tuple[Flavor, Placement] | None = None
    with ctx.ledger.what_if():
        book.open(owners)
        for h in holders:
            ctx.ledger.evict(h)
        for flavor in visit.flavors:
            if flavor.pools and ctx.quota.check(job.spec.team, job.spec.user, flavor.model, req.total_milli).ok:
                placement = ctx.placer.place(job.id, req, flavor)
                if placement is not None:
                    found = (flavor, placement)
                    break
    if found is None:
        return False
    gpus = [g for g, _ in found[1].holding.gpus]
    wanted = set(gpus)
    waiting_on = [h for h in holders if any(g in wanted for g, _ in ctx.state.holdings[h].gpus)]
    if not waiting_on:
        return False  # it fits on free GPUs alone: the EASY reservation, not a victim, holds it back
    took_from = [o for o in owners if o != job.id and wanted & set(book.gpus[o])]
    book.claim(job, gpus)
    stop_by = max(((ctx.by_id[h].stopping_since or ctx.now) for h in waiting_on), default=ctx.now)
    eta: datetime | None = max(stop_by + timedelta(seconds=ctx.profile.grace_s), ctx.now)
    alloc = book.result()[job.id]
    message = f"GPUs on {alloc.node} are held for this job while {', '.join(waiting_on)} stop"
    if took_from:
        message += f" (taken over from lower-priority {', '.join(took_from)} of {job.spec.team})"
    details: dict[str, object] = {"node": alloc.node, "gpus": list(alloc.all_gpu_uuids()), "victims": waiting_on,
                                  "taken_over_from": took_from, "model": found[0].model}
    eta_reason = ""
    overdue = {h: ctx.overdue[h] for h in waiting_on if h in ctx.overdue}
    if overdue:  # the victim ignored its stop: no honest start time (case 032 without force-kill)
        message += "; " + ctx.overdue_clause(overdue)
        details["held_by_terminating"] = ctx.overdue_details(overdue)
        eta, eta_reason = None, f"{', '.join(overdue)} did not stop within the grace period"
    ctx.pends.append(Pend(job.id, PendingReason(
        code="WaitingForPreemption", message=message, details=details,
        unblock="starts as soon as the preempted jobs have stopped (grace period)", eta=eta, eta_reason=eta_reason)))
    return True


def _wait_on_spare(ctx: CycleContext, visit: Visit, flavor: Flavor, owners: list[str], stopping: list[str]) -> bool:
    """A job that would evict fits on spare GPUs (freed by victims beyond what their preemptors
    need, or held by stopping jobs nominated to nobody) alone: it takes them over and waits (True),
    and no new victim is picked (:mod:`.spare`)."""
    job, req = visit.job, visit.req
    spec = job.spec
    placement: Placement | None = None
    with ctx.ledger.what_if():
        ctx.book.open(owners)
        for h in stopping:
            ctx.ledger.evict(h)
        opened = open_spare(ctx)
        if opened and ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli).ok:
            placement = ctx.placer.place(job.id, req, flavor)
    if placement is None:
        return False
    waiting_on = _stopping_on(ctx, placement)
    if not waiting_on:
        return False  # it fits on free GPUs alone: the EASY reservation, not a victim, holds it back
    _hold_and_wait(ctx, job, flavor.model, placement, waiting_on)
    return True


def _stopping_on(ctx: CycleContext, placement: Placement) -> list[str]:
    """Jobs still stopping (or spare masks of this cycle's victims) that hold GPUs of ``placement``."""
    wanted = {g for g, _ in placement.holding.gpus}
    out = []
    for key, hold in ctx.state.holdings.items():
        if key.startswith(STOPPING_PREFIX) or (key in ctx.in_flight or key in ctx.victims):
            if any(g in wanted for g, _ in hold.gpus):
                out.append(key.removeprefix(STOPPING_PREFIX))
    return sorted(set(out))


def _hold_and_wait(ctx: CycleContext, job: Job, model: str, placement: Placement, waiting_on: list[str],
                   withdrawn: tuple[str, ...] = ()) -> None:
    """Nominate ``placement``'s GPUs to ``job`` and pend it until ``waiting_on`` (stopping) have stopped."""
    claim(ctx, job, [g for g, _ in placement.holding.gpus])
    stop_by = max(((ctx.by_id[h].stopping_since or ctx.now) for h in waiting_on), default=ctx.now)
    eta: datetime | None = max(stop_by + timedelta(seconds=ctx.profile.grace_s), ctx.now)
    alloc = ctx.book.result()[job.id]
    nodes = list(dict.fromkeys(n for n, uuids in alloc.per_worker() if uuids)) or [alloc.node]
    message = (f"GPUs on {', '.join(nodes)} freed by {', '.join(waiting_on)}, which "
               f"{'is' if len(waiting_on) == 1 else 'are'} stopping, are held for this job")
    details: dict[str, object] = {"node": nodes[0], "nodes": nodes, "gpus": list(alloc.all_gpu_uuids()),
                                  "victims": waiting_on, "model": model, "spare": True}
    if withdrawn:
        details["withdrawn"] = list(withdrawn)
    eta_reason = ""
    overdue = {h: ctx.overdue[h] for h in waiting_on if h in ctx.overdue}
    if overdue:
        message += "; " + ctx.overdue_clause(overdue)
        details["held_by_terminating"] = ctx.overdue_details(overdue)
        eta, eta_reason = None, f"{', '.join(overdue)} did not stop within the grace period"
    ctx.pends.append(Pend(job.id, PendingReason(
        code="WaitingForPreemption", message=message, details=details,
        unblock="starts as soon as the stopping jobs have stopped (grace period)", eta=eta, eta_reason=eta_reason)))


# ---------------------------------------------------------------------------------- preemption
def preempt(ctx: CycleContext, visit: Visit) -> bool:
    """Issue the cheapest preemption/reclaim plan that makes ``visit.job`` fit (True), else False.

    On False, ``visit.refusal`` says why nothing was evicted when that explains the wait.
    """
    if ctx.preemption is None and not ctx.profile.reclaim:
        return False
    if ctx.preemption_attempts >= ctx.profile.max_preemption_attempts:
        return False
    ctx.preemption_attempts += 1
    job = visit.job
    owners = ctx.book.eligible(job)
    pool = ctx.book.pool(owners)
    stopping = [h for h in ctx.book.holders_on(pool) if h in ctx.in_flight] if pool else []
    for flavor in visit.flavors:
        if not flavor.pools:
            continue
        own = _own_candidates(ctx, job, flavor)
        within = ctx.quota.enabled and _within_after(ctx, visit, flavor, own)
        below = None if within or not ctx.quota.enabled else _borrow_threshold(ctx, job)
        others, ruled_out = _reclaim_candidates(ctx, job, flavor) if within else \
            (_borrow_candidates(ctx, job, flavor, below), []) if below is not None else ([], [])
        cands = own + others
        # GPUs nominated to borrowers, last: each nomination stands for evictions already made for
        # its job, which taking it wastes — and its victims come back onto GPUs that job will evict
        # them from again (property counterexample 4) — so running borrowed work goes first
        nominated = _nomination_candidates(ctx, job, flavor) if within else []
        if (cands or nominated) and _wait_on_spare(ctx, visit, flavor, owners, stopping):
            return True
        if not cands and not nominated and not ruled_out:
            _explain(ctx, visit, flavor, PreemptionPlan(refused="no preemptible job"), cands, ruled_out, owners,
                     stopping, within)
            continue
        plan, placement = _search(ctx, visit, flavor, cands, owners, stopping, borrowing=below is not None)
        if nominated and not (plan.victims and placement is not None):
            cands = cands + nominated
            plan, placement = _search(ctx, visit, flavor, cands, owners, stopping)
        if plan.victims and placement is not None:
            if any(not c.fresh for c in plan.victims) and _higher_first(ctx, visit, flavor, plan):
                # a higher class of its team passed over earlier is served first (its own plan)
                return readmit(ctx, visit) or preempt(ctx, visit)
            if _issue(ctx, job, flavor, plan, placement, borrowing=below is not None):
                return True
            # a higher class of its team took GPUs the plan withdrew admissions for: the job takes
            # what they left if it fits there, else searches again (the withdrawn are no candidates)
            return readmit(ctx, visit) or preempt(ctx, visit)
        _explain(ctx, visit, flavor, plan, cands, ruled_out, owners, stopping, within)
    return False


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
    keys = [_key(c) for c in plan.victims]
    reclaims = any(c.kind == "reclaim" for c in plan.victims)
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


def _borrow_threshold(ctx: CycleContext, job: Job) -> int | None:
    """The highest class rank ``job`` may evict in other, borrowing teams while it borrows itself
    (the profile's ``borrow_within_cohort``: lower than its own, at most the threshold), or None."""
    name = ctx.profile.borrow_within_cohort
    if not name or not ctx.profile.reclaim:
        return None
    rank = min(job.spec.priority.rank - 1, PriorityClass(name).rank)
    return rank if rank >= 0 else None


def _borrow_candidates(ctx: CycleContext, job: Job, flavor: Flavor, at_most: int) -> list[Candidate]:
    """Jobs of other teams that borrow on ``flavor``, of a class rank at most ``at_most``
    (borrow within cohort; :func:`_search` keeps each victim's team at or above its guarantee)."""
    return [c for c in _reclaim_candidates(ctx, job, flavor, any_rule=True)[0] if c.rank <= at_most]


def _own_candidates(ctx: CycleContext, job: Job, flavor: Flavor) -> list[Candidate]:
    """Jobs of ``job``'s team its preemption policy lets it evict, that free capacity or quota it needs.

    (Admissions of this cycle are never among them: a team's jobs are visited in its own order.)
    """
    spec = job.spec
    if ctx.preemption is None:
        return []
    quota = ctx.quota
    own_keys = {ln.key for ln in quota.applicable(spec.team, spec.user, flavor.model)} if quota.enabled else set()
    out: list[Candidate] = []
    for h in ctx.holder_index()[1].get(spec.team, ()):
        other = h.job
        if not _available(ctx, job, other) or not ctx.preemption.may_preempt(job, other):
            continue
        if h.model != flavor.model and flavor.model != "*" and not own_keys & set(_charged(ctx, other.id)):
            continue  # another model's GPUs: frees neither capacity nor a quota line this job needs
        out.append(_candidate(ctx, h, "priority"))
    return out


def _reclaim_candidates(ctx: CycleContext, job: Job, flavor: Flavor, *, any_rule: bool = False
                        ) -> tuple[list[Candidate], list[Job]]:
    """Jobs of borrowing teams on ``flavor`` its team's reclaim rule allows (``any_rule``: whatever
    the rule says), and those the rule protects.

    Includes this cycle's admissions (withdrawing one costs nothing).
    """
    spec = job.spec
    policy = ctx.reclaim_for(spec.team)
    by_model = ctx.holder_index()[0]
    holders: list[Holder] = list(ctx.ledger.holders.values() if flavor.model == "*" else by_model.get(flavor.model, ()))
    holders += [ctx.fresh_holder(j) for j, p in ctx.fresh.items() if flavor.model in ("*", p.model)]
    out: list[Candidate] = []
    ruled_out: list[Job] = []
    borrowing: dict[str, bool] = {}
    for h in holders:
        other = h.job
        team = other.spec.team
        if team == spec.team or not _available(ctx, job, other):
            continue
        lines = _team_lines(ctx, other.id)
        key = ",".join(map(str, lines))
        if key not in borrowing:
            borrowing[key] = any(_borrowing(ctx, k) for k in lines)
        if not borrowing[key]:
            continue
        if not any_rule and not policy.may_reclaim(job, other):
            ruled_out.append(other)
            continue
        out.append(_candidate(ctx, h, "reclaim"))
    return out, ruled_out


def _nomination_candidates(ctx: CycleContext, job: Job, flavor: Flavor) -> list[Candidate]:
    """The free GPUs on ``flavor`` nominated to pending jobs of other teams that would borrow on
    them (their team, counting its running work and that nomination, is above its guarantee) and
    that its team's reclaim rule allows: borrowed capacity nothing runs on yet, taken back at no
    cost (:mod:`.nominations`). Before, the within-guarantee job waited for the borrower to start
    and then evicted it (issue 16, hypothesis seed 777)."""
    book, quota, st = ctx.book, ctx.quota, ctx.state
    policy = ctx.reclaim_for(job.spec.team)
    out: list[Candidate] = []
    for owner, other in book.jobs.items():
        key = NOMINATION_PREFIX + owner
        hold, charge = st.holdings.get(key), quota.charges.get(key)
        if (other.spec.team == job.spec.team or owner == job.preempted_by or hold is None or not hold.gpus
                or charge is None or (flavor.model != "*" and st.gpu_model[hold.gpus[0][0]] != flavor.model)
                or not any(_borrowing(ctx, k, extra=charge[1]) for k in charge[0] if k[1] is None)
                or not policy.may_reclaim(job, other)):
            continue
        per_node: dict[int, int] = {}
        for g, _ in hold.gpus:
            per_node[st.gpu_node[g]] = per_node.get(st.gpu_node[g], 0) + 1
        out.append(Candidate(job_id=owner, team=other.spec.team, user=other.spec.user, rank=other.spec.priority.rank,
                             milli=charge[1], started=None, kind="reclaim", fresh=True, nominated=True,
                             node=next(iter(per_node)) if len(per_node) == 1 else -1,
                             per_node=tuple(per_node.items())))
    return out


def _available(ctx: CycleContext, job: Job, other: Job) -> bool:
    """Not already going (this cycle's victims, stopping ones), not the job's last preemptor."""
    return not (other.id in ctx.victims or other.id in ctx.in_flight or other.id == job.preempted_by
                or not ctx.state.holds(other.id))


def _candidate(ctx: CycleContext, h: Holder, kind: str) -> Candidate:
    other = h.job
    fresh = ctx.fresh.get(other.id)
    if fresh is not None:
        alloc = fresh.allocation
        node = ctx.state.node_index.get(alloc.node, -1) if not alloc.workers else -1
        return Candidate(job_id=other.id, team=other.spec.team, user=other.spec.user, rank=other.spec.priority.rank,
                         milli=h.milli, started=None, kind=kind, pods=len(alloc.per_worker()), node=node, fresh=True)
    started = other.started_at or other.admitted_at
    ran = max(0.0, (ctx.now - started).total_seconds()) if started is not None else 0.0
    workers = other.allocation.per_worker() if other.allocation is not None else ()
    node = ctx.state.node_index.get(workers[0][0], -1) if len(workers) == 1 else -1
    per_node: dict[int, int] = {}
    if len(workers) > 1:
        for name, uuids in workers:
            n = ctx.state.node_index.get(name)
            if n is not None and uuids:
                per_node[n] = per_node.get(n, 0) + len(uuids)
    return Candidate(
        job_id=other.id, team=other.spec.team, user=other.spec.user, rank=other.spec.priority.rank,
        milli=h.milli, started=started, kind=kind,
        protected=started is not None and ran < ctx.profile.min_runtime_s,
        pods=max(1, len(workers)), work_lost=0.0 if other.spec.checkpointable else ran * h.milli / 1000, node=node,
        per_node=tuple(per_node.items()))


def _key(c: Candidate) -> str:
    """The ledger holder a candidate's eviction releases: the job, or the mask of its nomination."""
    return NOMINATION_PREFIX + c.job_id if c.nominated else c.job_id


def _charged(ctx: CycleContext, job_id: str) -> tuple[_LineKey, ...]:
    entry = ctx.quota.charges.get(job_id)
    return entry[0] if entry is not None else ()


def _team_lines(ctx: CycleContext, job_id: str) -> list[_LineKey]:
    return [k for k in _charged(ctx, job_id) if k[1] is None]


def _borrowing(ctx: CycleContext, key: _LineKey, extra: int = 0) -> bool:
    """Is the team line ``key`` above its guarantee by the GPUs its jobs hold (with ``extra``
    milli-GPUs added back)? GPUs nominated to its pending jobs are charged to its lines
    (:mod:`.nominations`) but run nothing: a team whose only borrowing is a job still waiting does
    not lose its running, guaranteed work to a reclaim (hypothesis seed 19, session 9: a borrowing
    job's nomination made its team's low job within the guarantee a borrow-within-cohort victim)."""
    quota = ctx.quota
    held = 0
    for owner in ctx.book.gpus:
        entry = quota.charges.get(NOMINATION_PREFIX + owner)
        if entry is not None and key in entry[0]:
            held += entry[1]
    return quota.usage.get(key, 0) - held + extra > quota.lines[key].guaranteed


# ---------------------------------------------------------------------------------- search
def _search(ctx: CycleContext, visit: Visit, flavor: Flavor, cands: list[Candidate], owners: list[str],
            stopping: list[str], *, borrowing: bool = False) -> tuple[PreemptionPlan, Placement | None]:
    """Find the plan inside a trial (always undone); returns it and the job's placement under it.

    ``borrowing``: the job borrows (borrow within cohort): reclaim victims need not make it
    within its guarantee, but each leaves its team at or above its own guarantee."""
    job, req = visit.job, visit.req
    spec = job.spec
    ledger, quota = ctx.ledger, ctx.quota
    lines = {c.job_id: _team_lines(ctx, _key(c)) for c in cands if c.kind == "reclaim"}
    removed: dict[str, Candidate] = {}
    reclaiming = [0]  # reclaim victims among ``removed``
    withheld: dict[str, tuple[str, list[str]]] = {}  # admissions not withdrawn: team, the reclaims they justify

    def rules_hold() -> bool:
        """Reclaim only for a within-guarantee job. (That each team gives only while it borrows
        is kept by ``removable`` at removal; putting victims back can never break it.)"""
        if not reclaiming[0] or borrowing:
            return True
        return quota.check(spec.team, spec.user, flavor.model, req.total_milli).within_guarantee

    def fits() -> bool:
        if not quota.check(spec.team, spec.user, flavor.model, req.total_milli).ok or not rules_hold():
            return False
        return ctx.placer.place(job.id, req, flavor) is not None

    def evict(c: Candidate) -> None:
        ledger.evict(_key(c))
        removed[c.job_id] = c
        reclaiming[0] += c.kind == "reclaim"

    def restore(c: Candidate) -> None:
        fresh = ctx.fresh.get(c.job_id)
        if c.nominated:
            ctx.book.remask(c.job_id)
        elif fresh is None:
            ledger.load_holder(ledger.holders[c.job_id].job)
        else:
            holder = ctx.fresh_holder(c.job_id)
            ctx.state.take(c.job_id, fresh.holding)
            quota.charge(c.job_id, holder.job.spec.team, holder.job.spec.user, holder.model, holder.milli)
        if removed.pop(c.job_id, None) is not None:
            reclaiming[0] -= c.kind == "reclaim"

    def removable(c: Candidate) -> bool:
        if c.kind != "reclaim":
            return True
        if borrowing:  # its team keeps its guarantee: the victim could not reclaim back (no loop)
            return all(_borrowing(ctx, key, extra=1 - c.milli) for key in lines[c.job_id]) and still_borrowing(c)
        # a nomination counts as its team's use while it is held: its job would borrow on it. The
        # victims of one team go together, so the rule holds for the set if it holds with its
        # largest victim evicted last: a smaller one may go after a larger (hypothesis seed 12345:
        # a's normal 2-GPU job then its 1-GPU gang, 3 of a's 4 over a guarantee of 2, were refused)
        largest = max((v.milli for v in removed.values() if v.kind == "reclaim" and v.team == c.team), default=0)
        extra = (c.milli if c.nominated else 0) + max(0, largest - c.milli)
        return any(_borrowing(ctx, key, extra=extra) for key in lines[c.job_id]) and still_borrowing(c)

    def still_borrowing(c: Candidate) -> bool:
        """Running work reclaimed from a team (earlier in this cycle or in this plan) stays
        justified by the team's borrowing *without* the admissions withdrawn: withdrawals go
        first, then the running victims with the largest last (hypothesis seed 12345: c's fresh
        borrower justified reclaiming its running job, then a later job withdrew that borrower,
        and c had lost guaranteed work to a borrowing that never happened)."""
        if c.nominated:  # a nomination never counts as borrowing that justifies a running reclaim
            return True
        ok = None
        justified: list[str] = []
        for key in lines[c.job_id]:
            running = list(ctx.reclaimed_lines.get(key, ()))
            running += [(v.job_id, v.milli) for v in removed.values() if v.kind == "reclaim" and not v.fresh
                        and key in lines[v.job_id]]
            if not c.fresh:
                running.append((c.job_id, c.milli))
            if running:
                ok = ok or _borrowing(ctx, key, extra=max(m for _, m in running) - c.milli)
                justified += [j for j, _ in running if j not in justified]
        if ok is False and c.fresh:
            withheld[c.job_id] = (c.team, justified)
        return ok is not False

    @contextmanager
    def nested() -> Iterator[object]:
        saved, count = dict(removed), reclaiming[0]
        with ledger.what_if() as trial:
            try:
                yield trial
            finally:
                removed.clear()
                removed.update(saved)
                reclaiming[0] = count

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
        open_spare(ctx)  # and so do spare ones: freed by victims, nominated to nobody (.spare)
        plan = plan_preemption(cands, fits=fits, evict=evict, restore=restore, removable=removable,
                               what_if=nested, need=need, node_free=node_free)
        placement = None
        if plan.victims:
            for c in plan.victims:
                evict(c)
            placement = ctx.placer.place(job.id, req, flavor) if fits() else None
    if not plan.victims and withheld:  # the reason names the rule and the jobs it kept (issue 16 point 5)
        plan = PreemptionPlan(refused=_withheld_text(withheld),
                              details={"rule": "withdrawal", "protected": sorted(withheld),
                                       "reclaimed": sorted({j for _, js in withheld.values() for j in js})})
    return plan, placement


def _withheld_text(withheld: dict[str, tuple[str, list[str]]]) -> str:
    """``cb of c is not withdrawn: without it c would not have been borrowing when r was reclaimed from it
    this cycle`` — a refusal by :func:`_search`'s rule that withdrawals never justify a running reclaim."""
    parts = []
    for team in sorted({t for t, _ in withheld.values()}):
        ids = sorted(j for j, (t, _) in withheld.items() if t == team)
        taken = sorted({r for j in ids for r in withheld[j][1]})
        one = len(ids) == 1
        parts.append(f"{', '.join(ids)} of {team} {'is' if one else 'are'} not withdrawn: without "
                     f"{'it' if one else 'them'} {team} would not have been borrowing when {', '.join(taken)} "
                     f"{'was' if len(taken) == 1 else 'were'} reclaimed from it this cycle")
    return "; ".join(parts)


def _issue(ctx: CycleContext, job: Job, flavor: Flavor, plan: PreemptionPlan, placement: Placement, *,
           borrowing: bool = False) -> bool:
    """Evict the plan's victims for real, nominate the freed GPUs, record decisions and the reason.

    Victims admitted earlier in this cycle have their admission withdrawn instead (nothing runs
    yet), and GPUs nominated to a borrower are taken from its nomination; when those are all the
    victims, the job is admitted at once. GPUs withdrawals free go first to higher-class jobs of
    its team passed over earlier in the cycle (:mod:`.takeover`): when one takes any, nothing more
    is done and False is returned (the caller searches again). What a dropped nomination frees
    beyond the job's need goes to the jobs passed over earlier (:func:`.takeover.offer_freed`).
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
        waiting_on = _stopping_on(ctx, placement)
        if waiting_on:  # the plan counted spare GPUs still held by stopping jobs: wait for them
            _hold_and_wait(ctx, job, flavor.model, placement, waiting_on, tuple(c.job_id for c in withdrawn))
        else:
            owners = ctx.book.eligible(job)  # the plan counted GPUs nominated to it or lower classes of its team
            ctx.book.open(owners)
            admit_placed(ctx, job, placement, flavor.model)
            ctx.book.after_admit(job, {g for g, _ in placement.holding.gpus}, owners)
        if reclaimed:
            offer_freed(ctx)
        return True
    names = []
    freed = []
    for c in running:
        victim = ctx.ledger.holders[c.job_id].job
        if c.kind == "reclaim":  # a withdrawal later in the cycle must leave it justified (_search)
            for key in _team_lines(ctx, c.job_id):
                ctx.reclaimed_lines.setdefault(key, []).append((c.job_id, c.milli))
        holding = ctx.state.holdings.get(c.job_id)
        if holding is not None:
            freed.append((c.job_id, holding))
        ctx.ledger.evict(c.job_id)
        ctx.victims.add(c.job_id)
        names.append(c.job_id)
        if c.kind == "reclaim" and borrowing:
            sentence = (f"preempted (its team borrows) by higher-priority {spec.priority.value} job {job.id} of "
                        f"{spec.team}, which may borrow over classes up to {ctx.profile.borrow_within_cohort} "
                        "(borrow within cohort)")
        elif c.kind == "reclaim":
            sentence = f"preempted to return borrowed quota to {spec.team}"
        else:
            sentence = f"preempted by higher-priority {spec.priority.value} job {job.id} of {spec.team}"
        ctx.preempts.append(Preempt(
            job_id=c.job_id, for_job=job.id, reason=sentence, kind=c.kind, grace_s=ctx.profile.grace_s,
            checkpoint_signal=ctx.profile.checkpoint_signal and victim.spec.checkpointable))
        ctx.audit.append(AuditRecord(
            action="reclaim" if c.kind == "reclaim" else "preempt", job_id=c.job_id, user=c.user,
            message=f"{c.job_id} ({c.team}, {victim.spec.priority.value}) {sentence}",
            details={"for_job": job.id, "for_team": spec.team, "kind": c.kind, "victim_team": c.team,
                     "gpus": c.milli / 1000, "protected_min_runtime": c.protected,
                     "node": victim.allocation.node if victim.allocation else None,
                     "grace_s": ctx.profile.grace_s, "plan": [v.job_id for v in plan.victims]}))
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
        message=f"preempting {', '.join(names)} to free GPUs on {', '.join(nodes)}; the GPUs are held for this job",
        details={"victims": names, "node": nodes[0], "nodes": nodes, "gpus": list(alloc.all_gpu_uuids()),
                 "model": flavor.model, "kinds": {c.job_id: c.kind for c in plan.victims if not c.nominated},
                 **({"nominations_reclaimed": [c.job_id for c in reclaimed]} if reclaimed else {})},
        unblock="starts as soon as the preempted jobs have stopped (grace period)",
        eta=ctx.now + timedelta(seconds=ctx.profile.grace_s))))
    return True


def _withdraw(ctx: CycleContext, c: Candidate, job: Job) -> None:
    """Take back an admission made earlier in this cycle: it borrowed GPUs ``job`` reclaims."""
    holder = ctx.fresh_holder(c.job_id)
    placement = ctx.fresh.pop(c.job_id)
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


# ---------------------------------------------------------------------------------- refusals
def _explain(ctx: CycleContext, visit: Visit, flavor: Flavor, plan: PreemptionPlan, cands: list[Candidate],
             ruled_out: list[Job], owners: list[str], stopping: list[str], within: bool) -> None:
    """Say why nothing was evicted: the guarantee rule, the team's reclaim rule, or no set fits."""
    if visit.refusal:
        return
    job = visit.job
    spec = job.spec
    if ctx.quota.enabled and not within:
        # lower-class work of its own team that the policy spares answers "why not preempt?" first
        # (new user 4: a job granted high read only "guaranteed 0 … nothing is reclaimed" behind normal work)
        _explain_none_preemptible(ctx, visit, flavor, own_team_only=True)
        if visit.refusal:
            return
        visit.refusal, start_when = _reclaim_note(ctx, visit, flavor)
        lines = [ln for ln in ctx.quota.applicable(spec.team, spec.user, flavor.model) if ln.user is None]
        # the team's guarantee: 0 (no quota line of its own) means reclaim can never apply to it,
        # which the renderer then leaves out of an ordinary wait's sentence (new user 4, finding 17);
        # start_when: the note names what lets it start, which the ETA then does not say again (new user 14, N12)
        visit.refusal_details = {"rule": "guarantee", "guaranteed": lines[0].guaranteed / 1000 if lines else 0,
                                 **({"start_when": True} if start_when else {})}
        return
    if ruled_out:
        policy = ctx.reclaim_for(spec.team)
        extra = [_candidate(ctx, ctx.ledger.holders[o.id], "reclaim") for o in ruled_out]
        widened, _ = _search(ctx, visit, flavor, cands + extra, owners, stopping)
        if widened.victims:
            protected = sorted(o.id for o in ruled_out)
            visit.refusal = (f"{spec.team}'s reclaim rule '{policy.name}' protects {policy.protects(job)}, "
                             f"here {', '.join(protected[:5])}" + (f" and {len(protected) - 5} more" if len(protected) > 5
                                                                  else ""))
            visit.refusal_details = {"rule": policy.name, "protected": protected,
                                     "would_reclaim": [c.job_id for c in widened.victims]}
            return
    if plan.refused and plan.refused != "no preemptible job":
        visit.refusal = plan.refused
        visit.refusal_details = dict(plan.details)
    elif plan.refused:
        _explain_none_preemptible(ctx, visit, flavor)


def _explain_none_preemptible(ctx: CycleContext, visit: Visit, flavor: Flavor, *, own_team_only: bool = False) -> None:
    """A job above the lowest class that found nothing to evict on ``flavor`` says which rule
    spares the work holding those GPUs, with the numbers (issue 20: a job granted ``high``
    waited behind normal jobs and was not told it would not preempt them)."""
    job = visit.job
    spec = job.spec
    holders = [h for h in ctx.holder_index()[0].get(flavor.model, ()) if h.job.id != job.id
               and (not own_team_only or h.job.spec.team == spec.team)]
    policy = ctx.preemption
    # lower-class work the team's policy spares (preemptible work that could not make room is not "spared")
    spared = [h for h in holders if h.job.spec.priority.rank < spec.priority.rank
              and (h.job.spec.team != spec.team or policy is None or not policy.may_preempt(job, h.job))]
    if not spared:
        return  # nothing of a lower class is spared: no one would expect a preemption
    mine = [h for h in holders if h.job.spec.team == spec.team]
    theirs = [h for h in holders if h.job.spec.team != spec.team]
    if own_team_only and not any(h.job.spec.team == spec.team for h in spared):
        return
    clauses: list[str] = []
    if mine and any(h.job.spec.team == spec.team for h in spared):
        preemptible = tuple(getattr(policy, "preemptible", ())) if policy is not None else ()
        classes = sorted({h.job.spec.priority.value for h in mine}, key=lambda c: -PriorityClass(c).rank)
        takes = (f"{spec.priority.value} preempts only {' or '.join(preemptible)}-priority work of its team"
                 if preemptible else f"{spec.team}'s jobs are never preempted for one another")
        clauses.append(f"{takes} (rule '{getattr(policy, 'name', 'never')}'), and {_count(mine)} of {spec.team} "
                       f"on these GPUs {'is' if len(mine) == 1 else 'are'} {' or '.join(classes)}")
    if theirs:
        teams = sorted({h.job.spec.team for h in theirs})
        why = ("they stay within their guaranteed quota" if ctx.quota.enabled else
               "no quotas are set, so no team takes GPUs back from another")
        clauses.append(f"work of other teams is not preempted for it ({', '.join(teams)}: {_count(theirs)}): {why}")
    visit.refusal = "; ".join(clauses)
    visit.refusal_details = {"rule": getattr(policy, "name", "never") if mine else "reclaim",
                             "priority": spec.priority.value,
                             "preemptible": list(getattr(policy, "preemptible", ()) if policy is not None else ()),
                             "holders": [{"id": h.job.id, "team": h.job.spec.team, "priority": h.job.spec.priority.value,
                                          "gpus": h.milli / 1000} for h in holders[:20]]}


def _count(holders: list[Holder]) -> str:
    """``2 jobs (4 GPUs)`` / ``1 job (0.5 GPU)``."""
    gpus = sum(h.milli for h in holders) / 1000
    return f"{len(holders)} job{'s' if len(holders) != 1 else ''} ({gpus:g} GPU{'s' if gpus != 1 else ''})"


def _within_after(ctx: CycleContext, visit: Visit, flavor: Flavor, own: list[Candidate]) -> bool:
    """Would the job be within its team's guarantee once its own preemptible jobs were evicted?
    (Issue 16 R2: decided after own-team preemption is counted, not before.)"""
    spec, req = visit.job.spec, visit.req
    with ctx.ledger.what_if():
        ctx.book.open(ctx.book.eligible(visit.job))  # quota held for it (or taken over by it) is its own
        check = ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli)
        if check.within_guarantee or not own:
            return check.within_guarantee
        for c in own:
            ctx.ledger.evict(c.job_id)
        return ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli).within_guarantee


def _reclaim_note(ctx: CycleContext, visit: Visit, flavor: Flavor) -> tuple[str, bool]:
    """Why reclaim does not apply: the job would take its team above its guarantee (case 001), and
    whether it says what lets the job start ("it can start when …").

    Names only GPUs actually lent: the part of this team's guarantee it does not use that other
    teams use above their own guarantees (issue 16: no "guaranteed 0 GPUs (75 lent)").
    """
    job, req = visit.job, visit.req
    spec = job.spec
    quota = ctx.quota
    lines = [ln for ln in quota.applicable(spec.team, spec.user, flavor.model) if ln.user is None]
    if not lines:
        return "", False
    own = lines[0]
    used = quota.usage.get(own.key, 0)
    leaving: dict[_LineKey, int] = {}  # victims already stopping are not lent: they are being reclaimed
    for h in ctx.in_flight:
        for key in _team_lines(ctx, h):
            leaving[key] = leaving.get(key, 0) + quota.charges[h][1]
    borrowers: dict[str, int] = {}
    own_quota: dict[str, int] = {}
    guaranteed: dict[str, int] = {}
    for team, team_lines in quota.team_lines.items():
        if team == spec.team:
            continue
        for ln in team_lines:
            if ln.model in ("*", flavor.model) or ln.model in flavor.model:
                usage = quota.usage.get(ln.key, 0) - leaving.get(ln.key, 0)
                if usage > ln.guaranteed:
                    borrowers[team] = max(borrowers.get(team, 0), usage - ln.guaranteed)
                if min(usage, ln.guaranteed) > 0:
                    own_quota[team] = max(own_quota.get(team, 0), min(usage, ln.guaranteed))
                    guaranteed[team] = max(guaranteed.get(team, 0), ln.guaranteed)
    lent_total = min(max(0, own.guaranteed - used), sum(borrowers.values()))
    need = req.total_milli
    free = sum(ctx.state.pools[p].free_whole for p in flavor.pools) * 1000
    me = "this kernel" if job.is_lease else "this job"  # the reader's own job, not its bare id (new user 8, N9)
    if own.guaranteed and used >= own.guaranteed:
        # at (or above) its guarantee already: the job could only borrow, which reclaim never serves
        uses = (f"already uses its {_gpus(own.guaranteed, 'guaranteed ')}" if used == own.guaranteed else
                f"already uses {_gpus(used)}, above its guarantee of {own.guaranteed / 1000:g}")
        text = (f"{spec.team} {uses}, so {me} ({_gpus(need)}) may only borrow GPUs another team leaves free; "
                "nothing is reclaimed for borrowing")
    else:
        text = (f"{spec.team} is guaranteed {_gpus(own.guaranteed)}"
                + (f" ({lent_total / 1000:g} lent to {', '.join(sorted(borrowers))}, reclaimable)" if lent_total else "")
                + f" but {me} needs {need / 1000:g}"
                + (f" with {used / 1000:g} already in use" if used else "")
                + ", above the guarantee, so nothing is reclaimed for it")
    short = need - free - lent_total
    if short > 0 and own_quota:
        # who holds the rest, with the numbers: within their own guarantees, so only their jobs
        # ending frees it ("research releases 1 GPU of its own quota" read as a quota to give back)
        teams = sorted(own_quota)
        # a team above its guarantee says both parts (new user 9, N11: "nlp uses all 1 GPU of its
        # guarantee" while nlp used 2, 1 of them borrowed)
        # "its whole guarantee (1 GPU)", not "all 1 GPU of its guarantee" (new user 14, N12)
        within = ", ".join(
            (f"{t} uses {_gpus(guaranteed[t] + borrowers[t])}: its whole guarantee ({guaranteed[t] / 1000:g}) and "
             f"{borrowers[t] / 1000:g} borrowed" if borrowers.get(t) else
             f"{t} uses its whole guarantee ({_gpus(guaranteed[t])})") if own_quota[t] == guaranteed[t]
            else f"{t} uses {own_quota[t] / 1000:g} of its {_gpus(guaranteed[t], 'guaranteed ')}"
            for t in teams)
        whose = f"{_of(teams[0])} jobs free" if len(teams) == 1 else f"jobs of {', '.join(teams)} free"
        text += f"; it can start when {whose} {_gpus(short)} ({within})"
        if used >= short:
            text += f" or {_of(spec.team)} own running work frees {_gpus(short)}"
        return text, True
    return text, False


def _of(team: str) -> str:
    """``research's`` / ``interns'``."""
    return f"{team}'" if team.endswith("s") else f"{team}'s"


def _gpus(milli: int, adjective: str = "") -> str:
    """``1 GPU`` / ``3 GPUs`` / ``0.5 GPU`` / ``0 GPUs`` from milli-GPUs (``adjective`` before ``GPU``)."""
    n = milli / 1000
    return f"{n:g} {adjective}GPU{'s' if n > 1 or n == 0 else ''}"

