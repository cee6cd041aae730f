"""The words of a quota change that preempts running work (hubadmin25 B17). Pure.

A lowered guarantee turned vision's 14-minute 2-GPU job into borrowed work, and nlp reclaimed it one
second after the dry run said nothing; its owner then read ``requeued … after preemption by
h25105d26's job "load-0"…, to return borrowed quota to nlp`` — another team's user blamed for an
admin's act. The dry run (and the PUT's answer and its audit row) now lists what the change preempts
(:func:`reclaim_warning`), and the preemption's sentence carries the act (:func:`blamed`), which the
victim's line says first (:func:`split_blame`, read by
:meth:`~jupyter_sched.scheduling.context.CycleContext.preempted_clause`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ..model import GPU_MILLI, Job
from ..model.job import public_name
from ..model.units import clock_text, format_duration, gpus_phrase
from .reasons import work_named

if TYPE_CHECKING:
    from ..scheduling.snapshot import Preempt

__all__ = ["blamed", "deferred_reclaim_warning", "quota_change_blame", "reclaim_warning", "split_blame"]

_AFTER = " — after "
"""Between a preemption's own sentence and the act that caused it (:func:`blamed`)."""

_CHANGES_SHOWN = 3


def quota_change_blame(by: str, at: datetime, changes: Sequence[str]) -> str:
    """``boss changed the quotas at Dec 5 15:38 UTC (changed vision (A100-80GB): guaranteed 2 → 1;
    changed nlp (A100-80GB): guaranteed 2 → 3)`` — the act, its time, at most three of its changes
    (:func:`~jupyter_sched.quota.changes.quota_changes`; ``and 2 more``)."""
    shown = "; ".join(changes[:_CHANGES_SHOWN])
    if len(changes) > _CHANGES_SHOWN:
        shown += f"; and {len(changes) - _CHANGES_SHOWN} more"
    return f"{by} changed the quotas at {clock_text(at, None)}" + (f" ({shown})" if shown else "")


def blamed(said: str, blame: str) -> str:
    """A preemption's sentence with the act that caused it: ``preempted to return borrowed quota to
    nlp — after boss changed the quotas at …``; ``said`` itself when ``blame`` is empty."""
    return f"{said}{_AFTER}{blame}" if blame else said


def split_blame(said: str) -> tuple[str, str]:
    """:func:`blamed`'s parts back: (the preemption's sentence, the act) — the act "" when none."""
    base, sep, blame = said.partition(_AFTER)
    return (base, blame) if sep and " changed the quotas at " in blame else (said, "")


def reclaim_warning(victim: Job, preempt: Preempt, preemptor: Job | None, now: datetime) -> str:
    """The admin's line for running work a quota change preempts at once: ``this change preempts at
    the next cycle: h25fabd47's job "v-train" (j-…) of vision, 2 GPUs, running 14m — preempted to
    return borrowed quota to nlp, for h25105d26's job "load-0" (j-…); it is requeued and its run so far
    is lost unless it checkpoints``."""
    spec = victim.spec
    ran = f", running {format_duration((now - victim.started_at).total_seconds())}" if victim.started_at else ""
    held = gpus_phrase(spec.resources.total_milli / GPU_MILLI)
    why = preempt.reason.removeprefix("preempted ")
    who = work_named(victim.id, public_name(spec), spec.user)
    by = "" if preemptor is None else f", for {work_named(preemptor.id, public_name(preemptor.spec), preemptor.spec.user)}"
    return (f"this change preempts at the next cycle: {who} of {spec.team}, {held}{ran} — preempted {why}{by}; it is "
            f"requeued and its run so far is lost unless it checkpoints")


def deferred_reclaim_warning(victim: Job, preempt: Preempt, preemptor: Job | None, now: datetime,
                             until: datetime, team: str) -> str:
    """The admin's line for running work a quota change preempts once a team's reclaim cool-down ends (newuser38
    n13: the preview said "it runs on (nothing is stopped)", and at the cool-down's end the work was preempted):
    ``after team vision's reclaim cool-down ends at 10:51 UTC, this change preempts: …``."""
    line = reclaim_warning(victim, preempt, preemptor, now)
    return (f"after team {team}'s reclaim cool-down ends at {clock_text(until, now)}, this change preempts: "
            + line.removeprefix("this change preempts at the next cycle: "))
