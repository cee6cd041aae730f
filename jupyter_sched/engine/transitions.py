"""Job state transitions the engine writes: compare-and-set row updates, finishes, requeues, audit.

Every step of the engine (recovery, executor events, stop plans, starts) changes job rows
through one :class:`JobWriter`, so that each change is a compare-and-set on the row's version
(a concurrent cancel from the API is never overwritten), closes usage intervals when work ends,
writes its audit record and publishes the new job to API subscribers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from ..errors import ConflictError, NotFoundError
from ..model import Job, JobKind, JobState, PendingReason
from ..model.codec import job_to_dict
from ..model.job import LEASE_NAMES, public_name
from ..store import LIVE_STATES, JobRecord, Store
from ..wording import lease_end_message
from ..wording.reasons import preempted_how, work_named
from .clock import Clock

__all__ = ["JobWriter", "Publish"]

log = logging.getLogger(__name__)

Publish = Callable[[dict[str, Any]], None]
"""Called with each API event ``{"type", "data"}`` (from the engine's thread)."""

SETTLE_S = 1.0
"""The engine's poll interval by default (:class:`~.runner.EngineRunner`'s ``poll_interval_s``, which sets
:attr:`JobWriter.settle_s`): the time it takes the engine to look at running work once."""


def just_started(record: JobRecord, settle_s: float) -> bool:
    """Whether ``record``'s stop was asked within ``settle_s`` seconds of the executor's start confirmation
    (``started_at``: the local executor's launch, the Kubernetes pods' start) — before the engine had looked
    at the running work once, so before its program could have done work that counts: the next scheduling
    pass undoing the one that admitted it (new user 24, N1: two users' submits a second apart, the first
    job reclaimed 0-1 s after its start read "preempted … it waits in the queue again" and counted as a
    run). Also True for a stop asked before the start was confirmed at all (no ``started_at``: Kubernetes
    pods that never ran); False when no stop was asked."""
    started, asked = record.job.started_at, record.stop_requested_at
    return asked is not None and (started is None or (asked - started).total_seconds() <= settle_s)


class JobWriter:
    """Read-modify-write of job rows for the engine (see module docstring).

    Args:
        store: the store.
        clock: time source (injected).
        publish: API event sink.
        simulated: returns True while the inventory is simulated (job payloads say so).
        requeue_backoff_s / max_backoff_s: backoff of jobs whose start failed and of idle work
            reclaimed, seconds (``requeue_backoff_s · 2^(attempts-1)``, capped at ``max_backoff_s``);
            evictions for other work requeue without one (:meth:`requeue`).
    """

    def __init__(self, store: Store, clock: Clock, publish: Publish, *, simulated: Callable[[], bool],
                 requeue_backoff_s: float = 10.0, max_backoff_s: float = 600.0) -> None:
        self.store = store
        self.clock = clock
        self.publish = publish
        self._simulated = simulated
        self.requeue_backoff_s = requeue_backoff_s
        self.max_backoff_s = max_backoff_s
        self.settle_s = SETTLE_S
        """Seconds after a start within which a stop makes no attempt (:func:`just_started`): the engine's
        poll interval, set by its runner."""

    def get(self, job_id: str) -> JobRecord | None:
        """The row of ``job_id`` (None when it does not exist)."""
        try:
            return self.store.get_job(job_id)
        except NotFoundError:
            return None

    def mutate(self, job_id: str, change: Callable[[JobRecord], JobRecord], *,
               close_usage_at: datetime | None = None, attempts: int = 5) -> JobRecord | None:
        """Read-modify-write one job row with compare-and-set, retrying on conflicts; publish the result.

        ``change`` raising :class:`~jupyter_sched.errors.ConflictError` (an illegal transition:
        the job moved on meanwhile) leaves the row alone. Returns the written row, or None when
        the job is gone, the change was refused or ``attempts`` conflicting writes in a row.
        """
        for _ in range(attempts):
            with self.store.transaction(now=self.clock.now()) as tx:
                try:
                    current = tx.get_job(job_id)
                except NotFoundError:
                    return None
                try:
                    new = change(current)
                except ConflictError as exc:
                    log.info("job %s: %s", job_id, exc.message)
                    return None
                updated = tx.try_update_job(new)
                if updated is None:
                    continue
                if close_usage_at is not None:
                    tx.close_usage(job_id, close_usage_at)
            self.publish({"type": "lease" if updated.job.is_lease else "job",
                          "data": job_to_dict(updated.job, simulated=self._simulated())})
            return updated
        log.warning("job %s: gave up after %d conflicting updates", job_id, attempts)
        return None

    def announce(self, job: Job) -> None:
        """Publish ``job`` as it now is to API subscribers (a row written outside :meth:`mutate`)."""
        self.publish({"type": "lease" if job.is_lease else "job", "data": job_to_dict(job, simulated=self._simulated())})

    def say(self, job_id: str, message: str) -> JobRecord | None:
        """Set the one-line ``message`` of a live job (no write when it already says so)."""
        def change(r: JobRecord) -> JobRecord:
            if r.job.state.terminal or r.job.message == message:
                raise ConflictError(f"job {job_id}: nothing to say")
            return replace(r, job=replace(r.job, message=message))

        return self.mutate(job_id, change)

    def audit(self, job: Job, action: str, message: str, details: Mapping[str, Any]) -> None:
        """Write one audit record about ``job`` (actor ``scheduler``)."""
        self.store.add_event(actor="scheduler", action=action, job_id=job.id, user=job.spec.user,
                             message=message, details=dict(details))

    def audit_id(self, job_id: str, action: str, message: str, details: Mapping[str, Any]) -> None:
        """:meth:`audit` by job id (nothing when the job is gone)."""
        record = self.get(job_id)
        if record is not None:
            self.audit(record.job, action, message, details)

    def finish(self, job_id: str, state: JobState, *, message: str, at: datetime | None = None,
               exit_code: int | None = None) -> JobRecord | None:
        """End ``job_id`` in the terminal ``state`` at ``at`` (default now), closing its usage."""
        end = at or self.clock.now()
        updated = self.mutate(job_id, lambda r: replace(r, job=r.job.transition(
            state, finished_at=end, message=message, exit_code=exit_code)), close_usage_at=end)
        if updated is not None:
            self.audit(updated.job, state.value, message, {"exit_code": exit_code})
            if not updated.job.is_lease:
                self.end_leases_of(updated.job, f"ended ({state.value})")
        return updated

    def end_lease(self, record: JobRecord, message: str) -> JobRecord | None:
        """End the lease of ``record``, whose stop intent was carried out, as ``cancelled`` with
        ``message``: a lease has no work to stop and no place to keep in the queue, so it ends at
        once. One its stop intent preempted also publishes the ``preempted`` event a requeued job's
        preemption publishes (the panel's Preempted toast, the hub's preemption count): the lease's
        end alone was a ``lease`` event, and its owner was told nothing (session 20's closing note)."""
        updated = self.finish(record.job.id, JobState.CANCELLED, message=message)
        if updated is not None and record.stop_intent == "preempt":
            from .stops import preempted_message

            said = preempted_message(record.job.message)
            self.publish({"type": "preempted", "data": self._preempted_data(
                updated.job, PendingReason(code="Preempted", message=said), by_job=True)})
        return updated

    def end_leases_of(self, job: Job, how: str) -> None:
        """End the live leases that ``job``'s process asked for (``parent_job_id``): its kernel
        went with it, so no code of its own gives their GPUs back — a SIGKILL leaves no chance to
        (new user 5, finding 3: "held for no kernel" until idle reclaim). Only leases of the same
        user (the service refuses any other parent; checked again here)."""
        for record in self.store.list_jobs(states=LIVE_STATES, kinds=[JobKind.LEASE]):
            lease = record.job
            if lease.spec.parent_job_id != job.id or lease.spec.user != job.spec.user:
                continue
            message = lease_end_message(granted=lease.state.holds_gpus, actor="the scheduler",
                                        why=f"the job that asked for it ({job.spec.name}, {job.id}) {how}")
            self.finish(lease.id, JobState.CANCELLED, message=message)

    def _preempted_data(self, job: Job, reason: PendingReason, *, by_job: bool) -> dict[str, Any]:
        """The ``preempted`` event's job object, with its preemptor in words: ``preempted_by_name``
        and ``preempted_by_text`` (``by norm1 (j-…), a higher-priority normal job of team ml``;
        another user's work by its owner and quoted name, :func:`~jupyter_sched.wording.work_named`);
        ``preempted_by_text`` is "" when no job preempted it (``by_job`` False: an idle reclaim,
        whose ``preempted_by`` still names the last preemptor). New user 20, N20: the event carried
        only the new ``preempted_by``, and the panel paired it with the name of the job that had
        preempted the same job before."""
        data = job_to_dict(job, simulated=self._simulated())
        by = job.preempted_by
        if not by or not by_job:
            data["preempted_by_text"] = ""
            return data
        other = self.get(by)
        name = public_name(other.job.spec).strip()[:80] if other is not None else ""
        owner = other.job.spec.user if other is not None and other.job.spec.user != job.spec.user else None
        if name and name != by:
            data["preempted_by_name"] = name
        named = work_named(by, "" if owner is None and name in LEASE_NAMES else name, owner)
        data["preempted_by_text"] = f"by {named}{preempted_how(reason.message)}"
        return data

    def requeue(self, record: JobRecord, reason: PendingReason, at: datetime, *, preempted: bool = False,
                backoff: bool | None = None, by_job: bool = True, false_start: bool = False) -> JobRecord | None:
        """Put ``record``'s job back in the queue (keeping ``submitted_at``), usage closed at ``at``;
        return the written row (None when the job moved on meanwhile).

        Work whose start failed backs off (``backoff=True``; ``not_before``); so does preempted
        work unless ``backoff=False`` — the engine passes it for evictions, which are no failure
        (new user 15 N14: a reclaimed job sat out 20 s while every GPU it needed was free; the
        reclaimers' own rules prevent thrashing: a victim is never evicted for its preemptor, and
        another team's job younger than the minimum runtime is never a victim). Work that never
        started is not penalised. ``by_job``: a job's admission preempted it (its ``preempted_by``),
        not an idle reclaim — what the ``preempted`` event says of its preemptor. ``false_start``: the run
        was stopped before or just after it started (:func:`just_started`): it is no attempt
        (``Job.false_starts`` grows; the ``requeued`` record says ``counted: false``; new user 24, N1).
        """
        now = self.clock.now()
        attempts = max(1, record.job.counted_attempts - (1 if false_start else 0))
        wait = preempted if backoff is None else backoff
        backoff_s = min(self.max_backoff_s, self.requeue_backoff_s * 2 ** (attempts - 1)) if wait else 0.0

        def change(r: JobRecord) -> JobRecord:
            job = r.job
            if preempted and job.state is not JobState.PREEMPTED:
                job = job.transition(JobState.PREEMPTED)
            job = job.transition(JobState.PENDING, allocation=None, admitted_at=None, started_at=None,
                                 reason=reason, message=reason.message, exit_code=None,
                                 not_before=now + timedelta(seconds=backoff_s) if backoff_s else None,
                                 false_starts=job.false_starts + (1 if false_start else 0))
            return replace(r, job=job, handle=None, executor=None, stop_intent=None, stop_requested_at=None,
                           stop_actor=None)

        updated = self.mutate(record.job.id, change, close_usage_at=at)
        if updated is not None:
            self.audit(updated.job, "requeued", reason.message, {"backoff_s": backoff_s, "not_before":
                                                                 updated.job.not_before.isoformat()
                                                                 if updated.job.not_before else None,
                                                                 "counted": not false_start})
            if preempted:
                self.publish({"type": "preempted", "data": self._preempted_data(updated.job, reason, by_job=by_job)})
            if not updated.job.is_lease:
                self.end_leases_of(updated.job, "was stopped and requeued")
        return updated
