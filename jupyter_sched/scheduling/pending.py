"""Pending reasons, and the EASY reservation of the first job per GPU model blocked by capacity.

Builds the one primary reason (:mod:`.reasons`), appends the preemption refusal when it explains
the wait (case 001, case 004), the jobs of its team it waits behind (case 032) and why it could not
backfill (case 033). For the first capacity-blocked job per model, running jobs are trial-released
in end-time order until it fits (:func:`..backfill.easy.find_reservation`): the GPUs it would get
are reserved from later jobs. The ETA every pending job shows is :mod:`.eta`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..backfill.easy import Ending, Headroom, Reservation, job_end, outlasts, walk_ends
from ..model import GPU_MILLI, Job, JobKind, PendingReason, ResourceRequest
from ..model.job import public_name
from ..model.units import said_time
from ..placement.placer import Flavor
from ..placement.state import Holding
from ..queues.limits import effective_limit
from ..queues.order import OVERDUE_FLOOR_S, PASSED_BY, PROMISE, passed_by
from ..wording.reasons import barred_clause, elected_behind_clause, elected_clause, headroom_clause
from .admit import placed_check
from .context import CAPACITY_CODES, RESERVE_PREFIX, CycleContext, Visit
from .reasons import FlavorOutcome, build_reason, reason_with
from .snapshot import Pend

__all__ = ["OWNER_HOLDS", "OWNER_LEASES", "pend"]


def pend(ctx: CycleContext, visit: Visit) -> None:
    """Pend ``visit.job`` with its one primary reason and ETA."""
    job, req, flavors, outcomes = visit.job, visit.req, visit.flavors, visit.outcomes
    # shared per outcomes while nothing else in the reason is the job's own: no GPUs nominated to its
    # team or taken from it, and no refusal numbers (they name the job's class)
    key = (tuple([id(o) for o in outcomes]), visit.refusal, job.preempted_by, job.is_lease) \
        if all([o.shared for o in outcomes]) and not ctx.book.by_team.get(job.spec.team) \
        and job.id not in ctx.book.taken and job.id not in ctx.reclaimed and not visit.refusal_details else None
    cached = ctx.reason_cache.get(key) if key is not None else None
    if cached is not None:
        reason, message, details = cached
    else:
        reason, message, details = _reason(ctx, visit)
        if key is not None:
            ctx.reason_cache[key] = (reason, message, details)
    if job.id in ctx.elected:  # first in its class: it waited past its promised wait (issue 16)
        message, details = _elected(ctx, job, message, details)
    elif ctx.barred and (barred := ctx.barred.get(job.id)) is not None:  # overdue, but its user holds too much
        message = message.rstrip(".") + f"; {barred_clause(**barred)}."
        details = {**details, "election_barred": barred}
    model = next((f.model for f in flavors if f.pools), "")  # its first usable GPU model
    res = ctx.reservations.get(model)
    if res is not None and res.job_id != job.id and reason.code in CAPACITY_CODES:
        message, details = _cannot_backfill(ctx, job, res, message, details, model)
    if reason.code in _HELD_CODES:
        models = frozenset(f.model for f in flavors if f.pools)
        top = ctx.top_holder(models)
        if top is not None and top["user"] != job.spec.user:
            # who holds most GPUs of its models (no quota: red team 15, R4; per model: verify 22, V1)
            details = {**details, "held_by_one_user": top}
        own = ctx.owner_leases(job.spec.user, models)
        if own is not None:  # and what its owner's own leases hold of them (newuser33 n6)
            details = {**details, OWNER_HOLDS: own.public, OWNER_LEASES: list(own.leases)}
    if res is None and model:  # the model's first job blocked by capacity reserves (one check per pend)
        _reserve(ctx, job, req, flavors, reason)
    if reason.code in _QUOTA_CODES and ctx.profile.backfill and ctx.plan is None:
        message, details = _hold_headroom(ctx, visit, message, details)
    ctx.pends.append(Pend(job.id, reason_with(reason, message=message, details=details)))


def _elected(ctx: CycleContext, job: Job, message: str, details: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """The reason of a job elected first in its class (:func:`~jupyter_sched.queues.order.elect_overdue`)
    says so, with ``details["elected"]``: ``promised_at`` / ``promised_start`` (ISO), ``waited_s`` (s since
    it was promised), ``factor`` (the profile's ``elect_overdue``) and, once an elected job of another user
    started ahead of it while it was elected, :data:`~jupyter_sched.queues.order.PASSED_BY`: those users
    (sorted; kept while it stays elected — their next elected jobs go after it:
    :func:`~jupyter_sched.queues.order.elected_order`); ``after``: for one that goes after such an elected job of
    another user (``ctx.elected_behind``), that job's id, and its line says so."""
    promise = job.reason.details[PROMISE] if job.reason is not None else {}
    at, start = datetime.fromisoformat(promise["at"]), datetime.fromisoformat(promise["start"])
    waited, factor = (ctx.now - at).total_seconds(), ctx.profile.elect_overdue
    info: dict[str, Any] = {"promised_at": promise["at"], "promised_start": promise["start"], "waited_s": waited,
                            "factor": factor}
    passed = passed_by(job) | _passed_now(ctx, job)
    if passed:
        info[PASSED_BY] = sorted(passed)
    clause = elected_clause(waited, (start - at).total_seconds(), factor, said_time(start), OVERDUE_FLOOR_S)
    if (ahead := ctx.elected_behind.get(job.id)) is not None:  # its user already passed that one (N2)
        info["after"] = ahead
        clause += f"; {elected_behind_clause(ahead)}"
    return message.rstrip(".") + f"; {clause}.", {**details, "elected": info}


def _passed_now(ctx: CycleContext, job: Job) -> set[str]:
    """The users of other jobs of ``job``'s class elected and admitted this cycle before ``job`` was
    visited (elected ahead of it: they passed it)."""
    if not ctx.admitted:
        return set()
    user, rank = job.spec.user, job.spec.priority.rank
    return {other.spec.user for job_id, other in ctx.admitted.items() if job_id in ctx.elected
            and other.spec.user != user and other.spec.priority.rank == rank}


_HELD_CODES = frozenset({"WaitingForCapacity", "Priority", "Fragmented"})
"""Waits for GPUs that running work holds: the reason names a user holding most of them, and what
its owner's own leases hold of them."""

OWNER_HOLDS = "held_by_owner"
"""``details`` key of what the waiting job's owner's own leases hold of its GPUs, in numbers
(:attr:`~.context.OwnerLeases.public`): public, as ``held_by_one_user`` is."""
OWNER_LEASES = "held_by_owner_leases"
"""``details`` key of those leases, each with its notebook and idle time (:attr:`~.context.OwnerLeases.leases`):
its owner's alone — the API leaves it out of every other reader's view (``services.jobs``)."""


def _cannot_backfill(ctx: CycleContext, job: Job, res: Reservation, message: str,
                     details: Mapping[str, Any], model: str = "") -> tuple[str, Mapping[str, Any]]:
    """Say why the job could not start ahead of the model's reservation either (case 033).

    The clause and its numbers depend only on the reservation, the job's time limit and whether
    another user owns the reserved job: worked out once per cycle for each (``ctx.backfill_clauses``;
    issue 16: most jobs pending behind a full cluster say the same), each job given its own copy."""
    limit, source = effective_limit(job.spec, ctx.profile.time_limits)
    if res.eta is None:
        return message, details
    reserved = ctx.by_id.get(res.job_id)
    other_owner = reserved is not None and reserved.spec.user != job.spec.user
    key = (res.job_id, res.eta, limit, source, other_owner)
    memo = ctx.backfill_clauses
    if key in memo:
        said = memo[key]
    else:
        said = memo[key] = _backfill_clause(ctx, res, reserved, limit, source, other_owner)
    if said is None:
        return message, details
    clause, info = said
    if reserved is not None and reserved.spec.team != job.spec.team and _own_team_first(ctx, job, model):
        # the reservation binds it only on GPUs other teams free (newuser34 N4): "own_team": its words say so
        info = {**info, "own_team": job.spec.team}
    return message.rstrip(".") + f"; {clause}.", {**details, "backfill": dict(info)}


def _own_team_first(ctx: CycleContext, job: Job, model: str) -> bool:
    """Does ``job`` borrow now but fit its team's guarantee on ``model``, so that GPUs its team's own
    running work frees bring it within and it takes them ahead of another team's reservation (as the
    cycle does: :func:`.admit.keep_off` keeps off only its own team's reservations for work within its
    guarantee, and borrowers are visited last)? newuser34 N4: vision's lease was told "cannot start ahead
    of n34a's job a-flood-4" and was granted ahead of it when vision's own job ended."""
    quota, milli = ctx.quota, job.spec.resources.total_milli
    if not model or not milli or not quota.would_borrow(job.spec.team, job.spec.user, model, milli):
        return False
    lines = [ln for ln in quota.applicable(job.spec.team, job.spec.user, model) if ln.key[1] is None]
    # its team holds GPUs there now (the ledger's use of the line): its own running work can free them
    return bool(lines) and all(milli <= ln.guaranteed and quota.usage.get(ln.key, 0) > 0 for ln in lines)


def _backfill_clause(ctx: CycleContext, res: Reservation, reserved: Job | None, limit: float | None, source: str,
                     other_owner: bool) -> tuple[str, dict[str, Any]] | None:
    """:func:`_cannot_backfill`'s clause and ``details["backfill"]`` for a job with ``limit``
    seconds (from ``source``) behind ``res`` (None: it could finish before ``res.eta``)."""
    assert res.eta is not None
    end = job_end(ctx.now, limit, ctx.now)
    if end is not None and end <= res.eta:
        return None
    said_as = ctx.said_times.get(res.eta)  # the reservation's time, said once per cycle (issue 17)
    if said_as is None:
        said_as = ctx.said_times[res.eta] = (res.eta.isoformat(), said_time(res.eta))
    when, said = said_as  # the data exact, the words to the second (N6)
    if limit is None:
        clause = (f"it has no time limit ({source}), so it cannot start ahead of {res.job_id}, reserved from {said}; "
                  "it can only start when nothing is reserved")
    else:
        clause = f"with a limit of {limit:g} s ({source}) it cannot finish before {res.job_id}, reserved from {said}"
    info: dict[str, Any] = {"reserved_for": res.job_id, "reservation": when, "limit_s": limit, "limit_source": source}
    if reserved is not None:  # named as the ETA names jobs: "big (j-…)", not the bare id (new user 16, N8)
        name = public_name(reserved.spec).strip()[:80]
        if name and name != res.job_id:
            info["reserved_for_name"] = name
        if other_owner:
            info["reserved_for_owner"] = reserved.spec.user
    return clause, info


def _reason(ctx: CycleContext, visit: Visit) -> tuple[PendingReason, str, Mapping[str, Any]]:
    job, outcomes = visit.job, visit.outcomes
    reason = build_reason(outcomes, unblock=_unblock(outcomes), asker="this kernel" if job.is_lease else "job")
    message, details = reason.message, reason.details
    ahead = _ahead_in_team(ctx, job)
    if ahead:
        details = {**details, "behind": ahead}
        message = message.rstrip(".") + f"; waiting behind higher-priority {', '.join(ahead)} of {job.spec.team}."
    by = ctx.reclaimed.get(job.id)
    if by is not None:  # its nomination went to a within-guarantee job of another team (.preempt)
        team = ctx.by_id[by].spec.team
        details = {**details, "reclaimed_by": by, "reclaiming_team": team, "nomination_reclaimed": True}
        message = (message.rstrip(".") + f"; the GPUs held for it were reclaimed by {team} for {by} within its "
                   f"guarantee ({job.spec.team} is above its own).")
    refusal = visit.refusal
    if refusal and (visit.refusal_details or {}).get("rule") == "no_preempt":  # it asked never to evict (newuser36 N6)
        if reason.code in CAPACITY_CODES:  # where GPUs, not a quota line, keep it out
            details = {**details, "preemption_refused": refusal, "preemption_rule": visit.refusal_details}
            message = message.rstrip(".") + f"; {refusal}."
        refusal = ""
    # a quota wait that ends when its own victims pass the minimum runtime says so too (new user 20, N18)
    # and so does one behind work whose owner left the team (red team 24, R6: the members were told nothing)
    if refusal and (reason.code in CAPACITY_CODES or (visit.refusal_details or {}).get("rule") == "min_runtime"
                    or "departed" in (visit.refusal_details or {})):
        details = {**details, "preemption_refused": refusal, **({"preemption_rule": visit.refusal_details}
                                                                if visit.refusal_details else {})}
        message = message.rstrip(".") + f"; no preemption: {refusal}."
    stuck = _overdue_on(ctx, visit) if ctx.overdue and reason.code in CAPACITY_CODES else {}
    if stuck:  # say what holds GPUs past a grace period (case 032 without force-kill, Kueue #6489)
        details = {**details, "held_by_terminating": ctx.overdue_details(stuck)}
        message = message.rstrip(".") + f"; {ctx.overdue_clause(stuck)}."
    if job.preempted_by:  # by name, and why (ctx.preempted_clause: new users 8 N9, 11 N11/N16)
        clause, said = ctx.preempted_clause(job)
        message = message.rstrip(".") + f"; {clause}."
        details = {**details, **said}
    return reason, message, details


def _reserve(ctx: CycleContext, job: Job, req: ResourceRequest, flavors: tuple[Flavor, ...],
             reason: PendingReason) -> None:
    """EASY: the first job per GPU model blocked by capacity reserves the GPUs it gets when the
    running jobs end (:func:`..backfill.easy.find_reservation`); later jobs may start now only if
    they do not delay it (:mod:`.admit`). Its ETA, like every job's, comes from :mod:`.eta`."""
    if not ctx.profile.backfill or reason.code not in CAPACITY_CODES:
        return
    flavor = next((f for f in flavors if f.pools), None)
    if flavor is None or flavor.model in ctx.reservations:
        return
    model, spec = flavor.model, job.spec
    # capacity waits on anything running on the model, quota on the team's own work
    by_model, by_team = ctx.holder_index()
    names = {h.job.id for h in (*by_model.get(model, ()), *by_team.get(spec.team, ()))}
    admitted, team = ctx.admitted, spec.team
    names.update([j for j, p in ctx.fresh.items() if p.model == model or admitted[j].spec.team == team])
    by_end, unknown = _endings(ctx, names)

    def release(job_id: str) -> None:
        ctx.ledger.evict(job_id)

    def try_fit() -> frozenset[int] | None:
        return _fits(ctx, job, req, flavor)

    with ctx.ledger.what_if():
        eta, eta_reason, gpus = walk_ends(by_end, unknown, release, try_fit, ctx.now)
    ctx.reservations[model] = Reservation(job.id, model, eta, eta_reason, gpus, spec.team, spec.priority.rank,
                                          tuple(unknown) if eta is None else ())


_QUOTA_CODES = frozenset({"BorrowingLimitReached", "ExceedsQuota"})
"""Waits on a quota line's room: the first such job per line holds the room (:func:`_hold_headroom`)."""


def _hold_headroom(ctx: CycleContext, visit: Visit, message: str, details: Mapping[str, Any]
                   ) -> tuple[str, Mapping[str, Any]]:
    """The first job (in queue order) that a quota line with a ceiling keeps waiting holds the line's room
    (:class:`~jupyter_sched.backfill.easy.Headroom`; newuser36 N1): the running work its team (or user) has
    there is trial-released in end-time order, as :func:`_reserve` does for GPUs, until the job fits the line
    and the GPUs; later jobs charged to the line may then start only where they end by then or fit in what
    is left (:mod:`.admit`). Where no job blocked ahead of it reserves its GPU model, it also reserves the GPUs
    it gets then (the model's EASY reservation: every team's later jobs go around them). Slurm's backfill plans
    a job blocked by a group limit so with ``assoc_limit_stop`` (by default it skips the job, and a stream of
    small jobs passes it forever, as Kueue's BestEffortFIFO lets them). Its line says so.

    The lines it holds are those its quota check refused it on (:attr:`~.reasons.FlavorOutcome.quota_lines`: the
    ledger's one rule, a line's use counting what its team's shares hold whole), and each step of the walk asks
    admission's rule (:func:`_fits`): s42-eta, the world of ``test_cycle_memos._team_c_at_its_line`` — its usage
    read here without the rest its team's share held whole, a share at its team's limit held nothing, the next
    job blocked by capacity was told it held the GPUs from the end of that share, and the ETA replay (which
    counts the rest, as the check does) started the share there instead."""
    job, req = visit.job, visit.req
    flavor = next((f for f in visit.flavors if f.pools), None)
    milli = req.total_milli
    if flavor is None or milli <= 0:
        return message, details
    model, spec, quota = flavor.model, job.spec, ctx.quota
    refused = next((o.quota_lines for o in visit.outcomes if o.model == model and o.quota_lines), ())
    short = [ln for key in refused if (ln := quota.lines[key]).ceiling is not None and key not in ctx.headroom]
    if not short or any(milli > (ln.ceiling or 0) for ln in short):  # above a ceiling: never fits, holds nothing
        return message, details
    by_model, by_team = ctx.holder_index()
    names = {h.job.id for h in (*by_model.get(model, ()), *by_team.get(spec.team, ()))}
    admitted, team = ctx.admitted, spec.team
    names.update([j for j, p in ctx.fresh.items() if p.model == model or admitted[j].spec.team == team])
    by_end, unknown = _endings(ctx, names)
    used_then: dict[tuple[str, str | None, str], int] = {}
    st = ctx.state
    pools = set(flavor.pools)
    # the GPUs wholly free now (later jobs may use them meanwhile); a GPU's free rest beside work that ends by then is
    # what that end frees it for, not kept off it (s42-eta: with the rest kept, a share that may not share a GPU
    # was placed on the GPU free now, and a 1-GPU job that could start there was held back behind it)
    free_now = tuple((g, m) for g, m in enumerate(st.free_milli) if m >= GPU_MILLI and st.node_pool[st.gpu_node[g]] in pools)

    # an earlier job's reservation on the model keeps its GPUs from this one where it would outlast it (admission's
    # rule, admit._place; the ETA replay's too: lookahead._hold_room finds the start on the view that keeps them)
    res = ctx.reservations.get(model)
    around = res if res is not None and res.job_id != job.id and res.gpus and res.eta is not None else None
    limit = effective_limit(spec, ctx.profile.time_limits)[0] if around is not None else None
    end_of = {holder: end for end, group in by_end.items() for holder, _ in group} if around is not None else {}
    at = [ctx.now]  # the end the walk has reached: the start it tries

    def release(job_id: str) -> None:
        ctx.ledger.evict(job_id)
        at[0] = max(at[0], end_of.get(job_id, at[0]))

    def try_fit() -> frozenset[int] | None:
        if around is not None and outlasts(job_end(at[0], limit, ctx.now), around.eta):
            with st.what_if():
                kept = tuple((g, st.free_milli[g]) for g in around.gpus if st.free_milli[g] > 0)
                if kept:
                    st.take(RESERVE_PREFIX + around.job_id, Holding(gpus=kept, node=0))
                gpus = _fits(ctx, job, req, flavor)
        else:
            gpus = _fits(ctx, job, req, flavor)
        if gpus is not None:  # what each line counts then: its usage and its shares' rests, as the check counts
            used_then.update({ln.key: quota.used(ln.key) for ln in short})
        return gpus

    with ctx.ledger.what_if():
        eta, _, gpus = walk_ends(by_end, unknown, release, try_fit, ctx.now)
    if eta is not None and free_now and model not in ctx.reservations:
        # the GPUs it reserves (below): on those all the work ending by then frees where they suffice, so later
        # jobs may use the GPUs free now meanwhile (its line waits on that work, not on GPUs; the ETA replay keeps
        # them so: lookahead._keep_shadow); the walk stopped at the first end that let it fit
        with ctx.ledger.what_if():
            for end in sorted(e for e in by_end if e <= eta):
                for holder, _ in by_end[end]:
                    ctx.ledger.evict(holder)
            with st.what_if():
                st.take(RESERVE_PREFIX + job.id, Holding(gpus=free_now, node=0))
                freed = ctx.placer.place(job.id, req, flavor)
            if freed is not None:
                gpus = frozenset(g for g, _ in freed.holding.gpus)
    for ln in short:
        assert ln.ceiling is not None
        spare = ln.ceiling - used_then[ln.key] - milli if eta is not None else 0
        ctx.headroom[ln.key] = Headroom(job.id, ln.key, eta, max(0, spare), ln.ceiling)
    if eta is None:  # work without a time limit holds the room: nothing is kept (as EASY), nothing to say
        return message, details
    # and the GPUs it starts on at ``eta``, from every team's later jobs, when it is the model's first blocked job
    # (s37-eta, newuser36 N1 (b): with its room alone held, a later 1-GPU job of another team took a GPU it needed
    # at +80 s and held it to +680 s; Slurm's backfill plans such a job's nodes too where it holds its limit's
    # room — assoc_limit_stop — rather than skipping it): later jobs go around it as around any EASY reservation
    kept = model not in ctx.reservations and bool(gpus)
    if kept:
        ctx.reservations[model] = Reservation(job.id, model, eta, "", gpus, spec.team, spec.priority.rank)
    line = short[0]
    assert line.ceiling is not None
    clause = headroom_clause(line.team, line.user, line.ceiling / 1000, said_time(eta), gpus_kept=kept)
    info = {"team": line.team, "user": line.user, "model": line.model, "limit": line.ceiling / 1000,
            "reservation": eta.isoformat(), **({"gpus_kept": True} if kept else {})}
    return message.rstrip(".") + f"; {clause}.", {**details, "headroom": info}


def _fits(ctx: CycleContext, job: Job, req: ResourceRequest, flavor: Flavor) -> frozenset[int] | None:
    """The GPUs ``job`` gets on ``flavor`` where admission would start it now: placed by the placer, and within
    its quota lines as admission counts it (:func:`.admit.placed_check`: a share opening a GPU of its own is
    charged that GPU whole; a whole-GPU job its request, checked before it is placed). The one test of both
    reservation walks (:func:`_reserve`, :func:`_hold_headroom`) at each end they release, so the job and the
    time they name are the ones admission — and the ETA replay, which counts the lines so — start (s42-eta)."""
    spec, model, quota = job.spec, flavor.model, ctx.quota
    share = quota.held is not None and req.gpu_milli < GPU_MILLI
    # before placing: a share adds at least nothing to its team lines (packed beside its team's shares), so one the
    # lines refuse even so fits nowhere, and the walk's step needs no placement (hot: a walk reads every holder)
    if not quota.check(spec.team, spec.user, model, req.total_milli, 0 if share else None).ok:
        return None
    placement = ctx.placer.place(job.id, req, flavor)
    if placement is None or (share and not placed_check(ctx, job, model, placement).ok):
        return None
    return frozenset(g for g, _ in placement.holding.gpus)


_LEASE = JobKind.LEASE  # read per holder: a member looked up on an Enum class is slow


def _endings(ctx: CycleContext, names: set[str]
             ) -> tuple[dict[datetime, list[tuple[str, datetime]]], list[str]]:
    """:func:`_ending` of each of ``names`` that holds capacity on the ledger, as
    :func:`~jupyter_sched.backfill.easy.walk_ends` reads them: ``(job id, end)`` by end, and the ids of
    those without one in ``names``' order.

    Hot (once per EASY reservation, over every holder of the model: mostly this cycle's admissions,
    which start now): an admission's end is read here per time limit, without a call or an
    :class:`Ending` each (issue 16, session 28: a 5,000-node cycle's reservation read ~10,000)."""
    holdings, running, admitted = ctx.state.holdings, ctx.ledger.holders, ctx.admitted
    now, rules = ctx.now, ctx.profile.time_limits
    ends: dict[tuple[datetime | None, float | None], datetime | None] = {}
    by_end: dict[datetime, list[tuple[str, datetime]]] = {}
    unknown: list[str] = []
    for holder in names:
        if holder not in holdings:
            continue
        if holder in running or holder not in admitted:
            ending = _ending(ctx, holder, ends)
            if ending is None:
                continue
            end = ending.end
        else:
            spec = admitted[holder].spec
            limit = spec.time_limit_s
            if limit is None or spec.kind is _LEASE:
                limit = effective_limit(spec, rules)[0]
            key = (now, limit)
            if key in ends:
                end = ends[key]
            else:
                end = ends[key] = job_end(now, limit, now)
        if end is None:
            unknown.append(holder)
        elif (group := by_end.get(end)) is not None:
            group.append((holder, end))
        else:
            by_end[end] = [(holder, end)]
    return by_end, unknown


def _ending(ctx: CycleContext, holder: str,
            ends: dict[tuple[datetime | None, float | None], datetime | None]) -> Ending | None:
    """When ``holder`` ends at the latest: start (or now, for this cycle's admissions) + time limit.

    ``ends``: end by (start, limit), shared by the calls of one reservation (it reads every holder
    of the model: this cycle's admissions share one start and a handful of limits)."""
    h = ctx.ledger.holders.get(holder)
    if h is not None:
        job, start = h.job, h.job.started_at or h.job.admitted_at
    elif holder in ctx.admitted:
        job, start = ctx.admitted[holder], ctx.now
    else:
        return None
    spec = job.spec
    limit = spec.time_limit_s  # effective_limit's answer when given (a lease has none): no call
    if limit is None or spec.kind is _LEASE:
        limit = effective_limit(spec, ctx.profile.time_limits)[0]
    key = (start, limit)
    if key in ends:
        end = ends[key]
    else:
        end = ends[key] = job_end(start, limit, ctx.now)
    return Ending(holder, end)


def _overdue_on(ctx: CycleContext, visit: Visit) -> dict[str, float]:
    """Victims past their grace period holding GPUs of a model ``visit.job`` may use."""
    models = {f.model for f in visit.flavors if f.pools}
    return {h: since for h, since in ctx.overdue.items()
            if (held := ctx.ledger.holders.get(h)) is not None and held.model in models}


def _ahead_in_team(ctx: CycleContext, job: Job) -> list[str]:
    """Higher-class jobs of ``job``'s team holding GPUs freed for the team, or that took over GPUs
    freed for ``job`` this cycle (case 032: it waits behind them, keeping its place in its class)."""
    book = ctx.book
    rank = job.spec.priority.rank
    owners = [o for o in book.by_team.get(job.spec.team, ()) if book.jobs[o].spec.priority.rank > rank]
    return list(dict.fromkeys([*book.taken.get(job.id, ()), *owners]))


def _unblock(outcomes: list[FlavorOutcome]) -> str:
    for o in outcomes:
        if o.capacity_code == "Fragmented":
            if o.capacity_unblock:  # a gang held off by a GPU node's host part (session 40)
                return o.capacity_unblock
            return "waits until one node has enough free GPUs; fewer GPUs per worker (or more workers) would fit now"
        if o.capacity_code == "UnhealthyGpu":
            # Case 018: say what an admin can do (a withdrawn GPU does not come back on its own).
            return ("waits until the unhealthy GPUs recover (an admin can restart the NVIDIA device plugin on the "
                    "node once the GPU is checked, or drain the node), or for other jobs to finish")
        if o.capacity_code == "NodeCordoned":  # hubadmin24: a node cordoned for maintenance would hold it
            cordons = o.capacity.get("cordons") or [{}]
            node = str(cordons[0].get("node") or "NODE")
            # a job asking no GPU, or no node but the cordoned (newuser27 n5): only the cordon's end lets it in
            if "requested" not in o.capacity or o.capacity.get("no_other_nodes"):
                return f"starts when an admin uncordons {node} (jupyter-sched nodes uncordon {node})"
            return (f"starts when an admin uncordons {node} (jupyter-sched nodes uncordon {node}), or when GPUs free "
                    "up on the other nodes")
        if o.capacity_code == "WaitingForCapacity" and o.capacity_unblock:  # a GPU node's host part (session 40)
            return o.capacity_unblock
        if o.capacity_code in ("WaitingForCapacity", "Priority"):
            return "starts when running jobs finish (see ETA)"
    for o in outcomes:
        if o.quota_code:
            team = o.quota.get("team")
            return f"starts when {team} releases GPUs or an admin raises its quota"
    return "an admin can check node taints, labels and health"
