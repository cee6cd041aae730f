"""Why nothing was evicted for a job: the refusal its pending reason carries (STYLE §5).

:func:`explain` sets ``visit.refusal`` (one sentence) and ``visit.refusal_details`` (its numbers,
GPUs as floats of whole GPUs; ``rule`` names the rule that applied) — the first that explains:

* ``guarantee`` — reclaim serves only jobs within their team's guarantee (DESIGN.md *Reclaim*,
  case 001): the note names the GPUs actually lent (the part of the team's unused guarantee
  other teams use above their own), never lending that did not happen (issue 16 point 5), and
  who holds the rest, with what lets the job start;
* ``min_runtime`` — the victims that would make the job fit run again after an eviction and
  have run less than the profile's minimum runtime (``min_runtime_s``, Slurm's ``PreemptExemptTime``), which is a rule: the job
  waits "until <victim> has run 5 min (HH:MM UTC)" (red team 15 R13), and ``until`` is its ETA;
* the team's reclaim rule (``any`` / ``lower-or-equal`` / ``lower`` / ``never``, Kueue's
  ``reclaimWithinCohort``) when it protected jobs whose eviction would have made the job fit —
  it names the rule and the jobs it protected (issue 16 point 1);
* the team's preemption policy (``lower-class``, ``lower-or-newer-equal``, ``never``) sparing
  lower-class work on those GPUs (issue 20);
* the search's own refusal (no set fits; withdrawals kept by
  :class:`~jupyter_sched.preemption.ReclaimRules`).
"""

from __future__ import annotations

from datetime import timedelta

from ...backfill.easy import Reservation
from ...model import GPU_MILLI, Job, PriorityClass
from ...model.job import public_name
from ...model.units import clock_text, said_time
from ...placement.placer import Flavor
from ...preemption.reclaim_rules import DEPARTED, LineKey
from ...preemption.victims import Candidate, PreemptionPlan
from ...quota import Line
from ...wording.reasons import departed_text, work_named
from ..context import CycleContext, Visit
from ..ledger import Holder
from .candidates import candidate, class_share, departed_hold, held_away, team_lines
from .search import search

__all__ = ["explain", "explain_reserved"]


def explain(ctx: CycleContext, visit: Visit, flavor: Flavor, plan: PreemptionPlan, cands: list[Candidate],
            ruled_out: list[Job], owners: list[str], stopping: list[str], within: bool, *,
            young: list[Candidate] | None = None, reserved: Reservation | None = None) -> None:
    """Say why nothing was evicted: the guarantee rule, the minimum runtime, the team's reclaim
    rule, or no set fits (an EASY reservation it may not delay: :func:`explain_reserved`). ``young``: candidates left out for
    being younger than the minimum runtime; ``reserved``: the reservation the plans kept off
    (:func:`..admit.keep_off`)."""
    if visit.refusal:
        return

    job = visit.job
    spec = job.spec
    if ctx.quota.enabled and not within:
        # its own team's lower class, evicted before and younger than the minimum runtime, is
        # preempted for it once it passes it: that is when it starts (new user 20, N18)
        if young and _explain_young(ctx, visit, flavor, cands, young, owners, stopping, reserved):
            return
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
    if young and _explain_young(ctx, visit, flavor, cands, young, owners, stopping, reserved):
        return
    if ruled_out:
        policy = ctx.reclaim_for(spec.team)
        extra = [candidate(ctx, ctx.ledger.holders[o.id], "reclaim" if o.spec.team != spec.team else DEPARTED)
                 for o in ruled_out]
        widened, _ = search(ctx, visit, flavor, cands + extra, owners, stopping, reserved=reserved)
        if widened.victims:
            protected = sorted(o.id for o in ruled_out)
            visit.refusal = (f"{spec.team}'s reclaim rule '{policy.name}' protects {policy.protects(job)}, "
                             f"here {', '.join(protected[:5])}" + (f" and {len(protected) - 5} more" if len(protected) > 5
                                                                  else ""))
            visit.refusal_details = {"rule": policy.name, "protected": protected,
                                     "would_reclaim": [c.job_id for c in widened.victims]}
            _say_departed(ctx, visit, [c.job_id for c in widened.victims], reclaimable=False)
            return
    if plan.refused and plan.refused != "no preemptible job":
        visit.refusal = plan.refused
        visit.refusal_details = dict(plan.details)
    elif plan.refused:
        _explain_none_preemptible(ctx, visit, flavor)


def _say_departed(ctx: CycleContext, visit: Visit, ids: list[str], *, reclaimable: bool = True) -> None:
    """Add to the refusal the work among ``ids`` whose owner left the job's team, said as
    :func:`~jupyter_sched.wording.reasons.departed_text` (red team 24, R6: the members waited behind a
    left member's lease with no word why), with ``details["departed"]``: job id → user, team, since.
    ``reclaimable``: False when the team's reclaim rule keeps them."""
    said: list[str] = []
    departed: dict[str, dict[str, str]] = {}
    for job_id in ids:
        job = ctx.by_id.get(job_id)
        hold = departed_hold(ctx, job) if job is not None else None
        if job is None or hold is None or job.spec.team != visit.job.spec.team:
            continue
        departed[job_id] = {"user": job.spec.user, "team": hold.team, "since": hold.since.isoformat()}
        said.append(departed_text(work_named(job_id, public_name(job.spec), job.spec.user), job.spec.user, hold.team,
                                  said_time(hold.since), reclaimable=reclaimable))
    if departed:
        visit.refusal = "; ".join([visit.refusal, *said])
        visit.refusal_details = {**(visit.refusal_details or {}), "departed": departed}


def explain_reserved(ctx: CycleContext, visit: Visit, flavor: Flavor, cands: list[Candidate], owners: list[str],
                     stopping: list[str], reserved: Reservation, *, borrowing: bool) -> bool:
    """When a plan would make the job fit only on GPUs reserved for the first blocked job, say so
    (True): ``evicting j2 would let it start only on GPUs reserved for j4`` — the reservation
    admission keeps too ("fits now but would delay j4"), which an eviction must not get round."""
    if visit.refusal:
        return False
    widened, _ = search(ctx, visit, flavor, cands, owners, stopping, borrowing=borrowing)
    if not widened.victims:
        return False
    victims = sorted(c.job_id for c in widened.victims)
    said = ", ".join(victims[:5]) + (f" and {len(victims) - 5} more" if len(victims) > 5 else "")
    visit.refusal = f"evicting {said} would let it start only on GPUs reserved for {reserved.job_id}"
    visit.refusal_details = {"rule": "reservation", "reserved_for": reserved.job_id, "model": reserved.model,
                             "would_evict": victims}
    return True


def _explain_young(ctx: CycleContext, visit: Visit, flavor: Flavor, cands: list[Candidate],
                   young: list[Candidate], owners: list[str], stopping: list[str],
                   reserved: Reservation | None) -> bool:
    """When victims younger than the minimum runtime would make the job fit, say until when they
    are protected (True): ``… until a-4 (j-1) has run 5 min (12:05 UTC)``; ``details["until"]``
    (ISO) is when the last of them passes it, the ETA the job shows (red team 15 R13)."""
    widened, _ = search(ctx, visit, flavor, cands + young, owners, stopping, reserved=reserved)
    protected = [c for c in widened.victims if c.exempt]
    if not protected:
        return False
    limit = ctx.profile.min_runtime_s
    ends = {c.job_id: c.started + timedelta(seconds=limit) for c in protected if c.started is not None}
    if not ends:
        return False
    until = max(ends.values())
    last = max(ends, key=lambda j: (ends[j], j))
    job = ctx.by_id.get(last)
    who = f"{job.spec.user}'s {public_name(job.spec)} ({last})" if job is not None else last
    others = len(protected) - 1
    span = f"{limit / 60:g} min" if limit >= 60 else f"{limit:g} s"
    visit.refusal = (f"{who}{f' and {others} more' if others else ''} would make room, but no job is preempted "
                     f"before it has run {span} (the minimum runtime): it waits until {who} has run {span} "
                     f"({clock_text(until, ctx.now)})")  # the ETA's clock: one rule (newuser23 N3)
    # how the ETA says it (wording.reasons.eta_sentence): of its own team (preempted) or another's (reclaimed)
    own = all(c.team == visit.job.spec.team for c in protected)
    visit.refusal_details = {"rule": "min_runtime", "min_runtime_s": limit, "until": until.isoformat(),
                             "protected": sorted(ends), "would_preempt": [c.job_id for c in widened.victims],
                             "same_team": own, "evicted_as": "preempted" if own or all(
                                 c.kind != "reclaim" for c in protected) else "reclaimed",
                             "priorities": sorted({ctx.by_id[c.job_id].spec.priority.value for c in protected
                                                   if c.job_id in ctx.by_id})}
    _say_departed(ctx, visit, [c.job_id for c in protected])
    return True


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
        share = class_share(ctx, spec.team)
        # no quota: only low work is taken, for a team below an equal share (red team 18, R8)
        why = ("they stay within their guaranteed quota" if share is None else
               f"no quotas are set, so other teams' low work is preempted only for a team holding less than an "
               f"equal share of the GPUs ({spec.team} holds {share[0]:g}, share {share[1]:.3g})")
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



def _reclaim_note(ctx: CycleContext, visit: Visit, flavor: Flavor) -> tuple[str, bool]:
    """Why reclaim does not apply: the job would take its team above its guarantee (case 001), and
    whether it says what lets the job start ("it can start when …").

    Names only GPUs actually lent: the part of this team's guarantee it does not use that other
    teams use above their own guarantees (issue 16: no "guaranteed 0 GPUs (75 lent)").
    """
    job = visit.job
    spec = job.spec
    lending = _lending(ctx, spec.team, spec.user, flavor.model)
    if lending is None:
        return "", False
    free = sum(ctx.state.pools[p].free_whole for p in flavor.pools) * 1000
    req = visit.req
    # only a cordoned node can hold it (cordoned nodes add no capacity): no one's jobs ending lets it start
    # (hubadmin26 B3: "it can start when nlp's jobs free 1 GPU" beside "ETA unknown: only a cordoned node …")
    cordoned = flavor.capacity < req.total_gpus or (not req.fractional and flavor.max_per_node < req.gpus)
    # a share reclaim would make room for takes a GPU of its own (what reclaim frees are whole GPUs of other
    # teams): counted whole, as its quota check counts it (red team 38 R3)
    share = req.total_milli if req.fractional and ctx.quota.held is not None else 0
    need = req.total_gpus * GPU_MILLI if share else req.total_milli
    return _note(spec.team, lending, need, job.is_lease, free, starts_when=not cordoned, share=share)


def _note(team: str, lending: Lending, need: int, lease: bool, free: int, *,
          starts_when: bool = True, share: int = 0) -> tuple[str, bool]:
    """:func:`_reclaim_note`'s note for a job of ``team`` needing ``need`` milli-GPUs (``lease``: a
    kernel's; ``share``: the milli-GPUs of a share, which needs a GPU of its own) with ``free`` milli-GPUs
    of whole GPUs free on its flavor; ``starts_when``: whether running work ending can let it start
    (False: only a cordoned node can hold it), which the note then says."""
    own, used, lent_total, lent_to, holders, whole = lending
    me = "this kernel" if lease else "this job"  # the reader's own job, not its bare id (new user 8, N9)
    asked = f"a GPU of its own for its {share / 1000:g} GPU share" if share else _gpus(need)
    # the use counts GPUs only its shares hold whole (red team 38 R3): said, or "uses 2" reads wrong beside 0.2
    held = f" ({_gpus(whole)} of it the unused rest of GPUs only its shares hold)" if whole else ""
    if own.guaranteed and used >= own.guaranteed:
        # at (or above) its guarantee already: the job could only borrow, which reclaim never serves
        uses = (f"already uses its {_gpus(own.guaranteed, 'guaranteed ')}" if used == own.guaranteed else
                f"already uses {_gpus(used)}, above its guarantee of {own.guaranteed / 1000:g}")
        text = (f"{team} {uses}{held}, so {me} ({asked}) may only borrow GPUs another team leaves free; "
                "nothing is reclaimed for borrowing")
    else:
        text = (f"{team} is guaranteed {_gpus(own.guaranteed)}"
                + (f" ({lent_total / 1000:g} lent to {lent_to}, reclaimable)" if lent_total else "")
                + f" but {me} needs " + (f"{need / 1000:g} ({asked})" if share else f"{need / 1000:g}")
                + (f" with {used / 1000:g} already in use{held}" if used else "")
                + ", above the guarantee, so nothing is reclaimed for it")
    short = need - free - lent_total
    if short > 0 and holders and starts_when:
        whose, within = holders
        text += f"; it can start when {whose} {_gpus(short)} ({within})"
        if used >= short:
            text += f" or {_of(team)} own running work frees {_gpus(short)}"
        return text, True
    return text, False


Lending = tuple[Line, int, int, str, tuple[str, str] | None, int]
""":func:`_lending`: the team's own line, its usage (with what its shares hold whole), the milli-GPUs it lends, to
whom (``"a, b"``), who holds the rest within their guarantees (``(whose jobs free, what each uses)``; None:
nobody), and of its usage the unused rest of GPUs only its shares hold (red team 38 R3)."""


def _lending(ctx: CycleContext, team: str, user: str, model: str) -> Lending | None:
    """What ``team``'s guarantee on ``model`` lends and who holds the rest (:func:`_reclaim_note`);
    None when no team line applies.

    It reads only quota usage and charges and the GPUs shares hold away, so it is kept per (team,
    model, :attr:`~jupyter_sched.quota.QuotaLedger.version`, quota lines, share version) in
    ``ctx.lending``; the sentence on who holds the rest is made once per their numbers
    (``ctx.holders_said``: trials that were undone and the team's own admissions move the version,
    not the other teams' numbers). Issue 16: a full cluster's 64 preemption attempts each walked
    every team's lines and said the same sentence, ~4 % of a 100-node cycle."""
    quota = ctx.quota
    key = (team, model, quota.version, len(quota.lines), ctx.state.share_version if ctx.shares_held else 0)
    memo = ctx.lending
    if key in memo:
        return memo[key]
    lines = [ln for ln in quota.applicable(team, user, model) if ln.user is None]  # team lines: any user's
    if not lines:
        memo[key] = None
        return None
    own = lines[0]
    # GPUs only a team's shares occupy count whole, as reclaim counts them (held_away; red team 15 R5) — the
    # team's own use too, as its quota check counts it (red team 38 R3; session 39: "needs 0.1 with 0.2 already
    # in use, above the guarantee" of 2, while its spread shares held 2 whole GPUs)
    away = held_away(ctx) if ctx.shares_held else {}
    whole = away.get(own.key, 0)
    used = quota.usage.get(own.key, 0) + whole
    leaving: dict[LineKey, int] = {}  # victims already stopping are not lent: they are being reclaimed
    for h in ctx.in_flight:
        for line_key in team_lines(ctx, h):
            leaving[line_key] = leaving.get(line_key, 0) + quota.charges[h][1]
    borrowers: dict[str, int] = {}
    own_quota: dict[str, int] = {}
    guaranteed: dict[str, int] = {}
    for other, their_lines in quota.team_lines.items():
        if other == team:
            continue
        for ln in their_lines:
            if ln.model in ("*", model) or ln.model in model:
                usage = quota.usage.get(ln.key, 0) - leaving.get(ln.key, 0) + away.get(ln.key, 0)
                if usage > ln.guaranteed:
                    borrowers[other] = max(borrowers.get(other, 0), usage - ln.guaranteed)
                if min(usage, ln.guaranteed) > 0:
                    own_quota[other] = max(own_quota.get(other, 0), min(usage, ln.guaranteed))
                    guaranteed[other] = max(guaranteed.get(other, 0), ln.guaranteed)
    lent_total = min(max(0, own.guaranteed - used), sum(borrowers.values()))
    memo[key] = found = (own, used, lent_total, ", ".join(sorted(borrowers)),
                         _holders(ctx, own_quota, guaranteed, borrowers) if own_quota else None, whole)
    return found


def _holders(ctx: CycleContext, own_quota: dict[str, int], guaranteed: dict[str, int],
             borrowers: dict[str, int]) -> tuple[str, str]:
    """``(whose jobs free, what each uses)`` for the teams using ``own_quota`` milli-GPUs of their
    ``guaranteed`` ones (``borrowers``: what they use above), said once per these numbers."""
    teams = sorted(own_quota)
    held = _held_by(ctx, set(teams))
    numbers = (*((t, own_quota[t], guaranteed[t], borrowers.get(t, 0)) for t in teams), held)
    said = ctx.holders_said.get(numbers)
    if said is None:
        # who holds the rest, with the numbers: within their own guarantees, so only their jobs
        # ending frees it ("research releases 1 GPU of its own quota" read as a quota to give back)
        # a team above its guarantee says both parts (new user 9, N11: "nlp uses all 1 GPU of its
        # guarantee" while nlp used 2, 1 of them borrowed)
        # "its whole guarantee of 1 GPU", not "all 1 GPU of its guarantee" (new user 14, N12); no brackets:
        # the caller puts this in brackets (new user 22, N8: "(cv uses its whole guarantee (2 GPUs))")
        within = ", ".join(
            (f"{t} uses {_gpus(guaranteed[t] + borrowers[t])}: its whole guarantee of {guaranteed[t] / 1000:g} and "
             f"{borrowers[t] / 1000:g} borrowed" if borrowers.get(t) else
             f"{t} uses its whole guarantee of {_gpus(guaranteed[t])}") if own_quota[t] == guaranteed[t]
            else f"{t} uses {own_quota[t] / 1000:g} of its {_gpus(guaranteed[t], 'guaranteed ')}"
            for t in teams)
        # only the words of the holders there: "cv's jobs" for a kernel's %gpu lease sent the reader
        # looking for jobs of cv (new user 22); the unblock clause says "jobs or kernel leases"
        what = held or "jobs"
        whose = f"{_of(teams[0])} {what} free" if len(teams) == 1 else f"{what} of {', '.join(teams)} free"
        said = ctx.holders_said[numbers] = (whose, within)
    return said


def _held_by(ctx: CycleContext, teams: set[str]) -> str:
    """What holds the GPUs charged to ``teams`` in words: ``jobs``, ``kernel leases`` or ``jobs or
    kernel leases`` (read from the ledger's charges: their first line's team, and the job's kind).

    The kinds per team are read in one pass over the charges the first time a cycle asks, then kept
    for that cycle (a pass per call cost the 5,000-node cycle ~50 %, session 22); work admitted later
    in the same cycle is said from the next cycle on."""
    kinds_of = ctx.held_kinds
    if kinds_of is None:
        kinds_of = {}
        for job_id, (keys, _) in ctx.quota.charges.items():
            if keys:
                job = ctx.by_id.get(job_id)
                kinds_of.setdefault(keys[0][0], set()).add(job is not None and job.is_lease)
        ctx.held_kinds = kinds_of
    kinds: set[bool] = set()
    for team in teams:
        kinds |= kinds_of.get(team, set())
    return {frozenset({True}): "kernel leases", frozenset({True, False}): "jobs or kernel leases"}.get(
        frozenset(kinds), "jobs")


def _of(team: str) -> str:
    """``research's`` / ``interns'``."""
    return f"{team}'" if team.endswith("s") else f"{team}'s"


def _gpus(milli: int, adjective: str = "") -> str:
    """``1 GPU`` / ``3 GPUs`` / ``0.5 GPU`` / ``0 GPUs`` from milli-GPUs (``adjective`` before ``GPU``)."""
    n = milli / 1000
    return f"{n:g} {adjective}GPU{'s' if n > 1 or n == 0 else ''}"
