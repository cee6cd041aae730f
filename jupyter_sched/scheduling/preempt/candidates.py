"""Victim candidates for one pending job, gathered from the cycle (DESIGN.md *Reclaim*, issue 16).

* :func:`own_candidates` — jobs of the job's own team that the profile's
  :class:`~jupyter_sched.preemption.PreemptionPolicy` lets it evict (Kueue ``withinClusterQueue``);
* :func:`departed_candidates` — running work of the job's own team whose owner is no longer a member
  of it (``Snapshot.held_jobs``, no class named: the hub group or the quota set's members lost them).
  It is outside the team's guarantee from then on, so the team's remaining members take its GPUs
  back as reclaim takes borrowed work (kind ``departed``; the team's reclaim rule, the minimum
  runtime and the grace period apply; red team 24, R6: a left member's lease held the team's
  guarantee and its members waited with no word why);
* :func:`reclaim_candidates` — jobs of *borrowing* teams (above their guarantee on a team quota
  line the job is charged to) that its team's :class:`~jupyter_sched.preemption.ReclaimPolicy`
  allows (Kueue ``reclaimWithinCohort``), with the jobs that rule protects (named in the reason);
* :func:`borrow_candidates` — for a job that borrows itself, borrowing teams' jobs up to the
  profile's threshold class (Kueue ``borrowWithinCohort``);
* :func:`nomination_candidates` — free GPUs nominated to pending jobs of borrowing teams;
* :func:`class_candidates` — with **no quota configured**, other teams' ``low`` work for a job of a
  higher class whose team holds less than an equal share of the GPUs (DESIGN.md *Priority
  classes*: ``low`` is always preemptible; red team 18, R8: a team's ``low`` jobs with no time
  limit otherwise kept every GPU from another team's ``normal`` job for ever). The share is the
  no-quota fair order's (:func:`~jupyter_sched.queues.order.holdings`: total GPUs / teams with
  work), so the rule serves exactly the teams that order puts first, and never a team at or
  above its share; ``low`` work cannot preempt, so no eviction is ever answered by one back.

:func:`with_below` then marks, per victim team, which lower-class candidates each one would preempt
once requeued (:attr:`~jupyter_sched.preemption.Candidate.below`), and keeps as candidates the young
jobs evicted before (otherwise exempt, red team 15 R13) that their own team's higher class would
preempt anyway (new user 19, N2).

Each becomes a :class:`~jupyter_sched.preemption.Candidate` (milli-GPUs, seconds run, work lost:
:mod:`jupyter_sched.preemption.candidates`); :mod:`.search` picks the set. Jobs already going
(this cycle's victims, victims still stopping) and the job's last preemptor are never candidates.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import replace

from ...model import Job, PriorityClass
from ...placement.placer import Flavor
from ...preemption.candidates import candidate_of, nomination_candidate
from ...preemption.reclaim_rules import DEPARTED, LineKey
from ...preemption.victims import Candidate
from ..context import CycleContext
from ..ledger import NOMINATION_PREFIX, Holder
from ..snapshot import JobHold

_LOW_RANK = PriorityClass.LOW.rank

__all__ = ["borrow_candidates", "candidate", "class_candidates", "class_share", "departed_candidates",
           "departed_hold", "held_away", "held_away_now", "held_rests_now", "holder_key",
           "nomination_candidates", "own_candidates", "reclaim_candidates", "team_borrowing", "team_lines", "with_below"]

BELOW_SCAN = 64
"""Lower-class candidates of its team looked at per candidate by :func:`with_below` (bounds the
pairwise check on a large, saturated cluster; the plan needs only one left running to cost item 0)."""


def borrow_candidates(ctx: CycleContext, job: Job, flavor: Flavor, at_most: int) -> list[Candidate]:
    """Jobs of other teams that borrow on ``flavor``, of a class rank at most ``at_most``
    (borrow within cohort; :func:`search` keeps each victim's team at or above its guarantee)."""
    return [c for c in reclaim_candidates(ctx, job, flavor, any_rule=True)[0] if c.rank <= at_most]


def class_share(ctx: CycleContext, team: str) -> tuple[float, float] | None:
    """``(GPUs team holds now, an equal share)`` with no quota configured (None with quotas): what it
    held at cycle start (:attr:`CycleContext.held`) plus this cycle's admissions of the team; the
    share counts ``team`` among the teams with work (a live one-job decision's job came after the
    cycle that set them, and must be told what a full cycle would say)."""
    held = ctx.held
    if held is None or ctx.quota.enabled:
        return None
    now = held.by_team.get(team, 0.0)
    now += sum(j.spec.resources.total_milli for i, j in ctx.admitted.items()
               if i in ctx.fresh and j.spec.team == team) / 1000
    teams, total = ctx.held_teams
    return now, total / (len(teams) + (team not in teams)) if total else held.team_share


def class_candidates(ctx: CycleContext, job: Job, flavor: Flavor) -> list[Candidate]:
    """With no quota configured, other teams' ``low`` jobs on ``flavor`` for ``job`` of a higher
    class whose team holds less than an equal share (module doc; red team 18, R8). None otherwise:
    with quotas, other teams' work is taken back only as reclaim of a guarantee."""
    spec = job.spec
    if ctx.preemption is None or spec.priority.rank <= _LOW_RANK:
        return []
    share = class_share(ctx, spec.team)
    if share is None or share[0] >= share[1]:
        return []
    holders: list[Holder] = list(ctx.ledger.holders.values() if flavor.model == "*"
                                 else ctx.holder_index()[0].get(flavor.model, ()))
    return [candidate(ctx, h, "class") for h in holders
            if h.job.spec.team != spec.team and h.job.spec.priority.rank == _LOW_RANK and _available(ctx, job, h.job)]


def own_candidates(ctx: CycleContext, job: Job, flavor: Flavor) -> list[Candidate]:
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
        out.append(candidate(ctx, h, "priority"))
    return out


def departed_hold(ctx: CycleContext, job: Job) -> JobHold | None:
    """The hold of running ``job`` when its owner is no longer a member of the team it is charged
    to (``Snapshot.held_jobs``, ``priority`` None): it is outside that team's guarantee. None
    otherwise — also for a class no longer granted (still a member's work)."""
    held = ctx.snap.held_jobs
    hold = held.get(job.id) if held else None
    if hold is None or hold.priority is not None or hold.team != job.spec.team or not job.state.holds_gpus:
        return None
    return hold


def departed_candidates(ctx: CycleContext, job: Job, flavor: Flavor) -> tuple[list[Candidate], list[Job]]:
    """Running work of ``job``'s team on ``flavor`` whose owner left the team (:func:`departed_hold`)
    that the team's reclaim rule lets ``job`` take (kind ``departed``), and the work that rule
    protects. Only with quotas (a guarantee to be outside of) and for another user's work."""
    spec = job.spec
    if not ctx.quota.enabled or not ctx.snap.held_jobs:
        return [], []
    policy = ctx.reclaim_for(spec.team)
    out: list[Candidate] = []
    ruled_out: list[Job] = []
    for h in ctx.holder_index()[1].get(spec.team, ()):
        other = h.job
        if other.spec.user == spec.user or departed_hold(ctx, other) is None or not _available(ctx, job, other):
            continue
        if h.model != flavor.model and flavor.model != "*":
            continue
        if policy.may_reclaim(job, other):
            out.append(candidate(ctx, h, DEPARTED))
        else:
            ruled_out.append(other)
    return out, ruled_out


def reclaim_candidates(ctx: CycleContext, job: Job, flavor: Flavor, *, any_rule: bool = False
                        ) -> tuple[list[Candidate], list[Job]]:
    """Jobs of borrowing teams on ``flavor`` its team's reclaim rule allows (``any_rule``: whatever
    the rule says), and those the rule protects.

    Includes this cycle's admissions (withdrawing one costs nothing). Never a job charged to a team
    its owner left for ``job``'s team (``Snapshot.held_jobs``): it is the same people's work
    (hubadmin23 A11: after hub group vision was renamed cv, cv reclaimed its own member's running
    job, charged to vision, "to return borrowed quota to cv").
    """
    spec = job.spec
    policy = ctx.reclaim_for(spec.team)
    moved = ctx.snap.held_jobs
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
        if moved and (hold := moved.get(other.id)) is not None and hold.team == team and spec.team in hold.teams:
            continue  # its owner is in the reclaiming team now: not another team's borrowing
        lines = team_lines(ctx, other.id)
        key = ",".join(map(str, lines))
        if key not in borrowing:
            borrowing[key] = any(team_borrowing(ctx, k) for k in lines)
        if not borrowing[key]:
            continue
        if not any_rule and not policy.may_reclaim(job, other):
            ruled_out.append(other)
            continue
        out.append(candidate(ctx, h, "reclaim"))
    return out, ruled_out


def nomination_candidates(ctx: CycleContext, job: Job, flavor: Flavor) -> list[Candidate]:
    """The free GPUs on ``flavor`` nominated to pending jobs of other teams that would borrow on
    them (their team, counting its running work and that nomination, is above its guarantee) and
    that its team's reclaim rule allows: borrowed capacity nothing runs on yet, taken back at no
    cost (:mod:`..nominations`). Before, the within-guarantee job waited for the borrower to start
    and then evicted it (issue 16, hypothesis seed 777)."""
    book, quota, st = ctx.book, ctx.quota, ctx.state
    policy = ctx.reclaim_for(job.spec.team)
    out: list[Candidate] = []
    for owner, other in book.jobs.items():
        key = NOMINATION_PREFIX + owner
        hold, charge = st.holdings.get(key), quota.charges.get(key)
        if (other.spec.team == job.spec.team or owner == job.preempted_by or hold is None or not hold.gpus
                or charge is None or (flavor.model != "*" and st.gpu_model[hold.gpus[0][0]] != flavor.model)
                or not any(team_borrowing(ctx, k, extra=charge[1]) for k in charge[0] if k[1] is None)
                or not policy.may_reclaim(job, other)):
            continue
        per_node: dict[int, int] = {}
        for g, _ in hold.gpus:
            per_node[st.gpu_node[g]] = per_node.get(st.gpu_node[g], 0) + 1
        out.append(nomination_candidate(other, charge[1], per_node))
    return out


def _available(ctx: CycleContext, job: Job, other: Job) -> bool:
    """Not already going (this cycle's victims, stopping ones), not the job's last preemptor."""
    return not (other.id in ctx.victims or other.id in ctx.in_flight or other.id == job.preempted_by
                or not ctx.state.holds(other.id))


def candidate(ctx: CycleContext, h: Holder, kind: str) -> Candidate:
    """``h``'s job as a victim candidate of ``kind`` (its cost: :func:`~jupyter_sched.preemption.candidate_of`;
    a lease in the snapshot's ``idle_ends`` is idle: it loses nothing and is not protected, hubadmin22 H9)."""
    fresh = ctx.fresh.get(h.job.id)
    return candidate_of(h.job, h.milli, kind, now=ctx.now, min_runtime_s=ctx.profile.min_runtime_s,
                        node_index=ctx.state.node_index, fresh=fresh.allocation if fresh is not None else None,
                        idle=h.job.id in ctx.snap.idle_ends)


def holder_key(c: Candidate) -> str:
    """The ledger holder a candidate's eviction releases: the job, or the mask of its nomination."""
    return NOMINATION_PREFIX + c.job_id if c.nominated else c.job_id


def _charged(ctx: CycleContext, job_id: str) -> tuple[LineKey, ...]:
    """The quota lines ``job_id`` is charged to (none when it holds nothing)."""
    entry = ctx.quota.charges.get(job_id)
    return entry[0] if entry is not None else ()


def team_lines(ctx: CycleContext, job_id: str) -> list[LineKey]:
    """The team quota lines (``user`` None) ``job_id`` (a job or a ledger holder) is charged to."""
    return [k for k in _charged(ctx, job_id) if k[1] is None]


def held_away(ctx: CycleContext) -> Mapping[LineKey, int]:
    """Per team quota line, the milli-GPUs its fractions keep from whole-GPU work beyond what they
    use: the free rest of each GPU on which that line's jobs are the only holders (red team 15
    R5: four tenths of teamb, one per GPU, left no whole GPU for teama's guarantee).

    How quota treats a shared GPU (one rule, DESIGN.md *Reclaim*): a GPU that only one team's shares
    occupy counts as a whole GPU held by that team (Run:ai charges a shared GPU to its holder the
    same way) — for reclaim, and for admission: every quota check counts a team line's usage plus
    this (:attr:`~jupyter_sched.quota.QuotaLedger.held`, what a share adds: :func:`..share_charge.share_cost`;
    red team 38 R3: 0.1-GPU shares asking 70 GiB each took a GPU of their own, three GPUs held on a
    borrowing limit of one, charged 0.3). Shares packed on one GPU charge their fractions of it (4 x
    0.25 = 1 GPU). So a team whose shares spread over more GPUs than it is guaranteed is borrowing
    those GPUs, and a within-guarantee whole-GPU job of another team may reclaim the fewest shares
    that free a GPU for it; a team keeps, whole, as many shared GPUs as it is guaranteed.

    The quota ledger keeps it (:class:`~jupyter_sched.quota.held_whole.HeldAway`: redone only for the
    GPUs whose shares or free rest changed — issue 17: redone per admission, it was a quarter of a
    5,000-node cycle); :func:`held_away_now` is the same computation from scratch."""
    held = ctx.quota.held
    return held.now() if held is not None else _NO_AWAY


_NO_AWAY: Mapping[LineKey, int] = {}


def held_away_now(ctx: CycleContext) -> dict[LineKey, int]:
    """:func:`held_away` worked out from the ledger as it is now (no memo)."""
    out: dict[LineKey, int] = {}
    for lines, rest in held_rests_now(ctx).values():
        for key in lines:
            out[key] = out.get(key, 0) + rest
    return out


def held_rests_now(ctx: CycleContext) -> dict[int, tuple[frozenset[LineKey], int]]:
    """Per GPU that adds to :func:`held_away`, worked out from the ledger as it is now (no memo; what
    :meth:`~jupyter_sched.quota.held_whole.HeldAway.rests` keeps): the team lines every share on it is
    charged to, and its free rest in milli-GPUs."""
    st = ctx.state
    shared: dict[int, frozenset[LineKey]] = {}  # GPU -> the team lines every share on it is charged to
    charges = ctx.quota.charges
    for holder, holding in ctx.shares_now():
        for g, milli in holding.gpus:
            if milli >= 1000:
                continue
            entry = charges.get(holder)
            lines = frozenset(k for k in entry[0] if k[1] is None) if entry is not None else frozenset()
            shared[g] = shared[g] & lines if g in shared else lines
    return {g: (lines, rest) for g, lines in shared.items()
            if lines and 0 < (rest := st.free_milli[g]) < 1000 and st.placeable[g]}


def team_borrowing(ctx: CycleContext, key: LineKey, extra: int = 0) -> bool:
    """Is the team line ``key`` above its guarantee by the GPUs its jobs hold (with ``extra``
    milli-GPUs added back, and the rest of GPUs only its shares occupy: :func:`held_away`)?
    GPUs nominated to its pending jobs are charged to its lines
    (:mod:`..nominations`) but run nothing: a team whose only borrowing is a job still waiting does
    not lose its running, guaranteed work to a reclaim (hypothesis seed 19, session 9: a borrowing
    job's nomination made its team's low job within the guarantee a borrow-within-cohort victim)."""
    quota = ctx.quota
    held = 0
    for owner in ctx.book.gpus:
        entry = quota.charges.get(NOMINATION_PREFIX + owner)
        if entry is not None and key in entry[0]:
            held += entry[1]
    away = held_away(ctx).get(key, 0) if ctx.shares_held else 0
    return quota.usage.get(key, 0) - held + extra + away > quota.lines[key].guaranteed


def with_below(ctx: CycleContext, own: list[Candidate], others: list[Candidate]
               ) -> tuple[list[Candidate], list[Candidate]]:
    """The candidates with :attr:`~jupyter_sched.preemption.Candidate.below` set, and the young
    ones that stay exempt (another team's job evicted before: red team 15 R13).

    Per team, a candidate's ``below`` names the same team's lower-class candidates that it, once
    requeued, would preempt (the profile's :class:`~jupyter_sched.preemption.PreemptionPolicy`
    allows it): evicting it while they run only moves the eviction to them, one more job stopped
    (new user 19, N2: a reclaim spared two young ``low`` jobs and took the ``normal`` one, which
    preempted them at once). So an exempt job named in another candidate's ``below`` stays a
    candidate: its protection is not possible then (DESIGN.md *Reclaim*) — which the phase checks
    (:func:`.phase._lift_only_if_moved`: only when a plan without it evicts such a job; new user 24, N3). Nominations and exempt
    jobs themselves get no ``below`` (nothing of theirs runs that a requeue would move).

    Returns:
        ``(candidates, young)``: ``own`` and ``others`` less the exempt ones, plus the exempt ones
        kept; and the exempt ones left out, of any team (for the refusal's words and the ETA only:
        :func:`.refusals.explain`).
    """
    policy = ctx.preemption
    pool = own + others
    by_team: dict[str, list[Candidate]] = {}
    for c in pool:
        if not c.nominated:
            by_team.setdefault(c.team, []).append(c)
    below: dict[str, tuple[str, ...]] = {}
    if policy is not None:
        for group in by_team.values():
            if len({c.rank for c in group}) < 2:
                continue
            group.sort(key=lambda c: c.rank)
            ranks = [c.rank for c in group]
            for c in group:
                lower = group[:min(bisect_left(ranks, c.rank), BELOW_SCAN)]
                if c.exempt or not lower or c.kind == DEPARTED:  # requeued, departed work is held: it preempts nothing
                    continue
                preemptor = _job_of(ctx, c.job_id)
                ids = tuple(w.job_id for w in lower if policy.may_preempt(preemptor, _job_of(ctx, w.job_id)))
                if ids:
                    below[c.job_id] = ids
    kept = {i for ids in below.values() for i in ids}
    cands = [replace(c, below=below[c.job_id]) if c.job_id in below else c
             for c in pool if not c.exempt or c.job_id in kept]
    # its own team's exempt work too: it is preempted for the job once it passes the minimum runtime,
    # which the reason and the ETA must say (new user 20, N18: "ETA when lowml ends", started 5 min earlier)
    return cands, [c for c in pool if c.exempt and c.job_id not in kept]


def _job_of(ctx: CycleContext, job_id: str) -> Job:
    """The job a (non-nominated) candidate stands for: a ledger holder, or this cycle's admission."""
    holder = ctx.ledger.holders.get(job_id)
    return holder.job if holder is not None else ctx.fresh_holder(job_id).job
