"""Start: admitted jobs are started through the executor (leases are bound, not run).

A job cancelled between its admission and its start ends as cancelled without starting; a start
the executor refuses ends the job as failed with the executor's reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..errors import ExecutorError
from ..executors.base import Executor
from ..executors.runas import RunAs, embedded_run_as
from ..model import Job, JobState
from .clock import Clock
from .transitions import JobWriter

__all__ = ["start_admitted"]


def start_admitted(job: Job, *, executor: Executor, writer: JobWriter, clock: Clock,
                   run_as: Callable[[Job], RunAs] = embedded_run_as) -> bool:
    """Start the admitted ``job`` as ``run_as(job)``; return True when it now runs (or its lease is
    bound). A resolver that raises (a hub user without an OS account) fails that job, naming why."""
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
        handle = executor.start(record.job, allocation, run_as(record.job))
    except ExecutorError as exc:
        writer.finish(job.id, JobState.FAILED, message=f"could not start: {exc.message}")
        return False
    except Exception as exc:  # a run-as resolver's own failure: this job fails, the engine goes on
        writer.finish(job.id, JobState.FAILED, message=f"could not start: {exc}")
        return False
    writer.mutate(job.id, lambda r: replace(r, handle=handle.to_dict(), executor=handle.executor, job=r.job.transition(
        JobState.RUNNING, started_at=now, message="running")))
    return True
