"""What a job's owner is told about its preemption before it happens (new user 21, N5).

Pure: words only, from the numbers the caller passes (the scheduling profile's settings, a planned
preemption's wire fields).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from ..model.units import clock_text, format_duration
from ..textsafe import printable_name
from .reasons import wire_time, work_named

__all__ = ["NO_PREEMPT_OPTION", "NO_PREEMPT_WAIT", "RECLAIM_END_CAUSES", "no_preempt_owed_text", "planned_preemption_text",
           "preemptible_note",
           "reclaim_cooldown_text", "reclaim_dropped_text", "reclaim_end_text", "release_cooldown_text"]

NO_PREEMPT_OPTION = "--no-preempt"
"""The option of ``%gpu request``, ``%%schedule`` and ``jupyter-sched submit`` (REST: ``"no_preempt": true``)
that asks for free GPUs only: the request never preempts nor reclaims (newuser36 N6)."""

NO_PREEMPT_WAIT = f"waiting for a free GPU: this request does not preempt or reclaim ({NO_PREEMPT_OPTION})"
"""The clause of a no-preempt request's pending reason where preemption or reclaim would be the way in
(the core's refusal, :func:`jupyter_sched.scheduling.preempt.phase.preempt`; newuser36 N6)."""


def no_preempt_owed_text(team: str) -> str:
    """:data:`NO_PREEMPT_WAIT` for a no-preempt request within its team's guarantee, whose GPUs are kept for it as
    they free rather than lent to another team's borrowing (:mod:`jupyter_sched.scheduling.owed`, s38): ``waiting
    for a free GPU: this request does not preempt or reclaim (--no-preempt); GPUs that free are kept for it within
    team vision's guarantee, not lent to another team``."""
    return (f"{NO_PREEMPT_WAIT}; GPUs that free are kept for it within team {printable_name(team)}'s guarantee, "
            "not lent to another team")


def preemptible_note(priority: str, *, preemption: bool, preemptible_classes: Collection[str],
                     min_runtime_s: float, lease: bool = False) -> str | None:
    """The note a submit of a preemptible class answers with, or None when the class is not
    preemptible (``preemption`` off, or ``priority`` not in ``preemptible_classes``).

    The rule it states is the core's (:func:`jupyter_sched.preemption.candidates.candidate_of` and
    :func:`jupyter_sched.scheduling.preempt.candidates.with_below`): a job that has run less than the
    minimum runtime is spared only where another victim would do, so a first run may be stopped seconds
    after it starts; once preempted, each restart is exempt for the minimum runtime, unless the job
    spared instead (its team's higher class) would preempt it in turn; a preempted job goes back to
    the queue with its submit time (DESIGN.md *Priority classes*).

    Args:
        priority: the job's class, e.g. ``low``.
        preemption: the profile's ``preemption`` (False: no job is preempted for a higher class).
        preemptible_classes: the classes a higher class may preempt.
        min_runtime_s: the profile's minimum runtime, seconds (0: none).
        lease: the work is a lease (a kernel's GPUs): a preempted lease ends at once, it neither
            restarts nor goes back to the queue (verify 21, V9: the job's words were given to leases).
            An idle lease has no work for the minimum runtime to protect (hubadmin22 H9).

    Returns:
        e.g. ``priority low: higher-priority work may preempt it at any moment — a run shorter than 5m
        (the minimum runtime) is spared only when another job can make room, and once preempted, each
        restart is protected for its first 5m unless the job spared instead would preempt it in turn;
        a preempted job goes back to the queue with its submit time``; for a lease ``priority low:
        higher-priority work may take these GPUs at any moment (a lease in use and younger than 5m is
        spared only when another can make room; an idle one is not); a preempted lease ends and its GPUs
        leave this kernel — %gpu request asks again``.
    """
    if not preemption or priority not in preemptible_classes:
        return None
    if lease:
        text = f"priority {priority}: higher-priority work may take these GPUs at any moment"
        if min_runtime_s > 0:
            text += (f" (a lease in use and younger than {format_duration(min_runtime_s)} is spared only when "
                     "another can make room; an idle one is not)")
        return text + "; a preempted lease ends and its GPUs leave this kernel — %gpu request asks again"
    text = f"priority {priority}: higher-priority work may preempt it at any moment"
    if min_runtime_s > 0:
        span = format_duration(min_runtime_s)
        text += (f" — a run shorter than {span} (the minimum runtime) is spared only when another job can make "
                 f"room, and once preempted, each restart is protected for its first {span} unless the job "
                 "spared instead would preempt it in turn")
    return text + "; a preempted job goes back to the queue with its submit time"


def planned_preemption_text(plan: Any, now: datetime | None, *, lease: bool = False, brief: bool = False) -> str:
    """What the line of running work says of its planned preemption (``preemption_planned``, the
    core's :class:`~jupyter_sched.scheduling.snapshot.PlannedPreemption` on the wire): its waiter's
    ETA, said to the victim — ``to be preempted at ~02:11 UTC for norm2 (j-…), normal priority of the
    same team, unless it ends first``. The one wording of the CLI's queue and jobs lines, the magics'
    tables (after :func:`~.jobs.ends_by`'s words), ``status JOB`` and the panel (the server's ``text``,
    its clock with the date; the panel says it as of now). The waiter is named as the queue names it
    (:func:`~.reasons.work_named`: another user's work with its owner, its name quoted), nothing more.

    Args:
        plan: the wire mapping (``at`` ISO time, ``for_job``, ``for_name``, ``for_owner``,
            ``for_priority``, ``for_team``, ``same_team``, ``verb``); anything else says "".
        now: the reader's time (``02:11 UTC`` on its day); None: with the date (``Dec 5 02:11 UTC``).
        lease: the victim is a lease, which is released rather than ended.
        brief: when and for whom only, ``to be preempted at ~02:11 UTC for norm2`` (a wait's live
            line on a narrow terminal: newuser23 N4, the news kept before the rest).

    Returns:
        The clause, or "" when ``plan`` is no plan (absent, or without a time or a waiter).
    """
    if not isinstance(plan, Mapping):
        return ""
    at, waiter = wire_time(plan.get("at")), plan.get("for_job")
    if at is None or not isinstance(waiter, str) or not waiter:
        return ""
    owner, name = plan.get("for_owner"), plan.get("for_name")
    # one line whoever reads it: a name's controls, newlines and invisible characters shown as text (s30), never acted on
    who = work_named(printable_name(waiter), printable_name(name, limit=80) if isinstance(name, str) else None,
                     printable_name(owner) if isinstance(owner, str) and owner else None)
    priority = printable_name(str(plan.get("for_priority") or "")).strip()
    team = printable_name(str(plan.get("for_team") or "")).strip()
    verb = "reclaimed" if plan.get("verb") == "reclaimed" else "preempted"
    if brief:  # one's own waiter by its name alone, another's as the queue names it
        own = printable_name(name, limit=80) if isinstance(name, str) and name.strip() and not owner else ""
        return f"to be {verb} at ~{clock_text(at, now)} for {own or who}"
    if plan.get("same_team") is not False:
        why = f", {priority} priority of the same team" if priority else ", of the same team"
    elif verb == "reclaimed":
        why = f", to return borrowed quota to {team}" if team else ", to return borrowed quota"
    else:
        why = f", {priority + ' priority ' if priority else ''}of team {team}" if team else ""
    first = "it is released first" if lease else "it ends first"
    return f"to be {verb} at ~{clock_text(at, now)} for {who}{why}, unless {first}"


RECLAIM_END_CAUSES = {
    "exit": "it exited",
    "failure": "it failed",
    "time_limit": "its time limit stopped it",
    "release": "it was released",
    "cancel": "it was cancelled",
    "idle_reclaim": "idle reclaim took its GPUs back",
    "budget": "its budget was spent",
    "preempted": "it was preempted in turn",
    "lost": "it was lost",
}
"""How a preemptor that took GPUs back by reclaim ended (``ReclaimTaken.cause``, red32 R5) → the words."""


def reclaim_end_text(cause: str, *, actor: str = "", exit_code: int | None = None) -> str:
    """How a reclaiming job or lease ended, in words: ``it exited, exit code 0``, ``it was released by
    r32b``, ``its time limit stopped it``; an unknown cause as ``it ended (<cause>)``."""
    words = RECLAIM_END_CAUSES.get(cause)
    if words is None:
        return f"it ended ({printable_name(cause)})"
    if cause in ("exit", "failure") and exit_code is not None:
        return f"{words}, exit code {exit_code}"
    if cause in ("release", "cancel") and actor:
        return f"{words} by {printable_name(actor)}"
    return words


def _held_text(took: Any, now: datetime | None) -> str:
    """``took GPUs back at 12:00 UTC and gave them up 2s after its start`` (or ``before it started``)."""
    held = (f"{format_duration(max(0.0, (took.ended_at - took.started_at).total_seconds()))} after its start"
            if took.started_at is not None and took.ended_at is not None else "before it started")
    return f"took GPUs back by reclaim at {clock_text(took.took_at, now)} and gave them up {held}"


def reclaim_cooldown_text(took: Any, until: datetime, now: datetime | None, *, cooldown_s: float,
                          setting: str) -> str:
    """Why a job's reclaim waits (its pending reason's ``preemption_refused``; red32 R5): ``team teamb's
    reclaims of other teams' borrowed GPUs wait until 12:15 UTC: r32b's job "b-take1" (j-…) took GPUs back
    by reclaim at 12:00 UTC and gave them up 2s after its start (it exited, exit code 0); what a reclaim
    takes is to be held 15m (c.SchedApp.reclaim_cooldown_s = 900)``.

    Args:
        took: the preemptor (:class:`~jupyter_sched.scheduling.snapshot.ReclaimTaken`).
        until: when its team's reclaims may go on (UTC).
        now: the reader's time (None: with the date).
        cooldown_s: the profile's cool-down, seconds.
        setting: the setting's name, for the admin who reads it.
    """
    who = work_named(took.job_id, took.name, took.user)
    why = reclaim_end_text(took.cause, actor=took.actor, exit_code=took.exit_code)
    return (f"team {took.team}'s reclaims of other teams' borrowed GPUs wait until {clock_text(until, now)}: {who} "
            f"{_held_text(took, now)} ({why}); what a reclaim takes is to be held {format_duration(cooldown_s)} "
            f"({setting} = {cooldown_s:g})")


def reclaim_dropped_text(took: Any, until: datetime, *, cooldown_s: float, setting: str) -> str:
    """The audit record ``reclaim_dropped`` for admins (red32 R5): which team, which job, whose work it
    evicted, how it ended and until when the team's reclaims wait (times with their date: a record)."""
    named = ", ".join(f"{user}'s job {job_id}" for job_id, user in took.victims[:5]) + (
        f" and {len(took.victims) - 5} more" if len(took.victims) > 5 else "") or "other teams' work"
    why = reclaim_end_text(took.cause, actor=took.actor, exit_code=took.exit_code)
    kind = "lease" if took.lease else "job"
    return (f"team {took.team}: {took.user}'s {kind} {took.name or took.job_id} ({took.job_id}) {_held_text(took, None)} "
            f"({why}); it had evicted {named}, whose work restarts; team {took.team}'s "
            f"reclaims of other teams' borrowed GPUs wait until {clock_text(until, None)} "
            f"({setting} = {cooldown_s:g})")


def release_cooldown_text(team: str, until: datetime, held_s: float | None, now: datetime | None) -> str:
    """What ending work that took GPUs back by reclaim costs its team, said at its release or cancel on every
    surface (``%gpu release``, ``%schedule cancel``, ``jupyter-sched cancel``, REST's ``reclaim_cooldown.text``;
    newuser36 N6: the quickstart's lease, released 2 s after it evicted another team's job, held the team's
    reclaims for 15 minutes, said only in the admins' audit): ``team vision's reclaims of other teams' borrowed
    GPUs wait until 04:52 UTC (a reclaim cool-down: the GPUs you took back were used for 1s)``.

    Args:
        team: the team (queue) whose reclaims wait.
        until: when they may go on (UTC).
        held_s: seconds the GPUs taken back were held (None: the work never started).
        now: the reader's time (None: with the date).
    """
    used = "never used" if held_s is None else f"used for {format_duration(max(0.0, held_s))}"
    return (f"team {printable_name(team)}'s reclaims of other teams' borrowed GPUs wait until {clock_text(until, now)} "
            f"(a reclaim cool-down: the GPUs you took back were {used})")
