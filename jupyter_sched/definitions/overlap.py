"""Whether a firing runs while the definition's previous run has not finished (pure).

A firing's fate is a function of the definition's :class:`~.model.OverlapPolicy`, the state of its
previous run (the newest, read by the firing loop) and nothing else — no clock, no store:
:func:`overlap_decision`. The firing loop (:mod:`.firing`) reads the previous run, asks, and writes
the run or the skip (:func:`skipped_after`) in one transaction.

New user 34, n1: a minutely definition behind a 200-job queue stacked one pending run a minute (3
after two minutes, each charged when it ran) and nothing said so. As Kubernetes CronJob's
``concurrencyPolicy`` (Allow / Forbid) and Airflow's ``max_active_runs``, the owner chooses; the
default skips a firing while the previous run still waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model import JobState
from .model import OverlapPolicy, SkippedFirings

__all__ = ["BUDGET_CODE", "OverlapDecision", "PreviousRun", "overlap_decision", "skipped_after"]

BUDGET_CODE = "BudgetExhausted"
"""The pending reason of a run held by its team's spent GPU-hour budget: it skips the next firings
whatever the policy (hubadmin24 B11: the next run would wait on the same budget)."""

_WAITING = frozenset({JobState.PENDING, JobState.PREEMPTED})
"""A run not started (a preempted run is requeued: it waits again)."""
_STARTED = frozenset({JobState.ADMITTED, JobState.RUNNING})


@dataclass(frozen=True, slots=True)
class PreviousRun:
    """The definition's newest run as the firing loop read it.

    Attributes:
        job_id: its job.
        state: its job's state.
        reason_code / reason: its pending reason's code and sentence (None / "" when it has none).
    """

    job_id: str
    state: JobState
    reason_code: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class OverlapDecision:
    """Fire (``skip`` False) or skip with ``cause`` (``waiting``, ``unfinished``, ``budget``) and ``why``
    in words (``its run j-… still waits: …``), naming the run that holds it (``job_id``)."""

    skip: bool = False
    cause: str = ""
    why: str = ""
    job_id: str | None = None


FIRE = OverlapDecision()


def overlap_decision(policy: OverlapPolicy, previous: PreviousRun | None) -> OverlapDecision:
    """Whether a firing runs, given the definition's ``policy`` and its ``previous`` run.

    Args:
        policy: the definition's overlap policy.
        previous: its newest run (None: it has none, or its job is no longer stored).

    Returns:
        :data:`FIRE`, or a skip. Steps: no previous run, or a finished one → fire; a previous run waiting
        on a spent budget → skip (``budget``, any policy); ``allow`` → fire; a waiting run → skip
        (``waiting``) under ``skip_waiting`` and ``skip_unfinished``; a started run → skip (``unfinished``)
        under ``skip_unfinished`` only.
    """
    if previous is None or previous.state.terminal:
        return FIRE
    waiting = previous.state in _WAITING
    if waiting and previous.reason_code == BUDGET_CODE:
        return OverlapDecision(True, "budget", f"its run {previous.job_id} still waits: {previous.reason}".rstrip(": "),
                               previous.job_id)
    if policy is OverlapPolicy.ALLOW:
        return FIRE
    if waiting:
        said = f": {previous.reason}" if previous.reason else " to start"
        return OverlapDecision(True, "waiting", f"its run {previous.job_id} still waits{said}", previous.job_id)
    if policy is OverlapPolicy.SKIP_UNFINISHED and previous.state in _STARTED:
        return OverlapDecision(True, "unfinished", f"its run {previous.job_id} is still running", previous.job_id)
    return FIRE


def skipped_after(before: SkippedFirings | None, instants: Sequence[datetime], *, cause: str, why: str,
                  job_id: str | None) -> SkippedFirings | None:
    """The definition's skipped firings once ``instants`` (UTC, oldest first) are skipped too: counted on
    from ``before`` (None: none since the last run), the reason the newest one's."""
    if not instants:
        return before
    count = (before.count if before else 0) + len(instants)
    first = before.first if before else instants[0]
    return SkippedFirings(count=count, first=first, last=instants[-1], why=why, cause=cause, job_id=job_id)
