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

__all__ = ["planned_preemption_text", "preemptible_note"]


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
