"""A reclaim cool-down for a user who dropped what a reclaim took back (red31 R5).

Red31 R5: with quotas, r31b submitted a job within its team's guarantee, which reclaimed r31a's borrowed,
non-checkpointing job at once (its work lost, restarted from scratch), and cancelled it 12 s later; again and
again, every ``min_runtime_s``, at no cost to r31b. A guarantee is reclaimable by design; what was missing is
noticing a taker that never used what it took. The edge writes an audit record ``reclaim_dropped`` (for admins)
when a job's owner cancels it within its first minute after its admission reclaimed borrowed GPUs, and
hands the latest such time per user to the cycle (``Snapshot.dropped_reclaims``). For
``profile.reclaim_cooldown_s`` from then that user's jobs take nothing back by reclaim from other teams'
running work: they wait as work within a guarantee waits when nothing borrows, their reason naming the
cool-down and when it ends (:func:`say_cooldown`; the ETA counts it as it does the minimum runtime). Their
other work is not held: own-team preemption, borrowed capacity nothing runs on, free GPUs.

Pure: reads the snapshot's history and the profile.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ...model import Job
from ...model.units import clock_text
from ..context import CycleContext, Visit

__all__ = ["COOLDOWN_SETTING", "cooldown_until", "say_cooldown"]

COOLDOWN_SETTING = "c.SchedApp.reclaim_cooldown_s"


def cooldown_until(ctx: CycleContext, job: Job) -> tuple[datetime, datetime] | None:
    """``(when its owner dropped a reclaim, until when their reclaims wait)`` while that is after now; else None."""
    cool = ctx.profile.reclaim_cooldown_s
    dropped = ctx.snap.dropped_reclaims.get(job.spec.user) if cool else None
    if dropped is None:
        return None
    until = dropped + timedelta(seconds=cool)
    return (dropped, until) if until > ctx.now else None


def say_cooldown(ctx: CycleContext, visit: Visit, dropped: datetime, until: datetime) -> None:
    """The refusal of a job whose reclaim waits out its owner's cool-down (``details["until"]``: its ETA's floor)."""
    user = visit.job.spec.user
    cool = ctx.profile.reclaim_cooldown_s
    visit.refusal = (f"{user}'s reclaims of other teams' borrowed GPUs wait until {clock_text(until, ctx.now)}: "
                     f"{user} cancelled a job within its first minute after its start took GPUs back from another "
                     f"team's work ({clock_text(dropped, ctx.now)}; {COOLDOWN_SETTING} = {cool:g})")
    visit.refusal_details = {"rule": "reclaim_cooldown", "until": until.isoformat(), "cooldown_s": cool,
                             "dropped_at": dropped.isoformat()}
