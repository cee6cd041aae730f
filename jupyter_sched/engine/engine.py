"""The engine: snapshot → ``run_cycle`` → apply, under a leader lock (the execution layer).

One :meth:`Engine.tick` does, in order (each step is its own module):

1. **Lead** (:mod:`.leadership`) — take or renew the store's leader lease (compare-and-set on
   the ``leader`` row, expiry by the database's clock). A non-leader stops here: it serves the
   API but decides nothing and acts on nothing.
2. **Observe** (:mod:`.observe`) — executor events (exits, losses, restarts, readiness) become
   state changes; when the work was last seen running is kept (:mod:`.seen_running`).
3. **Decide** (when kicked, after a finish, or every ``cycle_interval_s``) — build a frozen
   :class:`~jupyter_sched.scheduling.Snapshot` (:mod:`.decide`), call ``run_cycle`` and commit
   the :class:`~jupyter_sched.scheduling.CycleResult` in one fenced transaction (:mod:`.apply`),
   including the idle ladder's steps (:mod:`.idle`). Deciding performs no side effect.
4. **Reconcile** (:mod:`.reconcile`) — compare each admitted/running job's stored intent with
   what the executor reports: start admitted work (:mod:`.start`), send stop intents
   (:mod:`.stops`), adopt unwatched work (:mod:`.recovery`; every unwatched job right after
   becoming leader). Each side effect is preceded by a leader check; each failure concerns its
   one job and is retried with backoff, requeued or failed with its cause.
5. **Hooks** — :attr:`Engine.leader_hooks` (e.g. job definitions firing due runs).

Preempted jobs are requeued when their process has ended, keeping ``submitted_at``, free to start
at once (no failure; new user 15 N14); failed starts and idle work reclaimed back off
(``requeue_backoff_s · 2^(n-1)``, at most ``max_backoff_s``; :mod:`.transitions`).

Time and ids are injected (``clock``); the engine is synchronous and single-threaded — the
service runs ticks in one worker thread so cycles never overlap.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Literal

from ..backoff import DATABASE_BACKOFF, Backoff, Reconnecting, Retries
from ..errors import NotLeaderError, StoreError
from ..executors.base import Executor
from ..executors.runas import RunAs, embedded_run_as
from ..inventory.changes import InventoryChangePublisher
from ..model import Inventory, Job, PendingReason
from ..reclaim import IdlePolicies, LadderState
from ..scheduling.live import LiveCycle
from ..scheduling.snapshot import CycleResult, Pend, Snapshot
from ..store import JobRecord, Store
from ..store.outage import said_by_store
from .apply import DecisionApplier
from .clock import Clock, SystemClock
from .decide import CycleFunction, Decider, cyclic_gc_paused, default_cycle
from .idle import IDLE_ACTIONS, IdleLadders, Stop
from .incremental import IncrementalDecider
from .leadership import Leadership
from .observe import ExecutorEventHandler, TickReport
from .reconcile import Reconciler
from .recovery import AdoptReconciler
from .seen_running import SeenRunning
from .start import StartReconciler
from .stops import StopReconciler
from .telemetry import TelemetryMonitor
from .transitions import JobWriter

__all__ = ["IDLE_ACTIONS", "CycleFunction", "Engine", "TickReport"]

log = logging.getLogger(__name__)


_FREEING_EVENTS = frozenset({"cancel"})
"""Kick events that can only free GPUs: they keep the live ledger (:meth:`Engine.kick`)."""

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
        requeue_backoff_s / max_backoff_s: backoff of failed starts and idle work reclaimed (s).
        usage_half_life_s: half-life of fair-share usage (seconds; default 7 days).
        stop_grace_s: SIGTERM→SIGKILL grace for cancels and time limits (seconds).
        max_reason_writes: pending reasons persisted per cycle at most
            (:meth:`.apply.DecisionApplier.reasons_to_write`).
        reason_batch: pending reasons written per store transaction (rows).
        telemetry: callable returning ``Snapshot.telemetry`` (None = telemetry off).
        kernels: callable returning ``Snapshot.kernels`` (kernel activity per kernel id).
        publish: called with each API event ``{"type", "data"}`` (from the engine's thread).
        monitor: the :class:`~.telemetry.TelemetryMonitor` (samples → ``Snapshot.telemetry``; its pid
            registry is kept up to date from running jobs and lease kernels).
        idle_policies: idle-reclamation policy (None = no idle detection).
        idle_arbiter: an admin's idle rule (see :class:`jupyter_sched.reclaim.IdleArbiter`; None = default).
        lease_clock: the clock leader leases expire by: ``"database"`` (the database server's), a
            clock, or None (default) = the database's when ``clock`` is the system clock, else
            ``clock`` (a caller that drives time — tests, the simulator — drives leases too).
        retry_backoff: backoff of failed starts, stops and adoptions (default 1 s doubling to 60 s,
            half jittered).
        max_start_retries: transient failures of one start before its job is requeued.
        run_as: ``run_as(job)`` → who the job runs as, decided at its start (default: this
            server's own account; hub mode maps owners to their OS accounts or pod ids).
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
        lease_clock: Clock | Literal["database"] | None = None,
        retry_backoff: Backoff | None = None,
        max_start_retries: int = 5,
        run_as: Callable[[Job], RunAs] | None = None,
    ) -> None:
        self.store = store
        self.inventory = inventory
        self.executor = executor
        """Who each job runs as, decided at its start (hub mode sets the owner-account mapping)."""
        self.clock: Clock = clock or SystemClock()
        self.owner_id = owner_id or f"engine-{uuid.uuid4().hex[:12]}"
        self.profile = profile
        self._cycle = cycle or default_cycle
        self.lease_ttl_s = lease_ttl_s
        self.cycle_interval_s = cycle_interval_s
        self.stop_grace_s = stop_grace_s
        self.monitor = monitor
        self._publish = publish or (lambda event: None)
        self._wanted = True
        self._reasons_stale = False  # an incremental grant left other reasons counting its GPUs as free
        self._freed = self._shy = False  # GPUs freed since the live ledger was built; a submit waits on it
        self._cycle_end = self._cycle_s = 0.0  # the last full cycle: its end (monotonic) and length (s)
        self._recovering = False
        self._last_decision: datetime | None = None
        if lease_clock is None:
            lease_clock = "database" if isinstance(self.clock, SystemClock) else self.clock
        self.leadership = Leadership(store, self.clock, self.owner_id, lease_ttl_s,
                                     lease_clock=None if lease_clock == "database" else lease_clock)
        self.writer = JobWriter(store, self.clock, self._publish, simulated=self._simulated,
                                requeue_backoff_s=requeue_backoff_s, max_backoff_s=max_backoff_s)
        self.retries = Retries(retry_backoff or Backoff(base_s=1.0, cap_s=60.0, jitter=0.5))
        self.database_retries = Retries(DATABASE_BACKOFF)  # the tick's, while the database fails
        self.stops = StopReconciler(executor, self.writer, self.leadership, self.clock, retries=self.retries,
                                    grace_s=stop_grace_s)
        self.events = ExecutorEventHandler(self.writer, self.clock, self.stops)
        self.starts = StartReconciler(executor, self.writer, self.leadership, self.clock, retries=self.retries,
                                      max_retries=max_start_retries, grace_s=stop_grace_s,
                                      run_as=run_as or embedded_run_as)
        self.seen = SeenRunning(store)  # when the executor's work was last seen running, kept (red33 R3)
        adopt = AdoptReconciler(executor, self.writer, self.events, self.leadership, self.clock, retries=self.retries)
        self.reconciler = Reconciler(store, executor, self.writer, start=self.starts, stops=self.stops, adopt=adopt)
        self.reconciler.inventory = getattr(inventory, "current", None)  # a wrapper with no launch record: its GPUs' node (B22)
        self.idle = IdleLadders(store, monitor, idle_policies, idle_arbiter, stop_grace_s=stop_grace_s)
        self.decider = Decider(store, inventory, self.clock, self.idle, usage_half_life_s=usage_half_life_s,
                               telemetry=telemetry, kernels=kernels, stops=self.stops, reinstalled=self.starts.reinstalled)
        # GPU health, cordons, new nodes: an "inventory" event when a cycle's reading differs
        self.decider.inventory_observers.append(InventoryChangePublisher(self._publish).observe)
        self.applier = DecisionApplier(store, self.leadership, self.clock, self.idle, self._publish,
                                       max_reason_writes=max_reason_writes, reason_batch=reason_batch,
                                       simulated=self._simulated)
        self.cycle_gap_s = 0.0
        """Least seconds between the end of one full cycle and the start of the next one a kick or a
        finish asks for (twice the last cycle's duration when that is longer): a burst of events
        shares cycles and the API keeps most of the interpreter. Incremental decisions and
        timer-due cycles never wait for it. 0 (default, tests driving ticks) = no gap; the
        service sets its ``cycle_coalesce_s`` while it runs the engine itself."""
        self._full_not_before = 0.0
        self.reconcile_interval_s = max(1.0, cycle_interval_s)
        """Longest seconds between two passes over every admitted/running job while ticks only
        decide submits incrementally (any other tick makes a pass; default: ``cycle_interval_s``,
        at least 1 s — the pass costs O(jobs held), ~0.1 s at 18,000 on an idle machine)."""
        self._last_reconcile = 0.0
        self._simulated_of: tuple[int, bool] = (0, False)
        self.database: Reconnecting | None = None
        """While the database fails: "reconnecting to the database (attempt n, next in s)"."""
        self.incremental = IncrementalDecider(self.writer, self.applier, self.clock, self.starts.reconcile)
        self.incremental.runtimes = self.decider.runtimes.estimate
        self.leader_hooks: list[Callable[[], object]] = []
        """Called once per tick while leading, after the start step (e.g. job definitions firing
        due runs). A hook that raises is logged with its name and never stops the tick."""

    # -- public ---------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """True while this engine holds the leader lease (as of its last tick)."""
        return self.leadership.term is not None

    @property
    def term(self) -> int | None:
        """The leader lease's term while this engine leads, else None."""
        return self.leadership.term

    @property
    def run_as(self) -> Callable[[Job], RunAs]:
        """``run_as(job)`` → who the job runs as, decided at its start; settable (hub mode sets the
        account mapping's resolver)."""
        return self.starts.run_as

    @run_as.setter
    def run_as(self, resolver: Callable[[Job], RunAs]) -> None:
        self.starts.run_as = resolver

    @property
    def reasons(self) -> dict[str, PendingReason]:
        """The latest pending reason of every pending job (positions included), by id."""
        return self.applier.reasons

    @property
    def idle_gpus(self) -> dict[str, tuple[str, ...]]:
        """GPUs of work currently warned or reclaimed as idle, by job id."""
        return self.idle.idle_gpus

    @property
    def reclaims_total(self) -> int:
        """Idle reclaims applied by this engine."""
        return self.idle.reclaims_total

    @property
    def ladders(self) -> dict[str, LadderState]:
        """The idle ladder of every piece of running work, by job id."""
        return self.idle.ladders

    @property
    def idle_policies(self) -> IdlePolicies | None:
        """The idle-reclamation policy in force (None = no idle detection); settable."""
        return self.idle.policies

    @idle_policies.setter
    def idle_policies(self, policies: IdlePolicies | None) -> None:
        self.idle.policies = policies

    @property
    def max_reason_writes(self) -> int:
        """Pending reasons persisted per cycle at most."""
        return self.applier.max_reason_writes

    @max_reason_writes.setter
    def max_reason_writes(self, value: int) -> None:
        self.applier.max_reason_writes = value

    @property
    def last_inventory(self) -> Inventory | None:
        """The inventory of the latest snapshot (None before the first)."""
        return self.decider.last_inventory

    @property
    def _kernels(self) -> Callable[[], Mapping[str, Mapping[str, Any]]] | None:
        return self.decider.kernels

    @_kernels.setter
    def _kernels(self, kernels: Callable[[], Mapping[str, Mapping[str, Any]]] | None) -> None:
        self.decider.kernels = kernels

    def kick(self, event: str = "change", job_id: str | None = None, record: JobRecord | None = None) -> None:
        """Ask for a decision at the next tick (thread-safe).

        ``kick("submit", job_id)``: a new job, decided at once on the live ledger when it fits and
        overtakes nothing blocked (:mod:`.incremental`), else by a full cycle. ``kick("cancel")``
        (a cancel or a lease release) asks a full cycle but keeps the live ledger: it only frees
        GPUs, so the ledger is at most too shy until that cycle, never wrong — the next
        ``%gpu request`` after a ``%gpu release`` need not wait for the cycle's gap. Any other
        event (a quota or policy change) may make the ledger wrong: it is spent. ``record``: the
        submitted row as the API wrote it (the decision then reads no row, issue 17); a cancel
        makes queued submits read theirs again (``job_id``: that job's only).
        """
        if event == "submit" and job_id is not None:
            self.incremental.submitted(job_id, record)
            return
        if event == "cancel":
            self.incremental.withdrawn(job_id)
            self._freed = True
        if event not in _FREEING_EVENTS:
            self.incremental.spend()
        self._wanted = True

    def tick(self) -> TickReport:
        """Run one tick (see module docstring). Never raises for a lost lease (it just stops
        leading) nor for a failing database: the tick ends, the engine backs off (DATABASE_BACKOFF; :attr:`database`
        says "reconnecting to the database (attempt n, next in s)"); a tick before the backoff ends does nothing."""
        if not (retries := self.database_retries).due(key := "database"):
            return TickReport(leader=self.is_leader)
        try:
            report = self._tick()
        except StoreError as exc:
            state = retries.failed(key, exc.message)
            self.database = retries.reconnecting(key, "the database")
            said = self.database.message if self.database else exc.message  # an outage: the store's line (B6)
            # an outage or a full disk: the store says it once (and when it is over), not every backoff
            log.log(logging.DEBUG if said_by_store(exc) else logging.WARNING, "%s", said)
            self._publish({"type": "connection", "data": {"database": self.database.to_dict()
                                                          if self.database else None, "attempt": state.attempt}})
            return TickReport(leader=self.is_leader)
        if self.database is not None:
            retries.succeeded(key)
            self.database = None
            self._publish({"type": "connection", "data": {"database": None}})
        return report

    def _tick(self) -> TickReport:
        report = TickReport()
        if not self._lead():
            return report
        report.leader = True
        try:
            if self._recovering:  # adopt what the previous leader ran before deciding anything
                self.reconciler.run(report, adopt_unwatched=True)
                self._recovering = False
            polled_at, events = self.clock.now(), self.executor.poll()
            self.events.handle_all(events, report)
            self.seen.polled(polled_at, self.executor.tracked)  # what that poll found running, before any start
            now = self.clock.now()
            due = self._last_decision is None or (now - self._last_decision).total_seconds() >= self.cycle_interval_s
            fast_only = bool(self.incremental.waiting) and not (due or events or self._wanted)
            granted, pended = self.incremental.decided, self.incremental.pended
            if self.incremental.waiting and not due:
                deferred = not self.incremental.decide(report)
                self._wanted = deferred or self._wanted
                # it waits (pended or left to a full cycle) on a ledger shy of freed GPUs: see _full_gap_end
                self._shy = self._freed and (deferred or self.incremental.pended > pended)
            self.incremental.flush()
            granted = self.incremental.decided > granted
            if report.finished:
                self._wanted = self._freed = True
            if due or (self._wanted and time.monotonic() >= self._full_gap_end()) or \
                    (self._refresh_wanted and time.monotonic() >= self._refresh_not_before()):
                self._wanted = self._reasons_stale = False
                self._last_decision = now
                self._decide(report)
                self._full_not_before = time.monotonic() + max(self.cycle_gap_s, 2 * report.cycle_s) \
                    if self.cycle_gap_s > 0 else 0.0
                self._cycle_end, self._cycle_s = time.monotonic(), report.cycle_s
            # A tick that only decided submits incrementally (and started them) skips the pass over every admitted/
            # running job (O(jobs held): ~100 ms at 18,000) unless older than reconcile_interval_s (limits advance).
            if not (fast_only and not self._wanted and report.decided is False
                    and time.monotonic() - self._last_reconcile < self.reconcile_interval_s):
                self.reconciler.run(report)
                self._last_reconcile = time.monotonic()
            # An incremental grant took GPUs other pending jobs' reasons count as free ("needs 2, 1 free"): a later
            # tick, once the cycle gap allows, runs a full cycle to re-word them — never this one (new-user 3 #2).
            self._reasons_stale = self._reasons_stale or granted
            self._run_leader_hooks()
        except NotLeaderError as exc:
            log.warning("%s", exc)
            self._step_down()
        report.leader = self.is_leader
        return report

    def wait_hint_s(self, default_s: float) -> float:
        """Seconds the driver may wait before the next tick: ``default_s``, sooner when an asked full
        cycle's gap (:meth:`_full_gap_end`) ends earlier, longer while the database is backed off."""
        retry = self.database_retries.get("database")
        if retry is not None:
            return max(0.0, retry.next_at - time.monotonic())
        if not (self._wanted or self._refresh_wanted) or not self.is_leader:  # a follower decides nothing
            return default_s
        due = self._full_gap_end() if self._wanted else self._refresh_not_before()
        return max(0.0, min(default_s, due - time.monotonic()))

    def _full_gap_end(self) -> float:
        """When an asked full cycle may run: after the cycle gap; when a submit waits on a ledger
        shy of GPUs freed since it was built (a release, a finish: ``_shy``), with no fixed gap — once
        twice the last cycle's time passed (at most a third of the engine; lease p95, issue 17)."""
        return self._cycle_end + 2 * self._cycle_s if self._shy else self._full_not_before

    @property
    def _refresh_wanted(self) -> bool:
        return self._reasons_stale or self.incremental.etas_moved

    def _refresh_not_before(self) -> float:
        """When a full cycle that only re-words reasons may run (``time.monotonic()``): after the
        cycle gap and twice the last cycle's time (at most a third of the engine's time); one for ETAs
        alone (pends kept on the live ledger) also ``eta_refresh_s`` and nine cycle times after the
        last cycle (a tenth of the interpreter, which the API's requests share: issue 17); and never
        while submits keep arriving (:meth:`.incremental.IncrementalDecider.after_burst`)."""
        due = max(self._full_not_before, self._cycle_end + 2 * self._cycle_s)
        if not self._reasons_stale:
            due = max(due, self._cycle_end + max(self.incremental.eta_refresh_s, 9 * self._cycle_s))
        return self.incremental.after_burst(due)

    def resign(self) -> None:
        """Give up leadership (clean shutdown): running work is left running for the next leader."""
        self.seen.flush()
        self.executor.detach()
        self.leadership.release()

    def snapshot(self, *, idle: bool = False) -> Snapshot:
        """Build the frozen input of one cycle from store + inventory (+ telemetry, kernels, usage).

        ``idle=True`` (the engine's own cycles only, never a dry run from another thread) also
        updates the monitor's pid registry and the ladder cache and adds the idle inputs.
        """
        return self.decider.snapshot(idle=idle)[0]

    # -- steps ------------------------------------------------------------------------------------

    def _simulated(self) -> bool:
        """Whether the current inventory is simulated (remembered per inventory object: the
        property walks every GPU, and every published job asks)."""
        inventory = self.decider.last_inventory
        if inventory is None:
            return False
        if self._simulated_of[0] != id(inventory):
            self._simulated_of = (id(inventory), bool(inventory.simulated))
        return self._simulated_of[1]

    def _lead(self) -> bool:
        if self.leadership.renewed_recently():  # a kick right after a renewal: decide at once
            return True
        leading, new_term = self.leadership.acquire()
        if not leading:
            if self.leadership.term is not None:
                self._step_down()
            return False
        if new_term:
            self.stops.clear()
            self.retries.clear()
            self._recovering = True  # every unwatched job is adopted before anything starts
            self._wanted = True
        return True

    def _run_leader_hooks(self) -> None:
        for hook in list(self.leader_hooks):
            try:
                hook()
            except NotLeaderError:
                raise
            except Exception:  # one broken hook must not stop scheduling
                log.exception("engine leader hook %s failed", getattr(hook, "__qualname__", hook))

    def _step_down(self) -> None:
        self.incremental.spend()
        self.incremental.forget()
        self._reasons_stale = False
        self.leadership.term = None
        self.applier.forget()
        self.idle.clear()
        self.seen.forget()
        self.executor.detach()
        self.stops.clear()
        self.retries.clear()

    def _decide(self, report: TickReport) -> None:
        self.incremental.forget()  # this cycle decides every submitted job
        self._freed = self._shy = False
        spends = self.incremental.spend()  # a change landing after this is not in the snapshot: keep() below
        snapshot, records = self.decider.snapshot(idle=True)
        started = self.clock.now()
        self.decider.log_placement_fallback(snapshot, self.profile)
        live: LiveCycle | None = None
        if self._cycle is default_cycle:  # the core's own cycle: keep its ledger alive for submits
            with cyclic_gc_paused():  # as default_cycle does (a fifth of a large cycle's time)
                live = LiveCycle(snapshot, self.profile, self.decider.pause)  # steps aside for the web loop
            result = live.result
        else:
            result = self._cycle(snapshot, self.profile)
        result = self.idle.evaluate(snapshot, result)
        report.decided = True
        admitted, stops = self._apply(result, snapshot, records)
        self.incremental.keep(live, spends)
        report.cycle_s = (self.clock.now() - started).total_seconds()
        report.admitted.extend(j.id for j in admitted)
        report.preempted.extend(p[0] for p in stops)
        report.rejected.extend(r.job_id for r in result.rejects)
        for job_id, grace, checkpoint in stops:  # sent by the reconciler, as decided
            self.stops.plan(job_id, grace_s=grace, checkpoint_signal=checkpoint)

    def _apply(self, result: CycleResult, snapshot: Snapshot, seen_rows: Mapping[str, JobRecord] | None = None,
               ) -> tuple[list[Job], list[Stop]]:
        """See :meth:`.apply.DecisionApplier.apply`."""
        return self.applier.apply(result, snapshot, seen_rows)

    def _reasons_to_write(self, result: CycleResult, records: Mapping[str, JobRecord]) -> list[Pend]:
        """See :meth:`.apply.DecisionApplier.reasons_to_write`."""
        return self.applier.reasons_to_write(result, records)
