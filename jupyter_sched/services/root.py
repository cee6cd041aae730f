"""``Services``: the composition root — one scheduler's application services, built once and wired.

It builds the shared :class:`~.context.Context` (store, clock, engine and its runner, inventory,
event bus, admission step) and one small service per resource::

    services.jobs        JobsService        submit, list, get, cancel, logs, queue, dry run
    services.leases      LeasesService      request, keepalive, release with the kernel
    services.quotas      QuotasService      quota set, profiles
    services.accounting  AccountingService  me, usage, usage report
    services.audit       AuditService       the audit log
    services.telemetry   TelemetryService   samples, idle figures, telemetry events
    services.idle        IdlePolicyService  the idle policy
    services.system      SystemService      inventory, engine status
    services.nodes       NodesService       cordon, drain and uncordon nodes for maintenance
    services.ends        ClaimedEndsService ends jobs claimed while the service was down: list, correct
    services.definitions DefinitionsService job definitions, their firings, executed notebooks

A handler reaches them as ``self.services.<resource>.<method>(self.caller, request_model)``.
Adding a service: write ``services/<resource>.py`` (a class taking the ``Context``), build it in
:meth:`Services.__init__`, and call it from the handler. From the extension's settings, build
with :func:`jupyter_sched.services.config.build_services`.

Besides, :class:`Services` offers the few methods the server itself needs and that a hub user's
forwarding server offers too (:class:`jupyter_sched.hub.forward.ForwardingService`): ``start``,
``stop``, ``subscribe``, ``list_jobs`` (running work for activity reports) and ``release_kernel``.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..admission import Admission, AdmissionPolicy, Caller, FitCheck
from ..admission.gate import REFUSAL_RECORDS_PER_MINUTE
from ..engine.clock import Clock, SystemClock
from ..engine.cordons import CordonBook, CordonedInventory
from ..engine.engine import CycleFunction, Engine, TickReport
from ..engine.events import EventBus, Subscription
from ..engine.idle_kernels import IDLE_KERNEL_ACTIONS, KernelShutdown
from ..engine.runner import EngineRunner
from ..engine.telemetry import TelemetryMonitor
from ..errors import ValidationError
from ..executors.base import Executor
from ..model import JobKind, Profile
from ..scheduling.snapshot import JobHold
from ..store import IdGenerator, JobRecord, SortableIds, Store
from .accounting import AccountingService
from .audit import AuditService
from .callers import RecentQuotaSet, RefusalWindows, SubmitBuckets
from .claimed_ends import ClaimedEndsService
from .context import Context
from .definitions import DefinitionSettings, DefinitionsService
from .idle import IdlePolicyService
from .jobs import JobsService, parse_states
from .leases import LeasesService
from .leases_alive import AskerWatch, HeartbeatWatch
from .members_config import apply_config_members
from .membership import EmbeddedMembership
from .nodes import NodesService
from .progress import ProgressService
from .quotas import QuotasService
from .system import SystemService
from .team_move import team_move_service
from .telemetry import TelemetryService
from .unpriced import UnpricedModels
from .user_rename import user_rename_service

__all__ = ["Services"]

log = logging.getLogger(__name__)


class Services:
    """The services of one scheduler (see module docstring).

    Args:
        store: the store (its migrations already ran).
        inventory: inventory source (``current() -> Inventory``).
        executor: the executor (local or Kubernetes).
        clock: time source (default the system clock).
        ids: job id generator (default time-sortable random ids).
        policy: the admission policy (default: everyone in team ``default``, nobody granted ``high``).
        profiles: admin request templates by name.
        scheduling_profile: the core's ``SchedulingProfile`` (None = core defaults).
        cycle: decision function (default ``jupyter_sched.scheduling.run_cycle``).
        default_time_limit_s: time limit of training jobs that set none (None = none).
        cycle_interval_s / cycle_coalesce_s / poll_interval_s: see :class:`~jupyter_sched.engine.runner.EngineRunner`.
        cycle_steps_aside: full cycles step aside while the web loop is busy (the runner's ``courteous``).
        lease_ttl_s: leader lease lifetime, seconds.
        stop_grace_s: SIGTERM → SIGKILL grace of cancels and time limits, seconds.
        events_queue_size: events buffered per subscriber.
        owner_id: engine identity in the leader lease (default random).
        telemetry / kernels: snapshot providers (see :class:`~jupyter_sched.engine.Engine`).
        monitor: the telemetry monitor (None = telemetry off).
        idle_policies / idle_arbiter: idle reclamation (None = off / default rule).
        telemetry_push_s: seconds between ``telemetry`` events while somebody subscribes.
        prices: price per GPU-hour by model for the usage report (None = no cost column).
        price_unit: the currency ``prices`` are in (``c.HubSchedApp.gpu_price_unit``, e.g. ``"USD"``;
            None: the report's ``cost_unit`` says "price units").
        definitions: job definition settings (None = defaults); their firings run on the
            leading engine's ticks.
        admin_users: ``c.SchedApp.admin_users`` (embedded team holds resolve them as admins).
        logger: where the start-up warnings go (the config's memberships replacing an admin's:
            :mod:`.members_config`); default this module's logger.
    """

    def __init__(
        self, *, store: Store, inventory: Any, executor: Executor, clock: Clock | None = None,
        ids: IdGenerator | None = None, policy: AdmissionPolicy | None = None,
        profiles: Mapping[str, Profile] | None = None, scheduling_profile: Any = None, cycle: CycleFunction | None = None,
        default_time_limit_s: float | None = None, cycle_interval_s: float = 5.0, cycle_coalesce_s: float = 0.1,
        poll_interval_s: float = 1.0, lease_ttl_s: float = 15.0, stop_grace_s: float = 10.0,
        events_queue_size: int = 1000, owner_id: str | None = None,
        telemetry: Callable[[], Mapping[str, Any]] | None = None,
        kernels: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None,
        monitor: TelemetryMonitor | None = None, idle_policies: Any = None, idle_arbiter: Any = None,
        telemetry_push_s: float = 1.0, prices: Mapping[str, Any] | None = None, price_unit: str | None = None,
        definitions: DefinitionSettings | None = None, cycle_steps_aside: bool = True,
        admin_users: Collection[str] = (), logger: logging.Logger | None = None,
    ) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.bus = EventBus(events_queue_size)
        # admins' maintenance cordons, from the store, on the inventory the engine and services read
        self.cordons = CordonBook(store.node_cordons)
        inventory = CordonedInventory(inventory, self.cordons)
        self.engine = Engine(store, inventory, executor, clock=self.clock, owner_id=owner_id, profile=scheduling_profile,
                             cycle=cycle, lease_ttl_s=lease_ttl_s, cycle_interval_s=cycle_interval_s,
                             stop_grace_s=stop_grace_s, telemetry=telemetry, kernels=kernels, publish=self.bus.publish,
                             monitor=monitor, idle_policies=idle_policies,
                             idle_arbiter=idle_arbiter)
        self.runner = EngineRunner(self.engine, poll_interval_s=poll_interval_s, cycle_coalesce_s=cycle_coalesce_s,
                                   courteous=cycle_steps_aside)
        engine = self.engine
        if getattr(executor, "name", None) == "local":  # a port bound outside the scheduler (red team 17, R3)
            from ..executors.bound_ports import BoundPorts

            engine.decider.bound_ports = engine.incremental.bound_ports = BoundPorts()
        policy = policy or AdmissionPolicy()
        limits = tuple(getattr(scheduling_profile, "time_limits", ()) or ())
        if limits and not policy.time_limits:  # one set of time-limit rules: planned with and enforced at submit
            policy = replace(policy, time_limits=limits)
        self.admission = Admission(policy=policy, quota_set=RecentQuotaSet(store),
                                   audit=store.add_event, fit=FitCheck(lambda snap: engine._cycle(snap, engine.profile)),
                                   refusals=RefusalWindows(per_minute=REFUSAL_RECORDS_PER_MINUTE), rate=SubmitBuckets())
        self.ctx = Context(store=store, clock=self.clock, ids=ids or SortableIds(self.clock.now), engine=self.engine,
                           runner=self.runner, inventory_source=inventory, bus=self.bus, admission=self.admission,
                           executor=executor, profiles=dict(profiles or {}), default_time_limit_s=default_time_limit_s)
        self.monitor = monitor
        if monitor is not None and monitor.source == "nvml":  # each GPU's processes by pid, of every account:
            # a released lease drains on them (R6), an idle-reclaimed one too (its kernel's context: s20)
            self.engine.stops.gpu_processes = self.engine.idle.gpu_processes = monitor.gpu_processes
        self.executor = executor
        self.jobs = JobsService(self.ctx)
        self.progress = ProgressService(self.ctx)  # running jobs' progress reports, for ETAs (issue 16 item 4)
        self.idle = IdlePolicyService(self.ctx, idle_policies, monitor)
        self.leases = LeasesService(self.ctx, self.jobs, self.idle)
        self.membership = EmbeddedMembership(self, admin_users)
        self.quotas = QuotasService(self.ctx, on_change=self.membership.check)
        self.set_held_jobs(self.membership.held)  # embedded: PUT quotas says who is in a team (red team 18, R4)
        self.accounting = AccountingService(self.ctx, prices, monitor=monitor, price_unit=price_unit)
        self.accounting.cooldowns = self.quotas.cooldowns  # one read of the store's cool-downs for GET me and quotas
        self.audit = AuditService(self.ctx)
        self.telemetry = TelemetryService(self.ctx, monitor, push_interval_s=telemetry_push_s)
        self.unpriced = UnpricedModels(prices, self.ctx.clock)  # GPU models with no price (hubadmin26 B21)
        self.system = SystemService(self.ctx, monitor, unpriced=self.unpriced)
        self.definitions = DefinitionsService(self.ctx, self.jobs, definitions)
        self.nodes = NodesService(self.ctx, self.cordons)  # nodes/{node}/cordon, uncordon (hubadmin24)
        self.teams = team_move_service(self)  # POST teams/{team}/move: a renamed team's work (hubadmin23 A9)
        self.accounting.known_teams = self.teams.known_teams  # what-if's close team names (verify28 V4)
        self.users = user_rename_service(self)  # POST users/{user}/rename: a renamed user's work (hubadmin26 B10)
        self.ends = ClaimedEndsService(self.ctx)  # usage/claimed-ends, jobs/{id}/end: claimed ends (red33 R3)
        self.engine.leader_hooks.append(self.definitions.on_leader_tick)
        self.engine.leader_hooks.append(self.admission.flush_refusals)  # a flood's count, once its minute ends
        self.engine.leader_hooks.append(AskerWatch(self.ctx, self.jobs))  # a killed kernel's lease ends (newuser41 N1)
        self.heartbeats = HeartbeatWatch(self.ctx, self.jobs)  # and one on another host, by its heartbeats (N1, hub)
        self.engine.leader_hooks.append(self.heartbeats)
        self.on_stop: list[Callable[[], None]] = []
        """Called by :meth:`stop` after the engine resigned (e.g. the Kubernetes watches' ``stop``)."""
        self.on_stop.append(self.definitions.stop_firing)  # a firing pass ends between two firings (s37-defs)
        # the policy's user_teams (the config's) go into the store when they changed since last applied:
        # callers are resolved from the store, where an admin's PUT quotas outlives restarts (new user 20, N21)
        apply_config_members(self.quotas, self.admission.policy.user_teams, logger or log)

    # ---- who is asking -----------------------------------------------------------------------
    def caller(self, user: str, *, admin: bool, groups: Sequence[str] | None = None) -> Caller:
        """The admission step's :class:`Caller` for an authenticated user (see :class:`Admission`)."""
        return self.admission.caller(user, admin=admin, groups=groups)

    # ---- lifetime ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Apply the stored idle policy, start the engine's ticks and telemetry (on the running loop)."""
        if self.runner.running:
            return
        self.idle.load()
        import asyncio

        # the settings (user_teams, admin_users) may have changed since the last start; it reads every
        # live job (20,000 on a busy server): off the loop
        await asyncio.get_running_loop().run_in_executor(None, self.membership.check)
        await self.runner.start()
        self.telemetry.start()

    async def stop(self) -> None:
        """Stop telemetry and ticking, resign leadership (local jobs keep running), close the store."""
        import asyncio

        await self.telemetry.stop()
        await self.runner.stop()
        for close in self.on_stop:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(None, close)
        self.store.close()

    def kick(self, event: str = "change", job_id: str | None = None, record: JobRecord | None = None) -> None:
        """Ask for a decision now (thread-safe; see :meth:`Engine.kick`)."""
        self.runner.kick(event, job_id, record)

    def tick(self) -> TickReport:
        """One engine tick, synchronously (tests and scripts; not while :meth:`start` runs)."""
        return self.runner.tick()

    def set_kernel_source(self, kernels: Callable[[], Mapping[str, Mapping[str, Any]]] | None) -> None:
        """Where kernel activity comes from: ``kernels() -> {kernel id: {"execution_state",
        "last_activity", "pid"}}`` (the extension passes the Jupyter kernel manager's view)."""
        self.engine._kernels = kernels

    def set_idle_kernels(self, action: str, shutdown: KernelShutdown | None, *, no_way: str = "",
                         shutdown_wait_s: float | None = None) -> None:
        """What is done about the kernel of an idle-reclaimed lease still on its GPU
        (:mod:`jupyter_sched.engine.idle_kernels`): ``action`` ``"shutdown"`` or ``"hold"``;
        ``shutdown(kernel_id, words, user)`` shuts a kernel down (None: no way to, said ``no_way``);
        ``shutdown_wait_s``: seconds before the owner's processes still on the GPU are ended after it
        was asked (None: as it is, default 60 s; ``c.SchedApp.idle_kernel_shutdown_wait_s``).

        Raises:
            ValidationError: ``action`` is neither (names the field and the values).
        """
        if action not in IDLE_KERNEL_ACTIONS:
            raise ValidationError(f"idle_kernel_action must be shutdown or hold (got {str(action)[:40]!r})",
                                  field="idle_kernel_action", hint="set 'shutdown' (the default) or 'hold'")
        kernels = self.engine.stops.idle_kernels
        kernels.action, kernels.shutdown = action, shutdown
        kernels.no_way = no_way or kernels.no_way
        if shutdown_wait_s is not None:
            if not (math.isfinite(shutdown_wait_s) and shutdown_wait_s > 0):
                raise ValidationError(f"idle_kernel_shutdown_wait_s must be > 0 seconds (got {shutdown_wait_s!r})",
                                      field="idle_kernel_shutdown_wait_s", hint="set e.g. 60 (the default)")
            kernels.shutdown_wait_s = float(shutdown_wait_s)

    def set_held_users(self, held: Callable[[], Mapping[str, str]] | None,
                       groups: Callable[[], Mapping[str, tuple[str, ...]]] | None = None) -> None:
        """Where held owners come from: ``held() -> {user: why}``; their pending jobs are never
        started (``Snapshot.held_users``; hub mode: users the hub no longer lists); ``groups() ->
        {user: hub groups}`` of removed users (``Snapshot.removed_groups``, newuser38 n18)."""
        self.engine.decider.held_users = held
        self.engine.decider.removed_groups = groups
        self.engine.reconciler.held_users = held  # said when work of theirs the store lacks is adopted

    def set_held_jobs(self, held: Callable[[], Mapping[str, JobHold]] | None) -> None:
        """Where held jobs come from: ``held() -> {job id: JobHold}``; those pending are never started
        (``Snapshot.held_jobs``; the owner left the job's team, red team 18 R4: by default the
        embedded :class:`~.membership.EmbeddedMembership`, which another source turns off)."""
        membership = getattr(self, "membership", None)
        if membership is not None and held != membership.held:
            membership.active = False  # hub mode: hub groups say who is in a team
        self.engine.decider.held_jobs = held

    # ---- what the server itself needs (also offered by the hub's ForwardingService) ----------
    def subscribe(self) -> Subscription:
        """An async iterator of ``{"type", "data"}`` events (bounded; call on the running loop)."""
        return self.bus.subscribe()

    def list_jobs(self, *, user: str | None = None, state: str | None = "admitted,running",
                  kind: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Work of ``user`` (None = everyone) in ``state`` (comma list; None = any), newest first,
        as job dicts: the server's own reading for activity reports, metrics and lease reapers.
        No caller and no authorization: never call it on a user's behalf (use ``jobs.list``)."""
        return self.jobs.work(user=user, states=parse_states(state), kind=JobKind(kind) if kind else None, limit=limit)

    def release_kernel(self, kernel_id: str, *, reason: str) -> list[dict[str, Any]]:
        """Release the live leases of ``kernel_id`` (it shut down or restarted); the released leases."""
        return [lease.to_wire() for lease in self.leases.release_kernel(kernel_id, reason=reason)]
