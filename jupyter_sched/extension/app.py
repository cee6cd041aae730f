"""The jupyter_server extension: config, the services' lifetime, routes, identity, activity.

``SchedApp`` owns one :class:`~jupyter_sched.services.Services` (the application services and the engine) per server:
built when the extension loads (:func:`~jupyter_sched.services.build_services`), started once the server's event loop
runs, stopped with the server. Handlers reach it through ``settings["jupyter_sched"].services`` and the request's
caller through :meth:`SchedApp.resolve_caller` (the admission step).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from tornado.ioloop import PeriodicCallback
from traitlets import Float, TraitError, validate

from ..admission import Caller
from ..buildinfo import version_string
from ..errors import BusyError, SchedError, SchedulerOffError
from ..services.idle import idle_config
from ..services.models import GetConfigResponse
from ..store.outage import log_store_failure
from ..store.store import service_pool_size
from ..wording.reinstall import reinstalled_notice_of
from .background import fire_and_forget
from .config import InventoryConfig, PolicyConfig, StorageConfig, config_error
from .config_access import AccessConfig, WebConfig
from .config_check import UnknownSettingsSaidOnce, setting_error_text
from .config_idle import IdleConfig
from .config_runtime import ExecutorConfig, TelemetryConfig
from .definitions_web import DefinitionsConfig
from .events import EventHub
from .gc_pauses import settle_heap
from .host_schedulers import announce
from .hub_client import HubClientConfig
from .identity import Identity, IdentityResolver, make_identity_resolver, server_owner, uses_builtin_provider
from .idle_kernels import IdleKernelConfig, connect_kernels
from .job_tokens import JobTokenConfig, install_job_tokens
from .kernel_gpus import KernelGpuConfig, KernelLeases, hidden_gpus_env
from .kernels import install_kernel_hooks, kernel_env, release_orphan_leases
from .lean import install_lean_answers
from .metrics import make_registry
from .metrics_accounting import make_admin_registry
from .per_user_lines import BULK_WAITING_PER_USER, QUICK_WAITING_PER_USER, PerUserLines
from .request_log import escape_log_controls
from .routes import ROUTES, UnknownRouteHandler
from .startup_checks import check_config, config_exit, say_started
from .stopping import run_pooled, say_what_stop_leaves
from .store_off import go_off, off_error_of, start_or_go_off
from .terminal_shell import terminal_finds_jupyter_sched

__all__ = ["API_PREFIX", "SchedApp"]

API_PREFIX = "api/sched/"  # every route of the extension lives under {base_url}api/sched/

log = logging.getLogger(__name__)
R = TypeVar("R")


class SchedApp(StorageConfig, InventoryConfig, PolicyConfig, IdleConfig, TelemetryConfig, ExecutorConfig, WebConfig,
               AccessConfig, KernelGpuConfig, DefinitionsConfig, IdleKernelConfig, JobTokenConfig, HubClientConfig,
               UnknownSettingsSaidOnce, ExtensionApp):
    """GPU scheduling for Jupyter: the server extension (``c.SchedApp.<trait>`` configures it)."""

    name = "jupyter_sched"
    description = "GPU scheduling for Jupyter users: queues, quotas, placement, preemption, idle reclamation."
    load_other_extensions = True
    owns_kernels = True
    """The leases of this engine are bound to this server's kernels (embedded). The hub's central
    service serves no kernels: its users' servers report them (``jupyter_sched.hub.liveness``)."""
    stopping = False
    """True once :meth:`stop_extension` began: requests are answered 503 ``stopping`` (:mod:`.stopping`)."""
    off_error: SchedulerOffError | None = None  # the store failed at start: 503 scheduler_off (:mod:`.store_off`)

    activity_interval_s = Float(
        60.0,
        config=True,
        help="""Seconds between checks that report running jobs and leases as server activity
        (the "jupyter_sched_last_activity" setting that jupyter_server's last_activity() and
        JupyterHub's idle culler read). Default: 60 s, the granularity of the hub's activity
        reports; running work then keeps the server alive, panel polling does not.""",
    )

    @validate("activity_interval_s")
    def _check_activity_interval(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 1 <= value <= 3600:
            raise config_error("activity_interval_s", value, "must be 1..3600 seconds", "set e.g. 60")
        return value

    # ---- lifecycle -----------------------------------------------------------------------
    def _link_jupyter_server_extension(self, serverapp: Any) -> None:
        """Link to the server; a bad ``c.SchedApp`` value stops the server with one line.

        Jupyter Server logs an extension that fails to link with a traceback and serves on
        without it, or, for some values, with every ``SchedApp`` setting at its default (another
        database). Both hide the admin's mistake, so a config error ends the process instead,
        naming ``c.SchedApp.<field>`` and the fix.
        """
        try:
            super()._link_jupyter_server_extension(serverapp)
        except TraitError as exc:
            check_config(serverapp, self, exc)
        check_config(serverapp, self)  # every bad setting at once, not one per restart (newuser29 N4)

    @classmethod
    def _load_jupyter_server_extension(cls, serverapp: Any) -> Any:
        """Initialize (builds the service); a config error found here also stops the server."""
        try:
            return super()._load_jupyter_server_extension(serverapp)  # type: ignore[no-untyped-call]
        except TraitError as exc:
            config_exit(serverapp, exc)

    def initialize_settings(self) -> None:
        """Validate cross-field config, build the service, hub, metrics and identity resolver.

        Raises:
            traitlets.TraitError: a config value is unusable (names ``c.SchedApp.<field>`` and the fix).
        """
        self.request_pool = ThreadPoolExecutor(max_workers=self.request_threads, thread_name_prefix="jupyter-sched-api")
        self.bulk_pool = ThreadPoolExecutor(max_workers=max(1, self.request_threads // 2),
                                            thread_name_prefix="jupyter-sched-bulk")
        self.dryrun_pool = ThreadPoolExecutor(max_workers=self.dryrun_concurrency, thread_name_prefix="jupyter-sched-dryrun")
        self._dryruns = 0
        self._dryruns_of: Counter[str] = Counter()  # per user: one user's loop must not take every place
        self._bulk_lines = PerUserLines(self.bulk_pool, most=BULK_WAITING_PER_USER, what="page and report reads",
                                        retry_s=2)  # red27 R5
        self._quick_lines = PerUserLines(self.request_pool, most=QUICK_WAITING_PER_USER, what="requests",
                                         retry_s=1)  # red37 R3
        if (services := self._build_services()) is None:
            return  # the scheduler is off: its store failed at start, said once (store_off, newuser41 n4)
        self.services: Any = install_job_tokens(self, services)  # jobs' URL + token (issue 16 item 4)
        self.event_hub = EventHub(self.events_queue_size)
        if hasattr(self.services, "telemetry"):  # push telemetry only while a client listens
            self.services.telemetry.wanted = lambda: self.event_hub.subscribers > 0
        self.metrics_registry = make_registry(self.services, self.event_hub)
        self.metrics_admin_registry = make_admin_registry(self.metrics_registry, self.services)  # + accounting
        assert self.serverapp is not None
        escape_log_controls(self.serverapp.log)  # a client's ESC never reaches a terminal raw (red team 15, R3)
        provider = getattr(self.serverapp, "identity_provider", None)
        self.identity_mode = ("owner" if uses_builtin_provider(provider) else "jupyter_user") \
            if self.identity_source == "auto" else self.identity_source
        self._resolver: IdentityResolver = make_identity_resolver(
            source=self.identity_mode, identity_provider=provider, admin_users=self.admin_users)
        self._activity_timer: PeriodicCallback | None = None
        self._audits: set[asyncio.Future[Any]] = set()
        self._noting_activity = self._started = False
        install_kernel_hooks(self.serverapp, env_for=self._kernel_env if self.inject_kernel_env else None,
                             release=self._release_kernel, before_restart=self._before_kernel_restart)
        connect_kernels(self)  # kernel states for the idle rules; an idle kernel still on its GPU (idle_kernel_action)
        say_started(self)  # what it runs on; a store any job here can log in to (H5: both modes)

    def routes(self) -> list[tuple[str, type[Any]]]:
        """The routes this server serves under ``api/sched/`` (the central service adds its own)."""
        return list(ROUTES)

    def initialize_handlers(self) -> None:
        """Register THE route table under ``api/sched/`` (hub clients: one forwarding route), then
        a JSON 404 for any other path there (never the server's HTML page)."""
        if self.hub_service_url:
            from ..hub.forward import ForwardHandler

            self.handlers.append((API_PREFIX + "(.*)", ForwardHandler))
            return
        self.handlers.extend((API_PREFIX + pattern, handler) for pattern, handler in self.routes())
        self.handlers.append((API_PREFIX + "(?P<path>.*)", UnknownRouteHandler))
        self.lean_answers = install_lean_answers(self, API_PREFIX, self.routes())  # the polled GETs (issue 17)

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        """Start the engine and the event pump once the server's loop runs."""
        if self.off_error is not None or not await start_or_go_off(self):
            return  # the scheduler is off, said once (store_off: a full disk, newuser41 N3)
        self._started = True
        self._host_entry = announce(self, serverapp)  # warns of another scheduler on this host (new user 20, N17)
        terminal_finds_jupyter_sched(serverapp)  # a Terminal finds jupyter-sched, login shell too (newuser41 N2)
        if self.owns_kernels and not self.hub_service_url:  # leases of kernels gone while the server was down
            release_orphan_leases(self.services, getattr(serverapp, "kernel_manager", None), serverapp.runtime_dir)
        self.event_hub.start(self.services.subscribe())
        self._activity_timer = PeriodicCallback(self._activity_tick, self.activity_interval_s * 1000)
        self._activity_timer.start()
        self._activity_tick()
        settle_heap(self.gil_switch_interval_ms)  # shorter collector pauses and GIL waits from now on (issue 17)

    async def stop_extension(self) -> None:
        """Stop pushing events, then stop the engine (running local jobs keep running; re-adopted later).

        Safe when settings failed to load and the extension never initialised (nothing to stop).
        From its first line, requests are answered 503 ``stopping`` (:mod:`.stopping`, new user 24, N7)."""
        self.stopping = True
        if (timer := getattr(self, "_activity_timer", None)) is not None:
            timer.stop()
            self._activity_timer = None
        if (hub := getattr(self, "event_hub", None)) is None:
            return
        await hub.stop()
        if getattr(self, "_started", False):
            self._started = False
            say_what_stop_leaves(self)  # which jobs keep running, which start only at the next start (newuser41 n3)
            self._host_entry.withdraw()
            await self.services.stop()
        self._threads_stopped = True  # jupyter_server shuts kernels down after its extensions: see off_loop
        for pool in (getattr(self, name, None) for name in ("request_pool", "bulk_pool", "dryrun_pool")):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)

    # ---- service -------------------------------------------------------------------------
    @property
    def sched_data_dir(self) -> Path:
        """``<jupyter data dir>/jupyter_sched`` (created on demand)."""
        path = Path(jupyter_data_dir()) / "jupyter_sched"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def store_url(self) -> str:
        """``db_url`` or the default SQLite file in the Jupyter data dir."""
        return self.db_url or f"sqlite:///{self.sched_data_dir / 'sched.sqlite'}"

    @property
    def job_log_dir(self) -> str:
        """``log_dir`` or ``<jupyter data dir>/jupyter_sched/logs``."""
        return self.log_dir or str(self.sched_data_dir / "logs")

    def _build_services(self) -> Any:
        from .log_route import route_package_log

        route_package_log(self.log)  # module loggers' WARNINGs get the app's prefix, level and time (hubadmin23 A1)
        if self.hub_service_url:
            from ..hub.forward import forwarding_service

            return forwarding_service(self)
        from ..services import build_services

        try:
            return build_services(self.service_settings(), log=self.log)
        except SchedError as err:
            if (off := off_error_of(self, err, opened=False)) is None:
                raise TraitError(setting_error_text(self, err)) from None
            go_off(self, off)  # JupyterLab runs on with the scheduler off (newuser41 n4)
            return None

    def service_settings(self) -> dict[str, Any]:
        """The traits the engine needs, as plain values (units in the names)."""
        return {
            "db_url": self.store_url,
            "sqlite_synchronous": self.sqlite_synchronous,
            "db_server_uids": [int(uid) for uid in self.db_server_uids],
            "db_pool_size": service_pool_size(self.request_threads, max(1, self.request_threads // 2),
                                              self.dryrun_concurrency),  # a connection per thread (red37 R4)
            "retention_finished_jobs_days": self.retention_finished_jobs_days,
            "retention_finished_jobs_per_user": int(self.retention_finished_jobs_per_user),
            "retention_events_days": self.retention_events_days, "retention_rollups_days": self.retention_rollups_days,
            "service_listen_s": float(self.service_listen_s), "service_relisten_s": float(self.service_relisten_s),
            "log_dir": self.job_log_dir, "max_log_mib": int(self.max_log_mib), "job_pids_max": int(self.job_pids_max),
            "min_log_free_mib": int(self.min_log_free_mib), "max_user_log_mib": int(self.max_user_log_mib),
            "root_dir": getattr(self.serverapp, "root_dir", None) if self.serverapp else None,
            "inventory_source": self.inventory_source,
            "inventory_file": self.inventory_file or None,
            "simulated_gpus": self.simulated_gpus, "simulated_gpu_model": self.simulated_gpu_model,
            "job_user_pids_max": int(self.job_user_pids_max),
            "simulated_gpu_memory_mib": self.simulated_gpu_memory_mib,
            "inventory_refresh_s": self.inventory_refresh_s,
            "node_name": self.node_name or None, "job_memory_mib": int(self.job_memory_mib),
            "cycle_interval_s": self.cycle_interval, "leader_lease_ttl_s": self.leader_lease_ttl_s,
            "cycle_coalesce_s": self.cycle_coalesce, "cycle_steps_aside": self.cycle_steps_aside,
            "quotas": list(self.quotas), "unlisted_team_borrowing_limit": self.unlisted_team_borrowing_limit,
            "profiles": dict(self.profiles), "admin_users": sorted(self.admin_users),
            "default_team": self.default_team, "max_ports_per_user": self.max_ports_per_user,
            "reclaim_cooldown_s": float(self.reclaim_cooldown_s), "gpu_node_host_share": bool(self.gpu_node_host_share),
            "user_teams": dict(self.user_teams), "priority_grants": dict(self.priority_grants),
            "max_unfinished_per_user": int(self.max_unfinished_per_user), "max_submits_per_user_minute":
                int(self.max_submits_per_user_minute), "max_pending_jobs_per_user": int(self.max_pending_jobs_per_user),
            "max_carried_bytes_held": int(self.max_carried_bytes_held),
            "max_running_cpu_jobs_per_user": int(self.max_running_cpu_jobs_per_user), "gpu_sharing": self.gpu_sharing,
            "budget_admission": self.budget_admission,
            "lease_budget_hours": float(self.lease_budget_hours), "elect_overdue": float(self.elect_overdue),
            "gpu_prices": dict(getattr(self, "gpu_prices", {}) or {}),
            "default_time_limit_s": self.default_time_limit_s or None,
            "time_limits": [dict(rule) for rule in self.time_limits],
            "preemption_grace_s": self.preemption_grace_s, "time_zone": self.time_zone,
            "placement_policy": self.placement_policy, "min_gpu_fraction": self.min_gpu_fraction,
            **self.idle_settings(), **self.heartbeat_settings(),  # a killed hub kernel's lease ends (N1)
            "telemetry_source": self.telemetry_source,
            "telemetry_url": self.telemetry_url or None,
            "telemetry_uids": [int(uid) for uid in self.telemetry_uids],
            "telemetry_interval_s": self.telemetry_interval_s,
            "telemetry_push_interval_s": self.telemetry_push_interval_s,
            "executor": self.executor, "kubernetes": dict(self.kubernetes), "kubeconfig": self.kubeconfig,
            "stop_grace_s": self.stop_grace_s,
            "definition_min_interval_s": self.definition_min_interval_s,
            "definition_misfire_grace_s": self.definition_misfire_grace_s,
            "definition_limit_per_user": self.definition_limit_per_user,  # and the firing rate (red team 15, R2)
            "definition_max_firings_per_user_hour": self.definition_max_firings_per_user_hour,
            "executed_notebook_retention_days": self.executed_notebook_retention_days,
            "executed_notebooks_dir": self.executed_notebooks_dir,
        }

    async def off_loop(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """Run ``fn(*args, **kwargs)`` — store work — on the request threads (``request_threads``): the event loop stays
        free while it waits for the database. Handlers, kernel hooks and the periodic activity/hub work go through here.
        Once the extension stopped (no threads) it runs ``fn`` on the loop: the server, stopping, still shuts its kernels
        down and their leases must be released (new-user 4 finding 19: a traceback, and the GPUs held)."""
        if getattr(self, "_threads_stopped", False):
            return fn(*args, **kwargs)
        return await run_pooled(self.request_pool, functools.partial(fn, *args, **kwargs), stopping=self._stopping)

    async def bulk_off_loop(self, fn: Callable[..., R], *args: Any, user: str | None = None, **kwargs: Any) -> R:
        """:meth:`off_loop` on the bulk request threads: page reads of many rows (``GET jobs``, ``queue``, ``audit``,
        usage reports) queue there, never in front of quick answers; a ``user``'s in their line (:mod:`.per_user_lines`,
        red27 R5). Raises BusyError (429) past :data:`BULK_WAITING_PER_USER` of theirs."""
        call = functools.partial(fn, *args, **kwargs)
        if user is None:
            return await run_pooled(self.bulk_pool, call, stopping=self._stopping)
        return await self._bulk_lines.run(user, call, stopping=self._stopping, threads_stopped=self._threads_gone)

    per_user_in_flight = False
    """Whether :meth:`quick_off_loop` bounds each user's requests on the quick threads: a service many
    users share (hub mode). An embedded server answers one person, who has nobody to leave threads to."""

    async def quick_off_loop(self, user: str | None, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """:meth:`off_loop` for one request of ``user`` (positional only: ``fn``'s own ``user=`` passes through), on
        a shared service (:attr:`per_user_in_flight`) in that user's line (:mod:`.per_user_lines`, red37 R3): one
        person's burst is served in full, only slower for them, and another user's request finds a free thread.
        Raises BusyError (429, ``Retry-After: 1``) past :data:`QUICK_WAITING_PER_USER` of theirs: a loop."""
        call = functools.partial(fn, *args, **kwargs)
        if user is None or not self.per_user_in_flight:
            return await self.off_loop(call)
        return await self._quick_lines.run(user, call, stopping=self._stopping, threads_stopped=self._threads_gone)

    def _threads_gone(self) -> bool:
        return getattr(self, "_threads_stopped", False)

    def _stopping(self) -> bool:
        return self.stopping

    def audit_refusal(self, caller: Any, err: SchedError, *, request: str) -> None:
        """Record ``err`` refusing ``caller``'s ``request`` on the audit log, off the loop (:meth:`~jupyter_sched.
        admission.Admission.record_refusal`); ``caller`` is a :class:`Caller` or a ``handler.current_user`` not resolved
        yet (resolved there). A hub user's server, which forwards to the central service, keeps no audit log."""
        admission = getattr(self.services, "admission", None)
        if admission is None:
            return

        def record() -> None:
            try:
                who = caller if isinstance(caller, Caller) else self.resolve_caller(caller)
            except SchedError:  # refused at the identity step itself: its own rule audits that (red30 R7)
                return
            admission.record_refusal(who, err, request=request)

        fire_and_forget(self.off_loop(record), what="an audit record of a refusal", keep=self._audits)

    async def refusals_written(self) -> None:
        """Wait until the refusal records asked for so far (:meth:`audit_refusal`) are written: ``GET audit`` reads after them."""
        await asyncio.gather(*list(self._audits), return_exceptions=True)

    async def run_dryrun(self, fn: Any, *args: Any) -> Any:
        """Run a dry run ``fn(caller, ...)`` on the dry-run threads (``dryrun_concurrency``), at most four times as
        many waiting, at most ``dryrun_concurrency`` of one user's in flight (red-team 4 finding 6: one user's loop held
        every place). Raises BusyError (429): too many dry runs in flight, or too many of the caller's."""
        user = str(getattr(args[0], "user", "") if args else "")
        if self._dryruns_of[user] >= self.dryrun_concurrency:
            raise BusyError(f"{self._dryruns_of[user]} of your dry runs are in flight; this server computes "
                            f"{self.dryrun_concurrency} at a time", hint="retry once one has answered")
        if self._dryruns >= 5 * self.dryrun_concurrency:
            raise BusyError(f"{self._dryruns} dry runs are in flight; this server computes "
                            f"{self.dryrun_concurrency} at a time", hint="retry in a second")
        self._dryruns += 1
        self._dryruns_of[user] += 1
        try:
            return await run_pooled(self.dryrun_pool, functools.partial(fn, *args), stopping=self._stopping)
        finally:
            self._dryruns -= 1
            self._dryruns_of[user] -= 1
            if self._dryruns_of[user] <= 0:
                del self._dryruns_of[user]

    async def dryrun_job(self, caller: Caller, request: Any, *, kernels_checked: bool) -> Any:
        """``POST dryrun`` on :meth:`run_dryrun`; a lease's after POST leases' own checks (red team 16, R9)."""
        if request.kind != "lease":
            return await self.run_dryrun(self.services.jobs.dryrun, caller, request)
        if (check := getattr(self, "admit_lease", None)) is not None:
            await check(caller, request)
        return await self.run_dryrun(functools.partial(self.services.jobs.dryrun, kernels_checked=kernels_checked),
                                     caller, request)

    # ---- identity ------------------------------------------------------------------------
    def resolve_identity(self, user: Any) -> Identity:
        """Map ``handler.current_user`` to the scheduler identity (see :mod:`.identity`)."""
        return self._resolver(user)

    def caller_key(self, user: Any) -> tuple[str, bool, tuple[str, ...] | None]:
        """``(name, admin, hub groups or None)``: all of ``user`` :meth:`resolve_caller` reads (no store)."""
        identity = self.resolve_identity(user)
        return identity.name, identity.is_admin, None

    def resolve_caller(self, user: Any) -> Caller:
        """The admission step's :class:`~jupyter_sched.admission.Caller` of ``handler.current_user``:
        :meth:`caller_key`'s name, admin flag and groups; teams from ``user_teams`` and the quota set."""
        name, admin, groups = self.caller_key(user)
        return cast(Caller, self.services.caller(name, admin=admin, groups=groups))

    # ---- capabilities --------------------------------------------------------------------
    _capabilities: tuple[dict[str, Any], GetConfigResponse] | None = None

    def capabilities(self) -> GetConfigResponse:
        """Body of ``GET config``: what this backend supports, for the panel and the CLI — the same
        answer object while its fields are equal (its JSON and ETag are then reused: issue 17,
        every ``jupyter-sched status`` asks), a new one as soon as a setting changes."""
        fields = self.capability_fields()
        kept = self._capabilities
        if kept is not None and kept[0] == fields:
            return kept[1]
        answer = GetConfigResponse.model_validate(fields)
        self._capabilities = (fields, answer)
        return answer

    def capability_fields(self) -> dict[str, Any]:
        """The fields of :meth:`capabilities` (the central service changes a few)."""
        return {
            "version": version_string(), "api": "v1", "mode": "embedded",
            "identity": self.identity_mode,
            "owner": server_owner(),
            "executors": [self.executor],
            "inventory_source": self.inventory_source,
            "events": {"transport": "sse", "path": API_PREFIX + "events",
                       "types": ["job", "lease", "inventory", "telemetry", "idle_warning", "preempted", "progress"]},
            "features": {"leases": True, "dryrun": True, "quotas_write": True, "profiles": True,
                         "audit": True, "usage": True, "metrics": True,
                         "telemetry": getattr(self.services, "monitor", None) is not None,
                         "keepalive": True, "kubernetes": self.executor == "kubernetes", "hub": False,
                         "definitions": True, "submit_keys": True},  # POST jobs?idempotency_key= (s31-n8)
            "priorities": ["high", "normal", "low"],
            "idle": idle_config(self.services, self),  # the policy in force, not the traits (hubadmin22 H4)
            "telemetry": {"source": self.telemetry_source, "interval_s": self.telemetry_interval_s},
            "cycle_interval_s": self.cycle_interval, "lease_heartbeat_interval_s": self.lease_heartbeat_interval_s,
            "placement_policy": self.placement_policy,
            "gpu_node_host_share": bool(self.gpu_node_host_share),  # what the CPU/memory words rest on (session 40)
            "stop_grace_s": self.stop_grace_s,  # the CLI says "stopping, grace 60 s" when it cancels running work
            "reinstalled": reinstalled_notice_of(getattr(self.services, "executor", None)),  # newuser38 n12
        }

    # ---- kernels -------------------------------------------------------------------------
    def _kernel_env(self, kernel_id: str) -> dict[str, str]:
        assert self.serverapp is not None
        token = getattr(getattr(self.serverapp, "identity_provider", None), "token", "") or ""
        env = kernel_env(url=self.serverapp.connection_url, token=token, kernel_id=kernel_id)
        return {**env, **hidden_gpus_env(isolate=self._isolate_kernel_gpus())}

    def _isolate_kernel_gpus(self) -> bool:
        """``kernel_gpu_isolation``: "auto" is on unless an embedded server runs jobs on Kubernetes."""
        if self.kernel_gpu_isolation != "auto":
            return self.kernel_gpu_isolation == "on"
        return bool(self.hub_service_url) or self.executor != "kubernetes"

    async def _before_kernel_restart(self, kernel_id: str) -> dict[str, str]:
        """The restarted kernel's GPUs (case 029): keep or release its lease per policy."""
        plan = await KernelLeases(self.services).plan(kernel_id, release_on_restart=self.release_gpu_on_kernel_restart,
                                                     isolate=self._isolate_kernel_gpus())
        return dict(plan.env)

    async def _release_kernel(self, kernel_id: str, action: str) -> None:
        release = self.services.release_kernel
        if asyncio.iscoroutinefunction(release):  # a hub client's forwarding service: HTTP, already async
            await release(kernel_id, reason=f"kernel {action}")
        else:  # the store: off the loop
            await self.off_loop(release, kernel_id, reason=f"kernel {action}")

    # ---- activity ------------------------------------------------------------------------
    def current_activity(self) -> list[dict[str, Any]]:
        """Running jobs and leases (truthy while work is in flight; jupyter_server's idle shutdown reads it)."""
        try:
            jobs = self.services.list_jobs(user=None, state="admitted,running")
        except Exception as exc:  # an unreachable database: the store's outage line says it (hubadmin25 B6)
            log_store_failure(log, "jupyter_sched: could not read running work for activity", exc)
            return []
        return [{"id": j["id"], "kind": j["kind"], "state": j["state"]} for j in jobs]

    def _activity_tick(self) -> None:
        """Report running work as server activity, read off the loop (one read at a time)."""
        if not self._noting_activity:
            self._noting_activity = True
            task = fire_and_forget(self.note_activity(), what="a server activity note")
            task.add_done_callback(lambda _t: setattr(self, "_noting_activity", False))

    async def note_activity(self) -> bool:
        """Mark the server active (settings ``jupyter_sched_last_activity``) when work is in flight; whether it was."""
        busy = bool(await self.off_loop(self.current_activity))
        if busy and self.serverapp is not None:
            self.serverapp.web_app.settings["jupyter_sched_last_activity"] = datetime.now(timezone.utc)
        return busy
