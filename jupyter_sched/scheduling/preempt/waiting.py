"""Waiting on GPUs already being freed, instead of picking new victims (case 032).

A preempted job keeps its GPUs for up to the profile's grace period (``grace_s``, seconds) while
it stops. GPUs it frees are nominated to its preemptor (:mod:`..nominations`); GPUs beyond what
the preemptor needs stay *spare* while it stops (:mod:`..spare`). A job that would fit once those
stopping victims are gone takes the GPUs over and waits (``WaitingForPreemption``, ETA = the
latest victim's stop time + grace, or none when a victim overran its grace) rather than evicting
more work (Kueue likewise keeps the preemptor pending until its victims have released their
quota).

* :func:`wait_on_nominated` — the GPUs nominated to the job or to lower classes of its team (a
  newer higher-class job takes the nomination over: no priority inversion, issue 16 point 2);
* :func:`wait_on_spare` — spare GPUs, nominated to nobody.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ...backfill.easy import Reservation
from ...model import Job, PendingReason
from ...placement.placer import Flavor, Placement
from ..admit import placed_around
from ..context import CycleContext, Visit
from ..snapshot import Pend
from ..spare import STOPPING_PREFIX, claim, open_spare
from .search import placed_share_check

__all__ = ["hold_and_wait", "stopping_on", "wait_on_nominated", "wait_on_spare"]


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
                if placement is not None and _share_fits(ctx, visit, placement, flavor):
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
    message, eta, eta_reason = _unless_overdue(ctx, waiting_on, message, details, eta)
    ctx.pends.append(Pend(job.id, PendingReason(
        code="WaitingForPreemption", message=message, details=details,
        unblock="starts as soon as the preempted jobs have stopped (grace period)", eta=eta, eta_reason=eta_reason)))
    return True


def wait_on_spare(ctx: CycleContext, visit: Visit, flavor: Flavor, owners: list[str], stopping: list[str],
                  reserved: Reservation | None = None) -> bool:
    """A job that would evict fits on spare GPUs (freed by victims beyond what their preemptors
    need, or held by stopping jobs nominated to nobody) alone: it takes them over and waits (True),
    and no new victim is picked (:mod:`..spare`). Placed around ``reserved`` (the EASY reservation
    :func:`..admit.keep_off` names), as a plan is: spare GPUs never carry a job onto GPUs reserved
    for a job ahead of it."""
    job, req = visit.job, visit.req
    spec = job.spec
    placement: Placement | None = None
    with ctx.ledger.what_if():
        ctx.book.open(owners)
        for h in stopping:
            ctx.ledger.evict(h)
        opened = open_spare(ctx)
        if opened and ctx.quota.check(spec.team, spec.user, flavor.model, req.total_milli).ok:
            placement = placed_around(ctx, job, req, flavor, reserved)
            if placement is not None and not _share_fits(ctx, visit, placement, flavor):
                placement = None
    if placement is None:
        return False
    waiting_on = stopping_on(ctx, placement)
    if not waiting_on:
        return False  # it fits on free GPUs alone: the EASY reservation, not a victim, holds it back
    hold_and_wait(ctx, job, flavor.model, placement, waiting_on)
    return True


def _share_fits(ctx: CycleContext, visit: Visit, placement: Placement, flavor: Flavor) -> bool:
    """A share waits for GPUs being freed only where admission will take it: charged what it adds there
    (:func:`.search.placed_share_check`; red team 39 R1) — any other job: True."""
    check = placed_share_check(ctx, visit, placement, flavor.model)
    return check is None or check.ok


def stopping_on(ctx: CycleContext, placement: Placement) -> list[str]:
    """Jobs still stopping (or spare masks of this cycle's victims) that hold GPUs of ``placement``."""
    wanted = {g for g, _ in placement.holding.gpus}
    out = []
    for key, hold in ctx.state.holdings.items():
        if key.startswith(STOPPING_PREFIX) or (key in ctx.in_flight or key in ctx.victims):
            if any(g in wanted for g, _ in hold.gpus):
                out.append(key.removeprefix(STOPPING_PREFIX))
    return sorted(set(out))


def hold_and_wait(ctx: CycleContext, job: Job, model: str, placement: Placement, waiting_on: list[str],
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
    message, eta, eta_reason = _unless_overdue(ctx, waiting_on, message, details, eta)
    ctx.pends.append(Pend(job.id, PendingReason(
        code="WaitingForPreemption", message=message, details=details,
        unblock="starts as soon as the stopping jobs have stopped (grace period)", eta=eta, eta_reason=eta_reason)))


def _unless_overdue(ctx: CycleContext, waiting_on: list[str], message: str, details: dict[str, object],
                    eta: datetime | None) -> tuple[str, datetime | None, str]:
    """The wait's (message, ETA, ETA reason) once victims that ignored their stop are named: such
    a victim leaves no honest start time (case 032 without force-kill), so the ETA becomes None and
    ``details["held_by_terminating"]`` lists them; otherwise unchanged, with an empty reason."""
    overdue = {h: ctx.overdue[h] for h in waiting_on if h in ctx.overdue}
    if not overdue:
        return message, eta, ""
    details["held_by_terminating"] = ctx.overdue_details(overdue)
    return (f"{message}; {ctx.overdue_clause(overdue)}", None,
            f"{', '.join(overdue)} did not stop within the grace period")
