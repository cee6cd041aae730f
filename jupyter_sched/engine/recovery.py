"""Recovery reconciler: admitted/running work the executor does not watch is adopted or settled.

After a restart (even ``kill -9``) or a takeover, the new leader's executor watches nothing; an
executor may also lose track of work (its watches were reset). Each such batch job is re-adopted
(pid + process create time, or its Kubernetes Job) or settled: an exit code left by the wrapper
ends it, otherwise it is ``lost`` with a reason; an admitted job that provably never started is
requeued. Leases have no work to adopt.

Adoption is retried, not given up, when the executor cannot answer now (an API server that is
down, HTTP 5xx): the job keeps its GPUs and says "reconnecting to … (attempt n, next in s)"; it
is marked lost only when the executor says the work is gone, or the failure is permanent. Each
adoption is preceded by a leader check.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ..backoff import Retries
from ..errors import NotLeaderError
from ..executors.base import Executor, ExecutorHandle, Lost
from ..model import JobState
from ..store import JobRecord
from .clock import Clock
from .failures import classify
from .leadership import Leadership
from .observe import ExecutorEventHandler, TickReport
from .transitions import JobWriter

__all__ = ["AdoptReconciler"]

log = logging.getLogger(__name__)


class AdoptReconciler:
    """Adopts or settles unwatched work (module docstring).

    Args:
        executor: the executor that should watch the work.
        writer: job row writes.
        events: turns the settling event into a state change.
        leadership: checked before every adoption.
        clock: time source.
        retries: per-job retry state of failed adoptions.
    """

    def __init__(self, executor: Executor, writer: JobWriter, events: ExecutorEventHandler, leadership: Leadership,
                 clock: Clock, *, retries: Retries) -> None:
        self.executor = executor
        self.writer = writer
        self.events = events
        self.leadership = leadership
        self.clock = clock
        self.retries = retries

    def reconcile(self, record: JobRecord, report: TickReport) -> None:
        """Adopt or settle one unwatched admitted/running batch job.

        Raises:
            NotLeaderError: the lease was lost (nothing was adopted).
            StoreError: the store failed.
        """
        job = record.job
        key = f"adopt:{job.id}"
        if not self.retries.due(key):
            return
        if job.state is JobState.ADMITTED and record.handle is None and record.stop_intent == "cancel":
            self.writer.finish(job.id, JobState.CANCELLED, message=f"cancelled by {record.stop_actor}")
            return
        handle = ExecutorHandle.from_dict(record.handle) if record.handle else None
        self.leadership.check()
        try:
            event = self.executor.adopt(job, handle)
        except NotLeaderError:
            raise
        except Exception as exc:  # this one job waits or is settled; the others go on
            failure = classify(exc)
            if failure.outcome != "retry":
                event = Lost(job.id, f"could not re-adopt after restart: {failure.cause}")
            else:
                self.retries.failed(key, failure.cause)
                waiting = self.retries.reconnecting(key, f"the {self.executor.name} executor")
                assert waiting is not None
                log.warning("job %s: re-adoption failed (%s); %s", job.id, failure.cause, waiting.message)
                self.writer.say(job.id, waiting.message)
                return
        self.retries.succeeded(key)
        if event is None:
            self.writer.audit(job, "adopted", f"job {job.id} re-adopted after a server restart",
                              {"handle": dict(record.handle or {})})
            message = "re-adopted after restart"
            if job.state is JobState.ADMITTED and getattr(self.executor, "starts_async", False):
                self.writer.say(job.id, f"{message}; waiting for it to start")  # Started moves it on
            elif job.state is JobState.ADMITTED:
                self.writer.mutate(job.id, lambda r: replace(r, job=r.job.transition(
                    JobState.RUNNING, started_at=self.clock.now(), message=message)))
            elif job.message.startswith("reconnecting to"):
                self.writer.say(job.id, "running")
        else:
            self.events.handle(event, report)
