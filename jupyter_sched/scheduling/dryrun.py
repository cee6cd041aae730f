"""Dry-run: would a hypothetical job fit, where, and when — without enqueuing it.

Runs the same cycle over the snapshot plus the hypothetical job (pending, submitted now), so
the answer accounts for quota, the queue ahead of it, reservations and preemption exactly as a
real submission would; nothing is returned for the other jobs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from ..model import Allocation, Job, JobSpec, PendingReason
from .cycle import run_cycle
from .profile import SchedulingProfile
from .snapshot import Snapshot

__all__ = ["DRYRUN_JOB_ID", "DryRun", "dryrun"]

DRYRUN_JOB_ID = "dryrun"
"""Id given to the hypothetical job (a fixed label, not a generated id)."""


@dataclass(frozen=True, slots=True)
class DryRun:
    """Answer of a dry-run.

    Attributes:
        fits_now: it would be admitted in this cycle.
        can_ever_fit: False when it would be rejected (more than exists, no such model...).
        allocation: where it would run now (None unless ``fits_now``).
        when: expected start (now when it fits; the reservation ETA; None = unknown).
        reason: the pending or rejection reason (None when it fits now).
        would_preempt: jobs it would preempt to start.
        scores: placement scores when it fits.
    """

    fits_now: bool
    can_ever_fit: bool
    allocation: Allocation | None
    when: datetime | None
    reason: PendingReason | None
    would_preempt: tuple[str, ...] = ()
    scores: dict[str, float] | None = None


def dryrun(snapshot: Snapshot, spec: JobSpec, profile: SchedulingProfile | None = None,
           *, job_id: str = DRYRUN_JOB_ID) -> DryRun:
    """Answer "would ``spec`` fit, where and when" against ``snapshot`` (pure).

    Args:
        snapshot: the current cluster snapshot.
        spec: the hypothetical job (validated with ``spec_from_request``).
        profile: the policy (default profile when None).
        job_id: label for the hypothetical job in reasons.
    """
    job = Job(id=job_id, spec=spec, submitted_at=snapshot.now)
    result = run_cycle(replace(snapshot, jobs=(*snapshot.jobs, job)), profile)
    for admit in result.admits:
        if admit.job_id == job_id:
            return DryRun(True, True, admit.allocation, snapshot.now, None, scores=dict(admit.scores))
    for reject in result.rejects:
        if reject.job_id == job_id:
            return DryRun(False, False, None, None, reject.reason)
    victims = tuple(p.job_id for p in result.preemptions if p.for_job == job_id)
    for pend in result.pending:
        if pend.job_id == job_id:
            return DryRun(False, True, result.nominations.get(job_id), pend.reason.eta, pend.reason,
                          would_preempt=victims)
    return DryRun(False, True, None, None, None)
