"""Start: admitted jobs are started through the executor (leases are bound, not run).

A job cancelled between its admission and its start ends as cancelled without starting; a start
the executor refuses ends the job as failed with the executor's reason.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import ExecutorError
from ..executors.base import Executor
from ..model import Job, JobState
from .clock import Clock
from .transitions import JobWriter

__all__ = ["start_admitted"]


def start_admitted(job: Job, *, executor: Executor, writer: JobWriter, clock: Clock) -> bool:
    """Start the admitted ``job``; return True when it now runs (or its lease is bound)."""
    record = writer.get(job.id)
    if record is None or record.job.state is not JobState.ADMITTED:
        return False
    if record.stop_intent == "cancel":
        writer.finish(job.id, JobState.CANCELLED, message=f"cancelled by {record.stop_actor} before it started")
        return False
    now = clock.now()
    if job.is_lease:
        writer.mutate(job.id, lambda r: replace(r, job=r.job.transition(
            JobState.RUNNING, started_at=now, message="GPUs bound to the kernel")))
        return True
    allocation = record.job.allocation
    assert allocation is not None
    try:
        handle = executor.start(record.job, allocation)
    except ExecutorError as exc:
        writer.finish(job.id, JobState.FAILED, message=f"could not start: {exc.message}")
        return False
    writer.mutate(job.id, lambda r: replace(r, handle=handle.to_dict(), executor=handle.executor, job=r.job.transition(
        JobState.RUNNING, started_at=now, message="running")))
    return True
