"""Build :class:`~.root.Services` from the extension's plain settings (``SchedApp.service_settings``).

:func:`build_services` picks the store, inventory source, executor (local or Kubernetes),
telemetry monitor, idle policy, scheduling profile and admission policy from the settings and
hands them to the composition root. A setting that cannot work raises a
:class:`~jupyter_sched.errors.ValidationError` naming it (the extension turns that into one
``c.SchedApp.<field>`` line at start).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..admission import AdmissionPolicy
from ..engine.retention import Pruner, retention_from_settings
from ..engine.telemetry import HealthAwareInventory, TelemetryMonitor
from ..errors import ExecutorError, SchedError, ValidationError
from ..executors.base import Executor
from ..executors.disk_space import low_disk_line
from ..executors.jobdirs import JobDirs
from ..model import Inventory, profiles_from_config
from ..model.inventory_changes import InventoryChange
from ..store import Store
from ..textsafe import printable_line
from .audit import log_sink
from .definitions import definition_settings
from .host_size import overstated_nodes
from .idle import retention_s, seed_monitor
from .inventory_watch import INVENTORY_CHANGED, InventoryWatch
from .jobfiles import job_files_sweep
from .models import QuotaLine, parse
from .quota_config import apply_config_quotas
from .root import Services

__all__ = ["CachedInventory", "build_services", "idle_policies_from_settings", "settings_problems"]

log = logging.getLogger(__name__)


class CachedInventory:
    """Wraps an inventory source: re-reads it at most every ``refresh_s`` seconds; on a failed
    read keeps the last good inventory (a flaky NVML never stalls scheduling).

    A failed read is retried once per ``refresh_s`` too, not by every reader (hub admin 22, H12: a
    typo in the inventory file logged a traceback ~3 times a second). Each distinct failure is
    logged once as one WARNING (:meth:`warning`: the setting, the field, the fix, and that the
    inventory read at HH:MM UTC is kept), again at most every ``repeat_s`` seconds while it lasts;
    a ValidationError (the admin's input) never with a traceback, any other exception (a bug) with
    one, once per distinct error. :meth:`warnings` gives the same sentence to ``GET inventory``.
    """

    def __init__(self, source: Any, refresh_s: float = 30.0, monotonic: Callable[[], float] = time.monotonic,
                 *, repeat_s: float = 300.0, wall: Callable[[], datetime] | None = None) -> None:
        self.source = source
        self.refresh_s = refresh_s
        self.repeat_s = repeat_s
        self._monotonic = monotonic
        self._wall = wall or (lambda: datetime.now(timezone.utc))
        self._value: Inventory | None = None
        self._at = 0.0
        self._read_at: datetime | None = None  # wall time of the last good read
        self._failure: str | None = None  # the sentence of the failure in force
        self._said: dict[str, float] = {}  # failure sentence -> monotonic time it was last logged
        self._lock = threading.Lock()
        self.on_read: Callable[[Inventory], None] | None = None
        """Called with each inventory read afresh, outside the lock (:class:`.inventory_watch.InventoryWatch`)."""

    def current(self) -> Inventory:
        fresh: Inventory | None = None
        with self._lock:
            now = self._monotonic()
            if self._value is None or now - self._at >= self.refresh_s:
                try:
                    self._value = fresh = self.source.current()
                except Exception as exc:  # any source failure: keep scheduling on the last good inventory
                    if self._value is None:
                        raise
                    self._at = now  # retried at the next refresh, not by every reader
                    self._failed(exc, now)
                else:
                    self._at, self._read_at = now, self._wall()
                    if self._failure is not None:
                        log.warning("jupyter_sched: %s reads again; the inventory is current",
                                    _setting_of(self.source))
                    self._failure = None
            value = self._value
        if fresh is not None and self.on_read is not None:
            self.on_read(fresh)  # hubadmin22 H3: work left on GPUs that went away, said
        return value

    def warnings(self) -> list[str]:
        """The failure in force as one sentence (``[]`` while the last read succeeded): for
        ``GET inventory`` (admins) and ``jupyter-sched status``."""
        failure = self._failure
        return [] if failure is None else [failure]

    def _failed(self, exc: Exception, now: float) -> None:
        read = self._read_at.strftime("%H:%M UTC") if self._read_at else "at start"
        setting = _setting_of(self.source)
        if isinstance(exc, ValidationError):
            fix = f" Fix: {exc.hint}." if exc.hint else ""
            field = f" (field {exc.field})" if exc.field and exc.field not in exc.message else ""
            sentence = (f"{setting}: {exc.message}{field}; keeping the last good inventory (read at {read}) "
                        f"until it is fixed.{fix}")
        else:
            sentence = (f"{setting}: reading the inventory failed ({type(exc).__name__}: {exc}); keeping the "
                        f"last good inventory (read at {read}); this is a bug or a fault of the source, "
                        "see the traceback logged with the first such failure")
        self._failure = sentence
        key = sentence.split("; keeping", 1)[0]  # the read time moves nothing: one error, one line
        last = self._said.get(key)
        if last is not None and now - last < self.repeat_s:
            return
        first = last is None
        self._said[key] = now
        if len(self._said) > 64:  # bounded: the oldest said sentences are forgotten
            for old in sorted(self._said, key=self._said.__getitem__)[:-64]:
                del self._said[old]
        trace = first and not isinstance(exc, ValidationError)
        log.warning("jupyter_sched: %s", sentence, exc_info=exc if trace else None)

    def peek(self) -> Inventory | None:
        """The inventory :meth:`current` would answer now without reading the source, or None
        when it would read it (a refresh is due) or another thread is reading it: never waits,
        so the event loop may ask (a kept ``GET inventory``, ``SystemService.kept_inventory``)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            fresh = self._value is not None and self._monotonic() - self._at < self.refresh_s
            return self._value if fresh else None
        finally:
            self._lock.release()

    def invalidate(self) -> None:
        """Force a re-read at the next :meth:`current`."""
        with self._lock:
            self._value = None


def _setting_of(source: Any) -> str:
    """The setting an inventory source comes from, for a log line (``c.SchedApp.inventory_file``)."""
    setting = getattr(source, "setting", None)
    return setting if isinstance(setting, str) and setting else "the inventory source"


def build_services(settings: Mapping[str, Any], *, log: logging.Logger | None = None,
                   nvml: Any = None) -> Services:
    """Build the services from the extension's plain settings (see ``SchedApp.service_settings``).

    ``nvml`` is the NVML library module for the inventory and the NVML collector (default: the
    real ``pynvml``; tests on GPU-less machines pass a fake library).

    Keys used: ``db_url``, ``log_dir``, ``max_log_mib``, ``max_user_log_mib``, ``min_log_free_mib``, ``job_pids_max``, ``job_memory_mib``
    (:mod:`..executors.limits`), ``inventory_source``, ``inventory_file``,
    ``simulated_gpus``, ``simulated_gpu_model``, ``simulated_gpu_memory_mib``,
    ``inventory_refresh_s``, ``cycle_interval_s``, ``leader_lease_ttl_s``, ``cycle_coalesce_s``, ``cycle_steps_aside``, ``sqlite_synchronous``
    (``NORMAL`` default / ``FULL``; see :class:`~jupyter_sched.store.Store`), ``quotas`` (list of quota objects; when
    non-empty they replace the stored quota lines at start, with an audit record),
    ``profiles``, ``admin_users`` (embedded team holds), ``default_team``, ``default_time_limit_s``, ``preemption_grace_s``,
    ``time_zone``, ``placement_policy``, ``gpu_node_host_share`` (default True), ``executor`` (``local`` / ``kubernetes``; the latter also reads ``kubernetes``, a
    ``KubernetesConfig`` dict, and ``kubeconfig``, a path or "" for in-cluster / ``~/.kube/config``),
    ``stop_grace_s``, ``node_name`` (this server's node name; default
    the host name); idle reclamation: ``idle_threshold_percent``,
    ``idle_window_s`` (0 = off), ``idle_warning_s``, ``idle_grace_s`` and optionally ``idle_busy_kernel_window_s``,
    ``idle_keepalive_max_s``, ``idle_lease_action``, ``idle_busy_kernel_action``, ``idle_job_action``
    (see :func:`idle_policies_from_settings`); telemetry: ``telemetry_source`` (``auto`` /
    ``simulated`` / ``nvml`` / ``dcgm`` / ``prometheus`` / ``off``), ``telemetry_url``,
    ``telemetry_interval_s``, ``telemetry_push_interval_s``; admission: ``default_team``,
    ``user_teams``, ``priority_grants``, ``max_unfinished_per_user`` (see
    :class:`~jupyter_sched.admission.AdmissionPolicy`), ``max_running_cpu_jobs_per_user`` (the
    scheduling profile's cap on one user's running 0-GPU jobs); services' ports: ``service_listen_s``
    (600: to listen first) and ``service_relisten_s`` (300: to listen again after stopping);
    ``gpu_prices`` for the usage report; job definitions: see :func:`.definitions.definition_settings`.

    Raises:
        ValidationError / StoreError: a setting is unusable (names the field), including an
            ``inventory_file`` that does not read as an inventory.
    """
    from ..executors.limits import LocalLimits, minor_resolver, oom_floor_warning
    from ..executors.local import LISTEN_S, RELISTEN_S, LocalExecutor
    from ..inventory.factory import default_inventory_source
    from ..inventory.simulated import SimulatedInventory

    logger = log or logging.getLogger("jupyter_sched")
    if settings.get("gpu_prices"):  # a malformed price or date stops the start naming gpu_prices[MODEL] (B21)
        from ..accounting.prices import price_table

        price_table(settings["gpu_prices"])
    # the id of the store it runs on, kept beside its logs' records: another database at its address is refused
    # (red31 R3 addendum; a SQLite file is the service's own)
    identity = (Path(str(settings["log_dir"])) / ".state" / "store_id"
                if settings.get("log_dir") and not str(settings["db_url"]).startswith("sqlite") else None)
    store = Store(str(settings["db_url"]), sqlite_synchronous=str(settings.get("sqlite_synchronous") or "NORMAL"),
                  db_server_uids=[int(uid) for uid in settings.get("db_server_uids") or ()], identity_file=identity,
                  pool_size=int(settings["db_pool_size"]) if settings.get("db_pool_size") else None)
    store.unlisted_borrowing_limit = unlisted_limit(settings)
    store.event_sink = log_sink(logger)  # every audit record a line of the service log too (hubadmin26 B13)
    source_kind = settings.get("inventory_source", "auto")
    sim = {"model": settings.get("simulated_gpu_model", "Simulated GPU 80GB"),
           "memory_mib": int(settings.get("simulated_gpu_memory_mib", 81920))}
    node = str(settings.get("node_name") or "") or None
    executor_kind = settings.get("executor", "local")
    _executor_kind(settings)
    if executor_kind == "kubernetes":
        return _from_kubernetes_config(settings, store, logger)
    # Jobs that name no working_dir run where the server serves files from, as a user expects.
    limits = LocalLimits(pids_max=int(settings.get("job_pids_max", 4096)),
                         user_pids_max=int(settings.get("job_user_pids_max", 8192)),
                         memory_mib=int(settings.get("job_memory_mib", 0)))
    # whether GPUs are fenced, said at every start (red team 15, R1): a warning when only by environment. That root
    # runs other accounts' jobs without CAP_SYS_RESOURCE, so their oom_score_adj is no floor (verify 26, V15), is
    # the hub's WARNING (executors.limits.oom_floor_warning, where it starts running them): a personal lab runs its
    # own user's jobs, and this line is then INFO (newuser28 n11: the first WARNING a new user read)
    # ... said once: where the hub's service warns it apart, this line points at that WARNING (newuser38 n6)
    # ... and the environment-only fence is the hub's WARNING too (newuser38 n33: a personal lab's first start warned
    # that "a job that sets CUDA_VISIBLE_DEVICES itself can open every GPU" — its own user's jobs): INFO there
    others_jobs = bool(settings.get("warns_oom_floor"))  # the hub's service: other accounts' jobs run here
    apart = others_jobs and oom_floor_warning() is not None
    (logger.info if limits.fences_gpus or not others_jobs else logger.warning)(
        "jupyter_sched: %s", limits.summary(floor_warned_apart=apart))
    executor = LocalExecutor(Path(str(settings["log_dir"])), default_cwd=settings.get("root_dir") or None,
                             max_log_bytes=int(settings.get("max_log_mib", 1024)) << 20, limits=limits,
                             max_user_log_bytes=int(settings.get("max_user_log_mib", 0)) << 20,
                             min_log_free_bytes=int(settings.get("min_log_free_mib", 0)) << 20,
                             listen_s=float(settings.get("service_listen_s", LISTEN_S)),
                             relisten_s=float(settings.get("service_relisten_s", RELISTEN_S)))
    if said := low_disk_line(executor.root, executor.log_disk.floor_bytes):  # hubadmin25 B15: said at start
        logger.warning("jupyter_sched: %s", said)
    monitors: list[TelemetryMonitor] = []

    def our_pids() -> frozenset[int]:  # our jobs' and lease kernels' pids are not foreign (case 014)
        return executor.pids() | (monitors[0].our_pids() if monitors else frozenset())

    source: Any
    if source_kind == "simulated":
        source = SimulatedInventory(int(settings.get("simulated_gpus", 4)), node=node, **sim)
    else:  # static without inventory_file: refused by _executor_kind
        source, _ = default_inventory_source(
            inventory_file=settings.get("inventory_file"),
            simulated_gpus=int(settings.get("simulated_gpus", 4)) if source_kind != "nvml" else 0,
            simulated_model=sim["model"], simulated_memory_mib=sim["memory_mib"], our_pids=our_pids,
            nvml=nvml, node=node, logger=logger)
    inventory = CachedInventory(source, float(settings.get("inventory_refresh_s", 30.0)))
    executor.gpu_minor = minor_resolver(inventory.current)  # the devices cgroup's minors (R1)
    if settings.get("inventory_file"):
        # Read an admin's inventory file once now: a broken file stops the server at start with
        # the field and the fix, instead of failing every engine tick (issue 10, bad inputs).
        inventory.current()
    policies = idle_policies_from_settings(settings)
    monitor = _make_monitor(settings, source, logger, retention_s=retention_s(policies), nvml=nvml)
    if monitor is not None:
        monitors.append(monitor)
        history_node = node or str(getattr(source, "node", "") or "")
        monitor.rollup_sink = lambda rows: store.add_rollups(rows, node=history_node)
        seed_monitor(monitor, store)  # the minutes stored before a restart keep their idle periods (H11)
        # Xid and other health evidence in the samples marks GPUs unhealthy everywhere (case 018).
        inventory = CachedInventory(HealthAwareInventory(source, monitor), inventory.refresh_s)
    return _finish_config(settings, store, inventory, executor, monitor, policies, logger)


def settings_problems(settings: Mapping[str, Any]) -> list[SchedError]:
    """Every unusable setting of ``settings`` (``SchedApp.service_settings``) that :func:`build_services`
    would refuse, each checked on its own so that all are found at once (newuser29 N4: the start named one
    per restart): the same parsers the build runs, without opening the store, the executor or the
    inventory. ``[]`` when each reads. Pure: no I/O.
    """
    from ..accounting.prices import price_table

    quota_lines = settings.get("quotas") or []
    checks: list[Callable[[], object]] = [
        lambda: price_table(settings["gpu_prices"]) if settings.get("gpu_prices") else None,
        lambda: unlisted_limit(settings), lambda: _executor_kind(settings),
        lambda: idle_policies_from_settings(settings), lambda: AdmissionPolicy.from_settings(settings),
        lambda: profiles_from_config(settings.get("profiles") or {}), lambda: _scheduling_profile(settings),
        lambda: definition_settings(settings), lambda: retention_from_settings(settings),
        *((lambda i=i, line=line: _quota_line(i, line)) for i, line in enumerate(quota_lines)),
    ]
    found: list[SchedError] = []
    for check in checks:
        try:
            check()
        except SchedError as err:
            if all(str(err) != str(seen) for seen in found):
                found.append(err)
    return found


def _executor_kind(settings: Mapping[str, Any]) -> None:
    """``executor`` and ``inventory_source`` agree (the checks :func:`build_services` makes first).

    Raises:
        ValidationError: an unknown executor, the kubernetes inventory without the kubernetes executor, or
            the static inventory without ``inventory_file``.
    """
    executor_kind = settings.get("executor", "local")
    if executor_kind not in ("local", "kubernetes"):
        raise ValidationError(f"unknown executor {executor_kind!r}", field="executor",
                              hint="use local or kubernetes")
    if executor_kind == "local" and settings.get("inventory_source", "auto") == "kubernetes":
        raise ValidationError("inventory_source 'kubernetes' needs executor 'kubernetes'",
                              field="inventory_source",
                              hint="set c.SchedApp.executor = 'kubernetes', or pick another inventory source")
    if executor_kind == "local" and settings.get("inventory_source") == "static" and not settings.get("inventory_file"):
        raise ValidationError("inventory_source 'static' needs inventory_file", field="inventory_file",
                              hint="set c.SchedApp.inventory_file to a YAML inventory")


def _price_unit(settings: Mapping[str, Any], logger: logging.Logger) -> str | None:
    """``gpu_price_unit`` checked (:func:`~jupyter_sched.accounting.report.price_unit_from`); a WARNING
    when prices are set and their currency is not named: costs are then said in "price units"
    (hubadmin22 H10: a bare cost number in the report and its CSV)."""
    from ..accounting.report import price_unit_from

    unit = price_unit_from(settings.get("gpu_price_unit"))
    if settings.get("gpu_prices") and unit is None:
        logger.warning('gpu_prices is set but gpu_price_unit is not: the usage report says each cost in "price '
                       'units". Name the currency: c.HubSchedApp.gpu_price_unit = "USD" (or yours)')
    return unit


def _finish_config(settings: Mapping[str, Any], store: Store, inventory: Any, executor: Executor,
                   monitor: TelemetryMonitor | None, policies: Any, logger: logging.Logger) -> Services:
    """The part of :func:`build_services` every executor shares: the services and the configured
    quota lines (written at start when they changed since last applied, audited as actor ``config``:
    :mod:`.quota_config`),
    and on ``logger`` a warning per team the lines leave without one (with the work that strands)."""
    scheduling_profile = _scheduling_profile(settings)
    service = Services(store=store, inventory=inventory, executor=executor,
                       policy=AdmissionPolicy.from_settings(settings),
                       profiles=profiles_from_config(settings.get("profiles") or {}),
                       scheduling_profile=scheduling_profile,
                       default_time_limit_s=settings.get("default_time_limit_s"),
                       cycle_interval_s=float(settings.get("cycle_interval_s", 5.0)),
                       cycle_coalesce_s=float(settings.get("cycle_coalesce_s", 0.1)),
                       lease_ttl_s=float(settings.get("leader_lease_ttl_s", 15.0)),
                       cycle_steps_aside=bool(settings.get("cycle_steps_aside", True)),
                       stop_grace_s=float(settings.get("stop_grace_s", 10.0)), monitor=monitor,
                       idle_policies=policies if monitor is not None else None,
                       telemetry_push_s=float(settings.get("telemetry_push_interval_s", 1.0)),
                       prices=settings.get("gpu_prices") or None, price_unit=_price_unit(settings, logger),
                       definitions=definition_settings(settings),
                       admin_users=tuple(settings.get("admin_users") or ()), logger=logger)
    service.heartbeats.interval_s = float(settings.get("lease_heartbeat_interval_s", 30.0))  # newuser41 N1, hub
    service.heartbeats.misses = int(settings.get("lease_heartbeat_misses", 3))
    if monitor is None:  # no idle detection, but the configured policy is the one load() compares (hubadmin23 A14)
        service.idle.configure(policies)
    # the leading engine prunes finished jobs, audit events and rollups past their retention
    dirs = getattr(executor, "dirs", None)  # and the local executor's job files with them (hubadmin24 B16)
    service.engine.leader_hooks.append(Pruner(store, service.clock, retention_from_settings(settings),
                                              files=job_files_sweep(store, dirs) if isinstance(dirs, JobDirs) else None))
    # the config's lines replace the set in force only when they changed since last applied: an
    # admin's PUT quotas outlives restarts (new user 20, N26; the rule: .quota_config)
    apply_config_quotas(service.quotas, [_quota_line(i, q) for i, q in enumerate(settings.get("quotas") or [])],
                        logger)
    # teams left without a line, and the work that strands, said at every start (new user 20, N1: the
    # README's one-line example left the owner's team, default, with 0 GPUs and no word in the log)
    for warning in service.quotas.unlisted_warnings(store.quota_set()):
        logger.warning("jupyter_sched: %s", warning)
    if isinstance(inventory, CachedInventory):  # at start and at each refresh that changes it (hubadmin22 H3)
        inventory.on_read = watch = inventory_watch(service, logger)
        if (read := inventory.peek()) is not None:  # an inventory file is read at build: said now
            watch(read)
            if (over := overstated_nodes(read)) is not None:  # local jobs run on this host (newuser39 n10)
                logger.warning("jupyter_sched: %s", over)
    return service


def inventory_watch(service: Services, logger: logging.Logger) -> InventoryWatch:
    """The :class:`InventoryWatch` of ``service``'s store and quotas, logging on ``logger``: called
    with each inventory read afresh (a :class:`CachedInventory`'s ``on_read``, a Kubernetes
    inventory's ``on_change``)."""
    store = service.store

    def record(change: InventoryChange) -> None:
        store.add_event(actor="scheduler", action=INVENTORY_CHANGED, message=f"inventory: {change.text}",
                        details=change.details())

    return InventoryWatch(lambda: [record.job for record in store.live_jobs()],
                          lambda inv: service.quotas.capacity_warnings(store.quota_set(), inventory=inv), logger,
                          record, unpriced=service.unpriced)


def _from_kubernetes_config(settings: Mapping[str, Any], store: Store,
                            logger: logging.Logger) -> Services:
    """:func:`build_services` for ``executor == "kubernetes"``: the official client's ``ApiClient``
    (``kubeconfig``), a started :class:`~jupyter_sched.inventory.kubernetes.KubernetesInventory`
    as the inventory source and a :class:`~jupyter_sched.executors.kubernetes.KubernetesExecutor`
    configured by ``kubernetes`` (a ``KubernetesConfig`` dict). ``Services.stop`` stops the watches.

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
        monitor = _make_monitor(settings, watcher, logger, retention_s=retention_s(policies))
        inventory: Any = watcher if monitor is None else HealthAwareInventory(watcher, monitor)  # case 018
        service = _finish_config(settings, store, inventory, executor, monitor, policies, logger)
        # the watch's inventory is not a CachedInventory: its changes reach the H3 watch (nodes gone
        # under running work said in the log, as a static or NVML inventory's are; session 23)
        watcher.on_change = watch = inventory_watch(service, logger)
        watch(watcher.current())
        undo.pop_all()
    logger.info("jupyter_sched: Kubernetes executor on %s, namespace %s", api_client.configuration.host,
                config.namespace)
    service.on_stop += [executor.detach, watcher.stop, api_client.close]
    return service


def unlisted_limit(settings: Mapping[str, Any]) -> float | None:
    """``unlisted_team_borrowing_limit`` (GPUs a team without a quota line may use once any line
    exists; default 0, None = no limit: red team 19, R3).

    Raises:
        ValidationError: not a number >= 0 nor None (field ``unlisted_team_borrowing_limit``).
    """
    value = settings.get("unlisted_team_borrowing_limit", 0.0)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
        raise ValidationError(f"unlisted_team_borrowing_limit {value!r} is not a number of GPUs >= 0",
                              field="unlisted_team_borrowing_limit",
                              hint="set 0 (teams without a quota line get no GPUs), a number of GPUs, or None (no limit)")
    return float(value)


def idle_policies_from_settings(settings: Mapping[str, Any]) -> Any:
    """Map the ``idle_*`` settings of ``SchedApp`` to an :class:`~jupyter_sched.reclaim.IdlePolicies`:
    :func:`jupyter_sched.reclaim.idle_policies_from_settings` (the window and the grace stay two
    numbers, so warnings say ``60 + 15 min``; services notify-only by default; per-kind overrides
    from ``idle_policy``).

    Raises:
        ValidationError: an unusable value (names the setting).
    """
    from ..reclaim import idle_policies_from_settings as from_settings

    return from_settings(settings)


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
    files, how = _kubeconfig_files(kubeconfig)
    in_cluster = not kubeconfig and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    try:
        if kubeconfig:
            k8s_config.load_kube_config(config_file=files[0], client_configuration=configuration)
        elif in_cluster:
            k8s_config.load_incluster_config(client_configuration=configuration)
        else:
            k8s_config.load_kube_config(client_configuration=configuration)
    except (k8s_config.ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
        # name the file and its folder, and what is wrong with it (session 37 left: "No configuration found" for a
        # kubeconfig that was not there, relative to a folder nobody named; "Service token file does not exist.")
        problems = [said for path in files if (said := _file_problem(path))]
        said = "; ".join(problems) if problems else f"{', '.join(files)}: {exc}"
        if in_cluster:
            hint = (f"the server's pod needs its service account's token mounted at {os.path.dirname(files[0])} "
                    "(automountServiceAccountToken: true), or set c.SchedApp.kubeconfig to a kubeconfig file")
        else:
            hint = ("set c.SchedApp.kubeconfig to the absolute path of a kubeconfig the server's account may read, "
                    "with a current context (kubectl --kubeconfig PATH config current-context checks it), or run "
                    "the server in a pod with a service account")
            if not problems and "does not exist" in str(exc):
                hint = (f"a file the kubeconfig names (certificate-authority, client-certificate, client-key) is read "
                        f"from the kubeconfig's folder, {os.path.dirname(files[0])}, when its path is relative: "
                        "give it there, or as an absolute path; or " + hint)
        raise ValidationError(f"cannot load the Kubernetes client configuration from {how}: "
                              f"{printable_line(said, limit=600)}", field="kubeconfig", hint=hint) from None
    return k8s.ApiClient(configuration)


def _kubeconfig_files(kubeconfig: str) -> tuple[list[str], str]:
    """The files the Kubernetes client reads for ``kubeconfig`` (absolute), and in words how they were chosen: the
    setting's (a relative one is read from the server's working folder: said), else the in-cluster service account's
    token and CA where ``KUBERNETES_SERVICE_HOST`` is set, else ``$KUBECONFIG``'s files, else ``~/.kube/config``."""
    if kubeconfig:
        expanded = os.path.expanduser(kubeconfig)
        full = os.path.abspath(expanded)
        if os.path.isabs(expanded):
            return [full], f"c.SchedApp.kubeconfig, {full}"
        return [full], (f"c.SchedApp.kubeconfig {kubeconfig!r}, read from the server's working folder "
                        f"{os.getcwd()} as {full}")
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        from kubernetes.config import incluster_config

        return ([incluster_config.SERVICE_TOKEN_FILENAME, incluster_config.SERVICE_CERT_FILENAME],
                "the in-cluster service account (KUBERNETES_SERVICE_HOST is set and c.SchedApp.kubeconfig is not)")
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        files = [os.path.abspath(os.path.expanduser(p)) for p in listed]
        return files, f"$KUBECONFIG ({os.pathsep.join(files)}; c.SchedApp.kubeconfig is not set)"
    default = os.path.abspath(os.path.expanduser("~/.kube/config"))
    return [default], f"the default kubeconfig, {default} (neither c.SchedApp.kubeconfig nor $KUBECONFIG is set)"


def _file_problem(path: str) -> str | None:
    """What is wrong with ``path`` as a file the server reads (None: nothing seen): missing (with the first folder
    above it that is missing), a folder, not readable by the server's account, or empty."""
    if not os.path.lexists(path):
        folder = os.path.dirname(path)
        while folder and folder != os.path.dirname(folder) and not os.path.isdir(os.path.dirname(folder)):
            folder = os.path.dirname(folder)
        return f"there is no {path}" + ("" if os.path.isdir(folder) else f" (there is no folder {folder})")
    if os.path.isdir(path):
        return f"{path} is a folder, not a file"
    if not os.access(path, os.R_OK):
        return f"the server's account may not read {path} (check its owner and mode: ls -l {path})"
    try:
        if os.path.getsize(path) == 0:
            return f"{path} is empty"
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    return None


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
        from ..telemetry.exporter_peer import exporter_client

        # a loopback exporter's port held by another account is refused (red31 R2): c.SchedApp.telemetry_uids
        client = exporter_client([int(uid) for uid in settings.get("telemetry_uids") or ()])
        collector = DcgmCollector(http_text_fetcher(url, client=client)) if kind == "dcgm" \
            else PrometheusCollector(url, client=client)
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
    if settings.get("gpu_sharing"):  # a server's default is "team" (red-team 5 finding 2)
        kwargs["gpu_sharing"] = str(settings["gpu_sharing"])
    cap = settings.get("max_running_cpu_jobs_per_user")
    if cap is not None:  # validated by the profile (a whole number >= 0; 0 = no cap)
        kwargs["max_running_cpu_jobs_per_user"] = cap
    if settings.get("budget_admission"):  # validated by the profile (hubadmin25 B22)
        kwargs["budget_admission"] = str(settings["budget_admission"])
    if settings.get("lease_budget_hours") is not None:  # validated by the profile (red30 R5)
        kwargs["lease_budget_s"] = float(settings["lease_budget_hours"]) * 3600
    if settings.get("time_limits"):  # the same rules admission enforces (c.SchedApp.time_limits)
        from ..queues.limits import time_limit_rules

        kwargs["time_limits"] = time_limit_rules(settings["time_limits"])
    if settings.get("elect_overdue") is not None:  # validated by the profile (0 = off; issue 16)
        kwargs["elect_overdue"] = settings["elect_overdue"]
    if settings.get("reclaim_cooldown_s") is not None:  # validated by the profile (0 = off; red31 R5)
        kwargs["reclaim_cooldown_s"] = float(settings["reclaim_cooldown_s"])
    if settings.get("max_ports_per_user") is not None:  # validated by the profile (0 = no cap)
        kwargs["max_ports_per_user"] = settings["max_ports_per_user"]
    if settings.get("executor") == "kubernetes":  # a pod's containerPort binds nothing on its node
        kwargs["host_ports"] = False
    policy = str(settings.get("placement_policy") or "binpack")
    host_share = settings.get("gpu_node_host_share", True) is not False  # red38 R4: on unless set False
    if policy != "binpack" or not host_share:
        from ..placement.placer import PlacementConfig

        kwargs["placement"] = PlacementConfig(fragmentation="" if policy == "binpack" else policy,  # validated by the profile
                                              host_share=host_share)
    return SchedulingProfile(**kwargs)


def _quota_line(index: int, line: Any) -> QuotaLine:
    """``c.SchedApp.quotas[index]`` as a quota line.

    Raises:
        ValidationError: naming the line (``quotas[1].guaranteed``) and its team, so that of several
            lines the wrong one is found (new user 7, F10: "guaranteed: guaranteed must be a number").
    """
    try:
        return parse(QuotaLine, line, where="quotas")
    except ValidationError as err:
        team = line.get("team") if isinstance(line, Mapping) else None
        whose = f" (team {team!r})" if isinstance(team, str) else ""
        field = f"quotas[{index}]" + (f".{err.field}" if err.field and err.field != "quotas" else "")
        raise ValidationError(f"quota line {index}{whose}: {err.message}", field=field, hint=err.hint) from None
