"""Observe and settle: executor events (started, waiting, ready, exited, lost) become job states.

An exit is settled by the job's stop intent: a preempted or idle-reclaimed job is requeued with
backoff; a cancelled, idle-stopped or timed-out one ends as cancelled / failed; otherwise — or when the job had ended
on its own before the stop reached it — the exit code decides (0 = succeeded). A lost job that provably never started
goes back to the queue.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from ..errors import NotLeaderError, StoreError
from ..executors.base import Connection, ExecutorEvent, Exited, Lost, NotReady, Ready, Started, Waiting
from ..model import JobState, PendingReason
from ..model.codec import reason_to_dict
from ..store import JobRecord
from ..wording.reasons import JUST_STARTED, NOT_AN_ATTEMPT
from ..wording.time_limits import stopped_limit_text
from .clock import Clock
from .seen_running import bound_claim
from .stops import StopReconciler, preempted_message
from .transitions import JobWriter, just_started

log = logging.getLogger(__name__)

__all__ = ["ExecutorEventHandler", "TickReport"]


_LATE_STOPS = {"cancel": "cancel", "idle_stop": "idle stop", "timeout": "time limit's stop",
               "preempt": "preemption", "idle": "idle reclaim"}
"""Stop intents, each as a job's end names it, that change nothing of a job that had already ended on its own
(``_settle_stopped``'s ``before_stop``) — a preemption and an idle reclaim too: its GPUs are free either way, and a
requeue would run its finished work again (red39 R11: a job that had exited 0 was requeued, "preempted")."""


@dataclass
class TickReport:
    """What one tick did (for tests, metrics and logs)."""

    leader: bool = False
    decided: bool = False
    admitted: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    preempted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    cycle_s: float = 0.0


class ExecutorEventHandler:
    """Turns :data:`~jupyter_sched.executors.base.ExecutorEvent` values into job row changes.

    Args:
        writer: job row writes.
        clock: time source.
        stops: the stop plans (an ended job's stop is forgotten).
    """

    def __init__(self, writer: JobWriter, clock: Clock, stops: StopReconciler) -> None:
        self.writer = writer
        self.clock = clock
        self.stops = stops

    def handle_all(self, events: Iterable[ExecutorEvent], report: TickReport) -> None:
        """Apply each of ``events`` (:meth:`handle`): one that fails for any other reason than a lost lease or a
        failing store is logged and the others go on.

        Raises:
            NotLeaderError: the lease was lost.
            StoreError: the store failed.
        """
        for event in events:
            try:
                self.handle(event, report)
            except (NotLeaderError, StoreError):
                raise
            except Exception:  # one malformed event must not stop the others or the cycle
                log.exception("executor event %r could not be applied", event)

    def handle(self, event: ExecutorEvent, report: TickReport) -> None:
        """Apply one event; ended jobs are added to ``report.finished``."""
        writer = self.writer
        if isinstance(event, Started):
            handle = event.handle
            if event.restarts == 0:  # the work is running now (e.g. its pod was scheduled)
                now = self.clock.now()

                def running(r: JobRecord) -> JobRecord:
                    job = r.job
                    if job.state is JobState.ADMITTED:  # an executor that starts asynchronously
                        job = job.transition(JobState.RUNNING, started_at=now)
                    return replace(r, handle=handle.to_dict(), executor=handle.executor,
                                   job=replace(job, reason=None, message="running"))

                writer.mutate(event.job_id, running)
                writer.audit_id(event.job_id, "started", "running", {"handle": handle.to_dict()})
                return
            writer.mutate(event.job_id, lambda r: replace(
                r, handle=handle.to_dict(), executor=handle.executor,
                job=replace(r.job, message=f"restarted (restart {event.restarts})")))
            writer.audit_id(event.job_id, "restarted", f"service restarted (restart {event.restarts})",
                            {"handle": handle.to_dict()})
        elif isinstance(event, Waiting):
            record = writer.get(event.job_id)
            if record is None or record.job.state.terminal or record.job.reason == event.reason:
                return
            writer.mutate(event.job_id, lambda r: replace(
                r, job=replace(r.job, reason=event.reason, message=event.reason.message)))
            writer.audit_id(event.job_id, "waiting", event.reason.message, {"reason": reason_to_dict(event.reason)})
        elif isinstance(event, Ready):
            writer.mutate(event.job_id, lambda r: replace(r, job=replace(r.job, message=f"ready on port {event.port}")))
            writer.audit_id(event.job_id, "ready", f"service ready on port {event.port}", {"port": event.port})
        elif isinstance(event, NotReady):  # new user 8, N8: a crashed service read "ready" until its restart
            if writer.say(event.job_id, f"stopped answering on port {event.port}: {event.why}") is None:
                return  # ended meanwhile
            writer.audit_id(event.job_id, "not_ready", f"service stopped answering on port {event.port}: {event.why}",
                            {"port": event.port})
        elif isinstance(event, Exited):
            self._settle_exit(event, report)
        elif isinstance(event, Lost):
            self._settle_lost(event, report)
        elif isinstance(event, Connection):
            self._connection(event)

    def _connection(self, event: Connection) -> None:
        record = self.writer.get(event.job_id)
        if record is None or record.job.state.terminal:
            return
        if event.reconnecting is not None:
            self.writer.say(event.job_id, event.reconnecting)
        elif record.job.message.startswith("reconnecting to "):
            self.writer.say(event.job_id, "running" if record.job.state is JobState.RUNNING else "admitted")

    def _settle_lost(self, event: Lost, report: TickReport) -> None:
        record = self.writer.get(event.job_id)
        if record is None or record.job.state.terminal:
            return
        self.stops.forget(event.job_id)  # a requeued job's next stop must be sent again
        if not event.started and record.job.state is JobState.ADMITTED:
            self.writer.requeue(record, PendingReason(
                code="Requeued", message=f"requeued: the server stopped before the job started; {NOT_AN_ATTEMPT}",
                details={"attempts": record.job.counted_attempts - 1, "counted": False}), self.clock.now(),
                false_start=True)
        elif record.stop_intent is not None:
            # Its stop was asked for, and the work is gone: the stop ended it. An adopted job's
            # wrapper is not our child, so when the stop plan's SIGKILL reaches it before it wrote
            # exit.json (a wrapper slower than the grace on a loaded machine) there is no exit
            # code — a cancel then read as "lost", a preemption was never requeued (CI flake of
            # test_a_paused_leader_that_lost_its_lease_starts_and_stops_nothing_after_it_resumes).
            self._settle_stopped(record, None, self.clock.now(), event.reason, report)
            return
        else:
            self._finish(event.job_id, JobState.LOST, message=event.reason, at=self.clock.now())
        report.finished.append(event.job_id)

    def _settle_exit(self, event: Exited, report: TickReport) -> None:
        record = self.writer.get(event.job_id)
        if record is None or record.job.state.terminal:
            return
        self.stops.forget(event.job_id)
        event = bound_claim(event, record, self.writer)  # its owner's word is no earlier than it was seen (red33 R3)
        self._settle_stopped(record, event.exit_code, event.finished_at, event.message, report,
                             before_stop=event.before_stop)

    def _settle_stopped(self, record: JobRecord, exit_code: int | None, finished_at: datetime, said: str,
                        report: TickReport, *, before_stop: bool = False) -> None:
        """Settle an ended job by its stop intent, else by ``exit_code`` (None: unknown, failed). ``before_stop``: it
        had ended on its own before the stop reached it (:attr:`~jupyter_sched.executors.base.Exited.before_stop`):
        the stop — any of :data:`_LATE_STOPS` — changed nothing, and its own end stands, said so; it is not requeued."""
        report.finished.append(record.job.id)
        job, intent = record.job, record.stop_intent
        if before_stop and intent in _LATE_STOPS:  # newuser38 N4: not "cancelled … (exited with code 0)"
            said = f"{said}; it had ended before the {_LATE_STOPS[intent]} reached it"
            intent = None
        end = max(finished_at, job.started_at or finished_at)
        if intent == "preempt" or intent == "idle":
            # the preemption's own words once when they open with the verb (hubadmin26 B2: a drain's
            # requeue read "preempted: preempted: node … is drained")
            message = (preempted_message(job.message) if intent == "preempt"
                       else f"reclaimed while idle: {job.message or 'GPUs were needed elsewhere'}")
            # stopped within the engine's first look at it: no attempt, and said so (new user 24, N1)
            first = just_started(record, self.writer.settle_s)
            if first:  # the preemption's own words once ("preempted to …", not "preempted: preempted to …")
                said = preempted_message(job.message) if intent == "preempt" else message
                message = f"{JUST_STARTED}: {said}; {NOT_AN_ATTEMPT}"
            # an eviction is no failure: the job may start again as soon as GPUs are free, and a
            # reclaimer cancelled seconds later does not grow its wait (new user 15 N14, red team 15
            # R13); idle work reclaimed backs off, or it would take its GPUs straight back
            self.writer.requeue(record, PendingReason(
                code="Preempted", message=message,
                details={"preempted_by": job.preempted_by, "attempts": job.counted_attempts - (1 if first else 0),
                         "exit_code": exit_code, "counted": not first,
                         "preempted_at": (record.stop_requested_at or end).isoformat()}),  # when (N7)
                end, preempted=True, backoff=intent == "idle", by_job=intent == "preempt", false_start=first)
            return
        if intent == "cancel":
            state, message = JobState.CANCELLED, f"cancelled by {record.stop_actor or 'user'} ({said})"
        elif intent == "idle_stop":
            state, message = JobState.CANCELLED, f"stopped while idle: {job.message} ({said})"
        elif intent == "timeout":
            # as the queue said it: "4m", not "240 s" (new user 20, N10); "(queue default; none given)" where it chose it
            limit = stopped_limit_text(job.spec.time_limit_s or 0, job.spec.time_limit_source)
            state, message = JobState.FAILED, f"time limit of {limit} exceeded ({said})"
        elif exit_code == 0:
            state, message = JobState.SUCCEEDED, said
        else:
            state, message = JobState.FAILED, said
        self._finish(job.id, state, message=message, at=end, exit_code=exit_code)

    def _finish(self, job_id: str, state: JobState, *, message: str, at: datetime, exit_code: int | None = None) -> None:
        """Record a job's end; if the database refuses what the executor reported (an exit code out of
        range, a NUL byte in its words: values from files the job's owner writes), record the end
        without them. Retrying the same values failed every tick, and the engine's store backoff then
        held every user's decisions (red team 6)."""
        try:
            self.writer.finish(job_id, state, message=message, at=at, exit_code=exit_code)
        except StoreError as exc:
            if not exc.details.get("bad_data"):
                raise
            log.error("job %s: its end could not be stored as reported (%s); stored without the executor's details",
                      job_id, exc.message[:300])
            self.writer.finish(job_id, state, at=at, exit_code=None,
                               message="ended; what its executor reported could not be stored (the database refused it)")
