"""Apply a :class:`CycleResult` to a :class:`Snapshot` — what the engine does, minus the I/O.

Pure and tiny: tests and the simulator use it to play multi-step scenarios (case 001's
"t=0, t=1, t=5") through the same ``run_cycle`` as production. Admitted jobs start at once
(no executor latency); victims are requeued keeping their submit time (DESIGN.md), remember who
preempted them (loop guard) and optionally back off.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from ..model import Job, JobState, PendingReason
from .snapshot import CycleResult, Snapshot

__all__ = ["apply_result", "finish_jobs", "stop_jobs"]


def apply_result(snapshot: Snapshot, result: CycleResult, *, start: bool = True,
                 requeue_backoff_s: float = 0.0, stop_at_once: bool = True) -> Snapshot:
    """Return ``snapshot`` with ``result`` applied at ``snapshot.now``.

    Args:
        snapshot: the cycle's input.
        result: what ``run_cycle`` decided.
        start: admitted jobs go straight to ``running`` (``started_at = now``); else stay ``admitted``.
        requeue_backoff_s: seconds a preempted job waits before it may be admitted again.
        stop_at_once: victims stop at once (requeued now); False keeps them running with
            ``stopping_since = now`` — as the engine sees them during their grace period — until
            :func:`stop_jobs` says they exited.

    Returns:
        A new snapshot (same ``now``); terminal jobs (rejected) are dropped from it.
    """
    now = snapshot.now
    admits = {a.job_id: a for a in result.admits}
    victims = {p.job_id: p for p in result.preemptions}
    pends = {p.job_id: p.reason for p in result.pending}
    rejects = {r.job_id for r in result.rejects}
    jobs: list[Job] = []
    for job in snapshot.jobs:
        if job.id in rejects:
            continue
        if job.id in admits:
            a = admits[job.id]
            job = job.transition(JobState.ADMITTED, allocation=a.allocation, admitted_at=now, reason=None,
                                 nominated=None, attempts=job.attempts + 1)
            if start:
                job = job.transition(JobState.RUNNING, started_at=now)
        elif job.id in victims:
            p = victims[job.id]
            if stop_at_once:
                job = _requeue(job, p.for_job, p.reason, p.kind, now, requeue_backoff_s)
            else:
                job = replace(job, stopping_since=now, preempted_by=p.for_job, message=p.reason)
        elif job.id in pends:
            job = replace(job, reason=pends[job.id], nominated=result.nominations.get(job.id))
        jobs.append(job)
    return replace(snapshot, jobs=tuple(jobs))


def _requeue(job: Job, by: str, why: str, kind: str, now: datetime, backoff_s: float) -> Job:
    """A stopped victim back to pending, keeping its submit time (DESIGN.md)."""
    job = job.transition(JobState.PREEMPTED, allocation=None, finished_at=None, stopping_since=None)
    return job.transition(
        JobState.PENDING, preempted_by=by, admitted_at=None, started_at=None,
        not_before=now + timedelta(seconds=backoff_s) if backoff_s > 0 else None,
        reason=PendingReason(code="Preempted", message=why, details={"by": by, "kind": kind}))


def stop_jobs(snapshot: Snapshot, job_ids: set[str] | frozenset[str], *, requeue_backoff_s: float = 0.0) -> Snapshot:
    """Victims in ``job_ids`` (running with ``stopping_since``) have exited: requeue them now."""
    now = snapshot.now
    jobs = []
    for job in snapshot.jobs:
        if job.id in job_ids and job.state.holds_gpus:
            job = _requeue(job, job.preempted_by or "", job.message or "preempted", "priority", now,
                           requeue_backoff_s)
        jobs.append(job)
    return replace(snapshot, jobs=tuple(jobs))


def finish_jobs(snapshot: Snapshot, job_ids: set[str] | frozenset[str], *, at: datetime | None = None) -> Snapshot:
    """Mark ``job_ids`` succeeded (they release their GPUs) and drop them from the snapshot."""
    return replace(snapshot, jobs=tuple(j for j in snapshot.jobs if j.id not in job_ids),
                   now=at or snapshot.now)
