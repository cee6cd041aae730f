"""GPUs owed to a guarantee whose job waits for free GPUs (``--no-preempt``; s38, DESIGN.md *Reclaim*).

A ``no_preempt`` job never preempts nor reclaims (:func:`.preempt.phase.preempt`): within its team's guarantee it
waits for free GPUs instead of taking back what other teams borrow. Reclaim is how a guarantee comes back; without
it, each GPU that freed went to the next job of a team that *borrows* — a 2-GPU ``--no-preempt`` job of a team
using nothing waited for good while another team's untimed 1-GPU jobs took every GPU that freed, one by one (no
EASY reservation without end times). DESIGN.md: "A team's within-guarantee job must never wait indefinitely while
another team borrows"; guaranteed GPUs are protected from being *lent away*.

So, within one cycle: such a job, visited (within-guarantee work is ordered before every borrower, :mod:`.cycle`),
notes what it is owed on its GPU model (:func:`note_owed`, its milli-GPUs, within what its team's guarantee has
left); a later admission of another team that would *borrow* may then take free GPUs of that model only where
as many stay free as are owed (:func:`owed_outcome`, code ``Priority``: it fits now but would lend away a
guarantee whose job waits). What is kept is what the owed job could use, GPU by GPU as the placer sees it
(red39 R5): a wholly free placeable GPU of its model in its pools for a whole-GPU job — not the unused rest of
another team's shared GPU, nor an unhealthy GPU —, and a share's rest only for an owed share that fits beside
it where the profile's ``gpu_sharing`` lets its team share that GPU. A borrower placed on what the owed job
could not use anyway (a rest beside its own team's shares) takes nothing owed and goes. Work within its own team's guarantee, the owed team's own work, and a job starting on
GPUs freed for it by its own preemption (nominated) are not held. Nothing is evicted; what frees piles up for the
waiting job until it fits, as a reservation's GPUs do. The next cycle notes it again from its own visit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..model import GPU_MILLI, Job, ResourceRequest
from ..placement.placer import Flavor, Placement
from ..wording.preemption import no_preempt_owed_text
from .context import CycleContext, Visit
from .reasons import FlavorOutcome

__all__ = ["Owed", "note_owed", "owed_outcome"]


@dataclass(frozen=True, slots=True)
class Owed:
    """``milli`` milli-GPUs of a model owed to ``team``'s guarantee, for its waiting no-preempt job ``job_id``
    (its request ``req`` on ``flavor``: what it could be placed on)."""

    team: str
    job_id: str
    user: str
    milli: int
    req: ResourceRequest
    flavor: Flavor


def note_owed(ctx: CycleContext, visit: Visit) -> None:
    """Note what ``visit.job`` (a ``no_preempt`` job that did not fit) is owed on its first GPU model where it is
    within its team's guarantee, counting what that team is owed there already (two such jobs are owed no more
    than the guarantee has left), and say so in its refusal (:func:`~..wording.preemption.no_preempt_owed_text`);
    nothing where no quota is set or it would borrow."""
    job = visit.job
    if not ctx.quota.enabled:
        return
    spec, milli = job.spec, visit.req.total_milli
    if milli <= 0:
        return
    for flavor in visit.flavors:
        if not flavor.pools or not _has_guarantee(ctx, job, flavor.model):
            continue
        owed = ctx.owed.setdefault(flavor.model, [])
        already = sum(o.milli for o in owed if o.team == spec.team)
        check = ctx.quota.check(spec.team, spec.user, flavor.model, milli + already)
        if check.ok and check.within_guarantee and not check.borrowed:
            owed.append(Owed(team=spec.team, job_id=job.id, user=spec.user, milli=milli, req=visit.req, flavor=flavor))
            visit.refusal = no_preempt_owed_text(spec.team)  # its reason says what frees is its own
            visit.refusal_details = {"rule": "no_preempt", "owed": True, "team": spec.team, "model": flavor.model}
            return


def _has_guarantee(ctx: CycleContext, job: Job, model: str) -> bool:
    """Whether a team line with a guarantee applies to ``job`` on ``model`` (a team without one is owed nothing)."""
    return any(line.key[1] is None and line.guaranteed > 0
               for line in ctx.quota.applicable(job.spec.team, job.spec.user, model))


def owed_outcome(ctx: CycleContext, job: Job, flavor: Flavor, place: Callable[[], Placement | None]
                 ) -> FlavorOutcome | None:
    """The outcome of an admission of ``job`` on ``flavor`` that would borrow, where it would take what other teams'
    waiting guarantees could use (:func:`note_owed`) and leave them less than they are owed; None where it may go
    (nothing owed to another team there, it does not fit anyway, it takes nothing the owed jobs could use, enough
    usable stays beside it, or GPUs nominated to it). ``place``: where admission would put it now (around the
    model's EASY reservation, as :func:`.admit._place`), nothing taken."""
    owed = [o for o in ctx.owed.get(flavor.model, ()) if o.team != job.spec.team]
    if not owed or job.id in ctx.book:
        return None
    st = ctx.state
    with st.what_if():  # where the placer would put it now, and what the owed jobs could no longer use then
        placement = place()
        if placement is None:
            return None  # no room: its capacity outcome says so
        gpus = {g for g, _ in placement.holding.gpus}
        before = sum(_usable_on(ctx, owed, g) for g in gpus)
        st.take(job.id, placement.holding)
        taken = before - sum(_usable_on(ctx, owed, g) for g in gpus)
    due = sum(o.milli for o in owed)
    if taken <= 0 or _usable(ctx, owed, flavor.model) - taken >= due:
        return None
    first = owed[0]
    teams = sorted({o.team for o in owed})
    message = (f"fits now but would borrow GPUs owed to team {', '.join(teams)}'s guarantee: {first.user}'s job "
               f"{first.job_id} waits within it for free GPUs (--no-preempt), so what frees is not lent to another "
               f"team meanwhile")
    return FlavorOutcome(model=flavor.model, capacity_code="Priority", capacity_message=message,
                         capacity={"model": flavor.model, "owed_to": teams, "owed_for": [o.job_id for o in owed],
                                   "owed_gpus": due / GPU_MILLI})


def _usable(ctx: CycleContext, owed: list[Owed], model: str) -> int:
    """Milli-GPUs the ``owed`` jobs of ``model`` could use now (:func:`_usable_on` over their pools' GPUs; kept per
    free capacity of those pools, which a trial gives back as it was)."""
    st = ctx.state
    pools = tuple(sorted({p for o in owed for p in o.flavor.pools}))
    key, stamp = (model, tuple(o.job_id for o in owed)), st.stamps(pools) if pools else None
    kept = ctx.owed_usable.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    total = sum(_usable_on(ctx, owed, g) for p in pools for n in st.pools[p].nodes for g in st.node_gpus[n])
    ctx.owed_usable[key] = (stamp, total)
    return total


def _usable_on(ctx: CycleContext, owed: list[Owed], g: int) -> int:
    """Milli-GPUs of GPU ``g`` one of the ``owed`` jobs could be placed on: all of it, wholly free, for a whole-GPU
    job; for a share, its rest in whole parts where the share fits beside the work there and may share with it
    (:meth:`~..placement.placer.Placer.may_share`); nothing on a GPU that is not placeable or not of its flavor."""
    st = ctx.state
    free = st.free_milli[g]
    if free <= 0 or not st.placeable[g]:
        return 0
    best, pool = 0, st.node_pool[st.gpu_node[g]]
    for o in owed:
        flavor, part = o.flavor, o.req.gpu_milli
        if pool not in flavor.pools or flavor.model not in ("*", st.gpu_model[g]) \
                or (flavor.mixed and st.gpu_memory[g] < o.req.min_memory_mib):
            continue
        if part >= GPU_MILLI:
            if free >= GPU_MILLI:
                return GPU_MILLI
        elif free >= part and free // part * part > best and ctx.placer.may_share(o.job_id, g, o.req):
            best = free // part * part
    return best
