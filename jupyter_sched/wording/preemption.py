"""What a job's owner is told about its preemption before it happens (new user 21, N5).

Pure: words only, from the numbers the caller passes (the scheduling profile's settings).
"""

from __future__ import annotations

from collections.abc import Collection

from ..model.units import format_duration

__all__ = ["preemptible_note"]


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

    Returns:
        e.g. ``priority low: higher-priority work may preempt it at any moment — a run shorter than 5m
        (the minimum runtime) is spared only when another job can make room, and once preempted, each
        restart is protected for its first 5m unless the job spared instead would preempt it in turn;
        a preempted job goes back to the queue with its submit time``; for a lease ``priority low:
        higher-priority work may take these GPUs at any moment (a lease younger than 5m is spared only
        when another can make room); a preempted lease ends and its GPUs leave this kernel — %gpu
        request asks again``.
    """
    if not preemption or priority not in preemptible_classes:
        return None
    if lease:
        text = f"priority {priority}: higher-priority work may take these GPUs at any moment"
        if min_runtime_s > 0:
            text += (f" (a lease younger than {format_duration(min_runtime_s)} is spared only when another can "
                     "make room)")
        return text + "; a preempted lease ends and its GPUs leave this kernel — %gpu request asks again"
    text = f"priority {priority}: higher-priority work may preempt it at any moment"
    if min_runtime_s > 0:
        span = format_duration(min_runtime_s)
        text += (f" — a run shorter than {span} (the minimum runtime) is spared only when another job can make "
                 f"room, and once preempted, each restart is protected for its first {span} unless the job "
                 "spared instead would preempt it in turn")
    return text + "; a preempted job goes back to the queue with its submit time"
