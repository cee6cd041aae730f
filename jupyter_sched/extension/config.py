"""Traitlets configuration of the server extension, split by concern (STYLE §6).

Each concern is a small :class:`~traitlets.config.Configurable` mixin; :class:`SchedApp`
inherits them all, so every knob is set as ``c.SchedApp.<name>`` in
``jupyter_server_config.py`` (traitlets also honours the mixin's own section, e.g.
``c.StorageConfig.db_url``). Every trait's help gives its unit, its default and why.

::

    StorageConfig     where jobs, leases, quotas and logs live          (db_url, log_dir)
    InventoryConfig   which GPUs exist                                   (inventory_source, simulated_gpus, ...)
    PolicyConfig      how the cycle decides                              (cycle_interval, quotas, profiles, ...)
    IdleConfig        when an allocation counts as idle                  (.config_idle: idle_threshold_percent, ...)
    TelemetryConfig   where utilization samples come from                (.config_runtime: telemetry_source, ...)
    ExecutorConfig    how work is started and stopped                    (.config_runtime: executor, kubernetes, ...)
    WebConfig         the REST surface itself                            (.config_access: identity_source, ...)
    AccessConfig      who is in which team, who may use which class      (.config_access: user_teams, ...)

Validation happens when a value is assigned (``@validate``): the error names the trait
(``c.SchedApp.simulated_gpus``), the bad value and the fix, so a typo in a config file stops
the server at load time with one clear line instead of failing later inside a cycle.
"""

from __future__ import annotations

import os
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Configurable

from ..extras import install_extra
from ..model.units import iana_zone
from ..placement.fragmentation import FRAGMENTATION_POLICIES

__all__ = [
    "InventoryConfig",
    "PolicyConfig",
    "StorageConfig",
    "config_error",
    "positive",
]


def config_error(name: str, value: Any, problem: str, fix: str) -> TraitError:
    """Build the one-line load-time error: ``c.SchedApp.<name> = <value>: <problem>. Fix: <fix>``."""
    return TraitError(f"c.SchedApp.{name} = {value!r}: {problem}. Fix: {fix}")


def positive(name: str, value: float, *, allow_zero: bool = False, unit: str = "seconds") -> float:
    """``value`` when > 0 (>= 0 with ``allow_zero``), else the load-time error naming ``name``."""
    if value != value or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise config_error(name, value, f"must be {bound} {unit}", f"set a number {bound} ({unit})")
    return value


class StorageConfig(Configurable):
    """Where the single source of truth lives (DESIGN: one store behind the REST API)."""

    db_url = Unicode(
        "",
        config=True,
        help="""SQLAlchemy URL of the store holding jobs, leases, quotas and the audit log.
        Default: "" = SQLite (WAL) at <jupyter data dir>/jupyter_sched/sched.sqlite, so a
        personal server needs no setup and survives restarts. Use a PostgreSQL URL
        (postgresql+psycopg://user@host/db) when several servers share one store; only one
        engine leads a store at a time.""",
    )

    log_dir = Unicode(
        "",
        config=True,
        help="""Directory for per-job stdout/stderr log files. Default: "" =
        <jupyter data dir>/jupyter_sched/logs. Logs stay readable after a job ends and after a
        server restart, which is why they live on disk, not in memory.""",
    )

    sqlite_synchronous = Enum(
        ["NORMAL", "FULL"],
        "NORMAL",
        config=True,
        help="""SQLite only: the synchronous pragma of the store. Default: "NORMAL" (with the WAL
        journal): a commit does not wait for a disk flush, so a submit costs no fsync; every
        committed job survives a crash or kill -9 of the server, but an OS crash or power loss
        can lose the last transactions committed before it (the file stays consistent). "FULL":
        fsync at every commit (milliseconds per write, more on network disks) so committed jobs
        survive power loss too. Ignored for PostgreSQL.""",
    )

    retention_finished_jobs_days = Float(
        400.0,
        config=True,
        help="""Default: 400 (as the telemetry rollups: a quarter's or a year's review a few weeks later
        still finds every job of it). Days a finished job (succeeded, failed, cancelled, lost) is kept in the store after
        it ended; older ones are pruned by the leading engine, in small batches. Their GPU usage
        intervals are kept, so usage reports, budgets and fair share do not change. Its job directory
        under log_dir (log, carried files) and .state records go with it. Size retention for your
        review period (and log_dir for that many days of logs). 0 = keep forever.""",
    )

    retention_events_days = Float(
        365.0,
        config=True,
        help="""Default: 365. Days audit records (GET audit) are kept; older ones are pruned. 0 = keep
        forever. An admin's end correction (end_corrected) is always kept: the usage it changed is never
        pruned, and the metrics counter of what corrections took back is summed from these records.""",
    )

    retention_rollups_days = Float(
        400.0,
        config=True,
        help="""Default: 400. Days the one-minute GPU telemetry rollups are kept; older ones are pruned. Reports
        over older months keep their allocated GPU-hours but their utilization becomes unknown,
        which is why the default is longer than a year. 0 = keep forever.""",
    )

    @validate("db_url")
    def _check_db_url(self, proposal: dict[str, Any]) -> str:
        from ..store.url import safe_url, store_url_problem  # THE store-URL check (new user 14, N22)

        value = str(proposal["value"])
        if value and (problem := store_url_problem(value)) is not None:
            raise config_error("db_url", safe_url(value), problem[0], f"{problem[1]}, or leave it empty for the default")
        return value


class InventoryConfig(Configurable):
    """Which GPUs exist: NVML, a static file, or a labelled simulated inventory (case 015)."""

    inventory_source = Enum(
        ["auto", "nvml", "static", "simulated", "kubernetes"],
        default_value="auto",
        config=True,
        help="""Where the GPU inventory comes from. Default: "auto" = the cluster's Node objects
        when executor is "kubernetes"; otherwise inventory_file when set, else this host's GPUs
        via NVML, else (NVML missing: no driver, no GPU) a simulated inventory of simulated_gpus
        GPUs labelled "simulated" in every response. "nvml" never falls back (0 GPUs when NVML
        is missing); "static" requires inventory_file; "simulated" always simulates, for demos
        and tests; "kubernetes" (needs executor "kubernetes") watches Nodes and Pods through
        the API server, so placement only picks nodes the executor can pin Jobs to.""",
    )

    inventory_file = Unicode(
        "",
        config=True,
        help="""Path of a YAML file describing nodes and GPUs (static inventory). Default: ""
        (none). Used by inventory_source "auto" and "static"; lets an admin declare GPUs NVML
        cannot see or pin the inventory for tests. Format: a `nodes:` list, each node with
        `name`, either `gpus: [{uuid, model, memory}]` or `gpu_count`/`gpu_model`/`gpu_memory`,
        and optionally `labels`, `nvlink_pairs`, `cpus` and `memory` (host) — see
        jupyter_sched/inventory/static.py.""",
    )

    simulated_gpus = Int(
        4,
        config=True,
        help="""Number of GPUs of the simulated inventory, in GPUs. Default: 4 (enough to show
        queueing and multi-GPU placement on a laptop). 0 is allowed and models a CPU-only host:
        then local GPU jobs are rejected at once, not queued forever.""",
    )

    simulated_gpu_model = Unicode(
        "Simulated GPU 80GB",
        config=True,
        help="""Model name of each simulated GPU. Default: "Simulated GPU 80GB" (the name says it
        is not silicon, so nobody mistakes it for a real device).""",
    )

    simulated_gpu_memory_mib = Int(
        81920,
        config=True,
        help="""Memory of each simulated GPU in MiB. Default: 81920 (80 GiB, an A100/H100-class
        size), so memory filters and profiles such as "4 GPUs of >= 40 GiB" behave realistically.""",
    )

    node_name = Unicode(
        "",
        config=True,
        help="""Name this server's GPUs are reported under (NVML and simulated inventories).
        Default: "" = the host name. Simulated GPU uuids derive from it (GPU-sim-<node>-<i>), so
        two servers on one host (tests, demos) keep their simulated GPUs apart by naming nodes.""",
    )

    inventory_refresh_s = Float(
        30.0,
        config=True,
        help="""Seconds between inventory refreshes (NVML rescans, file rereads). Default: 30 s:
        GPUs rarely appear or vanish, and a rescan costs NVML calls.""",
    )

    @validate("simulated_gpus")
    def _check_simulated_gpus(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if not 0 <= value <= 1024:
            raise config_error("simulated_gpus", value, "must be 0..1024 GPUs",
                               "set e.g. 4, or 0 to model a host without GPUs")
        return value

    @validate("simulated_gpu_memory_mib")
    def _check_sim_memory(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value <= 0:
            raise config_error("simulated_gpu_memory_mib", value, "must be > 0 MiB", "set e.g. 81920")
        return value

    @validate("inventory_refresh_s")
    def _check_refresh(self, proposal: dict[str, Any]) -> float:
        return positive("inventory_refresh_s", float(proposal["value"]))

    @validate("inventory_file")
    def _check_inventory_file(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"])
        if value and not os.path.isfile(value):
            raise config_error("inventory_file", value, "no such file",
                               "give the path of an existing YAML inventory file, or leave it empty")
        return value


class PolicyConfig(Configurable):
    """How the scheduling cycle decides: timing, quotas, templates, priorities, preemption."""

    cycle_interval = Float(
        5.0,
        config=True,
        help="""Seconds between timer-driven scheduling cycles. Default: 5 s. Cycles also run at
        once on every submit, finish and cancel, so the timer only catches time-based changes
        (time limits, backoff expiry, idle windows); shorter costs CPU for little gain.""",
    )

    leader_lease_ttl_s = Float(
        15.0,
        config=True,
        help="""Seconds the store's leader lease lasts without renewal: with several servers on one store
        (or a restart after a crash), the one that schedules is replaced this long after it stopped
        renewing. A clean stop hands the lease back at once. Default: 15 s (the leader renews it every
        second); shorter replaces a crashed leader sooner, but a leader paused longer than this (a
        loaded host, a VM migration) loses it and steps down.""",
    )

    lease_heartbeat_interval_s = Float(
        30.0,
        config=True,
        help="""Seconds between the heartbeats (POST leases/{id}/heartbeat) a kernel the server did not start
        sends for its GPU lease where the server cannot check its process (another host, container or pid
        namespace: a hub's kernels). One that stops answering for lease_heartbeat_misses heartbeats
        (SIGKILL, the OOM killer, a lost node) has its request withdrawn, or its GPUs released after as
        long again, "its kernel stopped answering (no heartbeat since HH:MM UTC) — killed?". A heartbeat is
        not activity: the idle rules are unchanged. Default: 30 s (a lost kernel's GPUs wait 3 min).""",
    )

    lease_heartbeat_misses = Int(
        3,
        config=True,
        help="""Heartbeats a lease's kernel may miss (lease_heartbeat_interval_s each) before its request is
        withdrawn; a granted lease is released after twice that. Default: 3 (a slow network or a busy
        host is not a dead kernel).""",
    )

    @validate("lease_heartbeat_interval_s")
    def _check_heartbeat_interval(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0 < value <= 3600:
            raise config_error("lease_heartbeat_interval_s", value, "must be above 0 and at most 3600 seconds",
                               "set e.g. 30 (the default)")
        return value

    @validate("lease_heartbeat_misses")
    def _check_heartbeat_misses(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if not 1 <= value <= 100:
            raise config_error("lease_heartbeat_misses", value, "must be 1..100 heartbeats", "set e.g. 3 (the default)")
        return value

    def heartbeat_settings(self) -> dict[str, Any]:
        """The lease heartbeat traits as the services' settings take them."""
        return {"lease_heartbeat_interval_s": float(self.lease_heartbeat_interval_s),
                "lease_heartbeat_misses": int(self.lease_heartbeat_misses)}

    cycle_coalesce = Float(
        0.1,
        config=True,
        help="""Seconds the engine pauses after a scheduling cycle before the next one, at least
        (it also pauses twice as long as the cycle took, at most 1 s). Default: 0.1 s. Submits,
        cancels and finishes arriving meanwhile share one cycle, so a burst of 1,000 submits
        runs a handful of cycles instead of 1,000 and the API stays responsive; 0 = a cycle per
        event.""",
    )

    quotas = List(
        Dict(),
        default_value=[],
        config=True,
        help="""Quota lines, each {"team": str, "user": str|null, "gpu_model": str ("*" = any),
        "guaranteed": GPUs, "borrowing_limit": GPUs above guaranteed or null = unlimited}.
        Default: [] (no quotas: everyone may use every GPU). Guarantees that sum to more GPUs
        than exist are rejected at start. Admins may change quotas at run time via PUT
        api/sched/quotas; those lines outlive restarts: these apply at a start only when they
        changed since last applied (the start-up log then warns, naming the lines replaced;
        GET api/sched/quotas says who set the lines in force).""",
    )

    profiles = Dict(
        default_value={},
        config=True,
        help="""Named request templates, {name: {"description": str, "gpus": 4,
        "mem_per_gpu": "40GiB", "nvlink": true, "time_limit": "12h", ...}}. Default: {} (none).
        Users submit with {"profile": name} and override single fields; admins keep sizes
        consistent this way.""",
    )

    default_team = Unicode(
        "default",
        config=True,
        help="""Team charged for work whose request names none. Default: "default". Quotas are
        per team; put people in teams with quota lines naming them.""",
    )

    default_time_limit_s = Float(
        0.0,
        config=True,
        help="""Wall-clock limit in seconds applied to jobs that give none. Default: 0 = no limit.
        A limit lets backfill compute ETAs; without one a running job blocks reservations.""",
    )

    preemption_grace_s = Float(
        60.0,
        config=True,
        help="""Seconds between the checkpoint signal / SIGTERM sent to a preempted or reclaimed
        job and SIGKILL. Default: 60 s (DESIGN: time to write a checkpoint).""",
    )

    placement_policy = Unicode(
        "binpack",
        config=True,
        help="""How jobs are placed on nodes. Default: "binpack" (fullest node first, NVLink-aware:
        keeps whole nodes free for big jobs). "fgd-planned": our fragmentation-aware policy for
        clusters that share GPUs (fractional requests) — FGD (Weng et al., ATC'23) plus CPU
        balance, scarce node classes and a fill plan for shared GPUs, measured in
        benchmarks/placement_openb.py; "fgd-balanced": the same without the fill plan; "fgd":
        plain FGD. All three score against the requests of the live jobs, each cycle, and fall
        back to binpack on nodes with more than 8 GPUs, mixed GPU models or MIG.""",
    )

    gpu_node_host_share = Bool(
        True,
        config=True,
        help="""Split a GPU node's CPUs and host memory among its GPUs. Default: True — on a node with GPUs
        whose cpus/memory the inventory knows (an inventory file's cpus/memory, a Kubernetes node's allocatable
        cpu/memory), one worker reserves at most its GPUs' part (1 of 8 GPUs: an eighth), and a job without GPUs
        none: no CPU or memory reservation can leave a GPU unusable, uncharged by quota and out of reach of
        reclaim (red team 38, R4). A 0-GPU job asking for cpu or memory then runs only on a node without GPUs.
        False: jobs reserve any free CPU/memory of any node — for clusters whose CPU-only work must run on GPU
        nodes (no node without GPUs), at the cost that such work can keep a node's GPUs idle.""",
    )

    gpu_sharing = Enum(
        ["team", "any", "none"],
        default_value="team",
        config=True,
        help="""Who a fractional job (gpus below 1) may share a GPU with. A shared GPU is time-sliced
        with no isolation of compute or memory: many tiny shares take the time and memory of whoever
        shares the GPU with them. Default: "team": only jobs of its own team — another team's
        fraction takes a whole free GPU or waits, and its pending reason names the shared GPU;
        "any": pack every fraction together (densest); "none": a fraction never shares a GPU with
        another job. The fragmentation-aware policies (placement_policy fgd*) apply it too.""",
    )

    min_gpu_fraction = Float(
        0.1,
        config=True,
        help="""Smallest fraction of a GPU a request may ask for (gpus between 0 and 1); a smaller one is
        refused with 400 naming gpus. Default 0.1: at most ten shares on one GPU, each charged at least a
        tenth, so no user can put hundreds of 1/1000 shares beside another's work. 0 = no minimum.""",
    )

    @validate("min_gpu_fraction")
    def _check_min_gpu_fraction(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0 <= value <= 1:
            raise config_error("min_gpu_fraction", value, "must be between 0 and 1", "e.g. 0.1; 0 = no minimum")
        return value

    time_zone = Unicode(
        "UTC",
        config=True,
        help="""IANA time zone in which time windows in quotas and profiles are evaluated.
        Default: "UTC". The wire always carries UTC; this only decides what "09:00-18:00"
        means.""",
    )

    @validate("cycle_coalesce")
    def _check_cycle_coalesce(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0.0 <= value <= 5.0:
            raise config_error("cycle_coalesce", value, "must be 0..5 seconds", "set e.g. 0.1")
        return value

    @validate("leader_lease_ttl_s")
    def _check_leader_lease_ttl(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 2.0 <= value <= 3600:  # the leader renews every min(1 s, ttl / 4)
            raise config_error("leader_lease_ttl_s", value, "must be 2..3600 seconds", "set e.g. 15 (the default)")
        return value

    @validate("cycle_interval")
    def _check_cycle_interval(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0.05 <= value <= 3600:
            raise config_error("cycle_interval", value, "must be 0.05..3600 seconds", "set e.g. 5")
        return value

    @validate("preemption_grace_s")
    def _check_grace(self, proposal: dict[str, Any]) -> float:
        return positive("preemption_grace_s", float(proposal["value"]), allow_zero=True)

    @validate("default_time_limit_s")
    def _check_default_limit(self, proposal: dict[str, Any]) -> float:
        return positive("default_time_limit_s", float(proposal["value"]), allow_zero=True)

    @validate("placement_policy")
    def _check_placement_policy(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"]).strip().lower()  # "FGD-Planned" as the docs spell it
        if value != "binpack" and value not in FRAGMENTATION_POLICIES:
            raise config_error("placement_policy", value, "is not a placement policy",
                               'use "binpack" (default), ' + ", ".join(f'"{p}"' for p in FRAGMENTATION_POLICIES))
        if value == "fgd-planned":
            # scipy is an extra (a slim install serves without it): fail at load, not in the first
            # cycle; the policy loads it anyway for its first fill plan
            try:
                import scipy.optimize  # noqa: F401
            except ImportError:
                raise config_error("placement_policy", value, "needs scipy (its fill plan solves a linear program)",
                                   f"{install_extra('fgd')}, or use \"fgd-balanced\"") from None
        return value

    @validate("time_zone")
    def _check_time_zone(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"])
        if iana_zone(value) is None:  # a folder of the zone database stopped the server with a traceback (R4)
            raise config_error("time_zone", value, "is not an IANA time zone", 'use e.g. "UTC" or "Europe/Berlin"')
        return value

    @validate("default_team", "quotas")
    def _check_teams(self, proposal: dict[str, Any]) -> Any:
        """Team names as ``PUT quotas`` takes them (new user 8, N10 follow-up)."""
        from .config_access import check_team
        value = proposal["value"]
        if isinstance(value, str):  # default_team
            if not value.strip():
                raise config_error("default_team", value, "must not be empty", 'set e.g. "default"')
            check_team("default_team", value)
        for index, line in enumerate(value if isinstance(value, list) else ()):
            if isinstance(line, dict) and isinstance(line.get("team"), str):
                check_team(f"quotas[{index}].team", line["team"])
        return value
