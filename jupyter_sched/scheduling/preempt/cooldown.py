"""The reclaim cool-down: what a reclaim takes is to be held (red31 R5, red32 R5).

Red31 R5: with quotas, r31b's job within its team's guarantee reclaimed r31a's borrowed, non-checkpointing
job at once (its work lost, restarted from scratch) and r31b cancelled it 12 s later — again every minimum
runtime, at no cost. Session 32 keyed a cool-down on that cancel; red32 R5 showed every other end bypassed
it: a preemptor that just exits (``-- /bin/true``), a 1-s time limit, a lease (``%gpu request``) released at
once took r32a's borrowed jobs back again and again. A guarantee is reclaimable by design; what is missing
is noticing a taker that did not hold what it took.

The rule, whatever ended the preemptor (:class:`~..snapshot.ReclaimTaken`: exit, failure, time limit, lease
release, cancel, idle reclaim, a spent budget, …): a preemptor that ended less than
``profile.reclaim_cooldown_s`` after its reclaim (or never started) holds its **team**'s (queue's) reclaims
of other teams' running borrowed work until that long after its reclaim. So a team's reclaims whose takers
do not hold come at most once per cool-down; a preemptor that holds what it took that long — a run of its
course — holds nothing back (its cool-down would end before it did). Meanwhile the team's jobs wait as work
within a guarantee waits when nothing borrows, their reason naming the cool-down and when it ends
(:func:`say_cooldown`; the ETA counts it as it does the minimum runtime); their other ways in are not held:
own-team preemption, departed members' work, borrowed capacity nothing runs on, free GPUs.

:func:`note_dropped` gives admins one audit record ``reclaim_dropped`` per such preemptor, naming the team
and the cause. Pure: reads the snapshot's history (built at the edge from the store: restart-safe) and the
profile.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from ...model import Job
from ...wording.preemption import reclaim_cooldown_text, reclaim_dropped_text
from ..context import CycleContext, Visit
from ..snapshot import AuditRecord, ReclaimTaken

__all__ = ["ACTION", "COOLDOWN_SETTING", "cooldown_until", "dropped_until", "note_dropped", "say_cooldown",
           "team_cooldowns"]

COOLDOWN_SETTING = "c.SchedApp.reclaim_cooldown_s"
ACTION = "reclaim_dropped"


def dropped_until(took: ReclaimTaken, cooldown_s: float) -> datetime | None:
    """Until when ``took``'s team's reclaims wait: ``cooldown_s`` after its reclaim when it ended before
    then (by any cause); None while it runs or waits, when it held what it took that long, or with no cool-down."""
    if not cooldown_s or took.ended_at is None:
        return None
    until = took.took_at + timedelta(seconds=cooldown_s)
    return until if took.ended_at < until else None


def team_cooldowns(reclaims: Iterable[ReclaimTaken], cooldown_s: float,
                   now: datetime) -> dict[str, tuple[ReclaimTaken, datetime]]:
    """Per team whose reclaims wait now, ``(the preemptor that dropped what it took, until when)`` — the
    latest-ending such, as :func:`cooldown_until` finds it for one of the team's jobs. Read once per full
    cycle by the engine, so a teammate's ``GET me`` says the cool-down before any job of theirs waits on
    it (newuser38 n21: only a pending job's reason said it)."""
    found: dict[str, tuple[ReclaimTaken, datetime]] = {}
    for took in reclaims:
        until = dropped_until(took, cooldown_s)
        if until is not None and until > now and (took.team not in found or until > found[took.team][1]):
            found[took.team] = (took, until)
    return found


def cooldown_until(ctx: CycleContext, job: Job) -> tuple[ReclaimTaken, datetime] | None:
    """``(the preemptor that dropped what it took, until when)`` holding ``job``'s team's reclaims, the
    latest-ending such, while that is after now; else None."""
    cool = ctx.profile.reclaim_cooldown_s
    if not cool or not ctx.snap.reclaims:
        return None
    team, found = job.spec.team, None
    for took in ctx.snap.reclaims:
        if took.team != team:
            continue
        until = dropped_until(took, cool)
        if until is not None and until > ctx.now and (found is None or until > found[1]):
            found = (took, until)
    return found


def say_cooldown(ctx: CycleContext, visit: Visit, took: ReclaimTaken, until: datetime) -> None:
    """The refusal of a job whose reclaim waits out its team's cool-down (``details["until"]``: its ETA's floor)."""
    cool = ctx.profile.reclaim_cooldown_s
    visit.refusal = reclaim_cooldown_text(took, until, ctx.now, cooldown_s=cool, setting=COOLDOWN_SETTING)
    visit.refusal_details = {"rule": "reclaim_cooldown", "until": until.isoformat(), "cooldown_s": cool,
                             "team": took.team, "dropped_by": took.job_id, "cause": took.cause,
                             "dropped_at": took.ended_at.isoformat() if took.ended_at else None}


def note_dropped(ctx: CycleContext) -> None:
    """One audit record ``reclaim_dropped`` (user: the preemptor's owner) for each preemptor that dropped
    what it took and none names yet (``ReclaimTaken.recorded``: the edge reads them back, so once)."""
    cool = ctx.profile.reclaim_cooldown_s
    for took in ctx.snap.reclaims:
        until = None if took.recorded else dropped_until(took, cool)
        if until is None or took.ended_at is None:
            continue
        held = max(0.0, (took.ended_at - took.started_at).total_seconds()) if took.started_at is not None else 0.0
        ctx.audit.append(AuditRecord(
            action=ACTION, job_id=took.job_id, user=took.user,
            message=reclaim_dropped_text(took, until, cooldown_s=cool, setting=COOLDOWN_SETTING),
            details={"team": took.team, "cause": took.cause, "actor": took.actor or None, "exit_code": took.exit_code,
                     "lease": took.lease, "held_s": round(held, 1), "took_at": took.took_at.isoformat(),
                     "ended_at": took.ended_at.isoformat(), "until": until.isoformat(), "cooldown_s": cool,
                     "victims": [{"job_id": j, "user": u} for j, u in took.victims]}))
