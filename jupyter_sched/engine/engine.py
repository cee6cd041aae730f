"""The engine: snapshot → ``run_cycle`` → apply, under a leader lock (the execution layer).

One :meth:`Engine.tick` does, in order:

1. **Lead** — take or renew the store's leader lease (compare-and-set on the ``leader`` row).
   A non-leader stops here: it serves the API but decides nothing. On becoming leader the
   engine **recovers**: every admitted/running job not watched by its executor is re-adopted
   (pid + process create time) or settled (exit code from the wrapper's file, else ``lost``
   with a reason; an admitted job that provably never started is requeued).
2. **Observe** — executor events (exits, losses, restarts, readiness) become state changes.
3. **Stop** — jobs with a stop intent (cancel, time limit) get their stop plan.
4. **Decide** (when kicked, after a finish, or every ``cycle_interval_s``) — build a frozen
   :class:`~jupyter_sched.scheduling.Snapshot` from store + inventory (+ telemetry, kernels,
   usage), call ``run_cycle`` and apply the :class:`~jupyter_sched.scheduling.CycleResult` in
   ONE transaction that first re-checks the lease (fencing) and refuses any admission that
   would put more than 1000 milli-GPUs on a GPU: admits → ``admitted`` + usage intervals
   opened; preemptions → stop intent; pending → reasons stored when changed; rejects →
   ``rejected``; idle actions → warnings / reclaims; the cycle's audit records → events table.
   With an idle policy (``idle_policies``) the engine runs idle detection itself
   (:func:`jupyter_sched.reclaim.evaluate_idle` on the same snapshot, whose ``telemetry`` the
   :class:`~.telemetry.TelemetryMonitor` fills) and applies each ladder step by its ``action``:
   ``warn`` → audit record with the window of samples + ``idle_warning`` event + the work's
   message; ``reclaim`` → ``notify`` frees nothing, ``release`` revokes a lease (its kernel keeps
   running and is told through the event and the lease's message), ``requeue`` / ``stop`` stop a
   batch job (requeued, or ended as cancelled); ``clear`` → the warning is withdrawn.
   The ladder state is persisted in the details of those audit records (``details.ladder``) and
   re-read from there after a restart or a keepalive written by another server. Why the audit
   trail rather than a job column: every ladder step must write an audit record with its evidence
   anyway, so that record *is* the state — one copy, no schema change, and whichever engine leads
   (or a hub service taking a keepalive) reads the same history. Missing telemetry decides
   nothing (no warning, no "active again"), so a restart with an empty sample store resumes the
   ladder instead of resetting it.
5. **Start** — admitted jobs are started through the executor (leases are bound, not run) and
   their handles persisted.

Preempted jobs are requeued when their process has ended: back to ``pending`` keeping
``submitted_at``, with exponential backoff in ``not_before`` (``requeue_backoff_s · 2^(n-1)``,
capped at ``max_backoff_s``).

Time and ids are injected (``clock``); the engine is synchronous and single-threaded — the
service runs ticks in one worker thread so cycles never overlap.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ..accounting import budget_usage, decayed_gpu_seconds
from ..errors import ConflictError, ExecutorError, NotFoundError, NotLeaderError
from ..executors.base import Executor, ExecutorEvent, ExecutorHandle, Exited, Lost, Ready, Started, Waiting
from ..inventory.changes import InventoryChangePublisher
from ..model import GPU_MILLI, Inventory, Job, JobState, PendingReason, to_iso
from ..model.codec import allocation_to_dict, job_to_dict, reason_to_dict
from ..reclaim import IdleInput, IdlePolicies, IdlePolicy, LadderState, advance_ladder, evaluate_idle, window_evidence
from ..scheduling.snapshot import CycleResult, IdleAction, Pend, Snapshot, UsageHistory
from ..store import LIVE_STATES, JobRecord, Store, StoreTx
from .clock import Clock, SystemClock
from .telemetry import TelemetryMonitor, ladder_from_dict, ladder_to_dict

HOLDING_STATES = (JobState.ADMITTED, JobState.RUNNING)
"""States whose allocation counts against the GPUs (``JobState.holds_gpus``)."""

__all__ = ["IDLE_ACTIONS", "CycleFunction", "Engine", "TickReport"]

log = logging.getLogger(__name__)

IDLE_ACTIONS = ("idle_warning", "idle_reclaim", "idle_clear", "idle_keepalive")
"""Audit actions of the idle ladder; each record's ``details.ladder`` is the ladder state after it."""

CycleFunction = Callable[..., CycleResult]
"""``run_cycle(snapshot, profile) -> CycleResult`` (the pure core's entry point)."""


def _default_cycle(snapshot: Snapshot, profile: Any = None) -> CycleResult:
    from ..scheduling import run_cycle  # the core; imported late so the engine loads without it

    return run_cycle(snapshot, profile)


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


class Engine:
    """Applies scheduling decisions for one store (see module docstring).

    Args:
        store: the store.
        inventory: an :class:`~jupyter_sched.inventory.base.InventorySource` (``current()``).
        executor: runs the work.
        clock: time source (injected).
        owner_id: this engine's identity in the leader lease (default: random).
        profile: the core's ``SchedulingProfile`` (None = the core's default).
        cycle: the decision function (default: ``jupyter_sched.scheduling.run_cycle``).
        lease_ttl_s: seconds a leader lease lasts without renewal (a crashed leader is replaced
            after at most this long).
        cycle_interval_s: seconds between decision cycles when nothing triggers one.
        requeue_backoff_s / max_backoff_s: backoff of preempted jobs (seconds).
        usage_half_life_s: half-life of fair-share usage (seconds; default 7 days).
        stop_grace_s: SIGTERM→SIGKILL grace for cancels and time limits (seconds).
        max_reason_writes: pending reasons persisted per cycle at most (see :meth:`_reasons_to_write`).
        reason_batch: pending reasons written per store transaction (rows; see :meth:`_write_reasons`).
        telemetry: callable returning ``Snapshot.telemetry`` (None = telemetry off).
        kernels: callable returning ``Snapshot.kernels`` (kernel activity per kernel id).
        publish: called with each API event ``{"type", "data"}`` (from the engine's thread).
        monitor: the :class:`~.telemetry.TelemetryMonitor` (samples → ``Snapshot.telemetry``; its pid
            registry is kept up to date from running jobs and lease kernels).
        idle_policies: idle-reclamation policy (None = no idle detection).
        idle_arbiter: an admin's idle rule (see :class:`jupyter_sched.reclaim.IdleArbiter`; None = default).
    """

    def __init__(
        self,
        store: Store,
        inventory: Any,
        executor: Executor,
        *,
        clock: Clock | None = None,
        owner_id: str | None = None,
        profile: Any = None,
        cycle: CycleFunction | None = None,
        lease_ttl_s: float = 15.0,
        cycle_interval_s: float = 5.0,
        requeue_backoff_s: float = 10.0,
        max_backoff_s: float = 600.0,
        usage_half_life_s: float = 7 * 86400.0,
        stop_grace_s: float = 10.0,
        max_reason_writes: int = 500,
        reason_batch: int = 50,
        telemetry: Callable[[], Mapping[str, Any]] | None = None,
        kernels: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None,
        publish: Callable[[dict[str, Any]], None] | None = None,
        monitor: TelemetryMonitor | None = None,
        idle_policies: IdlePolicies | None = None,
        idle_arbiter: Any = None,
    ) -> None:
        self.store = store
        self.inventory = inventory
        self.executor = executor
        self.clock: Clock = clock or SystemClock()
        self.owner_id = owner_id or f"engine-{uuid.uuid4().hex[:12]}"
        self.profile = profile
        self._fallback_logged = False  # fragmentation-aware placement switched to the profile's scores
        self._cycle = cycle or _default_cycle
        self.lease_ttl_s = lease_ttl_s
        self.cycle_interval_s = cycle_interval_s
        self.requeue_backoff_s = requeue_backoff_s
        self.max_backoff_s = max_backoff_s
        self.usage_half_life_s = usage_half_life_s
        self.stop_grace_s = stop_grace_s
        self.max_reason_writes = max_reason_writes
        self.reason_batch = reason_batch
        self.reasons: dict[str, PendingReason] = {}
        self._telemetry = telemetry
        self._kernels = kernels
        self._publish = publish or (lambda event: None)
        # GPU health, cordons, new nodes: an "inventory" event when a cycle's reading differs
        self._inventory_changes = InventoryChangePublisher(self._publish)
        self.term: int | None = None
        self._wanted = True
        self._last_decision: datetime | None = None
        self._stops_sent: set[str] = set()
        self.last_inventory: Inventory | None = None
        self.monitor = monitor
        self.idle_policies = idle_policies
        self.idle_arbiter = idle_arbiter
        self.ladders: dict[str, LadderState] = {}
        self._ladder_attempt: dict[str, int] = {}
        self._ladder_seen: dict[str, int] = {}
        self._ladder_event_id = 0
        self.reclaims_total = 0
        self.idle_gpus: dict[str, tuple[str, ...]] = {}

    # -- public ---------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """True while this engine holds the leader lease (as of its last tick)."""
        return self.term is not None

    def kick(self) -> None:
        """Ask for a decision cycle at the next tick (submit, cancel, finish, quota change)."""
        self._wanted = True

    def tick(self) -> TickReport:
        """Run one tick (see module docstring). Never raises for a lost lease (it just stops leading).

        Raises:
            StoreError: the store failed.
        """
        report = TickReport()
        if not self._lead():
            return report
        report.leader = True
        try:
            for event in self.executor.poll():
                self._on_executor_event(event, report)
            self._send_stops()
            now = self.clock.now()
            due = self._last_decision is None or (now - self._last_decision).total_seconds() >= self.cycle_interval_s
            if self._wanted or due or report.finished:
                self._wanted = False
                self._last_decision = now
                self._decide(report)
        except NotLeaderError as exc:
            log.warning("%s", exc)
            self._step_down()
        report.leader = self.is_leader
        return report

    def resign(self) -> None:
        """Give up leadership (clean shutdown): running work is left running for the next leader."""
        self.executor.detach()
        if self.term is not None:
            with self.store.transaction(now=self.clock.now()) as tx:
                tx.release_leadership(self.owner_id)
                tx.add_event(actor=self.owner_id, action="leader_resigned", message="engine stopped",
                             details={"term": self.term})
        self.term = None

    # -- leadership -------------------------------------------------------------------------------

    def _lead(self) -> bool:
        with self.store.transaction(now=self.clock.now()) as tx:
            lease = tx.acquire_leadership(self.owner_id, self.lease_ttl_s)
            if lease is None or lease.owner != self.owner_id:
                if self.term is not None:
                    log.warning("engine %s lost the leader lease", self.owner_id)
                    self._step_down()
                return False
            new_term = lease.term != self.term
            if new_term:
                tx.add_event(actor=self.owner_id, action="leader_acquired",
                             message=f"engine {self.owner_id} leads the store (term {lease.term})",
                             details={"term": lease.term})
        if new_term:
            self.term = lease.term
            self._stops_sent.clear()
            self._recover()
            self._wanted = True
        return True

    def _step_down(self) -> None:
        self.term = None
        self.reasons = {}
        self.ladders.clear()
        self._ladder_attempt.clear()
        self._ladder_seen.clear()
        self.executor.detach()
        self._stops_sent.clear()

    def _recover(self) -> None:
        """Adopt or settle every admitted/running job this executor does not watch."""
        watched = self.executor.tracked()
        for record in self.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
            job = record.job
            if job.id in watched or job.is_lease:
                continue
            if job.state is JobState.ADMITTED and record.handle is None and record.stop_intent == "cancel":
                self._finish(job.id, JobState.CANCELLED, message=f"cancelled by {record.stop_actor}")
                continue
            handle = ExecutorHandle.from_dict(record.handle) if record.handle else None
            try:
                event = self.executor.adopt(job, handle)
            except ExecutorError as exc:
                event = Lost(job.id, f"could not re-adopt after restart: {exc.message}")
            if event is None:
                self._audit(job, "adopted", f"job {job.id} re-adopted after a server restart",
                            {"handle": dict(record.handle or {})})
                if job.state is JobState.ADMITTED:
                    self._mutate(job.id, lambda r: replace(r, job=r.job.transition(
                        JobState.RUNNING, started_at=self.clock.now(), message="re-adopted after restart")))
            else:
                self._on_executor_event(event, TickReport())

    # -- executor events ---------------------------------------------------------------------------

    def _on_executor_event(self, event: ExecutorEvent, report: TickReport) -> None:
        now = self.clock.now()
        if isinstance(event, Started):
            if event.restarts == 0:  # the work is running now (e.g. its pod was scheduled)
                self._mutate(event.job_id, lambda r: replace(
                    r, handle=event.handle.to_dict(), executor=event.handle.executor,
                    job=replace(r.job, reason=None, message="running")))
                self._audit_id(event.job_id, "started", "running", {"handle": event.handle.to_dict()})
                return
            self._mutate(event.job_id, lambda r: replace(
                r, handle=event.handle.to_dict(), executor=event.handle.executor,
                job=replace(r.job, message=f"restarted (restart {event.restarts})")))
            self._audit_id(event.job_id, "restarted", f"service restarted (restart {event.restarts})",
                           {"handle": event.handle.to_dict()})
        elif isinstance(event, Waiting):
            record = self._get(event.job_id)
            if record is None or record.job.state.terminal or record.job.reason == event.reason:
                return
            self._mutate(event.job_id, lambda r: replace(
                r, job=replace(r.job, reason=event.reason, message=event.reason.message)))
            self._audit_id(event.job_id, "waiting", event.reason.message, {"reason": reason_to_dict(event.reason)})
        elif isinstance(event, Ready):
            self._mutate(event.job_id, lambda r: replace(r, job=replace(r.job, message=f"ready on port {event.port}")))
            self._audit_id(event.job_id, "ready", f"service ready on port {event.port}", {"port": event.port})
        elif isinstance(event, Exited):
            self._settle_exit(event, report)
        elif isinstance(event, Lost):
            record = self._get(event.job_id)
            if record is None or record.job.state.terminal:
                return
            if not event.started and record.job.state is JobState.ADMITTED:
                self._requeue(record, PendingReason(
                    code="Requeued", message="requeued: the server stopped before the job started",
                    details={"attempts": record.job.attempts}), now)
            else:
                self._finish(event.job_id, JobState.LOST, message=event.reason, at=now)
            report.finished.append(event.job_id)

    def _settle_exit(self, event: Exited, report: TickReport) -> None:
        record = self._get(event.job_id)
        if record is None or record.job.state.terminal:
            return
        self._stops_sent.discard(event.job_id)
        report.finished.append(event.job_id)
        job, intent = record.job, record.stop_intent
        end = max(event.finished_at, job.started_at or event.finished_at)
        if intent == "preempt" or intent == "idle":
            why = "preempted" if intent == "preempt" else "reclaimed while idle"
            self._requeue(record, PendingReason(
                code="Preempted", message=f"{why}: {job.message or 'GPUs were needed elsewhere'}",
                details={"preempted_by": job.preempted_by, "attempts": job.attempts, "exit_code": event.exit_code}),
                end, preempted=True)
            return
        if intent == "cancel":
            state, message = JobState.CANCELLED, f"cancelled by {record.stop_actor or 'user'} ({event.message})"
        elif intent == "idle_stop":
            state, message = JobState.CANCELLED, f"stopped while idle: {job.message} ({event.message})"
        elif intent == "timeout":
            state, message = JobState.FAILED, f"time limit of {job.spec.time_limit_s:g} s exceeded ({event.message})"
        elif event.exit_code == 0:
            state, message = JobState.SUCCEEDED, event.message
        else:
            state, message = JobState.FAILED, event.message
        self._finish(job.id, state, message=message, at=end, exit_code=event.exit_code)

    def _requeue(self, record: JobRecord, reason: PendingReason, at: datetime, *, preempted: bool = False) -> None:
        now = self.clock.now()
        attempts = max(1, record.job.attempts)
        # preempted work backs off (no thrashing); work that never started is not penalised
        backoff = min(self.max_backoff_s, self.requeue_backoff_s * 2 ** (attempts - 1)) if preempted else 0.0

        def change(r: JobRecord) -> JobRecord:
            job = r.job
            if preempted and job.state is not JobState.PREEMPTED:
                job = job.transition(JobState.PREEMPTED)
            job = job.transition(JobState.PENDING, allocation=None, admitted_at=None, started_at=None,
                                 reason=reason, message=reason.message, exit_code=None,
                                 not_before=now + timedelta(seconds=backoff) if backoff else None)
            return replace(r, job=job, handle=None, executor=None, stop_intent=None, stop_requested_at=None,
                           stop_actor=None)

        updated = self._mutate(record.job.id, change, close_usage_at=at)
        if updated is not None:
            self._audit(updated.job, "requeued", reason.message, {"backoff_s": backoff, "not_before":
                                                                  updated.job.not_before.isoformat()
                                                                  if updated.job.not_before else None})
            if preempted:
                self._publish({"type": "preempted", "data": job_to_dict(updated.job)})

    def _finish(self, job_id: str, state: JobState, *, message: str, at: datetime | None = None,
                exit_code: int | None = None) -> JobRecord | None:
        end = at or self.clock.now()
        updated = self._mutate(job_id, lambda r: replace(r, job=r.job.transition(
            state, finished_at=end, message=message, exit_code=exit_code)), close_usage_at=end)
        if updated is not None:
            self._audit(updated.job, state.value, message, {"exit_code": exit_code})
        return updated

    # -- stops ---------------------------------------------------------------------------------------

    def _send_stops(self) -> None:
        now = self.clock.now()
        for record in self.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
            job = record.job
            limit = job.spec.time_limit_s
            if (record.stop_intent is None and limit and job.started_at is not None
                    and now >= job.started_at + timedelta(seconds=limit) and not job.is_lease):
                record = self._mutate(job.id, lambda r: replace(
                    r, stop_intent="timeout", stop_requested_at=now, stop_actor="scheduler")) or record
                self._audit(job, "time_limit", f"time limit of {limit:g} s reached; stopping", {"limit_s": limit})
            if record.stop_intent is None or job.id in self._stops_sent:
                continue
            if job.is_lease:
                self._finish(job.id, JobState.CANCELLED, message=f"released by {record.stop_actor or 'user'}")
                continue
            if job.id not in self.executor.tracked():
                continue  # admitted, not started yet: _start_admitted settles it
            grace = self.stop_grace_s
            self.executor.stop(job.id, grace_s=grace, checkpoint_signal=False)
            self._stops_sent.add(job.id)

    # -- decisions -------------------------------------------------------------------------------------

    def snapshot(self, *, idle: bool = False) -> Snapshot:
        """Build the frozen input of one cycle from store + inventory (+ telemetry, kernels, usage).

        ``idle=True`` (the engine's own cycles only, never a dry run from another thread) also
        updates the monitor's pid registry and the ladder cache and adds the idle inputs.
        """
        return self._snapshot(idle=idle)[0]

    def _snapshot(self, *, idle: bool) -> tuple[Snapshot, dict[str, JobRecord]]:
        """:meth:`snapshot` plus the job rows it was built from (by id, with their versions)."""
        now = self.clock.now()
        inventory = self.inventory.current()
        self.last_inventory = inventory
        if idle:  # the engine's own cycle (not a dry run from another thread)
            self._inventory_changes.observe(inventory)
        records = self.store.live_jobs()
        quotas = self.store.quota_set()
        horizon = now - timedelta(seconds=4 * self.usage_half_life_s)
        since = min([horizon, now - timedelta(days=31)])
        intervals = self.store.usage_rows(since=since)
        usage = UsageHistory(
            decayed_gpu_seconds_by_user=decayed_gpu_seconds(intervals, now=now, half_life_s=self.usage_half_life_s),
            gpu_hours_this_period=budget_usage(intervals, quotas.budgets, now=now))
        kernels = dict(self._kernels()) if self._kernels else {}
        telemetry: dict[str, Any] = dict(self._telemetry()) if self._telemetry else {}
        if self.monitor is not None and idle:
            self._update_holders(records, kernels)
            if self.idle_policies is not None:
                self._refresh_ladders(records)
                telemetry.update(self.monitor.idle_inputs(
                    (r.job for r in records), inventory, now=now, lookback_s=self._idle_lookback_s(),
                    ladders=self.ladders, max_gap_s=min(p.max_gap_s for p in self._idle_policy_list()),
                    per_minute=self._idle_per_minute()))
        snapshot = Snapshot(now=now, inventory=inventory, jobs=tuple(r.job for r in records), quotas=quotas,
                            usage=usage, telemetry=telemetry, kernels=kernels)
        return snapshot, {r.job.id: r for r in records}

    # -- idle reclamation --------------------------------------------------------------------------

    def _update_holders(self, records: Iterable[JobRecord], kernels: Mapping[str, Mapping[str, Any]]) -> None:
        """Tell the monitor which pids hold which GPU: job roots (from their handles) and lease kernels."""
        assert self.monitor is not None
        holders: dict[str, set[int]] = {}
        for record in records:
            job = record.job
            if not job.state.holds_gpus or job.allocation is None:
                continue
            pid: Any = None
            if job.is_lease:
                pid = dict(kernels.get(job.spec.kernel_id or "", {})).get("pid")
            elif record.handle:
                pid = record.handle.get("pid")
            if isinstance(pid, int) and pid > 0:
                for uuid in job.allocation.all_gpu_uuids():
                    holders.setdefault(uuid, set()).add(pid)
        self.monitor.set_holders(holders)

    def _idle_lookback_s(self) -> float:
        """Seconds of samples idle detection needs: the longest limit of any class, plus a minute."""
        longest = max(max(p.window_s, p.busy_kernel_window_s or 0.0) for p in self._idle_policy_list())
        return longest + 60.0

    def _idle_per_minute(self) -> bool:
        """Minute maxima suffice when every idle window is at least 10 minutes and gaps of two
        minutes are tolerated (production policies); test-sized windows need every sample."""
        policies = self._idle_policy_list()
        return min(p.window_s for p in policies) >= 600.0 and min(p.max_gap_s for p in policies) >= 120.0

    def _idle_policy_list(self) -> list[IdlePolicy]:
        assert self.idle_policies is not None
        return [self.idle_policies.default, *self.idle_policies.by_priority.values()]

    def _refresh_ladders(self, records: Iterable[JobRecord]) -> None:
        """Load the persisted ladder of running work not in the cache (after a restart) and pick up
        keepalives recorded since the last look (by any server)."""
        running = {r.job.id: r.job for r in records if r.job.state.holds_gpus}
        for job_id in [j for j in self.ladders if j not in running]:
            self.ladders.pop(job_id, None)
            self._ladder_attempt.pop(job_id, None)
            self._ladder_seen.pop(job_id, None)
            self.idle_gpus.pop(job_id, None)
        for job_id, job in running.items():
            if self._ladder_attempt.get(job_id) != job.attempts:
                self.ladders[job_id], self._ladder_seen[job_id] = self.stored_ladder(self.store, job)
                self._ladder_attempt[job_id] = job.attempts
        for event in self.store.list_events(action="idle_keepalive", after_id=self._ladder_event_id, limit=10_000):
            self._ladder_event_id = max(self._ladder_event_id, event.id)
            held = running.get(event.job_id or "")
            if (held is not None and event.details.get("attempt") == held.attempts and "ladder" in event.details
                    and event.id > self._ladder_seen.get(held.id, 0)):
                self.ladders[held.id] = ladder_from_dict(event.details["ladder"])
                self._ladder_seen[held.id] = event.id

    def _log_placement_fallback(self, snapshot: Snapshot) -> None:
        """Say once (and again after a change) when the inventory keeps a fragmentation-aware policy off."""
        wanted = getattr(getattr(self.profile, "placement", None), "fragmentation", "")
        if not wanted:
            return
        from ..placement.fragmentation import vector_ready

        off = not vector_ready(snapshot.inventory)
        if off and not self._fallback_logged:
            log.warning("placement_policy %r is off: a node has more than 8 GPUs, mixed GPU models or MIG; "
                        "placing with binpack until the inventory allows it", wanted)
        elif not off and self._fallback_logged:
            log.info("placement_policy %r is on again", wanted)
        self._fallback_logged = off

    @staticmethod
    def stored_ladder(store: Store, job: Job) -> tuple[LadderState, int]:
        """``(ladder state, audit record id)`` of ``job``'s current allocation, from its newest
        ``idle_*`` audit record (a fresh state and 0 when there is none)."""
        for event in store.list_events(job_id=job.id, newest_first=True, limit=200):
            if event.action in IDLE_ACTIONS and "ladder" in event.details:
                if event.details.get("attempt") != job.attempts:
                    break  # an earlier allocation's ladder: this one starts fresh
                return ladder_from_dict(event.details["ladder"]), event.id
        return LadderState(), 0

    def _decide(self, report: TickReport) -> None:
        snapshot, records = self._snapshot(idle=True)
        started = self.clock.now()
        self._log_placement_fallback(snapshot)
        result = self._cycle(snapshot, self.profile)
        if self.idle_policies is not None:
            ours = evaluate_idle(snapshot, self.idle_policies, self.idle_arbiter)
            mine = {a.job_id for a in ours}
            result = replace(result, idle=(*ours, *(a for a in result.idle if a.job_id not in mine)))
        report.decided = True
        admitted, stops = self._apply(result, snapshot, records)
        report.cycle_s = (self.clock.now() - started).total_seconds()
        report.admitted.extend(j.id for j in admitted)
        report.preempted.extend(p[0] for p in stops)
        report.rejected.extend(r.job_id for r in result.rejects)
        for job_id, grace, checkpoint in stops:
            self.executor.stop(job_id, grace_s=grace, checkpoint_signal=checkpoint)
            self._stops_sent.add(job_id)
        for job in admitted:
            if self._start(job):
                report.started.append(job.id)

    def _apply(self, result: CycleResult, snapshot: Snapshot, seen_rows: Mapping[str, JobRecord] | None = None,
               ) -> tuple[list[Job], list[tuple[str, float, bool]]]:
        """Apply ``result`` in one fenced transaction; return (admitted jobs, stops to send).

        The write lock is held briefly: the transaction re-reads only the rows that hold GPUs
        (the over-allocation guard needs them fresh) and works on ``seen_rows`` (the rows the
        snapshot was built from) for the rest — every write is compare-and-set on the row's
        version, so a row that changed since the snapshot (a cancel, a keepalive) is skipped and
        the next cycle looks at it again. Without ``seen_rows`` every live row is re-read inside
        the transaction. Pending reasons are written afterwards, outside this transaction, in
        small fenced ones (:meth:`_write_reasons`).
        """
        assert self.term is not None
        now = self.clock.now()
        gpu_of = snapshot.inventory.gpu_by_uuid()
        admitted: list[Job] = []
        stops: list[tuple[str, float, bool]] = []
        changed: list[Job] = []
        events: list[dict[str, Any]] = []
        core_audit = {(rec.action, rec.job_id) for rec in result.audit}
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        ladders: dict[str, LadderState] = {}
        seen: dict[str, int] = {}
        with self.store.transaction(now=now) as tx:
            tx.assert_leader(self.owner_id, self.term, self.lease_ttl_s)
            records = dict(seen_rows) if seen_rows is not None else {
                r.job.id: r for r in tx.list_jobs(states=LIVE_STATES)}
            holders = tx.list_jobs(states=HOLDING_STATES)
            records.update((r.job.id, r) for r in holders)
            used: dict[str, int] = {}
            for held in records.values():
                if held.job.state.holds_gpus and held.job.allocation is not None:
                    for gpu in held.job.allocation.all_gpu_uuids():
                        used[gpu] = used.get(gpu, 0) + held.job.allocation.gpu_milli
            for admit in result.admits:
                r = records.get(admit.job_id)
                if r is None or r.job.state is not JobState.PENDING or r.stop_intent:
                    continue  # cancelled or changed since the snapshot
                alloc = admit.allocation
                clash = [g for g in alloc.all_gpu_uuids() if used.get(g, 0) + alloc.gpu_milli > GPU_MILLI]
                if clash:
                    log.error("refusing admission of %s: GPUs %s already allocated", admit.job_id, clash)
                    tx.add_event(actor="scheduler", action="admit_refused", job_id=r.job.id, user=r.job.spec.user,
                                 message=f"admission refused: GPU(s) {', '.join(clash)} already allocated",
                                 details={"allocation": allocation_to_dict(alloc)})
                    continue
                for g in alloc.all_gpu_uuids():
                    used[g] = used.get(g, 0) + alloc.gpu_milli
                job = r.job.transition(JobState.ADMITTED, allocation=alloc, admitted_at=now, reason=None,
                                       nominated=None, attempts=r.job.attempts + 1, not_before=None,
                                       message="admitted" + (" (backfill)" if admit.backfill else ""))
                if tx.try_update_job(replace(r, job=job)) is None:
                    continue  # changed meanwhile (e.g. cancelled): the next cycle looks again
                tx.open_usage(job_id=job.id, attempt=job.attempts, user=job.spec.user, team=job.spec.team,
                              kind=job.spec.kind.value, started_at=now,
                              gpus=[(g, gpu_of[g].model if g in gpu_of else "unknown", alloc.gpu_milli / GPU_MILLI)
                                    for g in alloc.all_gpu_uuids()])
                self._record(tx, core_audit, merged, "admit", job,
                             f"admitted on {alloc.node}: {', '.join(alloc.all_gpu_uuids()) or 'no GPUs'}",
                             {"allocation": allocation_to_dict(alloc), "scores": dict(admit.scores),
                              "borrowed": admit.borrowed, "backfill": admit.backfill})
                admitted.append(job)
                changed.append(job)
            for p in result.preemptions:
                r = records.get(p.job_id)
                if r is None or not r.job.state.holds_gpus or r.stop_intent:
                    continue
                job = replace(r.job, preempted_by=p.for_job, message=p.reason)
                if tx.try_update_job(replace(r, job=job, stop_intent="preempt", stop_requested_at=now,
                                             stop_actor="scheduler")) is None:
                    continue
                self._record(tx, core_audit, merged, p.kind if p.kind == "reclaim" else "preempt", job, p.reason,
                             {"for_job": p.for_job, "kind": p.kind, "grace_s": p.grace_s})
                stops.append((job.id, p.grace_s, p.checkpoint_signal and job.spec.checkpointable))
                changed.append(job)
            for job_id, nominated in result.nominations.items():
                r = records.get(job_id)
                if r is not None and r.job.state is JobState.PENDING and r.job.nominated != nominated:
                    updated = tx.try_update_job(replace(r, job=replace(r.job, nominated=nominated)))
                    if updated is not None:
                        records[job_id] = updated
            for rej in result.rejects:
                r = records.get(rej.job_id)
                if r is None or r.job.state is not JobState.PENDING:
                    continue
                job = r.job.transition(JobState.REJECTED, reason=rej.reason, message=rej.reason.message,
                                       finished_at=now)
                if tx.try_update_job(replace(r, job=job)) is None:
                    continue
                tx.add_event(actor="scheduler", action="reject", job_id=job.id, user=job.spec.user,
                             message=rej.reason.message, details={"reason": reason_to_dict(rej.reason)})
                changed.append(job)
            for idle in result.idle:
                events.extend(self._apply_idle(tx, idle, records, stops, changed, snapshot, ladders, seen))
            for rec in result.audit:
                tx.add_event(actor="scheduler", action=rec.action, job_id=rec.job_id or None, user=rec.user or None,
                             message=rec.message,
                             details={**dict(rec.details), **merged.get((rec.action, rec.job_id), {})})
        for job_id, ladder in ladders.items():  # committed: the cache follows the store
            self.ladders[job_id] = ladder
            self._ladder_seen[job_id] = seen[job_id]
        changed.extend(self._write_reasons(self._reasons_to_write(result, records), records))
        simulated = snapshot.inventory.simulated
        for job in changed:
            self._publish({"type": "lease" if job.is_lease else "job", "data": job_to_dict(job, simulated=simulated)})
        for event in events:
            self._publish(event)
        return admitted, stops

    def _reasons_to_write(self, result: CycleResult, records: Mapping[str, JobRecord]) -> list[Pend]:
        """Pending reasons worth persisting this cycle, at most ``max_reason_writes``.

        Every cycle may renumber the whole queue (positions), and rewriting 10,000 rows per
        cycle would make the store the bottleneck. So: the latest reasons of all jobs live in
        :attr:`reasons` (the service overlays them on reads, positions included), and the store
        gets only the reasons whose *content* changed — a position change alone is not written
        (:func:`_stored_reason_key`). First those whose code changed (or that had none), then the
        rest in queue order, up to the cap; the remainder follow in later cycles.
        """
        self.reasons = {p.job_id: p.reason for p in result.pending}
        urgent: list[Pend] = []
        later: list[Pend] = []
        for pend in result.pending:
            r = records.get(pend.job_id)
            if r is None or r.job.state is not JobState.PENDING:
                continue
            old = r.job.reason
            if old is None or old.code != pend.reason.code:
                urgent.append(pend)
            elif not _same_stored_reason(old, pend.reason):
                later.append(pend)
        return (urgent + later)[: self.max_reason_writes]

    def _write_reasons(self, pends: list[Pend], records: dict[str, JobRecord]) -> list[Job]:
        """Persist pending reasons in fenced transactions of at most ``reason_batch`` rows each
        (so the write lock is held a few ms at a time and submits interleave); compare-and-set
        per row (a row changed meanwhile keeps its reason until the next cycle). Returns the
        jobs written.

        Raises:
            NotLeaderError: the lease was lost between batches (the tick steps down).
        """
        assert self.term is not None
        written: list[Job] = []
        for start in range(0, len(pends), max(1, self.reason_batch)):
            with self.store.transaction(now=self.clock.now()) as tx:
                tx.assert_leader(self.owner_id, self.term, self.lease_ttl_s)
                for pend in pends[start:start + max(1, self.reason_batch)]:
                    r = records[pend.job_id]
                    job = replace(r.job, reason=pend.reason, message=pend.reason.message)
                    updated = tx.try_update_job(replace(r, job=job))
                    if updated is not None:
                        records[job.id] = updated
                        written.append(job)
        return written

    @staticmethod
    def _record(tx: StoreTx, core_audit: set[tuple[str, str]], merged: dict[tuple[str, str], dict[str, Any]],
                action: str, job: Job, message: str, details: dict[str, Any]) -> None:
        """Audit a decision once: merge our details into the core's record for it, or write our own."""
        if (action, job.id) in core_audit:
            merged[(action, job.id)] = details
        else:
            tx.add_event(actor="scheduler", action=action, job_id=job.id, user=job.spec.user, message=message,
                         details=details)

    def _apply_idle(self, tx: StoreTx, idle: IdleAction, records: Mapping[str, JobRecord],
                    stops: list[tuple[str, float, bool]], changed: list[Job], snapshot: Snapshot,
                    ladders: dict[str, LadderState], seen: dict[str, int]) -> list[dict[str, Any]]:
        """Apply one ladder step by its ``action`` (module docstring, step 4); return the API events.

        Writes one audit record (``idle_warning`` / ``idle_reclaim`` / ``idle_clear``) with the
        evidence (the window of samples) and the ladder state after the step (``details.ladder``:
        what a restarted engine resumes from); puts the new ladder state in ``ladders``.
        """
        r = records.get(idle.job_id)
        if r is None or not r.job.state.holds_gpus:
            return []
        job = r.job
        now = tx.now
        entry = snapshot.telemetry.get(job.id)
        samples = entry.samples if isinstance(entry, IdleInput) else ()
        before = self.ladders.get(job.id, LadderState())
        ladder = advance_ladder(before, idle, now=now)
        evidence = dict(idle.evidence)
        if not evidence and idle.stage != "clear":
            start = idle.idle_since or now
            evidence = window_evidence(samples, rule="", idle_since=idle.idle_since, now=now,
                                       limit_s=max(1.0, (now - start).total_seconds()))
        action = idle.action if idle.stage == "reclaim" else ("notify" if idle.stage == "clear" else idle.action)
        if idle.stage == "reclaim" and job.is_lease and action in ("requeue", "stop"):
            action = "release"  # a lease has nothing to requeue or stop: its GPUs are released
        if idle.stage == "reclaim" and not job.is_lease and action == "release":
            action = "requeue"  # "free the GPUs" of a batch job = stop it and put it back in the queue
        data = {"job_id": job.id, "user": job.spec.user, "kind": job.spec.kind.value, "stage": idle.stage,
                "action": action, "reason": idle.reason, "deadline": to_iso(idle.deadline),
                "idle_since": to_iso(idle.idle_since), "gpu_uuids": list(idle.gpu_uuids),
                "kernel_id": job.spec.kernel_id}
        audit = {"warn": "idle_warning", "reclaim": "idle_reclaim"}.get(idle.stage, "idle_clear")
        event_id = tx.add_event(actor="scheduler", action=audit, job_id=job.id, user=job.spec.user,
                                message=self._idle_message(job, idle, action),
                                details={**data, "evidence": evidence, "ladder": ladder_to_dict(ladder),
                                         "attempt": job.attempts})
        ladders[job.id] = ladder
        seen[job.id] = event_id
        uuids = tuple(job.allocation.all_gpu_uuids()) if job.allocation else ()
        if idle.stage == "clear":
            self.idle_gpus.pop(job.id, None)
            message = "GPUs bound to the kernel" if job.is_lease else "running"
            if tx.try_update_job(replace(r, job=replace(job, message=message))) is not None:
                changed.append(replace(job, message=message))
            return [{"type": "idle_warning", "data": data}]
        self.idle_gpus[job.id] = uuids
        if idle.stage == "warn" or action == "notify" or r.stop_intent:
            message = self._idle_message(job, idle, action)
            if tx.try_update_job(replace(r, job=replace(job, message=message))) is not None:
                changed.append(replace(job, message=message))
            return [{"type": "idle_warning", "data": data}]
        self.reclaims_total += 1
        self.idle_gpus.pop(job.id, None)
        if job.is_lease:
            done = job.transition(JobState.CANCELLED, finished_at=now, message=self._idle_message(job, idle, action))
            if tx.try_update_job(replace(r, job=done)) is not None:
                tx.close_usage(job.id, now)
                changed.append(done)
        else:
            intent = "idle_stop" if action == "stop" else "idle"
            if tx.try_update_job(replace(r, job=replace(job, message=idle.reason), stop_intent=intent,
                                         stop_requested_at=now, stop_actor="scheduler")) is not None:
                stops.append((job.id, self.stop_grace_s, job.spec.checkpointable))
        return [{"type": "idle_warning", "data": data}, {"type": "reclaimed", "data": data}]  # panel: refresh

    @staticmethod
    def _idle_message(job: Job, idle: IdleAction, action: str) -> str:
        """The one sentence the user sees (job/lease message, kernel, audit)."""
        if idle.stage == "warn":
            return f"idle warning: {idle.reason}"
        if idle.stage == "clear":
            return f"idle warning withdrawn: {idle.reason}"
        if action == "notify":
            return f"idle (reported, nothing freed): {idle.reason}"
        if job.is_lease:
            return f"reclaimed while idle: {idle.reason}; GPUs released, the kernel keeps running"
        return f"reclaimed while idle: {idle.reason}; " + ("stopping" if action == "stop" else "requeueing")

    def _start(self, job: Job) -> bool:
        """Start an admitted job through the executor (leases are bound, not run)."""
        record = self._get(job.id)
        if record is None or record.job.state is not JobState.ADMITTED:
            return False
        if record.stop_intent == "cancel":
            self._finish(job.id, JobState.CANCELLED, message=f"cancelled by {record.stop_actor} before it started")
            return False
        now = self.clock.now()
        if job.is_lease:
            self._mutate(job.id, lambda r: replace(r, job=r.job.transition(
                JobState.RUNNING, started_at=now, message="GPUs bound to the kernel")))
            return True
        allocation = record.job.allocation
        assert allocation is not None
        try:
            handle = self.executor.start(record.job, allocation)
        except ExecutorError as exc:
            self._finish(job.id, JobState.FAILED, message=f"could not start: {exc.message}")
            return False
        self._mutate(job.id, lambda r: replace(r, handle=handle.to_dict(), executor=handle.executor, job=r.job.transition(
            JobState.RUNNING, started_at=now, message="running")))
        return True

    # -- store helpers -----------------------------------------------------------------------------------

    def _get(self, job_id: str) -> JobRecord | None:
        try:
            return self.store.get_job(job_id)
        except NotFoundError:
            return None

    def _mutate(self, job_id: str, change: Callable[[JobRecord], JobRecord], *,
                close_usage_at: datetime | None = None, attempts: int = 5) -> JobRecord | None:
        """Read-modify-write one job row with compare-and-set, retrying on conflicts; publish the result."""
        for _ in range(attempts):
            with self.store.transaction(now=self.clock.now()) as tx:
                try:
                    current = tx.get_job(job_id)
                except NotFoundError:
                    return None
                try:
                    new = change(current)
                except ConflictError as exc:  # illegal transition: the job moved on meanwhile
                    log.info("job %s: %s", job_id, exc.message)
                    return None
                updated = tx.try_update_job(new)
                if updated is None:
                    continue
                if close_usage_at is not None:
                    tx.close_usage(job_id, close_usage_at)
            simulated = bool(self.last_inventory and self.last_inventory.simulated)
            self._publish({"type": "lease" if updated.job.is_lease else "job",
                           "data": job_to_dict(updated.job, simulated=simulated)})
            return updated
        log.warning("job %s: gave up after %d conflicting updates", job_id, attempts)
        return None

    def _audit(self, job: Job, action: str, message: str, details: Mapping[str, Any]) -> None:
        self.store.add_event(actor="scheduler", action=action, job_id=job.id, user=job.spec.user,
                             message=message, details=dict(details))

    def _audit_id(self, job_id: str, action: str, message: str, details: Mapping[str, Any]) -> None:
        record = self._get(job_id)
        if record is not None:
            self._audit(record.job, action, message, details)



def _same_stored_reason(old: PendingReason, new: PendingReason) -> bool:
    """True when ``new`` differs from ``old`` at most in its queue position (no store write needed).

    Field comparison first (cheap; equal fields mean equal JSON), then the JSON shapes (a stored
    reason has lists where the core's has tuples)."""
    if (old.code, old.message, old.unblock, old.eta, old.eta_reason) != (
            new.code, new.message, new.unblock, new.eta, new.eta_reason):
        return False
    if old.details == new.details and old.per_flavor == new.per_flavor:
        return True
    return _stored_reason_key(old) == _stored_reason_key(new)


def _stored_reason_key(reason: PendingReason) -> dict[str, Any]:
    """What of a pending reason is worth a store write: everything but the queue position
    (positions shift on every submit and finish; the live value is in :attr:`Engine.reasons`)."""
    data = reason_to_dict(reason) or {}
    data.pop("position", None)
    return data
