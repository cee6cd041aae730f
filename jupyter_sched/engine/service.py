"""``SchedulerService``: the one object the REST handlers (and through them magics, CLI, panel) use.

It owns the store, the inventory source, the executor and the :class:`~.engine.Engine`, and
runs the engine's ticks in one worker thread driven from the server's asyncio loop: a tick every
``poll_interval_s`` seconds (executor events, stop plans, lease renewal) and a decision cycle
when something happened (submit, cancel, finish, quota change) or every ``cycle_interval_s``.
A submit that fits is decided at once on the live ledger (no full cycle; issue 17). Event-triggered
full cycles are coalesced: the engine starts the next one at least ``cycle_coalesce_s`` (or
twice as long as the last cycle took, whichever is longer) after the previous one ended, so a
burst of 1,000 non-fitting submits causes a handful of cycles rather than one each, and the
worker thread (which holds the GIL while it decides: every store call of a request then waits
for it, up to the interpreter's 5 ms switch interval each) leaves at least two thirds of the time
to the API's requests.

API methods are synchronous, quick (one or two store transactions) and raise the classes of
:mod:`jupyter_sched.errors`. Every accepted submission is committed before :meth:`submit`
returns. A service whose engine is not the store's leader still serves every method: requests
are written to the store and the leader's engine acts on them (cancels of running work are
recorded as a stop intent the leader carries out).

Wire shapes: jobs and leases are :func:`jupyter_sched.model.codec.job_to_dict`; inventory is
:func:`~jupyter_sched.model.codec.inventory_to_dict` plus ``allocations``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..accounting import ROLLUP_KEYS, budget_usage, rollup
from ..errors import (
    AuthorizationError,
    ConflictError,
    ExecutorError,
    NotFoundError,
    QuotaError,
    SchedError,
    UnschedulableError,
    ValidationError,
)
from ..executors.base import Executor
from ..executors.local import read_log
from ..model import (
    Budget,
    Inventory,
    Job,
    JobKind,
    JobSpec,
    JobState,
    Profile,
    QuotaSet,
    TeamPolicy,
    profiles_from_config,
    spec_from_request,
    validate_quotas,
)
from ..model.codec import (
    budget_to_dict,
    job_to_dict,
    quota_from_dict,
    quota_to_dict,
    reason_to_dict,
    spec_to_dict,
    team_policy_to_dict,
)
from ..model.units import parse_utc
from ..scheduling.snapshot import Snapshot
from ..store import LIVE_STATES, IdGenerator, JobRecord, SortableIds, Store
from .clock import Clock, SystemClock
from .engine import CycleFunction, Engine, TickReport
from .events import EventBus, Subscription
from .telemetry import TelemetryMonitor, ladder_to_dict

__all__ = ["CachedInventory", "SchedulerService", "idle_policies_from_settings"]

log = logging.getLogger(__name__)

_QUOTA_CODES = frozenset({"ExceedsQuota", "BorrowingLimitReached", "BudgetExhausted"})
_MAX_LOG_LIMIT = 1 << 20
_IDENTITY_FIELDS = frozenset({"name", "command", "script", "notebook", "working_dir", "env", "kernel_id"})
"""Spec fields the can-it-ever-fit check does not depend on (see ``SchedulerService._never_fits``)."""
_PRIVATE_FIELDS = ("command", "script", "notebook", "working_dir", "env", "image", "kernel_id", "message")


class CachedInventory:
    """Wraps an inventory source: re-reads it at most every ``refresh_s`` seconds; on a failed
    read keeps the last good inventory (a flaky NVML never stalls scheduling)."""

    def __init__(self, source: Any, refresh_s: float = 30.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.refresh_s = refresh_s
        self._monotonic = monotonic
        self._value: Inventory | None = None
        self._at = 0.0
        self._lock = threading.Lock()

    def current(self) -> Inventory:
        with self._lock:
            now = self._monotonic()
            if self._value is None or now - self._at >= self.refresh_s:
                try:
                    self._value = self.source.current()
                    self._at = now
                except Exception:  # any source failure: keep scheduling on the last good inventory
                    if self._value is None:
                        raise
                    log.exception("inventory refresh failed; keeping the last inventory")
            return self._value

    def invalidate(self) -> None:
        """Force a re-read at the next :meth:`current`."""
        with self._lock:
            self._value = None


class SchedulerService:
    """The scheduler as the REST API sees it (see module docstring).

    Args:
        store: the store (its migrations already ran).
        inventory: inventory source (``current() -> Inventory``).
        executor: the executor (local or Kubernetes).
        clock: time source (injected; default the system clock).
        ids: id generator (default time-sortable random ids).
        profiles: admin request templates by name.
        scheduling_profile: the core's ``SchedulingProfile`` (None = core defaults).
        cycle: decision function (default ``jupyter_sched.scheduling.run_cycle``).
        default_team: team of users the quota config maps to no team.
        default_time_limit_s: time limit given to training jobs that set none (None = none).
        cycle_interval_s: seconds between timer-driven decision cycles.
        cycle_coalesce_s: seconds the worker waits after a decision cycle before the next tick,
            at least (it also waits twice as long as the cycle took, at most ``poll_interval_s``);
            kicks arriving meanwhile are served by one cycle. Default 0.1 s (0 = no pause: a
            cycle per kick).
        poll_interval_s: seconds between ticks (executor events, stop plans, lease renewal).
        lease_ttl_s: leader lease lifetime in seconds.
        stop_grace_s: SIGTERM→SIGKILL grace of cancels and time limits, seconds.
        events_queue_size: events buffered per subscriber.
        owner_id: engine identity in the leader lease (default random).
        telemetry / kernels: optional providers for the snapshot (``kernels() -> {kernel id:
            {"execution_state", "last_activity", "pid"}}``; see :meth:`set_kernel_source`).
        monitor: the telemetry monitor (samples, pid registry; None = telemetry off).
        idle_policies: idle-reclamation policy (None = off); ``idle_arbiter``: an admin's rule.
        telemetry_push_s: seconds between ``telemetry`` events on the event stream (sent only
            while somebody subscribes).
    """

    def __init__(
        self,
        *,
        store: Store,
        inventory: Any,
        executor: Executor,
        clock: Clock | None = None,
        ids: IdGenerator | None = None,
        profiles: Mapping[str, Profile] | None = None,
        scheduling_profile: Any = None,
        cycle: CycleFunction | None = None,
        default_team: str = "default",
        default_time_limit_s: float | None = None,
        cycle_interval_s: float = 5.0,
        cycle_coalesce_s: float = 0.1,
        poll_interval_s: float = 1.0,
        lease_ttl_s: float = 15.0,
        stop_grace_s: float = 10.0,
        events_queue_size: int = 1000,
        owner_id: str | None = None,
        telemetry: Callable[[], Mapping[str, Any]] | None = None,
        kernels: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None,
        monitor: TelemetryMonitor | None = None,
        idle_policies: Any = None,
        idle_arbiter: Any = None,
        telemetry_push_s: float = 1.0,
    ) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.inventory_source = inventory
        self.ids: IdGenerator = ids or SortableIds(self.clock.now)
        self._profiles = dict(profiles or {})
        self.default_team = default_team
        self.default_time_limit_s = default_time_limit_s
        self.poll_interval_s = poll_interval_s
        self.cycle_coalesce_s = cycle_coalesce_s
        self._fits_cache: dict[str, Any] = {}
        self._fits_basis: tuple[Inventory, QuotaSet] | None = None
        self.bus = EventBus(events_queue_size)
        self.engine = Engine(store, inventory, executor, clock=self.clock, owner_id=owner_id,
                             profile=scheduling_profile, cycle=cycle, lease_ttl_s=lease_ttl_s,
                             cycle_interval_s=cycle_interval_s, stop_grace_s=stop_grace_s, telemetry=telemetry,
                             kernels=kernels, publish=self.bus.publish, monitor=monitor,
                             idle_policies=idle_policies, idle_arbiter=idle_arbiter)
        self.monitor = monitor
        self.idle_policies = idle_policies
        self.telemetry_push_s = telemetry_push_s
        self._push_task: asyncio.Task[None] | None = None
        self.telemetry_wanted: Callable[[], bool] = lambda: self.bus.subscribers() > 0
        """True while some client listens for telemetry events (the extension points it at its SSE clients)."""
        self.executor = executor
        self._pool: ThreadPoolExecutor | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self.last_tick: TickReport | None = None
        self._on_stop: list[Callable[[], None]] = []
        """Called by :meth:`stop` after the engine resigned (e.g. the Kubernetes watches' ``stop``)."""

    # -- construction from the extension's settings ---------------------------------------------

    @classmethod
    def from_config(cls, settings: Mapping[str, Any], *, log: logging.Logger | None = None,
                    nvml: Any = None) -> SchedulerService:
        """Build the service from the extension's plain settings (see ``SchedApp.service_settings``).

        ``nvml`` is the NVML library module for the inventory and the NVML collector (default: the
        real ``pynvml``; tests on GPU-less machines pass a fake library).

        Keys used: ``db_url``, ``log_dir``, ``inventory_source``, ``inventory_file``,
        ``simulated_gpus``, ``simulated_gpu_model``, ``simulated_gpu_memory_mib``,
        ``inventory_refresh_s``, ``cycle_interval_s``, ``cycle_coalesce_s``, ``sqlite_synchronous``
        (``NORMAL`` default / ``FULL``; see :class:`~jupyter_sched.store.Store`), ``quotas`` (list of quota objects; when
        non-empty they replace the stored quota lines at start, with an audit record),
        ``profiles``, ``default_team``, ``default_time_limit_s``, ``preemption_grace_s``,
        ``time_zone``, ``placement_policy``, ``executor`` (``local`` / ``kubernetes``; the latter also reads ``kubernetes``, a
        ``KubernetesConfig`` dict, and ``kubeconfig``, a path or "" for in-cluster / ``~/.kube/config``),
        ``stop_grace_s``, ``node_name`` (this server's node name; default
        the host name); idle reclamation: ``idle_threshold_percent``,
        ``idle_window_s`` (0 = off), ``idle_grace_s`` and optionally ``idle_busy_kernel_window_s``,
        ``idle_keepalive_max_s``, ``idle_lease_action``, ``idle_busy_kernel_action``, ``idle_job_action``
        (see :func:`idle_policies_from_settings`); telemetry: ``telemetry_source`` (``auto`` /
        ``simulated`` / ``nvml`` / ``dcgm`` / ``prometheus`` / ``off``), ``telemetry_url``,
        ``telemetry_interval_s``, ``telemetry_push_interval_s``.

        Raises:
            ValidationError / StoreError: a setting is unusable (names the field), including an
                ``inventory_file`` that does not read as an inventory.
        """
        from ..executors.local import LocalExecutor
        from ..inventory.factory import default_inventory_source
        from ..inventory.simulated import SimulatedInventory

        logger = log or logging.getLogger("jupyter_sched")
        store = Store(str(settings["db_url"]), sqlite_synchronous=str(settings.get("sqlite_synchronous") or "NORMAL"))
        source_kind = settings.get("inventory_source", "auto")
        sim = {"model": settings.get("simulated_gpu_model", "Simulated GPU 80GB"),
               "memory_mib": int(settings.get("simulated_gpu_memory_mib", 81920))}
        node = str(settings.get("node_name") or "") or None
        executor_kind = settings.get("executor", "local")
        if executor_kind == "kubernetes":
            return cls._from_kubernetes_config(settings, store, logger)
        if executor_kind != "local":
            raise ValidationError(f"unknown executor {executor_kind!r}", field="executor",
                                  hint="use local or kubernetes")
        if source_kind == "kubernetes":
            raise ValidationError("inventory_source 'kubernetes' needs executor 'kubernetes'",
                                  field="inventory_source",
                                  hint="set c.SchedApp.executor = 'kubernetes', or pick another inventory source")
        # Jobs that name no working_dir run where the server serves files from, as a user expects.
        executor = LocalExecutor(Path(str(settings["log_dir"])), default_cwd=settings.get("root_dir") or None)
        monitors: list[TelemetryMonitor] = []

        def our_pids() -> frozenset[int]:  # our jobs' and lease kernels' pids are not foreign (case 014)
            return executor.pids() | (monitors[0].our_pids() if monitors else frozenset())

        source: Any
        if source_kind == "simulated":
            source = SimulatedInventory(int(settings.get("simulated_gpus", 4)), node=node, **sim)
        elif source_kind == "static" and not settings.get("inventory_file"):
            raise ValidationError("inventory_source 'static' needs inventory_file", field="inventory_file",
                                  hint="set c.SchedApp.inventory_file to a YAML inventory")
        else:
            source, _ = default_inventory_source(
                inventory_file=settings.get("inventory_file"),
                simulated_gpus=int(settings.get("simulated_gpus", 4)) if source_kind != "nvml" else 0,
                simulated_model=sim["model"], simulated_memory_mib=sim["memory_mib"], our_pids=our_pids,
                nvml=nvml, node=node, logger=logger)
        inventory = CachedInventory(source, float(settings.get("inventory_refresh_s", 30.0)))
        if settings.get("inventory_file"):
            # Read an admin's inventory file once now: a broken file stops the server at start with
            # the field and the fix, instead of failing every engine tick (issue 10, bad inputs).
            inventory.current()
        policies = idle_policies_from_settings(settings)
        monitor = _make_monitor(settings, source, logger, retention_s=_retention_s(policies), nvml=nvml)
        if monitor is not None:
            monitors.append(monitor)
            history_node = node or str(getattr(source, "node", "") or "")
            monitor.rollup_sink = lambda rows: store.add_rollups(rows, node=history_node)
        return cls._finish_config(settings, store, inventory, executor, monitor, policies)

    @classmethod
    def _finish_config(cls, settings: Mapping[str, Any], store: Store, inventory: Any, executor: Executor,
                       monitor: TelemetryMonitor | None, policies: Any) -> SchedulerService:
        """The part of :meth:`from_config` every executor shares: the service itself and the
        configured quota lines."""
        scheduling_profile = _scheduling_profile(settings)
        service = cls(store=store, inventory=inventory, executor=executor,
                      profiles=profiles_from_config(settings.get("profiles") or {}),
                      scheduling_profile=scheduling_profile,
                      default_team=str(settings.get("default_team") or "default"),
                      default_time_limit_s=settings.get("default_time_limit_s"),
                      cycle_interval_s=float(settings.get("cycle_interval_s", 5.0)),
                      cycle_coalesce_s=float(settings.get("cycle_coalesce_s", 0.1)),
                      stop_grace_s=float(settings.get("stop_grace_s", 10.0)), monitor=monitor,
                      idle_policies=policies if monitor is not None else None,
                      telemetry_push_s=float(settings.get("telemetry_push_interval_s", 1.0)))
        quotas = settings.get("quotas") or []
        if quotas:
            current = service.quotas()
            wanted = {**current, "quotas": list(quotas)}
            if [quota_to_dict(quota_from_dict(q)) for q in quotas] != current["quotas"]:
                service.set_quotas(wanted, actor="config")
        return service

    @classmethod
    def _from_kubernetes_config(cls, settings: Mapping[str, Any], store: Store,
                                logger: logging.Logger) -> SchedulerService:
        """:meth:`from_config` for ``executor == "kubernetes"``: the official client's ``ApiClient``
        (``kubeconfig``), a started :class:`~jupyter_sched.inventory.kubernetes.KubernetesInventory`
        as the inventory source and a :class:`~jupyter_sched.executors.kubernetes.KubernetesExecutor`
        configured by ``kubernetes`` (a ``KubernetesConfig`` dict). :meth:`stop` stops the watches.

        Raises:
            ValidationError: a bad ``kubernetes`` key or value (field ``kubernetes.<key>``), an
                unreadable ``kubeconfig``, or an ``inventory_source`` other than auto/kubernetes.
            ExecutorError: the API server cannot be listed (field ``kubeconfig``).
        """
        from kubernetes import client as k8s

        from ..executors.kubernetes import KubernetesConfig
        from ..executors.kubernetes.executor import KubernetesExecutor
        from ..inventory.kubernetes import KubernetesInventory

        with contextlib.ExitStack() as undo:  # on any failure: close what was opened, in reverse
            undo.callback(store.close)
            source_kind = settings.get("inventory_source", "auto")
            if source_kind not in ("auto", "kubernetes"):
                raise ValidationError(f"executor 'kubernetes' places work on the cluster's nodes, not on "
                                      f"inventory_source {source_kind!r}", field="inventory_source",
                                      hint="use auto or kubernetes with executor 'kubernetes'")
            config = KubernetesConfig.from_dict(settings.get("kubernetes") or {})
            kubeconfig = str(settings.get("kubeconfig") or "")
            api_client = _kubernetes_api_client(kubeconfig)
            undo.callback(api_client.close)
            watcher = KubernetesInventory(k8s.CoreV1Api(api_client), count_foreign_pods=config.count_foreign_pods)
            undo.callback(watcher.stop)
            try:
                watcher.start()
            except SchedError as err:
                where = kubeconfig or "the in-cluster / default kubeconfig"
                raise ExecutorError(f"cannot list the cluster's nodes with {where}: {err.message}",
                                    field="kubeconfig", hint="check the kubeconfig's server URL and credentials "
                                    "(RBAC: get/list/watch nodes and pods, see server/rbac.yaml)") from None
            executor = KubernetesExecutor(api_client, config, inventory=watcher)
            undo.callback(executor.detach)
            policies = idle_policies_from_settings(settings)
            monitor = _make_monitor(settings, watcher, logger, retention_s=_retention_s(policies))
            service = cls._finish_config(settings, store, watcher, executor, monitor, policies)
            undo.pop_all()
        logger.info("jupyter_sched: Kubernetes executor on %s, namespace %s", api_client.configuration.host,
                    config.namespace)
        service._on_stop += [executor.detach, watcher.stop, api_client.close]
        return service

    # -- lifetime -------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start ticking on the running loop (one worker thread; cycles never overlap). The idle
        policy an admin last set through the API (:meth:`set_idle_policy`) replaces the configured
        one first (:meth:`load_idle_policy`)."""
        if self._task is not None:
            return
        self.load_idle_policy()
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jupyter-sched-engine")
        self._stopping = False
        self.engine.cycle_gap_s = self.cycle_coalesce_s
        self._task = asyncio.ensure_future(self._run())
        if self.monitor is not None:
            self.monitor.start()
            self._push_task = asyncio.ensure_future(self._push_telemetry())

    async def stop(self) -> None:
        """Stop ticking, resign leadership (running local jobs keep running), close the store."""
        self._stopping = True
        if self._push_task is not None:
            self._push_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._push_task
            self._push_task = None
        if self.monitor is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.monitor.stop)
        if self._wake is not None:
            self._wake.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._pool is not None:
            loop = asyncio.get_running_loop()
            with contextlib.suppress(Exception):
                await loop.run_in_executor(self._pool, self.engine.resign)
            self._pool.shutdown(wait=True)
            self._pool = None
        for close in self._on_stop:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(None, close)
        self.store.close()

    async def _run(self) -> None:
        assert self._wake is not None and self._pool is not None
        loop = asyncio.get_running_loop()
        while not self._stopping:
            try:
                self.last_tick = await loop.run_in_executor(self._pool, self.engine.tick)
            except Exception:
                log.exception("jupyter_sched engine tick failed; retrying")
            # no fixed pause (issue 17): a submit wakes the engine at once; the engine itself spaces
            # kick-triggered full cycles by cycle_coalesce_s (Engine.cycle_gap_s)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.engine.wait_hint_s(self.poll_interval_s))
            self._wake.clear()

    async def _push_telemetry(self) -> None:
        """Publish a ``telemetry`` event (the newest sample of every GPU) every ``telemetry_push_s``
        seconds, only while the event stream has subscribers."""
        while not self._stopping:
            await asyncio.sleep(self.telemetry_push_s)
            if self.monitor is not None and self.telemetry_wanted():
                try:
                    self.bus.publish({"type": "telemetry", "data": self._telemetry_now()})
                except Exception:
                    log.exception("jupyter_sched: telemetry event failed")

    def _telemetry_now(self) -> dict[str, Any]:
        from ..telemetry import sample_to_dict

        assert self.monitor is not None
        latest = self.monitor.latest()
        return {"at": self.clock.now().isoformat(),
                "gpus": [sample_to_dict(latest[k]) for k in sorted(latest, key=lambda k: (k[0], k[1] or -1))]}

    def set_kernel_source(self, kernels: Callable[[], Mapping[str, Mapping[str, Any]]] | None) -> None:
        """Where kernel activity comes from: ``kernels() -> {kernel id: {"execution_state",
        "last_activity", "pid"}}`` (the extension passes the Jupyter kernel manager's view)."""
        self.engine._kernels = kernels

    def kick(self, event: str = "change", job_id: str | None = None) -> None:
        """Ask for a decision now (thread-safe); ``("submit", job_id)`` may be decided at once
        (see :meth:`Engine.kick`)."""
        self.engine.kick(event, job_id)
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._wake.set)

    def tick(self) -> TickReport:
        """Run one engine tick synchronously (tests and the simulator; not while :meth:`start` runs)."""
        self.last_tick = self.engine.tick()
        return self.last_tick

    def status(self) -> dict[str, Any]:
        """Engine status: whether this server leads the store, who does, and the schema version."""
        lease = self.store.leader()
        return {"leader": self.engine.is_leader, "engine_id": self.engine.owner_id,
                "leader_id": lease.owner if lease else None, "term": lease.term if lease else None,
                "leader_expires_at": lease.expires_at.isoformat() if lease else None,
                "store": self.store.safe_url, "schema_version": self.store.schema_version()}

    # -- inventory --------------------------------------------------------------------------------------

    def _inventory(self) -> Inventory:
        inventory: Inventory = self.inventory_source.current()
        return inventory

    def inventory(self) -> dict[str, Any]:
        """Inventory JSON plus ``allocations``: per GPU uuid, who holds it ``[{job_id, user, kind, gpu_milli}]``."""
        from ..model.codec import inventory_to_dict

        inv = self._inventory()
        body = inventory_to_dict(inv)
        allocations: dict[str, list[dict[str, Any]]] = {}
        for record in self.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
            job = record.job
            if job.allocation is None:
                continue
            for uuid in job.allocation.all_gpu_uuids():
                allocations.setdefault(uuid, []).append({"job_id": job.id, "user": job.spec.user,
                                                         "kind": job.spec.kind.value,
                                                         "gpu_milli": job.allocation.gpu_milli})
        body["allocations"] = allocations
        return body

    # -- jobs -----------------------------------------------------------------------------------------------

    def _team_of(self, user: str, quotas: QuotaSet) -> str:
        if user in quotas.user_teams:
            return quotas.user_teams[user]
        for policy in quotas.teams:
            if user in policy.members:
                return policy.team
        return self.default_team

    def _spec(self, body: Mapping[str, Any], *, user: str, kind: str | JobKind | None,
              inv: Inventory, quotas: QuotaSet) -> JobSpec:
        forced = JobKind(kind) if kind is not None else None
        if forced is not None and isinstance(body, Mapping) and body.get("kind") not in (None, forced.value):
            raise ValidationError(f"kind must be {forced.value} here (got {body.get('kind')!r})", field="kind",
                                  hint=f"leave kind out or use {forced.value}")
        spec = spec_from_request(body, user=user, default_team=self._team_of(user, quotas), profiles=self._profiles,
                                 known_models=frozenset(inv.models()) or None,
                                 default_kind=forced or JobKind.TRAINING)
        policy = next((p for p in quotas.teams if p.team == spec.team), None)
        if policy is not None:
            if policy.members and user not in policy.members:
                raise AuthorizationError(f"{user} is not a member of team {spec.team!r}", field="team",
                                         hint="submit to your own team or ask an admin to add you")
            if spec.priority.value not in policy.allowed_priorities:
                raise ValidationError(f"team {spec.team!r} may not use priority {spec.priority.value!r}",
                                      field="priority", hint="allowed: " + ", ".join(policy.allowed_priorities))
        if spec.time_limit_s is None and self.default_time_limit_s and spec.kind is JobKind.TRAINING:
            spec = replace(spec, time_limit_s=float(self.default_time_limit_s))
        return spec

    def _never_fits(self, job: Job, inv: Inventory, quotas: QuotaSet) -> None:
        """Raise when the core would reject ``job`` even on an empty cluster (can never run).

        The answer depends on the inventory, the quotas and the spec's request (not its name,
        command or environment), so it is cached per request shape until the inventory object
        or the quota set changes (a burst of identical submits runs the core once).
        """
        wanted = job.spec.resources.total_gpus
        if wanted > 0 and inv.gpu_count() == 0:  # case 015: a host without GPUs rejects at once
            cause = f" ({inv.nvml.error})" if inv.nvml is not None and inv.nvml.error else ""
            raise UnschedulableError(
                f"local executor has 0 GPUs{cause}; this job asks for {wanted}", field="gpus",
                hint="use the Kubernetes executor or a GPU node, or submit with gpus=0",
                details={"requested": wanted, "capacity": 0})
        basis = self._fits_basis
        if basis is None or basis[0] is not inv or basis[1] != quotas or len(self._fits_cache) > 256:
            self._fits_cache.clear()
            self._fits_basis = (inv, quotas)
        shape = {k: v for k, v in spec_to_dict(job.spec).items() if k not in _IDENTITY_FIELDS}
        key = json.dumps(shape, sort_keys=True, default=str)
        if key in self._fits_cache:
            rejected = self._fits_cache[key]
        else:
            alone = Snapshot(now=self.clock.now(), inventory=inv, jobs=(job,), quotas=quotas)
            result = self.engine._cycle(alone, self.engine.profile)
            rejected = next((rej.reason for rej in result.rejects if rej.job_id == job.id), None)
            self._fits_cache[key] = rejected
        if rejected is not None:
            cls = QuotaError if rejected.code in _QUOTA_CODES else UnschedulableError
            field = rejected.details.get("field", "gpus")   # cpu, memory or workers for host-size reasons
            raise cls(rejected.message, field=field, hint=rejected.unblock or None,
                      details={"reason": reason_to_dict(rejected)})

    def submit(self, body: Mapping[str, Any], *, user: str, kind: str | JobKind | None = None) -> dict[str, Any]:
        """Validate, check it can ever fit, commit, kick the engine; return the job (state ``pending``).

        Raises:
            ValidationError: bad body (names the field and the fix).
            AuthorizationError: the user may not submit to that team.
            UnschedulableError / QuotaError: it can never run here (the reason carries the numbers).
        """
        inv = self._inventory()
        quotas = self.store.quota_set()
        spec = self._spec(body, user=user, kind=kind, inv=inv, quotas=quotas)
        now = self.clock.now()
        job = Job(id=self.ids("l" if spec.kind is JobKind.LEASE else "j"), spec=spec, submitted_at=now)
        self._never_fits(job, inv, quotas)
        self.store.insert_job(JobRecord(job=job))
        self.kick("submit", job.id)
        data = job_to_dict(job, simulated=inv.simulated)
        self.bus.publish({"type": "lease" if job.is_lease else "job", "data": data})
        return data

    def _visible(self, job_id: str, *, user: str, is_admin: bool) -> JobRecord:
        if not isinstance(job_id, str) or not job_id:
            raise ValidationError("job id must be a non-empty string", field="job_id", hint="e.g. j-01hf3k2m9-x7q4za")
        try:
            record = self.store.get_job(job_id)
        except NotFoundError:
            record = None
        if record is None or (not is_admin and record.job.spec.user != user):
            raise NotFoundError(f"no job {job_id!r} visible to you", field="job_id",
                                hint="list your jobs to see their ids")
        return record

    def _live(self, job: Job) -> Job:
        """``job`` with the leading engine's latest pending reason (fresher than the stored one)."""
        if job.state is JobState.PENDING and self.engine.is_leader:
            reason = self.engine.reasons.get(job.id)
            if reason is not None and reason != job.reason:
                return replace(job, reason=reason, message=reason.message)
        return job

    def _simulated(self) -> bool:
        try:
            return self._inventory().simulated
        except SchedError:
            return False

    def list_jobs(self, *, user: str | None, state: str | Iterable[str] | None = None,
                  kind: str | JobKind | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Jobs (and leases) newest first; ``user=None`` lists everyone's (the handler checks admin).

        ``state`` is a state name, a comma-separated list or a list of names.

        Raises:
            ValidationError: an unknown state or kind.
        """
        states = _parse_states(state)
        kinds = None
        if kind is not None:
            try:
                kinds = [JobKind(kind)]
            except ValueError:
                raise ValidationError(f"unknown kind {kind!r}", field="kind",
                                      hint="use training, inference or lease") from None
        simulated = self._simulated()
        return [job_to_dict(self._live(r.job), simulated=simulated)
                for r in self.store.list_jobs(user=user, states=states, kinds=kinds, limit=limit, newest_first=True)]

    def get_job(self, job_id: str, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        """One job (own jobs only unless admin).

        Raises:
            NotFoundError: no such job, or not yours.
        """
        record = self._visible(job_id, user=user, is_admin=is_admin)
        data = job_to_dict(self._live(record.job), simulated=self._simulated())
        if record.stop_intent and not record.job.state.terminal:
            data["stop_requested"] = {"intent": record.stop_intent, "by": record.stop_actor,
                                      "at": record.stop_requested_at.isoformat() if record.stop_requested_at else None}
        return data

    def cancel(self, job_id: str, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        """Cancel a job or release a lease.

        Pending work and leases end at once (``cancelled``); running work gets a stop intent that
        the leading engine carries out (SIGTERM to the group, SIGKILL after the grace period),
        after which it is ``cancelled``. Cancelling again while it stops is a no-op.

        Raises:
            NotFoundError: no such job, or not yours.
            ConflictError: it already finished.
        """
        self._visible(job_id, user=user, is_admin=is_admin)
        for _ in range(5):
            with self.store.transaction() as tx:
                record = tx.get_job(job_id)
                job = record.job
                if job.state.terminal:
                    raise ConflictError(f"job {job_id} already {job.state.value}", field="job_id",
                                        hint="only pending or running work can be cancelled")
                now = tx.now
                immediate = job.state in (JobState.PENDING, JobState.PREEMPTED) or job.is_lease
                if immediate:
                    new = replace(record, job=job.transition(
                        JobState.CANCELLED, finished_at=now,
                        message=f"{'released' if job.is_lease else 'cancelled'} by {user}"))
                elif record.stop_intent == "cancel":
                    break
                else:
                    new = replace(record, stop_intent="cancel", stop_requested_at=now, stop_actor=user,
                                  job=replace(job, message=f"cancel requested by {user}"))
                if tx.try_update_job(new) is None:
                    continue
                if immediate:
                    tx.close_usage(job_id, now)
                tx.add_event(actor=user, action="cancel" if immediate else "cancel_requested", job_id=job_id,
                             user=job.spec.user, message=new.job.message, details={"state": job.state.value})
            break
        else:
            raise ConflictError(f"job {job_id} kept changing; cancel not recorded", field="job_id",
                                hint="retry the cancel")
        self.kick()
        out = self.get_job(job_id, user=user, is_admin=True)
        self.bus.publish({"type": "lease" if out["kind"] == "lease" else "job", "data": out})
        return out

    def release_kernel(self, kernel_id: str, *, reason: str) -> list[dict[str, Any]]:
        """Release every live lease bound to ``kernel_id`` (the kernel shut down or restarted)."""
        released = []
        for record in self.store.list_jobs(states=LIVE_STATES, kinds=[JobKind.LEASE]):
            if record.job.spec.kernel_id != kernel_id:
                continue
            with contextlib.suppress(ConflictError):
                released.append(self.cancel(record.job.id, user=record.job.spec.user, is_admin=True))
                self.store.add_event(actor="server", action="lease_released", job_id=record.job.id,
                                     user=record.job.spec.user, message=reason, details={"kernel_id": kernel_id})
        return released

    def logs(self, job_id: str, *, user: str, is_admin: bool = False, offset: int = 0,
             limit: int = 65536) -> dict[str, Any]:
        """A chunk of a job's output: ``{"text", "offset", "next_offset", "finished"}`` (byte offsets).

        Readable while the job runs and after it ended (also after a restart).

        Raises:
            ValidationError: negative offset or a limit outside 1..1 MiB.
            NotFoundError: no such job, or not yours.
        """
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError(f"offset must be an integer >= 0 (got {offset!r})", field="offset",
                                  hint="start at 0 and pass back next_offset")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_LOG_LIMIT:
            raise ValidationError(f"limit must be 1..{_MAX_LOG_LIMIT} bytes (got {limit!r})", field="limit",
                                  hint="e.g. 65536")
        record = self._visible(job_id, user=user, is_admin=is_admin)
        finished = record.job.state.terminal
        text, next_offset = "", offset
        path = Path(str(record.handle["log"])) if record.handle and record.handle.get("log") else None
        try:
            if path is not None and path.exists():
                text, next_offset = read_log(path, offset, limit)
            elif not record.job.is_lease:
                text, next_offset = self.executor.logs(job_id, offset, limit)
        except NotFoundError:
            pass
        return {"text": text, "offset": offset, "next_offset": next_offset, "finished": finished}

    def keepalive(self, lease_id: str, *, user: str, seconds: float | None = None) -> dict[str, Any]:
        """Keep an idle lease's GPUs: the one extension of this allocation, until ``now + seconds``
        (default and maximum: the admin's ``keepalive_max_s``). Recorded as an ``idle_keepalive``
        audit record carrying the new ladder state, which the leading engine picks up. Returns the
        lease plus ``keepalive_until``.

        Raises:
            NotFoundError: no such lease, or not yours.
            ValidationError: it is a batch job, not a lease; ``seconds`` out of range.
            ConflictError: the lease already ended, it is not running yet, the keepalive was
                already used for this allocation, or keepalive is disabled.
        """
        from ..reclaim import IdlePolicies, extend_keepalive

        record = self._visible(lease_id, user=user, is_admin=False)
        job = record.job
        if not job.is_lease:
            raise ValidationError(f"{lease_id} is a {job.spec.kind.value} job, not a lease", field="lease_id",
                                  hint="keepalive applies to interactive leases only")
        if job.state.terminal:
            raise ConflictError(f"lease {lease_id} already {job.state.value}", field="lease_id",
                                hint="request a new lease")
        if not job.state.holds_gpus:
            raise ConflictError(f"lease {lease_id} is {job.state.value}: it holds no GPUs yet", field="lease_id",
                                hint="keepalive applies once the lease is granted")
        policies = self.idle_policies if self.idle_policies is not None else IdlePolicies()
        now = self.clock.now()
        ladder, _ = Engine.stored_ladder(self.store, job)
        ladder = extend_keepalive(ladder, now=now, policy=policies.for_job(job), requested_s=seconds)
        until = ladder.keepalive_until.isoformat() if ladder.keepalive_until else None
        with self.store.transaction(now=now) as tx:
            current = tx.get_job(lease_id)
            tx.try_update_job(replace(current, activity_at=now))
            tx.add_event(actor=user, action="idle_keepalive", job_id=lease_id, user=job.spec.user,
                         message=f"keepalive: GPUs kept until {until}",
                         details={"keepalive_until": until, "ladder": ladder_to_dict(ladder),
                                  "attempt": job.attempts})
        self.kick()
        return {**self.get_job(lease_id, user=user), "keepalive_until": until}

    # -- queue and dry run ---------------------------------------------------------------------------------

    def queue(self, *, user: str) -> list[dict[str, Any]]:
        """Pending, admitted and running work of everyone, in queue order, with ``position``
        (1-based among pending), ``reason`` and ``eta``. Other users' entries omit their command,
        environment and paths; ``mine`` marks the caller's."""
        records = self.store.list_jobs(states=LIVE_STATES)
        pending = [r for r in records if r.job.state in (JobState.PENDING, JobState.PREEMPTED)]
        pending.sort(key=lambda r: (-r.job.spec.priority.rank, r.job.submitted_at or self.clock.now(), r.job.id))
        running = [r for r in records if r.job.state.holds_gpus]
        simulated = self._simulated()
        out = []
        for index, record in enumerate(pending + running):
            job = self._live(record.job)
            data = job_to_dict(job, simulated=simulated)
            mine = job.spec.user == user
            if not mine:
                for key in _PRIVATE_FIELDS:
                    data.pop(key, None)
            reason = job.reason
            data["mine"] = mine
            data["position"] = (reason.position if reason and reason.position else index + 1) \
                if index < len(pending) else None
            data["eta"] = reason.eta.isoformat() if reason and reason.eta else None
            data["eta_reason"] = reason.eta_reason if reason else ""
            out.append(data)
        return out

    def dryrun(self, body: Mapping[str, Any], *, user: str) -> dict[str, Any]:
        """Would this request fit, where, and when? Nothing is stored.

        Returns ``{"fits": bool, "never": bool, "allocation", "reason", "eta", "would_preempt": [ids],
        "job"}``: ``fits`` = it would be admitted in the next cycle; ``never`` = it can never run.

        Raises:
            ValidationError: bad body.
        """
        from ..model.codec import allocation_to_dict

        inv = self._inventory()
        quotas = self.store.quota_set()
        spec = self._spec(body, user=user, kind=None, inv=inv, quotas=quotas)
        job = Job(id="dryrun", spec=spec, submitted_at=self.clock.now())
        base = self.engine.snapshot()
        snapshot = replace(base, inventory=inv, jobs=(*base.jobs, job))
        result = self.engine._cycle(snapshot, self.engine.profile)
        out: dict[str, Any] = {"fits": False, "never": False, "allocation": None, "reason": None, "eta": None,
                               "would_preempt": [p.job_id for p in result.preemptions if p.for_job == job.id],
                               "job": job_to_dict(job, simulated=inv.simulated)}
        for admit in result.admits:
            if admit.job_id == job.id:
                out.update(fits=True, allocation=allocation_to_dict(admit.allocation))
        for pend in result.pending:
            if pend.job_id == job.id:
                out.update(reason=reason_to_dict(pend.reason),
                           eta=pend.reason.eta.isoformat() if pend.reason.eta else None)
        for rej in result.rejects:
            if rej.job_id == job.id:
                out.update(never=True, reason=reason_to_dict(rej.reason))
        return out

    # -- quotas, profiles, me ----------------------------------------------------------------------------

    def quotas(self) -> dict[str, Any]:
        """``{"quotas": [...], "budgets": [...], "teams": [...], "user_teams": {user: team}}``."""
        return _quota_set_to_dict(self.store.quota_set())

    def set_quotas(self, body: Any, *, actor: str) -> dict[str, Any]:
        """Replace the quota set (admin; the handler checks). ``body`` is a list of quota lines or
        ``{"quotas": [...], "budgets": [...], "teams": [...], "user_teams": {...}}`` (missing keys keep
        their current value). Validated against the inventory; audited with old→new.

        Raises:
            ValidationError: bad lines (names the field), duplicate lines, guarantees above the GPUs that exist.
        """
        current = self.store.quota_set()
        if isinstance(body, list):
            body = {"quotas": body}
        if not isinstance(body, Mapping):
            raise ValidationError("quotas body must be an object or a list of quota lines", field="quotas",
                                  hint='e.g. {"quotas": [{"team": "ml", "guaranteed": 4, "borrowing_limit": 2}]}')
        unknown = sorted(set(body) - {"quotas", "budgets", "teams", "user_teams"})
        if unknown:
            raise ValidationError(f"unknown field {unknown[0]!r}", field=unknown[0],
                                  hint="known fields: quotas, budgets, teams, user_teams")
        lines = current.quotas if "quotas" not in body else tuple(
            quota_from_dict(q) for q in _list(body["quotas"], "quotas"))
        seen: set[tuple[str, str | None, str]] = set()
        for q in lines:
            if q.key in seen:
                raise ValidationError(f"duplicate quota line for team {q.team!r}, user {q.user!r}, model {q.gpu_model!r}",
                                      field="quotas", hint="give each (team, user, gpu_model) once")
            seen.add(q.key)
        inv = self._inventory()
        validate_quotas(lines, inv.models())
        budgets = current.budgets if "budgets" not in body else tuple(
            _budget(b) for b in _list(body["budgets"], "budgets"))
        teams = current.teams if "teams" not in body else tuple(_team(t) for t in _list(body["teams"], "teams"))
        user_teams = current.user_teams if "user_teams" not in body else _user_teams(body["user_teams"])
        new = QuotaSet(quotas=lines, budgets=budgets, teams=teams, user_teams=user_teams)
        old_dict, new_dict = _quota_set_to_dict(current), _quota_set_to_dict(new)
        with self.store.transaction() as tx:
            tx.replace_quota_set(new)
            tx.add_event(actor=actor, action="quotas_changed", message=f"quotas changed by {actor}",
                         details={"old": old_dict, "new": new_dict})
        self.kick()
        return new_dict

    # -- idle policy --------------------------------------------------------------------------------

    def idle_policy(self) -> dict[str, Any]:
        """The idle policy in force (``GET idle-policy``): ``{"default": POLICY, "by_priority":
        {class: POLICY}, "active": bool, "retention_s": seconds | None}`` (POLICY: see
        :mod:`jupyter_sched.reclaim.codec`). ``active`` is false when telemetry is off — then no
        idle detection runs and the policy only bounds keepalives; ``retention_s`` is the seconds
        of samples the telemetry monitor keeps (None without a monitor)."""
        from ..reclaim import IdlePolicies, idle_policies_to_dict

        policies = self.idle_policies if self.idle_policies is not None else IdlePolicies()
        return {**idle_policies_to_dict(policies), "active": self.monitor is not None,
                "retention_s": self.monitor.retention_s if self.monitor is not None else None}

    def set_idle_policy(self, body: Any, *, actor: str) -> dict[str, Any]:
        """Change the idle policy (admin; the handler checks). ``body`` is ``{"default": POLICY,
        "by_priority": {...}}``; keys left out keep their current value. Validated, stored as an
        ``idle_policy_set`` audit record with ``details = {"old", "new"}`` (the full policies;
        it outlives restarts: :meth:`load_idle_policy`), then applied to the running engine. A
        window longer than the telemetry retention grows the retention (memory: 32 B per sample
        per device) up to :data:`IDLE_RETENTION_MAX_S`; beyond it the change is refused.

        Note: only this server's engine applies the change now; other servers of a shared store
        pick it up when they restart.

        Returns:
            :meth:`idle_policy` after the change.

        Raises:
            ValidationError: a bad shape or value (``field`` names it, e.g. ``idle.normal.window_s``),
                or a window that needs more telemetry than :data:`IDLE_RETENTION_MAX_S`.
        """
        from ..reclaim import IdlePolicies, idle_policies_from_dict, idle_policies_to_dict

        current = self.idle_policies if self.idle_policies is not None else IdlePolicies()
        new = idle_policies_from_dict(body, base=current)
        needed = _retention_s(new)
        if self.monitor is not None and needed > max(self.monitor.retention_s, IDLE_RETENTION_MAX_S):
            name, policy = max([("default", new.default), *new.by_priority.items()],
                               key=lambda item: max(item[1].window_s, item[1].busy_kernel_window_s or 0.0))
            key = "busy_kernel_window_s" if (policy.busy_kernel_window_s or 0.0) > policy.window_s else "window_s"
            raise ValidationError(
                f"idle.{name}.{key} needs {needed:g} s of telemetry; the server keeps {self.monitor.retention_s:g} s "
                f"and grows it at run time to at most {IDLE_RETENTION_MAX_S:g} s", field=f"idle.{name}.{key}",
                hint=f"use at most {IDLE_RETENTION_MAX_S - 180:g} s, or configure the longer window in "
                     "c.SchedApp.idle_window_s / idle_busy_kernel_window_s and restart the server")
        old_dict, new_dict = idle_policies_to_dict(current), idle_policies_to_dict(new)
        with self.store.transaction() as tx:
            tx.add_event(actor=actor, action="idle_policy_set", message=f"idle policy changed by {actor}",
                         details={"old": old_dict, "new": new_dict})
        self._apply_idle_policy(new)
        return self.idle_policy()

    def load_idle_policy(self) -> bool:
        """Replace the configured idle policy with the one in the newest ``idle_policy_set``
        audit record, if any (called by :meth:`start`). A record that no longer reads as a policy
        is logged and skipped (the configured policy stays). Returns True when one was applied."""
        from ..reclaim import IdlePolicies, idle_policies_from_dict

        events = self.store.list_events(action="idle_policy_set", limit=1, newest_first=True)
        if not events:
            return False
        stored = (events[0].details or {}).get("new")
        try:
            policies = idle_policies_from_dict(stored, base=IdlePolicies())
        except ValidationError as err:
            log.warning("jupyter_sched: ignoring the stored idle policy (audit record %s): %s", events[0].id, err)
            return False
        self._apply_idle_policy(policies)
        return True

    def _apply_idle_policy(self, policies: Any) -> None:
        """Use ``policies`` from now on: keepalives, and (with telemetry) the engine's idle
        detection, after growing the sample retention to cover the longest window."""
        self.idle_policies = policies
        if self.monitor is not None:
            self.monitor.grow_retention(_retention_s(policies))
            self.engine.idle_policies = policies
        self.kick()

    def profiles(self) -> list[dict[str, Any]]:
        """Admin request templates: ``[{"name", "description", "defaults"}]``, sorted by name."""
        return [{"name": p.name, "description": p.description, "defaults": dict(p.defaults)}
                for p in sorted(self._profiles.values(), key=lambda p: p.name)]

    def me(self, user: str) -> dict[str, Any]:
        """Identity, usage against quota and budget: ``{"user", "team", "quotas", "budgets",
        "in_use": {"gpus", "jobs", "leases"}, "pending", "gpu_hours_7d"}``."""
        quotas = self.store.quota_set()
        team = self._team_of(user, quotas)
        live = self.store.list_jobs(user=user, states=LIVE_STATES)
        holding = [r.job for r in live if r.job.state.holds_gpus and r.job.allocation is not None]
        in_use = sum(len(j.allocation.all_gpu_uuids()) * j.allocation.gpu_milli / 1000
                     for j in holding if j.allocation is not None)
        now = self.clock.now()
        intervals = self.store.usage_rows(since=now - timedelta(days=31), user=user)
        week = rollup(intervals, now=now, by=("user",), since=now - timedelta(days=7))
        mine_budgets = [b for b in quotas.budgets if b.team == team and b.user in (None, user)]
        team_intervals = self.store.usage_rows(since=now - timedelta(days=31))
        used = budget_usage(team_intervals, mine_budgets, now=now)
        return {
            "user": user, "team": team,
            "quotas": [quota_to_dict(q) for q in quotas.quotas if q.team == team and q.user in (None, user)],
            "budgets": [{**budget_to_dict(b), "used_gpu_hours": round(used[(b.team, b.user)], 6)} for b in mine_budgets],
            "in_use": {"gpus": in_use, "jobs": sum(1 for j in holding if not j.is_lease),
                       "leases": sum(1 for j in holding if j.is_lease)},
            "pending": sum(1 for r in live if r.job.state is JobState.PENDING),
            "gpu_hours_7d": week[0]["gpu_hours"] if week else 0.0,
        }

    # -- audit and usage ----------------------------------------------------------------------------

    def audit(self, *, limit: int = 100, since: str | datetime | None = None, until: str | datetime | None = None,
              user: str | None = None, job_id: str | None = None, action: str | None = None) -> list[dict[str, Any]]:
        """Audit records, newest first: ``[{"id", "at", "actor", "action", "job_id", "user", "message", "details"}]``.

        Raises:
            ValidationError: a timestamp without offset, or a bad limit.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100_000:
            raise ValidationError(f"limit must be 1..100000 (got {limit!r})", field="limit", hint="e.g. 100")
        events = self.store.list_events(since=_when(since, "since"), until=_when(until, "until"), user=user,
                                        job_id=job_id, action=action, limit=limit, newest_first=True)
        return [e.to_dict() for e in events]

    def usage(self, *, user: str | None = None, by: str | Sequence[str] = "user",
              since: str | datetime | None = None, until: str | datetime | None = None) -> list[dict[str, Any]]:
        """Allocated GPU-seconds/hours rolled up ``by`` (user, team, gpu_model, job_id, kind) inside
        ``[since, until)`` (default: everything), for one ``user`` or everyone.

        Raises:
            ValidationError: unknown grouping field or bad timestamp.
        """
        keys = tuple(k.strip() for k in by.split(",")) if isinstance(by, str) else tuple(by)
        bad = [k for k in keys if k not in ROLLUP_KEYS]
        if bad or not keys:
            raise ValidationError(f"cannot group usage by {bad[0] if bad else '(nothing)'!r}", field="by",
                                  hint="use any of " + ", ".join(ROLLUP_KEYS))
        start, end = _when(since, "since"), _when(until, "until")
        rows = self.store.usage_rows(since=start, until=end, user=user)
        return rollup(rows, now=self.clock.now(), by=keys, since=start, until=end)

    # -- telemetry --------------------------------------------------------------------------------

    def telemetry(self, *, user: str, is_admin: bool = False, gpu: str | None = None, job: str | None = None,
                  lease: str | None = None, since: str | datetime | None = None, limit: int = 600) -> dict[str, Any]:
        """Current and recent samples per GPU (``GET telemetry``).

        Returns ``{"enabled", "source", "interval_s", "simulated", "at", "job_id", "gpus": [{"gpu_uuid",
        "mig_instance", "current": sample, "recent": [sample, ...]}], "foreign": [report], "idle":
        [{"job_id", "gpu_uuids"}]}`` with samples as :func:`jupyter_sched.telemetry.sample_to_dict`.
        ``gpu`` (a GPU or MIG uuid) or ``job`` / ``lease`` (its allocation's GPUs; your own work
        unless admin) narrow it; ``since`` (ISO 8601 with offset) starts ``recent`` (default: the
        last minute); ``limit`` caps recent samples per device (1..3600).

        Raises:
            ValidationError: bad ``since`` or ``limit``, or two filters at once.
            NotFoundError: the job/lease is not yours or does not exist; the GPU does not exist.
        """
        from ..reclaim import device_keys, foreign_gpu_reports
        from ..telemetry import foreign_report_to_dict, sample_to_dict

        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 3600:
            raise ValidationError(f"limit must be 1..3600 samples (got {limit!r})", field="limit", hint="e.g. 600")
        if sum(1 for f in (gpu, job, lease) if f) > 1:
            raise ValidationError("give at most one of gpu, job and lease", field="gpu",
                                  hint="ask for one GPU, one job or one lease at a time")
        now = self.clock.now()
        start = _when(since, "since") or now - timedelta(seconds=60)
        inv = self._inventory()
        live = [r.job for r in self.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING))]
        body: dict[str, Any] = {"enabled": self.monitor is not None, "source": None, "interval_s": None,
                                "simulated": inv.simulated, "at": now.isoformat(), "job_id": job or lease,
                                "gpus": [], "foreign": [foreign_report_to_dict(r) for r in foreign_gpu_reports(inv, live)],
                                "idle": [{"job_id": j, "gpu_uuids": list(u)} for j, u in sorted(self.engine.idle_gpus.items())]}
        if self.monitor is None:
            return body
        body.update(source=self.monitor.source, interval_s=self.monitor.interval_s)
        latest = self.monitor.latest()
        keys: list[tuple[str, int | None]]
        if job or lease:
            record = self._visible(str(job or lease), user=user, is_admin=is_admin)
            alloc = record.job.allocation if record.job.state.holds_gpus else None
            keys = list(device_keys(alloc.all_gpu_uuids(), inv)) if alloc is not None else []
        elif gpu:
            keys = list(device_keys([gpu], inv))
            if keys[0] not in latest and gpu not in inv.gpu_by_uuid():
                raise NotFoundError(f"no GPU {gpu!r} in the inventory", field="gpu", hint="see GET inventory for uuids")
        else:
            keys = sorted(latest, key=lambda k: (k[0], k[1] if k[1] is not None else -1))
        recent = self.monitor.recent(keys, since=start, limit=limit)
        for key in keys:
            current = latest.get(key)
            body["gpus"].append({"gpu_uuid": key[0], "mig_instance": key[1],
                                 "current": sample_to_dict(current) if current is not None else None,
                                 "recent": [sample_to_dict(s) for s in recent.get(key, [])]})
        return body

    def idle_stats(self) -> dict[str, Any]:
        """For ``/metrics``: ``{"idle_gpus": GPUs of work with an open idle warning, "reclaims": idle
        reclaims that freed GPUs since start, "telemetry": the monitor's status or None}``."""
        return {"idle_gpus": sum(len(u) for u in self.engine.idle_gpus.values()),
                "reclaims": self.engine.reclaims_total,
                "telemetry": self.monitor.status() if self.monitor is not None else None}

    # -- events ----------------------------------------------------------------------------------------

    def subscribe(self) -> Subscription:
        """An async iterator of ``{"type", "data"}`` events (bounded; must be called on the running loop)."""
        return self.bus.subscribe()


def idle_policies_from_settings(settings: Mapping[str, Any]) -> Any:
    """Map the ``idle_*`` settings of ``SchedApp`` to an :class:`~jupyter_sched.reclaim.IdlePolicies`.

    ``idle_window_s`` is how long work must stay idle before the *warning*; ``idle_grace_s`` the
    time between warning and reclaim. So the policy's limit is ``window + grace`` and its warning
    lead time is ``grace``. ``idle_window_s = 0`` turns idle reclamation off (``enabled=False``).
    Optional keys (defaults of :class:`~jupyter_sched.reclaim.IdlePolicy` otherwise):
    ``idle_busy_kernel_window_s`` (kept >= the limit), ``idle_keepalive_max_s``,
    ``idle_lease_action`` / ``idle_busy_kernel_action`` / ``idle_job_action`` (``release``,
    ``requeue``, ``stop``, ``notify``), ``idle_max_gap_s``.

    Raises:
        ValidationError: an unusable value (names the ``idle.*`` field).
    """
    from ..reclaim import IdlePolicies, IdlePolicy, ReclaimMode

    def mode(key: str, default: ReclaimMode) -> ReclaimMode:
        value = settings.get(key)
        if value in (None, ""):
            return default
        try:
            return ReclaimMode(str(value))
        except ValueError:
            raise ValidationError(f"unknown idle action {value!r}", field=key,
                                  hint="use release, requeue, stop or notify") from None

    base = IdlePolicy()
    window = float(settings.get("idle_window_s", 1800.0) or 0.0)
    grace = float(settings.get("idle_grace_s", 600.0) or 0.0)
    if window <= 0:
        return IdlePolicies(default=IdlePolicy(enabled=False))
    limit = window + grace
    busy = settings.get("idle_busy_kernel_window_s")
    busy_s = None if busy == 0 else max(limit, float(busy) if busy is not None else base.busy_kernel_window_s or limit)
    threshold = float(settings.get("idle_threshold_percent", base.threshold_pct))
    policy = IdlePolicy(
        threshold_pct=threshold if threshold > 0 else base.threshold_pct, window_s=limit, warning_s=grace,
        busy_kernel_window_s=busy_s,
        lease_mode=mode("idle_lease_action", base.lease_mode),
        busy_kernel_mode=mode("idle_busy_kernel_action", base.busy_kernel_mode),
        job_mode=mode("idle_job_action", base.job_mode),
        max_gap_s=float(settings.get("idle_max_gap_s", base.max_gap_s)),
        keepalive_max_s=float(settings.get("idle_keepalive_max_s", base.keepalive_max_s)))
    return IdlePolicies(default=policy)


def _kubernetes_api_client(kubeconfig: str) -> Any:
    """The official client's ``ApiClient`` for ``kubeconfig`` (a path; "" = the in-cluster service
    account when ``KUBERNETES_SERVICE_HOST`` is set, else ``$KUBECONFIG`` / ``~/.kube/config``).

    Loads into a fresh ``Configuration``, never the client's process-wide default.

    Raises:
        ValidationError: the kubeconfig is missing or unusable (field ``kubeconfig``).
    """
    from kubernetes import client as k8s
    from kubernetes import config as kube_config

    k8s_config: Any = kube_config  # the client's config loaders carry no annotations
    configuration = k8s.Configuration()
    try:
        if kubeconfig:
            k8s_config.load_kube_config(config_file=os.path.expanduser(kubeconfig),
                                        client_configuration=configuration)
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            k8s_config.load_incluster_config(client_configuration=configuration)
        else:
            k8s_config.load_kube_config(client_configuration=configuration)
    except (k8s_config.ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
        where = kubeconfig or "the in-cluster service account / ~/.kube/config"
        raise ValidationError(f"cannot load the Kubernetes client configuration from {where}: {exc}",
                              field="kubeconfig",
                              hint="set c.SchedApp.kubeconfig to a readable kubeconfig with a current context, "
                                   "or run the server in a pod with a service account") from None
    return k8s.ApiClient(configuration)


IDLE_RETENTION_MAX_S = 24 * 3600.0 + 180.0
"""Seconds of telemetry an idle-policy change through the API may grow the retention to (a day at
1 Hz: 2.7 MiB per device); longer windows are configured in ``SchedApp`` and need a restart."""


def _retention_s(policies: Any) -> float:
    """Seconds of samples the monitor keeps: the longest idle lookback plus two minutes."""
    items = [policies.default, *policies.by_priority.values()]
    longest = max(max(p.window_s, p.busy_kernel_window_s or 0.0) for p in items)
    return float(longest) + 180.0


def _make_monitor(settings: Mapping[str, Any], source: Any, logger: logging.Logger, *,
                  retention_s: float, nvml: Any = None) -> TelemetryMonitor | None:
    """The telemetry monitor for ``telemetry_source`` (None for ``off``, or ``auto`` on a static inventory).

    Raises:
        ValidationError: an unknown source, or ``dcgm`` / ``prometheus`` without ``telemetry_url``.
    """
    from ..inventory.nvml import NvmlInventory
    from ..inventory.simulated import SimulatedInventory
    from ..telemetry import DcgmCollector, NvmlCollector, PrometheusCollector, SimulatedCollector, http_text_fetcher

    kind = str(settings.get("telemetry_source") or "auto")
    url = str(settings.get("telemetry_url") or "")
    interval = float(settings.get("telemetry_interval_s", 1.0))
    if kind == "auto":
        kind = ("simulated" if isinstance(source, SimulatedInventory) else "nvml" if isinstance(source, NvmlInventory)
                else "dcgm" if url else "off")
    if kind == "off":
        logger.info("jupyter_sched: telemetry off (no collector for this inventory source)")
        return None
    monitors: list[TelemetryMonitor] = []
    collector: Any
    if kind == "simulated":
        collector = SimulatedCollector(lambda: source.current().gpus(),
                                       pids=lambda: monitors[0].holders() if monitors else {})
    elif kind == "nvml":
        collector = NvmlCollector(nvml, node=str(getattr(source, "node", "") or ""))
    elif kind in ("dcgm", "prometheus"):
        if not url:
            raise ValidationError(f"telemetry_source {kind!r} needs telemetry_url", field="telemetry_url",
                                  hint="e.g. http://127.0.0.1:9400/metrics (dcgm) or http://127.0.0.1:9090 (prometheus)")
        collector = DcgmCollector(http_text_fetcher(url)) if kind == "dcgm" else PrometheusCollector(url)
    else:
        raise ValidationError(f"unknown telemetry_source {kind!r}", field="telemetry_source",
                              hint="use auto, simulated, nvml, dcgm, prometheus or off")
    monitor = TelemetryMonitor(collector, source=kind, retention_s=retention_s, interval_s=interval)
    monitors.append(monitor)
    return monitor


def _scheduling_profile(settings: Mapping[str, Any]) -> Any:
    try:
        from ..scheduling.profile import SchedulingProfile
    except ImportError:  # the core's profile is optional for the engine
        return None
    kwargs: dict[str, Any] = {}
    if settings.get("preemption_grace_s") is not None:
        kwargs["grace_s"] = float(settings["preemption_grace_s"])
    if settings.get("time_zone"):
        kwargs["timezone"] = str(settings["time_zone"])
    policy = str(settings.get("placement_policy") or "binpack")
    if policy != "binpack":
        from ..placement.placer import PlacementConfig

        kwargs["placement"] = PlacementConfig(fragmentation=policy)  # validated by the profile
    return SchedulingProfile(**kwargs)


def _parse_states(state: str | Iterable[str] | None) -> list[JobState] | None:
    if state is None or state == "":
        return None
    names = [s.strip() for s in state.split(",")] if isinstance(state, str) else list(state)
    out = []
    for name in names:
        try:
            out.append(JobState(name))
        except ValueError:
            raise ValidationError(f"unknown state {name!r}", field="state",
                                  hint="use any of " + ", ".join(s.value for s in JobState)) from None
    return out


def _when(value: str | datetime | None, field: str) -> datetime | None:
    return None if value is None or value == "" else parse_utc(value, field=field)


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValidationError(f"{field} must be a list", field=field, hint=f"give {field} as [ ... ]")
    return value


def _budget(d: Any) -> Budget:
    if not isinstance(d, Mapping) or not isinstance(d.get("team"), str) or not d.get("team"):
        raise ValidationError("each budget needs a team", field="budgets.team",
                              hint='e.g. {"team": "ml", "gpu_hours": 500, "period": "month"}')
    hours = d.get("gpu_hours")
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or hours < 0:
        raise ValidationError(f"budget gpu_hours must be a number >= 0 (got {hours!r})", field="budgets.gpu_hours",
                              hint="give GPU-hours per period, e.g. 500")
    period = d.get("period", "month")
    if period not in ("day", "week", "month"):
        raise ValidationError(f"budget period must be day, week or month (got {period!r})", field="budgets.period",
                              hint="use month")
    user = d.get("user")
    if user is not None and not isinstance(user, str):
        raise ValidationError("budget user must be a string or null", field="budgets.user", hint="omit it for a team")
    return Budget(team=d["team"], user=user, gpu_hours=float(hours), period=period)


def _team(d: Any) -> TeamPolicy:
    if not isinstance(d, Mapping) or not isinstance(d.get("team"), str) or not d.get("team"):
        raise ValidationError("each team policy needs a team", field="teams.team",
                              hint='e.g. {"team": "ml", "weight": 1, "allowed_priorities": ["normal", "low"]}')
    weight = d.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
        raise ValidationError(f"team weight must be > 0 (got {weight!r})", field="teams.weight", hint="e.g. 1")
    allowed = d.get("allowed_priorities", ["normal", "low"])
    if not isinstance(allowed, list) or any(p not in ("high", "normal", "low") for p in allowed):
        raise ValidationError(f"allowed_priorities must list high/normal/low (got {allowed!r})",
                              field="teams.allowed_priorities", hint='e.g. ["normal", "low"]')
    members = d.get("members", [])
    if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        raise ValidationError("members must be a list of user names", field="teams.members", hint='e.g. ["ana"]')
    return TeamPolicy(team=d["team"], weight=float(weight), allowed_priorities=tuple(allowed), members=tuple(members))


def _user_teams(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValidationError("user_teams must map user names to team names", field="user_teams",
                              hint='e.g. {"ana": "ml"}')
    return dict(value)


def _quota_set_to_dict(qs: QuotaSet) -> dict[str, Any]:
    return {"quotas": [quota_to_dict(q) for q in qs.quotas], "budgets": [budget_to_dict(b) for b in qs.budgets],
            "teams": [team_policy_to_dict(t) for t in qs.teams], "user_teams": dict(sorted(qs.user_teams.items()))}
