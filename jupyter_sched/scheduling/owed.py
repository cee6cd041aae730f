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
guarantee whose job waits). Work within its own team's guarantee, the owed team's own work, and a job starting on
GPUs freed for it by its own preemption (nominated) are not held. Nothing is evicted; what frees piles up for the
waiting job until it fits, as a reservation's GPUs do. The next cycle notes it again from its own visit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Job
from ..placement.placer import Flavor
from ..wording.preemption import no_preempt_owed_text
from .context import CycleContext, Visit
from .reasons import FlavorOutcome

__all__ = ["Owed", "note_owed", "owed_outcome"]


@dataclass(frozen=True, slots=True)
class Owed:
    """``milli`` milli-GPUs of a model owed to ``team``'s guarantee, for its waiting no-preempt job ``job_id``."""

    team: str
    job_id: str
    user: str
    milli: int


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
            owed.append(Owed(team=spec.team, job_id=job.id, user=spec.user, milli=milli))
            visit.refusal = no_preempt_owed_text(spec.team)  # its reason says what frees is its own
            visit.refusal_details = {"rule": "no_preempt", "owed": True, "team": spec.team, "model": flavor.model}
            return


def _has_guarantee(ctx: CycleContext, job: Job, model: str) -> bool:
    """Whether a team line with a guarantee applies to ``job`` on ``model`` (a team without one is owed nothing)."""
    return any(line.key[1] is None and line.guaranteed > 0
               for line in ctx.quota.applicable(job.spec.team, job.spec.user, model))


def owed_outcome(ctx: CycleContext, job: Job, flavor: Flavor, milli: int) -> FlavorOutcome | None:
    """The outcome of an admission of ``job`` (``milli`` milli-GPUs on ``flavor``) that would borrow, where it would
    leave fewer free GPUs of the model than other teams' waiting guarantees are owed (:func:`note_owed`); None where
    it may go (nothing owed to another team there, or enough free beside it, or GPUs nominated to it)."""
    owed = [o for o in ctx.owed.get(flavor.model, ()) if o.team != job.spec.team]
    if not owed or job.id in ctx.book:
        return None
    st, pools = ctx.state, set(flavor.pools)
    free = sum(m for g, m in enumerate(st.free_milli)
               if m > 0 and st.gpu_model[g] == flavor.model and st.node_pool[st.gpu_node[g]] in pools)
    due = sum(o.milli for o in owed)
    if free - milli >= due:
        return None
    first = owed[0]
    teams = sorted({o.team for o in owed})
    message = (f"fits now but would borrow GPUs owed to team {', '.join(teams)}'s guarantee: {first.user}'s job "
               f"{first.job_id} waits within it for free GPUs (--no-preempt), so what frees is not lent to another "
               f"team meanwhile")
    return FlavorOutcome(model=flavor.model, capacity_code="Priority", capacity_message=message,
                         capacity={"model": flavor.model, "owed_to": teams, "owed_for": [o.job_id for o in owed],
                                   "owed_gpus": due / 1000})
