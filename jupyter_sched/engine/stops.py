"""Stop plans: carry out stop intents (cancel, time limit, preemption, idle reclaim) through the executor.

A stop intent is stored on the job row (``stop_intent``) by whoever asked (the API for a cancel,
the decision transaction for a preemption or reclaim, this module for a time limit). Each tick
the leading engine sends the executor a stop for every intent it has not sent yet in its term;
the executor runs the plan (checkpoint signal, SIGTERM, SIGKILL after the grace) and the end
arrives later as an executor event (:mod:`.observe`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from ..executors.base import Executor
from ..model import JobState
from ..store import Store
from .clock import Clock
from .transitions import JobWriter

__all__ = ["StopPlans"]


class StopPlans:
    """Stops sent to the executor in this engine's term (see module docstring).

    Args:
        store: the store.
        executor: runs the stop plans.
        writer: job row writes.
        clock: time source.
        grace_s: SIGTERM→SIGKILL grace for cancels and time limits, seconds.

    Attributes:
        sent: ids of the jobs whose stop was sent in this term (not sent twice).
    """

    def __init__(self, store: Store, executor: Executor, writer: JobWriter, clock: Clock, *, grace_s: float) -> None:
        self.store = store
        self.executor = executor
        self.writer = writer
        self.clock = clock
        self.grace_s = grace_s
        self.sent: set[str] = set()

    def send(self, job_id: str, *, grace_s: float, checkpoint_signal: bool) -> None:
        """Begin stopping ``job_id`` now (once per term)."""
        self.executor.stop(job_id, grace_s=grace_s, checkpoint_signal=checkpoint_signal)
        self.sent.add(job_id)

    def forget(self, job_id: str) -> None:
        """``job_id`` ended: a later stop of the same id (after a requeue) is sent again."""
        self.sent.discard(job_id)

    def clear(self) -> None:
        """A new term (or stepping down): nothing is known to be sent."""
        self.sent.clear()

    def send_due(self) -> None:
        """Mark jobs past their time limit with a ``timeout`` intent, then send every unsent stop.

        Leases have nothing to stop: a released lease ends at once. An admitted job the
        executor does not run yet is left to the start step, which settles its cancel.
        """
        now = self.clock.now()
        for record in self.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
            job = record.job
            limit = job.spec.time_limit_s
            if (record.stop_intent is None and limit and job.started_at is not None
                    and now >= job.started_at + timedelta(seconds=limit) and not job.is_lease):
                record = self.writer.mutate(job.id, lambda r: replace(
                    r, stop_intent="timeout", stop_requested_at=now, stop_actor="scheduler")) or record
                self.writer.audit(job, "time_limit", f"time limit of {limit:g} s reached; stopping",
                                  {"limit_s": limit})
            if record.stop_intent is None or job.id in self.sent:
                continue
            if job.is_lease:
                self.writer.finish(job.id, JobState.CANCELLED, message=f"released by {record.stop_actor or 'user'}")
                continue
            if job.id not in self.executor.tracked():
                continue  # admitted, not started yet: the start step settles it
            self.send(job.id, grace_s=self.grace_s, checkpoint_signal=False)
