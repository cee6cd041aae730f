"""Start reconciler: admitted jobs the executor does not run yet are started (leases are bound).

The stored intent is the job row: ``admitted`` with no executor handle means "should run". Each
tick, for every such job, the reconciler

1. settles a stop asked before the start (a cancel ends it as cancelled; a preemption or
   reclaim puts it back in the queue) — so a cancel is carried out even if starting is broken;
2. binds a lease (admitted → running: the kernel already runs, there is nothing to start);
3. checks the leader lease (a deposed leader starts nothing), holds a batch job back in the queue, no
   attempt, while jupyter_sched was reinstalled under the server (``reinstalled()``, newuser31 N10: the
   wrapper it would launch moved or is another version's; the next cycles hold it with the same reason,
   :func:`~jupyter_sched.scheduling.gates.reinstalled_reason`), then calls ``executor.start`` with the job's
   run-as identity (``run_as(job)``) and persists the handle. The job is ``running`` from then on, except with an executor that
   ``starts_async`` (Kubernetes: the pods may still not schedule, case 027): it stays
   ``admitted`` with its handle until the executor reports :class:`Started`.

Any exception from the executor is classified (:mod:`.failures`) and concerns that one job
only: a transient failure (HTTP 5xx, a transport error, ``EAGAIN``) keeps the allocation and is
retried with exponential backoff and jitter, the job saying "reconnecting to the … executor
(attempt n, next in s)"; after ``max_retries`` tries, or for a capacity refusal (a namespace
ResourceQuota, case 019), the job goes back to the queue with the cause as its reason; anything
else (``ValueError`` from an environment key containing ``=``, ``PermissionError``, HTTP 409 /
422) fails the job with "could not start: <cause>". Starting is idempotent: a start repeated
after a crash finds its own work (the local wrapper's file, the Kubernetes object of the same
job) rather than starting it twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace

from ..backoff import Retries
from ..errors import ConflictError, ExecutorError, NotLeaderError
from ..executors.base import Executor, ExecutorHandle
from ..executors.runas import RunAs, embedded_run_as
from ..model import Job, JobState, PendingReason
from ..model.codec import allocation_from_dict
from ..scheduling.gates import reinstalled_reason
from ..scheduling.snapshot import Reinstall
from ..store import JobRecord
from ..wording.reasons import NOT_AN_ATTEMPT
from .clock import Clock
from .failures import Failure, classify
from .leadership import Leadership
from .observe import TickReport
from .stops import lease_held_message, lease_release_message
from .transitions import JobWriter

__all__ = ["StartReconciler"]

log = logging.getLogger(__name__)

_STOPPED_BEFORE_START = {"cancel": "cancelled", "idle_stop": "stopped while idle"}


class StartReconciler:
    """Starts admitted jobs (module docstring).

    Args:
        executor: runs the work.
        writer: job row writes.
        leadership: checked before every start.
        clock: time source.
        retries: per-job retry state of failed starts (shared backoff schedule).
        max_retries: transient failures of one start before the job is requeued.
        grace_s: grace of the stop sent when work started for a job that moved on meanwhile.
        run_as: ``run_as(job)`` → who the job runs as, decided at its start (DESIGN, *Who runs
            it*); a resolver that raises (a hub user without an OS account) fails that job naming why.

    Attributes:
        run_as: the resolver in force (the engine's :attr:`~.engine.Engine.run_as` sets it).
    """

    def __init__(self, executor: Executor, writer: JobWriter, leadership: Leadership, clock: Clock, *,
                 retries: Retries, max_retries: int = 5, grace_s: float = 10.0,
                 run_as: Callable[[Job], RunAs] = embedded_run_as) -> None:
        self.executor = executor
        self.writer = writer
        self.leadership = leadership
        self.clock = clock
        self.retries = retries
        self.max_retries = max_retries
        self.grace_s = grace_s
        self.run_as = run_as
        self.reinstalled: Callable[[], Reinstall | None] = getattr(executor, "reinstalled", None) or (lambda: None)
        """``() -> Reinstall | None`` (the executor's, when it has one): admitted jobs wait while it says one."""

    def _start(self, job: Job) -> ExecutorHandle:
        assert job.allocation is not None
        return self.executor.start(job, job.allocation, self.run_as(job))

    def reconcile(self, record: JobRecord, report: TickReport) -> None:
        """Bring one admitted, unstarted job to running (or settle it); see the module docstring.

        Raises:
            NotLeaderError: the lease was lost (nothing was started).
            StoreError: the store failed.
        """
        job = record.job
        if record.stop_intent is not None:
            self._settle_stop(record, report)
            return
        if job.is_lease:
            now = self.clock.now()
            if self.writer.mutate(job.id, lambda r: replace(r, job=r.job.transition(
                    JobState.RUNNING, started_at=now, message=lease_held_message(r.job)))) is not None:
                report.started.append(job.id)
            return
        if not self.retries.due(job.id):
            return
        self.leadership.check()
        if (change := self.reinstalled()) is not None:  # admitted before it was seen: back in the queue, no attempt
            self.writer.requeue(record, reinstalled_reason(change), self.clock.now(), backoff=False, false_start=True)
            return
        now = self.clock.now()
        try:
            handle = self._start(job)
        except NotLeaderError:
            raise
        except Exception as exc:  # any executor error concerns this one job (module docstring)
            self._failed(record, classify(exc), exc)
            return
        self.retries.succeeded(job.id)

        handed_over = bool(getattr(self.executor, "starts_async", False))

        def running(r: JobRecord) -> JobRecord:
            if r.job.state is not JobState.ADMITTED:
                raise ConflictError(f"job {job.id} is {r.job.state.value} now")
            if handed_over:  # running once the executor reports Started (case 027: pods may not schedule)
                return replace(r, handle=handle.to_dict(), executor=handle.executor,
                               job=replace(r.job, message=f"handed to {self.executor.name}; waiting for it to start"))
            copy = handle.data.get("allocation")  # a copy already running was adopted: the GPUs it holds
            held = allocation_from_dict(copy) if isinstance(copy, Mapping) else r.job.allocation
            return replace(r, handle=handle.to_dict(), executor=handle.executor,
                           job=r.job.transition(JobState.RUNNING, started_at=now, message="running", allocation=held))

        if self.writer.mutate(job.id, running) is None:
            # The job moved on while it started (cancelled and settled elsewhere, or deleted): the
            # work must not outlive it.
            log.warning("job %s changed while it started; stopping the work just started", job.id)
            self.executor.stop(job.id, grace_s=self.grace_s, checkpoint_signal=False)
            return
        report.started.append(job.id)

    def _settle_stop(self, record: JobRecord, report: TickReport) -> None:
        job, intent = record.job, record.stop_intent or ""
        report.finished.append(job.id)
        self.retries.succeeded(job.id)
        if job.is_lease:
            self.writer.end_lease(record, lease_release_message(record))
            return
        if intent in _STOPPED_BEFORE_START:
            self.writer.finish(job.id, JobState.CANCELLED, message=f"{_STOPPED_BEFORE_START[intent]} by "
                                                                   f"{record.stop_actor or 'user'} before it started")
            return
        # preempted or reclaimed before it started: back to the queue, nothing to stop, no attempt (new user 24, N1)
        self.writer.requeue(record, PendingReason(
            code="Preempted", message=f"preempted before it started: {job.message or 'GPUs were needed elsewhere'}; "
                                      f"{NOT_AN_ATTEMPT}",
            details={"preempted_by": job.preempted_by, "attempts": job.counted_attempts - 1, "counted": False}),
            self.clock.now(), preempted=True, backoff=False, false_start=True)

    def _failed(self, record: JobRecord, failure: Failure, exc: BaseException) -> None:
        job = record.job
        details = {"cause": failure.cause, "status": failure.status, "outcome": failure.outcome,
                   "error": type(exc).__name__}
        if failure.outcome == "retry":
            state = self.retries.failed(job.id, failure.cause)
            if state.attempt < self.max_retries:
                waiting = self.retries.reconnecting(job.id, f"the {self.executor.name} executor")
                assert waiting is not None
                log.warning("job %s: start failed (%s); %s", job.id, failure.cause, waiting.message)
                self.writer.say(job.id, waiting.message)
                self.writer.audit(job, "start_retry", waiting.message, {**details, "attempt": state.attempt})
                return
            message = f"could not start after {state.attempt} attempts: {failure.cause}"
            self._requeue(record, "StartFailed", message, details)
            return
        if failure.outcome == "requeue":
            code = exc.details.get("code") if isinstance(exc, ExecutorError) else None
            self._requeue(record, str(code or "StartFailed"), failure.cause, details,
                          unblock=exc.hint if isinstance(exc, ExecutorError) else None)
            return
        self.retries.succeeded(job.id)
        log.warning("job %s: could not start: %s", job.id, failure.cause)
        updated = self.writer.finish(job.id, JobState.FAILED, message=f"could not start: {failure.cause}")
        if updated is not None:
            self.writer.audit(updated.job, "start_failed", f"could not start: {failure.cause}", details)

    def _requeue(self, record: JobRecord, code: str, message: str, details: Mapping[str, object], *,
                 unblock: str | None = None) -> None:
        self.retries.succeeded(record.job.id)
        log.warning("job %s: requeued after a failed start: %s", record.job.id, message)
        reason = PendingReason(code=code, message=message, unblock=unblock or "",
                               details={k: v for k, v in details.items() if v is not None})
        self.writer.requeue(record, reason, self.clock.now(), backoff=True)
