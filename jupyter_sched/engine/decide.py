"""Decide: build the frozen snapshot of one cycle and call the pure core on it.

The snapshot is built from the store (live jobs, quotas, usage history for fair share and
budgets, runtimes learned from finished runs for ETAs — :mod:`.runtimes` —, running jobs' latest progress
reports for ETAs — :mod:`jupyter_sched.store.progress`), the inventory,
telemetry and kernel activity; with an idle policy the engine's own cycles also get the idle
inputs (:mod:`.idle`). The core (``run_cycle``) returns decisions only;
:mod:`.apply` writes them.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from ..accounting.report import AccountingError
from ..backfill.progress import STALE_S, ProgressReport
from ..errors import StoreError, ValidationError
from ..model import Inventory, Job, JobState, QuotaSet
from ..scheduling.ports import declares_port
from ..scheduling.snapshot import CycleResult, JobHold, Reinstall, Snapshot, UsageHistory
from ..store import JobRecord, Store
from ..store.outage import unreachable
from ..store.progress import fresh_progress
from .clock import Clock
from .idle import IdleLadders
from .idle_ends import with_idle_ends
from .reclaim_history import ReclaimHistory
from .runtimes import RuntimeFeed
from .stops import StopReconciler
from .usage_ledger import UsageLedger

__all__ = ["CycleFunction", "Decider", "cyclic_gc_paused", "default_cycle"]

log = logging.getLogger(__name__)

_WAITING = (JobState.PENDING, JobState.PREEMPTED)
"""States of jobs the cycle may admit (their declared ports are bound-checked)."""

CycleFunction = Callable[..., CycleResult]
"""``run_cycle(snapshot, profile) -> CycleResult`` (the pure core's entry point)."""


def default_cycle(snapshot: Snapshot, profile: Any = None) -> CycleResult:
    """The core's ``run_cycle`` (imported late so the engine loads without the core), with
    CPython's cyclic garbage collector paused for the cycle (:func:`cyclic_gc_paused`)."""
    from ..scheduling import run_cycle

    with cyclic_gc_paused():
        return run_cycle(snapshot, profile)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one cycle runs.

    A cycle allocates millions of short-lived objects that reference counting frees by itself;
    the collections their allocation counts trigger traverse the whole snapshot each time and
    cost about a fifth of a 5,000-node x 20,000-job cycle (``benchmarks/cycle_bench.py`` prints
    both). The collector is switched back on afterwards if it was on (whatever threads
    interleave, the last one out restores it), so cyclic garbage waits at most one cycle.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Decider:
    """Snapshot → core → result, for the engine and for dry runs.

    Args:
        store: the store.
        inventory: an :class:`~jupyter_sched.inventory.base.InventorySource` (``current()``).
        clock: time source.
        idle: the idle ladders (idle inputs and idle evaluation of the engine's own cycles).
        usage_half_life_s: half-life of fair-share usage, seconds.
        telemetry: callable returning ``Snapshot.telemetry`` (None = telemetry off).
        stops: the engine's stop reconciler: the grace each stop is sent with (``Snapshot.stop_grace_s``).
        reinstalled: ``() -> Reinstall | None``: jupyter_sched reinstalled under the server that launches the
            jobs (the local executor's :meth:`~jupyter_sched.executors.local.LocalExecutor.reinstalled`;
            ``Snapshot.reinstalled``: batch jobs wait, named, until a restart; newuser31 N10); None: never asked.

    Attributes:
        kernels: callable returning ``Snapshot.kernels`` (kernel activity per kernel id; set by the
            service once its kernel source is known).
        held_users: callable returning ``Snapshot.held_users`` (owners whose pending work is held;
            set by a hub's central service for users the hub no longer lists), or None.
        removed_groups: callable returning ``Snapshot.removed_groups`` (their hub groups), or None.
        held_jobs: callable returning ``Snapshot.held_jobs`` (pending jobs whose owner left their
            team or lost their class there, red team 18 R4; set by a hub's central service), or None.
        bound_ports: ``ports -> the ones bound on the jobs' host`` (the local executor's real bind,
            :class:`~jupyter_sched.executors.bound_ports.BoundPorts`), asked for the declared ports
            of pending services no scheduled job holds: ``Snapshot.ports_bound_outside`` (red team
            17, R3); None: not checked (Kubernetes: a pod has its own ports).
        reclaims: ``now, live rows -> Snapshot.reclaims`` (:class:`.reclaim_history.ReclaimHistory`: the
            preemptors of the last hour and their ends, read from the store; the reclaim cool-down, red32 R5).
        last_inventory: the inventory of the latest snapshot (None before the first).
        pause: the engine's full cycles call it between two jobs (``CycleContext.pause``; the
            runner's :class:`.courtesy.Courtesy` steps aside while the web loop is busy; None: never).
        inventory_observers: called with the inventory of each of the engine's own cycles (not dry
            runs), e.g. to publish inventory changes; one that raises is logged and skipped.
    """

    def __init__(self, store: Store, inventory: Any, clock: Clock, idle: IdleLadders, *, usage_half_life_s: float,
                 telemetry: Callable[[], Mapping[str, Any]] | None = None,
                 kernels: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None,
                 stops: StopReconciler | None = None,
                 reinstalled: Callable[[], Reinstall | None] | None = None) -> None:
        self.store = store
        self.inventory = inventory
        self.clock = clock
        self.idle = idle
        self.usage_half_life_s = usage_half_life_s
        self.usage = UsageLedger(store, half_life_s=usage_half_life_s)
        self.telemetry = telemetry
        self.kernels = kernels
        self.held_users: Callable[[], Mapping[str, str]] | None = None
        self.removed_groups: Callable[[], Mapping[str, tuple[str, ...]]] | None = None
        self.held_jobs: Callable[[], Mapping[str, JobHold]] | None = None
        self.bound_ports: Callable[[Iterable[int]], frozenset[int]] | None = None
        self.reinstalled = reinstalled
        self.stops = stops
        self.reclaims = ReclaimHistory(store)  # Snapshot.reclaims: the reclaim cool-down's history (red32 R5)
        self.last_inventory: Inventory | None = None
        self.pause: Callable[[], object] | None = None
        self.inventory_observers: list[Callable[[Inventory], object]] = []
        self._fallback_logged = False
        self._usage_failed = False
        self.runtimes = RuntimeFeed(store, clock)  # learned runtimes for ETAs (issue 16)

    def snapshot(self, *, idle: bool) -> tuple[Snapshot, dict[str, JobRecord]]:
        """The frozen input of one cycle plus the job rows it was built from (by id, with versions).

        ``idle=True`` (the engine's own cycles only, never a dry run from another thread) also
        updates the monitor's pid registry and the ladder cache and adds the idle inputs.
        """
        now = self.clock.now()
        inventory = self.inventory.current()
        self.last_inventory = inventory
        # the engine's own cycles decode changed rows stepping aside for the web loop (issue 17)
        records = self.store.live_jobs(pause=self.pause if idle else None)
        quotas = self.store.quota_set()
        usage = self._usage(quotas, now)
        kernels = dict(self.kernels()) if self.kernels else {}
        telemetry: dict[str, Any] = dict(self.telemetry()) if self.telemetry else {}
        if idle:
            telemetry.update(self.idle.inputs(records, inventory, kernels, now=now))
            self._observe_inventory(inventory)
        jobs = tuple(r.job for r in records)
        by_id = {r.job.id: r for r in records}
        learned, typical, sources = self.runtimes.learnt_rows(records)
        graces = {r.job.id: grace for r in records if r.job.stopping_since is not None and self.stops is not None
                  and (grace := self.stops.grace_of(r)) is not None}  # ETAs of what waits on them (new user 11, N1)
        snapshot = Snapshot(now=now, inventory=inventory, jobs=jobs, quotas=quotas, usage=usage, telemetry=telemetry,
                            kernels=kernels, runtime_estimates=learned, runtime_typical=typical, stop_grace_s=graces,
                            runtime_sources=sources, held_users=dict(self.held_users()) if self.held_users else {},
                            held_jobs=dict(self.held_jobs()) if self.held_jobs else {},
                            removed_groups=dict(self.removed_groups()) if self.removed_groups else {},
                            ports_bound_outside=(outside := self._bound_outside(jobs)),
                            port_holders=self._port_holders(outside), progress=self._progress(records, now),
                            reclaims=self.reclaims(now, by_id),  # the reclaim cool-down (red32 R5)
                            reinstalled=self.reinstalled() if self.reinstalled is not None else None)
        if idle:  # idle leases end at their reclaim deadline in the ETAs shown (.idle_ends)
            snapshot = with_idle_ends(snapshot, self.idle.policies, self.idle.arbiter)
        return snapshot, by_id

    def _progress(self, records: Iterable[JobRecord], now: datetime) -> dict[str, ProgressReport]:
        """``Snapshot.progress``: the latest report of each running job's current run, of the last
        :data:`~jupyter_sched.backfill.progress.STALE_S` (older ones project nothing). Read for ETAs
        only; a store that cannot answer leaves them out this cycle (the cycle runs on)."""
        try:
            with self.store.transaction(write=False) as tx:
                fresh = fresh_progress(tx, now - timedelta(seconds=STALE_S))
        except StoreError as exc:
            # a database that does not answer is said once by the store's outage line, not once a cycle
            log.log(logging.DEBUG if unreachable(exc) else logging.WARNING,
                    "progress reports unreadable this cycle (%s); ETAs read limits and history", exc)
            return {}
        if not fresh:
            return {}
        out: dict[str, ProgressReport] = {}
        for record in records:
            job = record.job
            got = fresh.get(job.id)
            if got is not None and job.state.holds_gpus and got.run_started_at == (job.started_at or job.admitted_at):
                out[job.id] = got.report
        return out

    def _bound_outside(self, jobs: tuple[Job, ...]) -> frozenset[int]:
        """Declared ports of pending services that no scheduled job holds and that are bound on the
        jobs' host: by a process outside the scheduler (``Snapshot.ports_bound_outside``). Only
        when a pending service declares a port (bounded cost); each cycle looks again."""
        if self.bound_ports is None:
            return frozenset()
        wanted = {j.spec.port for j in jobs if j.spec.port and j.state in _WAITING and declares_port(j)}
        if not wanted:
            return frozenset()
        held = {j.spec.port for j in jobs if j.state.holds_gpus and declares_port(j)}
        return self.bound_ports(p for p in wanted - held if p is not None)

    def _port_holders(self, outside: frozenset[int]) -> dict[int, str]:
        """Of the ports ``outside`` (:meth:`_bound_outside`), those bound for a while, with their holder's
        account (``Snapshot.port_holders``; an edge without :meth:`holders` names none)."""
        holders = getattr(self.bound_ports, "holders", None)
        if not outside or not callable(holders):
            return {}
        return {port: who for port, who in holders().items() if port in outside}

    def _usage(self, quotas: QuotaSet, now: datetime) -> UsageHistory:
        """Fair-share and budget usage from the store's usage intervals, kept as running sums
        (:class:`.usage_ledger.UsageLedger`: a snapshot decodes the open and new rows only, red26 R1).

        Scheduling never depends on accounting being readable: unreadable rows are already
        quarantined by the store; should computing usage fail anyway, the cycle runs with no
        usage history (fair share neutral, budgets not enforced this cycle) and says so.
        """
        try:
            if self.usage.half_life_s != self.usage_half_life_s:  # set after construction (tests, reload)
                self.usage = UsageLedger(self.store, half_life_s=self.usage_half_life_s)
            decayed, hours = self.usage.read(now, quotas.budgets)
            usage = UsageHistory(decayed_gpu_seconds_by_user=decayed, gpu_hours_this_period=hours)
        except (ValueError, TypeError, ValidationError, AccountingError) as exc:
            if not self._usage_failed:
                log.error("usage history unreadable (%s: %s); scheduling without fair-share usage or budgets "
                          "until it is repaired (jupyter-sched doctor)", type(exc).__name__, exc)
            self._usage_failed = True
            return UsageHistory()
        if self._usage_failed:
            log.info("usage history readable again")
        self._usage_failed = False
        return usage

    def _observe_inventory(self, inventory: Inventory) -> None:
        for observer in list(self.inventory_observers):
            try:
                observer(inventory)
            except Exception:  # an observer (a publisher) never stops the cycle
                log.exception("inventory observer %s failed", getattr(observer, "__qualname__", observer))

    def log_placement_fallback(self, snapshot: Snapshot, profile: Any) -> None:
        """Say once (and again after a change) when the inventory keeps a fragmentation-aware policy off."""
        wanted = getattr(getattr(profile, "placement", None), "fragmentation", "")
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
