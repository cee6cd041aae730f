"""Recovery: on becoming leader, adopt or settle every admitted/running job nobody watches.

After a restart (even ``kill -9``) or a takeover, the new leader's executor watches nothing.
Each admitted or running batch job is re-adopted (pid + process create time, or its Kubernetes
Job) or settled: an exit code left by the wrapper ends it, otherwise it is ``lost`` with a
reason; an admitted job that provably never started is requeued; an admitted job cancelled
before it started ends as cancelled. Leases have no work to adopt.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import ExecutorError
from ..executors.base import Executor, ExecutorHandle, Lost
from ..model import JobState
from ..store import Store
from .clock import Clock
from .observe import ExecutorEventHandler, TickReport
from .transitions import JobWriter

__all__ = ["recover"]


def recover(store: Store, executor: Executor, writer: JobWriter, events: ExecutorEventHandler, clock: Clock) -> None:
    """Adopt or settle every admitted/running job ``executor`` does not watch (module docstring)."""
    watched = executor.tracked()
    for record in store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
        job = record.job
        if job.id in watched or job.is_lease:
            continue
        if job.state is JobState.ADMITTED and record.handle is None and record.stop_intent == "cancel":
            writer.finish(job.id, JobState.CANCELLED, message=f"cancelled by {record.stop_actor}")
            continue
        handle = ExecutorHandle.from_dict(record.handle) if record.handle else None
        try:
            event = executor.adopt(job, handle)
        except ExecutorError as exc:
            event = Lost(job.id, f"could not re-adopt after restart: {exc.message}")
        if event is None:
            writer.audit(job, "adopted", f"job {job.id} re-adopted after a server restart",
                         {"handle": dict(record.handle or {})})
            if job.state is JobState.ADMITTED:
                writer.mutate(job.id, lambda r: replace(r, job=r.job.transition(
                    JobState.RUNNING, started_at=clock.now(), message="re-adopted after restart")))
        else:
            events.handle(event, TickReport())
