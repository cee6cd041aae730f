"""What a share adds to its team's quota lines as admission and reclaim count them (red team 38 R3).

The rule is :func:`.preempt.candidates.held_away`'s: a GPU only one team's shares occupy counts as a whole
GPU held by that team. :func:`share_cost` says what one admission of a share adds to that count, so the
quota check (:meth:`~jupyter_sched.quota.QuotaLedger.check`, ``team_milli``) charges a share that opens a
GPU of its own the whole GPU, and one packed beside its team's shares nothing more than they hold.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import GPU_MILLI, Job
from ..model.kept_share import kept_charges
from ..placement.state import Holding
from ..preemption.reclaim_rules import LineKey
from .context import CycleContext

__all__ = ["charged_gpus", "kept_charges", "placed_charge", "released_milli", "share_cost"]

def share_cost(ctx: CycleContext, job_id: str, lines: Iterable[LineKey]) -> int:
    """Milli-GPUs the holding ``job_id`` has just taken (not yet charged) adds to a team line among
    ``lines`` as :func:`.preempt.candidates.held_away` counts it — usage plus what it holds away; the most over the lines
    (red team 38 R3). A whole GPU adds itself; a share adds, per GPU: the whole GPU when it is the only
    share there (it opened it: its fraction and the rest it keeps from other teams), nothing when
    every other share there is charged to the line (its fraction comes out of the rest already
    counted), else its fraction."""
    st = ctx.state
    holding = st.holdings.get(job_id)
    if holding is None:
        return 0
    share_holders, fresh_shares, charges = ctx.share_holder_set, ctx.fresh_shares, ctx.quota.charges
    worst = 0
    for key in lines:
        cost = 0
        for g, milli in holding.gpus:
            if milli >= 1000:
                cost += milli
                continue
            rest = st.free_milli[g] if st.placeable[g] else 0  # the rest held_away counts for its team lines
            alone, packed = True, True
            for holder in st.gpu_shares.get(g, ()):
                if holder == job_id or (holder not in share_holders and holder not in fresh_shares):
                    continue  # itself; a whole-GPU job, a reservation mask: not a share
                alone = False
                entry = charges.get(holder)
                packed = packed and entry is not None and key in entry[0]
            if alone:
                cost += milli + rest
            elif not packed or not st.placeable[g]:
                cost += milli
        worst = max(worst, cost)
    return worst


def released_milli(ctx: CycleContext, job_id: str, asked: int) -> int:
    """Milli-GPUs the end of ``job_id`` (asking ``asked`` milli-GPUs in all) gives back as quota and placement
    count them (red team 38 R3; session 39): a share that is the only share on its GPU gives back that whole
    GPU — its fraction and the rest it keeps from others (``held_away``), the GPU wholly free once it ends —
    any other holding what it asks (a share packed beside others its fraction: the GPU is whole again only
    when they all end). What "the fewest holders that must end" counts (:func:`.eta._fewest_freeing`)."""
    st = ctx.state
    holding = st.holdings.get(job_id)
    if holding is None or not ctx.shares_held:
        return asked
    total = 0
    for g, milli in holding.gpus:
        if milli < GPU_MILLI and st.placeable[g] and len(st.gpu_shares.get(g, ())) == 1:
            total += milli + st.free_milli[g]
        else:
            total += milli
    return max(total, asked)


def charged_gpus(ctx: CycleContext, job: Job, holding: Holding) -> float:
    """GPUs ``job`` is charged on ``holding`` by usage's rule (:func:`kept_charges`, red40 R1) over the shares its
    GPUs hold (``holding`` taken or not: it is counted once): a 0.1 share alone on
    its GPU is charged 1, one packed beside its team's 0.4 share 0.2; a whole GPU or a MIG slice what it holds.
    What safe budget admission fits a new share by (verify40 V3: fitted at its fraction, a lone share ran 8x what
    its budget had left)."""
    st = ctx.state
    team = job.spec.team
    total = 0.0
    for g, milli in holding.gpus:
        fraction = milli / GPU_MILLI
        if milli >= GPU_MILLI or holding.migs:
            total += fraction
            continue
        holders: list[tuple[str, float]] = [(team, fraction)]
        for holder in st.gpu_shares.get(g, ()):
            other = ctx.admitted.get(holder) or ctx.by_id.get(holder)
            held = st.holdings.get(holder)
            if holder == job.id or other is None or held is None:
                continue  # itself (first above), a reservation mask: not a share
            holders.extend((other.spec.team, m / GPU_MILLI) for h, m in held.gpus if h == g)
        total += kept_charges(holders)[0]
    return total


def placed_charge(ctx: CycleContext, job: Job) -> float:
    """GPUs the share ``job`` would be charged where the placer puts it now (its first flavor with room; nothing
    is taken), by :func:`charged_gpus`; its asked GPUs where it has no room yet (it waits for room first)."""
    req = job.spec.resources
    asked = req.total_milli / GPU_MILLI
    if not 0 < req.gpu_milli < GPU_MILLI:
        return asked
    for flavor in ctx.placer.flavors(req):
        if not flavor.pools:
            continue
        placement = ctx.placer.place(job.id, req, flavor)
        if placement is not None and placement.holding.gpus:
            return max(asked, charged_gpus(ctx, job, placement.holding))
    return asked
