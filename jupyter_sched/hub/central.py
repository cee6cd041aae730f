"""``HubSchedApp``: the jupyter_sched extension as the central hub service loads it.

The same ``SchedApp`` (same engine, same REST routes, same store migrations), with three
hub-specific parts:

- **identity** — the caller is the hub user of :class:`~.identity.HubIdentityProvider`; scheduler
  admins are hub admins, holders of the admin scope, and ``c.SchedApp.admin_users``;
- **teams = hub groups** — every request's :class:`~jupyter_sched.admission.Caller` takes the
  caller's teams from their hub groups (groups that are known teams first; see
  :func:`jupyter_sched.admission.resolve_caller`), and from nothing else: ``PUT quotas`` refuses
  memberships (``user_teams``, ``teams[i].members``) here (red team 21, R6). Nothing is written to the
  quota set, so identifying a user never depends on quota validation (a drained node locks nobody out);
- **usage report** — ``GET usage/report`` (also served embedded) with cost per ``gpu_prices`` (:mod:`.usage`);
- **budget warnings** — every ``budget_check_interval_s`` seconds, 80 % / 100 % warnings
  (:mod:`.budgets`);
- **activity** — every ``activity_interval_s`` seconds, users with admitted/running jobs or
  leases are reported active to the hub (``POST users/{name}/activity``, :mod:`.activity`);
- **stopped servers** — every ``hub_poll_interval_s`` seconds the service reads every page of
  the hub's active users (:mod:`.hubapi`) and releases live leases of users who have no active
  server (a server that was killed without stopping its extension, or culled; a lease without a
  kernel, asked for straight at this service, is bound to its owner's servers likewise). A user
  the paged walk did not see is *unknown*: their leases are released only after the hub, asked
  about that user alone, confirms they have no server;
- **kernels** — user servers report their live kernels (``PUT api/sched/kernels``); leases of
  kernels that are gone are released (:mod:`.liveness`), also after a restart of either side; the
  kernels' reported states feed the idle rules, so an idle kernel's lease is released by the normal
  ``window_s``/``lease_mode`` rule (red team 15, R6);
- **offboarding** — users the hub no longer lists have their pending jobs held, running work
  reported to admins (and stopped after ``removed_user_grace_s`` when set) and definitions paused
  (:mod:`.offboard`; red team 15, R9); pending jobs on a team their owner has left are held
  likewise (:mod:`.membership`; red team 18, R4);
- **run-as** — with the local executor, every job runs as its owner's OS account
  (:class:`~jupyter_sched.executors.runas.AccountMapping`, ``c.HubSchedApp.run_as_*``) in a clean
  environment; the service refuses to start when it cannot switch users (not root), when the job
  directory is out of other accounts' reach, or when ``job_python`` cannot be run by them;
- **jobs reach the service** — each job gets ``JUPYTER_SCHED_URL`` (:meth:`HubSchedApp.job_url_default`:
  where JupyterHub reaches this service, unless ``c.SchedApp.job_api_url`` says otherwise) and its own
  progress token, so ``jupyter_sched.report_progress`` works from a job's clean environment
  (:mod:`jupyter_sched.extension.job_tokens`).

Loaded by ``jupyter-sched serve`` as the server extension module ``jupyter_sched.hub.central``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlparse

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.ioloop import IOLoop, PeriodicCallback
from traitlets import Bool, Dict, Float, Int, List, TraitError, Unicode, Union, default, validate

from ..accounting.report import price_unit_from
from ..admission import Caller, system_caller
from ..admission.user_names import skeletons
from ..errors import AuthorizationError, BusyError, OverloadedError, SchedError, ValidationError
from ..executors.limits import oom_floor_warning
from ..executors.proc_mount import command_line_visibility
from ..executors.runas import DENIED_ACCOUNTS, AccountMapping, RunAs, can_switch_users, why_others_cannot_run
from ..executors.server_fence import NOT_FENCED, ServerFence, server_fence_problem
from ..extension.app import SchedApp
from ..extension.background import fire_and_forget
from ..extension.config_access import HUB_CPU_JOB_CAP, HUB_PENDING_CAP, HUB_SUBMIT_RATE
from ..extension.handlers import SchedHandler
from ..extension.identity import Identity
from ..model import Job
from ..services.hub_teams import groups_of_models
from ..services.script_check import use_job_python
from ..store.outage import log_store_failure
from ..wording.config import no_quota_warning, takeable_port_refusal, takeable_port_warning
from .activity import ActivityCollector, ActivityReporter
from .admin_roll import AdminRoll
from .budgets import warn_budgets
from .hubapi import HUB_TIMEOUT_S, HubAPI, HubLookupError, all_users, user_servers
from .identity import ADMIN_SCOPE, HubUser, bound_token_checks, is_admin
from .idle_shutdown import HubKernelShutdown, draining
from .job_python import job_python_warning, missing_jupyter_sched
from .listener import first_unprivileged_port
from .listening import BEAT_S as LISTENING_BEAT_S
from .listening import ListeningRecord, this_host
from .liveness import (
    GONE_KERNEL,
    MAX_REPORT_BYTES,
    NO_SERVER,
    SERVER_STOPPED,
    KernelReport,
    KernelReports,
    KernelState,
    gone_leases,
    lease_refusal,
    leases_to_release,
    parse_report,
    parse_states,
    stale_leases,
)
from .lookalike_names import LookalikeNames, lookalike_refusal
from .membership import hub_caller_of
from .offboard import Offboarding, unconfirmed_warning
from .origins import origin_line, record_origins
from .refusals import REFUSED_TOKEN_PATH, SQUAT_REPORT_PATH, RefusedTokenHandler, SquatReportHandler

__all__ = ["HUB_ACTOR", "HubSchedApp", "KernelReportHandler", "known_teams", "refuse_unrunnable", "stale_leases"]

log = logging.getLogger(__name__)

HUB_ACTOR = "jupyterhub"
"""Audit actor of changes the service makes on the hub's behalf (team sync, lease release)."""

_LIVE = "pending,admitted,running"


def known_teams(quotas: Mapping[str, Any]) -> set[str]:
    """Teams named by quota lines, budgets or team policies of a ``quotas()`` body."""
    return {str(item["team"]) for key in ("quotas", "budgets", "teams") for item in quotas.get(key) or ()
            if item.get("team")}


def _say_admins(app: Any, models: Mapping[str, Mapping[str, Any]]) -> None:
    """Log the scheduler admins by name where the hub's admins changed (:mod:`.admin_roll`; newuser38 n7). A
    function, not a method: tests call :meth:`HubSchedApp._seen_models` with a stand-in for the app, which has no
    roll (then nothing is said)."""
    roll = getattr(app, "_admin_roll", None)
    if roll is not None and (said := roll.seen(models)) is not None:
        app.log.info("jupyter_sched: %s", said)  # the app's log: INFO of a module logger is not shown


def refuse_unrunnable(mapping: AccountMapping) -> Callable[[Job], None]:
    """The admission step's run-as check of hub mode with the local executor: a job whose owner
    has no OS account it may run as (none, root or a system account, ``nobody``) is refused when
    it is submitted — 403 field ``user``, audited by the admission step — never stored and
    failed at its start.

    Returns:
        ``check(job)``, raising :class:`~jupyter_sched.errors.AuthorizationError`.
    """
    def check(job: Job) -> None:
        try:
            mapping.resolve(job.spec.user)
        except OverloadedError:
            raise  # the service's want of file descriptors is no refusal of the user (red team 17, R6)
        except SchedError as err:
            # "job refused: <why>", not "<why>, so this job is refused": the mapping's own sentence may
            # already have a "so" (new user 13, N15: "…, so their job cannot run as them, so this job is refused")
            raise AuthorizationError(f"job refused: {err.message}", field="user", hint=err.hint) from None

    return check


class HubSchedApp(SchedApp):
    """The central service's extension (see module docstring). Configured as ``c.SchedApp.*``
    (shared traits) and ``c.HubSchedApp.*`` (hub traits)."""

    name = "jupyter_sched"
    load_other_extensions = False
    owns_kernels = False
    per_user_in_flight = True  # many users share its request threads: one user's loop leaves others some (red37 R3)

    hub_poll_interval_s = Float(
        60.0, config=True,
        help="""Seconds between asks to the hub for users with active servers; live leases of
        users without one are released. Default 60 s; 0 disables (leases are then released only
        by the user servers' extensions and idle reclamation).""",
    )

    removed_user_grace_s = Float(
        0.0, config=True,
        help="""Seconds after the hub stops listing a user (deleted by an admin) before the service
        stops that user's running jobs and leases. Default 0: never stopped automatically — admins
        are told (audit action and event "owner_removed", naming the work) and decide. Whatever
        this is, the user's pending jobs are held at once (never started as their account; they
        start if the user is re-added) and their job definitions are paused. Checked every
        hub_poll_interval_s (off when that is 0).""",
    )

    budget_check_interval_s = Float(
        60.0, config=True,
        help="""Seconds between budget checks that send the 80 % / 100 % warnings (audited once per
        budget, threshold and period; event type "budget_warning"). Default 60 s; 0 disables.""",
    )

    gpu_prices = Dict(
        value_trait=Union([Float(), List()]), config=True,
        help="""Price per GPU-hour by GPU model name (e.g. {"NVIDIA H100 80GB HBM3": 4.0, "*": 1.5};
        "*" prices every other model), all in one currency of your choice, for the cost column of GET
        usage/report and jupyter-sched usage: allocated GPU-hours times the price, in that currency
        (name it in gpu_price_unit). A price may carry the dates it is in force from: a list of
        [from, price] pairs, from a date (its midnight UTC), an ISO 8601 time or null (always), e.g.
        {"H100-80GB": [[null, 4.0], ["2026-12-01", 5.0]]}; each piece of usage is priced at the price in
        force then, so a change does not re-price the past. Usage with no price in force has an unknown
        cost (the report row says which model). Default {}: no cost.""",
    )

    gpu_price_unit = Unicode(
        "", config=True,
        help="""The currency gpu_prices are in (e.g. "USD", "EUR", "credits"; at most 24 printable
        characters): said as cost_unit beside each cost in GET usage/report (a CSV column too), the
        panel's usage report and jupyter-sched usage. Default "": costs are said in "price units"
        (a WARNING at start when gpu_prices is set without it).""",
    )

    allow_unprivileged_port = Bool(
        False, config=True,
        help="""Listen, with the local executor, on a port any local account may bind (at or above the kernel's
        net.ipv4.ip_unprivileged_port_start, 1024 by default). Off (default): such a port stops the start, because
        while the service is down (a crash, an upgrade) another account could take the port and receive what the
        hub's proxy and users' servers send it, tokens included. Turn it on (or pass --allow-unprivileged-port)
        only where no untrusted account has a shell on this host, or with JupyterHub's internal_ssl (the proxy
        checks the service's certificate); a WARNING is said at each start then.""",
    )

    hub_uids = List(
        Int(), config=True,
        help="""Uids of the accounts JupyterHub runs as, where it is not root: each connection the service makes to a
        loopback hub API address (JUPYTERHUB_API_URL, e.g. http://127.0.0.1:8081/hub/api) must have been accepted
        by root, the service's own account or one of these, else it is closed before anything is sent — while the
        hub restarts another local account could take its port, answer "admin" for anyone and keep the tokens sent
        to it (red31 R4). Default []: root and the service's account. Better still, put the hub's API on a port
        below 1024 (c.JupyterHub.hub_bind_url). Users' servers read $JUPYTER_SCHED_HUB_UIDS (comma-separated).""",
    )

    @default("max_running_cpu_jobs_per_user")
    def _hub_cpu_job_cap(self) -> int:
        """The CPU-job cap is a guard between a hub's users (their jobs share the service's host):
        8 here unless configured; a single-user server has none (new user 16, N14)."""
        return HUB_CPU_JOB_CAP

    @default("max_pending_jobs_per_user")
    def _hub_pending_cap(self) -> int:
        """One user's pending jobs are a queue everyone's listings and cycles go through: 200 here
        unless configured; a single-user server has none (new user 17, N11)."""
        return HUB_PENDING_CAP

    @default("max_submits_per_user_minute")
    def _hub_submit_rate(self) -> int:
        """120 submits a minute per user here unless configured (new user 17, N11)."""
        return HUB_SUBMIT_RATE

    @default("idle_busy_kernel_action")
    def _hub_busy_kernel_action(self) -> str:
        """A kernel's busy state here is its user's server's report — their word, which their own code can
        send — so it defers idle reclaim only up to idle_busy_kernel_window_s, then the lease is released
        unless configured (red39 R8); a single-user server reads its own kernel manager and only reports."""
        return "release"

    def service_settings(self) -> dict[str, Any]:
        """The embedded settings, less ``user_teams``: here hub groups say who is in which team (the
        trait's help), so the config's memberships are not put in the store (new user 20, N21); plus
        ``gpu_price_unit`` (hub only, as ``gpu_prices``) and ``warns_oom_floor``."""
        return {**super().service_settings(), "user_teams": {}, "gpu_price_unit": self.gpu_price_unit,
                "warns_oom_floor": True}  # its own WARNING at start (oom_floor_warning): said once (newuser38 n6)

    @validate("gpu_price_unit")
    def _check_price_unit(self, proposal: Any) -> str:
        """Refuse a unit the report could not print as one cell, naming the setting and the fix."""
        try:
            return price_unit_from(proposal["value"]) or ""
        except SchedError as err:
            raise TraitError(f"c.HubSchedApp.gpu_price_unit: {err.message}. Fix: {err.hint}") from None

    run_as_account_template = Unicode(
        "{username}", config=True,
        help="""OS account a hub user's jobs run as with the local executor; "{username}" is the hub
        user name. Default "{username}": the account JupyterHub's local spawners run the user's
        server as. Entries of run_as_accounts win.""",
    )
    run_as_accounts = Dict(
        value_trait=Unicode(), config=True,
        help="""Explicit hub user -> OS account names, e.g. {"alice@example.org": "alice"}.""",
    )
    run_as_ids = Dict(
        config=True,
        help="""Kubernetes executor: hub user -> [uid, gid] of their job pods, for users without an
        account on the service's host, e.g. {"alice": [1001, 1001]}.""",
    )
    run_as_default_ids = List(
        Int(), default_value=[], config=True,
        help="""Kubernetes executor: [uid, gid] of pods of users with neither an account nor
        run_as_ids (e.g. [1000, 100], jovyan in the Jupyter images). Default []: the image's own
        non-root user.""",
    )
    run_as_min_uid = Int(
        1000, config=True,
        help="""Jobs never run with a uid below this (root, system accounts). Default 1000.""",
    )
    run_as_denied_accounts = List(
        Unicode(), default_value=sorted(DENIED_ACCOUNTS), config=True,
        help="""Accounts no job ever runs as, whatever their uid (shared by system services).
        Default ["nfsnobody", "nobody"]; the overflow uids 65534/65535 are refused anyway.""",
    )
    job_python = Unicode(
        "", config=True,
        help="""Interpreter of jobs run as users' accounts (local executor): the job wrapper,
        scripts, cells and notebooks. Every account must be able to run it (a venv made from
        /usr/bin/python3 in a 0755 folder, with the users' packages and jupyter_sched for
        notebooks). Default "": this service's own interpreter.""",
    )

    def initialize_settings(self) -> None:
        """Build the engine as embedded mode does, then switch identity to the hub's and jobs to
        their owners' accounts.

        Raises:
            traitlets.TraitError: hub mode cannot run jobs safely as configured (names the
                setting and the fix; the server stops with that one line).
        """
        from .hub_peer import set_hub_uids

        set_hub_uids(self.hub_uids)  # before any call to the hub API (red31 R4)
        super().initialize_settings()
        self.identity_mode = "jupyterhub"
        definitions = getattr(self.services, "definitions", None)
        if definitions is not None:  # firings charge the owner's hub groups, never a fallback team
            definitions.owner_caller = self.owner_caller
        users = getattr(self.services, "users", None)
        if users is not None:  # a rename asks the hub whether the old name is gone and the new one a user (B10)
            users.owner_caller = self.owner_caller_now
        self._reaper: PeriodicCallback | None = None
        self._budget_timer: PeriodicCallback | None = None
        self._listening = ListeningRecord()
        """This process's listening span in the store (red29 R6: squat reports judged against every process's)."""
        self._listening_timer: PeriodicCallback | None = None
        self._listening_beat: asyncio.Future[None] | None = None
        self._lookalikes = LookalikeNames()  # refused look-alike hub names: audited once a minute each (red29 R2)
        self._reaping = False
        self._token_checking = False
        self.activity_reporter = ActivityReporter()  # no hub request it waits on holds a later report (issue 17)
        registry = getattr(self, "metrics_registry", None)
        if registry is not None:
            registry.register(ActivityCollector(self.activity_reporter))
        self._budgeting = False
        self._kernel_reports = KernelReports()
        # owners' teams as a request of theirs has them (hub groups, admin flag, admin_users): R4
        self.offboarding = Offboarding(grace_s=self.removed_user_grace_s,
                                       caller_of=hub_caller_of(self.services, lambda: self.admin_users))
        self.offboarding.on_models = self._seen_models  # a group change drops the cached groups at once (red19 R2)
        from .default_team import TeamOrder

        self.team_order = TeamOrder(record=self._record_team_order)  # default team = first joined (newuser38 N3)
        if hasattr(self.services, "admission"):
            self.services.admission.group_order = self.team_order.order
            self.services.admission.team_note = self.team_order.submit_note  # once on a submit too (newuser38 N3)
        self._offboarding = False
        if hasattr(self.services, "set_held_users"):  # pending work of users the hub no longer lists (R9)
            self.services.set_held_users(self.offboarding.held, self.offboarding.removed_groups)
        if hasattr(self.services, "set_held_jobs"):  # pending jobs on a team their owner left (red team 18, R4)
            self.services.set_held_jobs(self.offboarding.held_jobs)
        if self.hub_poll_interval_s > 0 and hasattr(self.services, "store"):
            # before the engine's first cycle: removals in force read back, owners of queued work held until
            # the hub confirms them (hubadmin23 A5: a restart started a deleted user's held job)
            self.offboarding.prime(self.services)
            self.team_order.prime(self.services.store)  # each user's groups in join order (newuser38 N3)
        self._said_unconfirmed = False
        self.activity_reporter.removed = lambda: self.offboarding.removed  # no activity posts for them (A5)
        if hasattr(self.services, "quotas"):  # teams are hub groups alone: PUT quotas sets none (red team 21, R6)
            self.services.quotas.teams_from_hub = True
            # a PUT quotas that revokes a class is recorded as its admin's act at once (hubadmin24 B6)
            offboarding = self.offboarding
            self.services.quotas.on_change = lambda actor: offboarding.recheck(self.services, actor)
        reports, clock = self._kernel_reports, self.services.clock
        if hasattr(self.services, "set_kernel_source"):  # the idle rules read the reported states (R6)
            self.services.set_kernel_source(lambda: reports.activity(clock.now()))
        self.idle_shutdowns = HubKernelShutdown(reports)  # asked through the user's own server's report (s21)
        if hasattr(self.services, "set_idle_kernels"):
            self.services.set_idle_kernels(self.idle_kernel_action, self.idle_shutdowns,
                                           shutdown_wait_s=self.idle_kernel_shutdown_wait_s)
        self._hub_client: HubAPI | None = None
        try:
            self.account_mapping = AccountMapping.from_config(
                template=self.run_as_account_template, accounts=self.run_as_accounts, ids=self.run_as_ids,
                default_ids=self.run_as_default_ids or None, min_uid=self.run_as_min_uid,
                denied_accounts=self.run_as_denied_accounts)
        except SchedError as err:
            raise TraitError(f"c.HubSchedApp.{err.field}: {err.message}. Fix: {err.hint}") from None
        quotas = self.services.store.quota_set()
        if not quotas.quotas and not quotas.unreadable_lines:  # a shared hub as first started (red team 15, R4)
            self.log.warning("jupyter_sched: %s", no_quota_warning(self.default_time_limit_s))
        # teams without a line (red team 19, R3): logged by build_services, at every start of either mode
        # a password-less local PostgreSQL under users' jobs (H5): said by SchedApp's start (startup_checks)
        try:  # one origin for every server and this service (red38 R5); kept for the doctor, which runs without
            # this service's environment (s39-k8s)
            warn, said = record_origins(self.services.store, os.environ, host=this_host(), pid=os.getpid())
        except SchedError:  # a store that did not take the row: the line is said all the same
            warn, said = origin_line(os.environ)
        (self.log.warning if warn else self.log.info)("jupyter_sched: %s", said)
        if self.executor == "local":
            # who reads the jobs' command lines (new user 17, N13): the API redacts them, ps may not; said
            # before the run-as checks, which may refuse the start
            seen = command_line_visibility()
            (self.log.info if seen.hidden else self.log.warning)("jupyter_sched: %s", seen.text)
            self._refuse_takeable_port()
            self._run_jobs_as_owners()
        elif self.executor == "kubernetes":
            mapping = self.account_mapping

            def pod_identity(job: Job) -> RunAs:
                ids = mapping.pod_ids(job.spec.user)
                return RunAs(user=job.spec.user, uid=ids[0], gid=ids[1]) if ids else RunAs(user=job.spec.user)

            self._set_engine_run_as(pod_identity)

    def job_url_default(self) -> str:
        """Where jobs reach this service when ``c.SchedApp.job_api_url`` is not set: the address JupyterHub
        routes to (``$JUPYTERHUB_SERVICE_URL``'s scheme, host and port, with this server's base URL — the
        service prefix) when this server listens on that port, so a job reaches it wherever the hub's
        proxy does; otherwise (``--port`` elsewhere, no such variable, a wildcard host) the server's
        ``connection_url``, which is this host's."""
        server: Any = self.serverapp
        parsed = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", ""))
        try:
            port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
        except ValueError:  # a port that is no number
            port = None
        if parsed.scheme in ("http", "https") and parsed.hostname and parsed.hostname not in ("0.0.0.0", "::") \
                and port == server.port and not server.sock:
            return f"{parsed.scheme}://{parsed.netloc}{server.base_url}"
        return str(server.connection_url)

    def _set_engine_run_as(self, run_as: Any) -> None:
        """Make the engine decide every start's run-as identity with ``run_as(job)``."""
        engine = getattr(self.services, "engine", None)
        if engine is not None and hasattr(engine, "run_as"):
            engine.run_as = run_as

    def _refuse_takeable_port(self) -> None:
        """Refuse to listen on a port any local account may bind (verify25 V7: the hub's proxy sends users' calls,
        with their tokens, to whoever holds it while the service is down) unless the admin said so
        (``allow_unprivileged_port``: then a WARNING, red team 25 R5); a unix socket needs no port.

        Raises:
            TraitError: naming ``c.HubSchedApp.allow_unprivileged_port``, the risk and the fixes.
        """
        port = int(getattr(self.serverapp, "port", 0) or 0)
        first = first_unprivileged_port()
        server: Any = self.serverapp
        if port < first or server.sock:
            return
        ip = str(getattr(self.serverapp, "ip", "") or "")
        if not self.allow_unprivileged_port:
            raise TraitError(f"c.HubSchedApp.allow_unprivileged_port: {takeable_port_refusal(ip, port, first)}")
        self.log.warning("jupyter_sched: %s", takeable_port_warning(ip, port, first))

    def _run_jobs_as_owners(self) -> None:
        """Refuse what would run users' jobs unsafely, then put the local executor in hub mode."""
        if not can_switch_users():
            raise TraitError(
                f"c.SchedApp.executor: 'local' in hub mode runs each job as its owner's OS account, which needs "
                f"root, and this service runs as uid {os.geteuid()}. Fix: run jupyter-sched serve as root, or set "
                "c.SchedApp.executor = 'kubernetes'")
        executor = self.services.executor
        unreachable = executor.dirs.check_reachable()
        if unreachable:
            raise TraitError(f"c.SchedApp.log_dir: {unreachable}. Fix: set c.SchedApp.log_dir to a folder every "
                             "account can reach (each folder above it mode 755), e.g. /var/lib/jupyter_sched/jobs")
        python = self.job_python or sys.executable
        if (why := why_others_cannot_run(python)) is not None:
            raise TraitError(f"c.HubSchedApp.job_python: {python} cannot be run by other accounts: {why}. Fix: make "
                             "a venv from /usr/bin/python3 in a 0755 folder, install jupyter_sched there and set "
                             "c.HubSchedApp.job_python to its python")
        mapping = self.account_mapping

        def run_as_for(job: Job) -> RunAs:
            return mapping.resolve(job.spec.user)

        executor.serve_hub(run_as_for, job_python=python)
        if (no_floor := oom_floor_warning()) is not None:  # other accounts' jobs as root (verify 26, V15)
            self.log.warning("jupyter_sched: %s", no_floor)
        self._set_engine_run_as(run_as_for)
        self.services.admission.run_as_check = refuse_unrunnable(mapping)
        from .account_said import AccountSaid

        self.services.admission.account_said = AccountSaid(mapping)  # status says it, not only submit (n16)
        self.log.info("jupyter_sched: jobs run as their owners' accounts (%s), interpreter %s, job directories in %s",
                      self.run_as_account_template, python, executor.root)
        if (compiled := use_job_python(python)) is not None:  # its syntax, not this service's (verify27 V4)
            self.log.info("jupyter_sched: %s", compiled)
        if (problem := missing_jupyter_sched(python)) is not None:  # notebook jobs and progress need it (N11)
            self.log.warning("jupyter_sched: %s", job_python_warning(python, problem))
        self._fence_servers(executor)

    def _fence_servers(self, executor: Any) -> None:
        """Keep hub users' notebook-server devices groups (red team 16, R1) and say at start whether
        this host can fence them at all."""
        problem = server_fence_problem()
        if problem is None and executor.limits is not None and executor.limits.fences_gpus:
            record = executor.dirs.state / ".server-fence.json"
            # a log_dir with job records but no fence record: a service from before the record (session 36) ran
            # here and may have left any group open, so the first pass manages them all; a fresh one opened none.
            # Job launch records only (<job id>.json/.err): store_id is written by any start, one that then
            # refused its settings too (newuser38 n6: its next start, the first to serve, read "ran here before")
            ran_before = any(p.suffix in (".json", ".err") and p.name != record.name
                             for p in executor.dirs.state.iterdir())
            executor.servers = ServerFence(record=record, adopt_without_record=ran_before)
            self._say_spawner = True  # whether this hub's spawner fences them: asked of the hub at start (new user 22)
        else:
            self.log.warning("jupyter_sched: %s: %s; any hub user's notebook server or kernel on this host can open "
                             "any GPU", NOT_FENCED, problem or "jobs' GPUs are not fenced by a devices cgroup here")

    async def _log_spawner_fence(self) -> None:
        """Say at start, plainly, whether this hub's spawner fences users' servers
        (:mod:`.spawner_check`): a warning where it does not, or where the service cannot tell."""
        from .spawner_check import spawner_fence_said

        warn, line = await spawner_fence_said(self._hub())
        (self.log.warning if warn else self.log.info)("jupyter_sched: %s", line)

    def initialize_handlers(self) -> None:
        """The extension's routes, and JSON 404s for ``favicon.ico``/``robots.txt`` (:mod:`.no_pages`, red40 R3)."""
        from .no_pages import NO_PAGE_ROUTE

        super().initialize_handlers()
        self.handlers.append(NO_PAGE_ROUTE)

    def routes(self) -> list[tuple[str, type[Any]]]:
        """The route table, plus the kernel reports, refused-token reports and squat reports of user servers (hub
        mode only)."""
        return [*super().routes(), ("kernels", KernelReportHandler), (REFUSED_TOKEN_PATH, RefusedTokenHandler),
                (SQUAT_REPORT_PATH, SquatReportHandler)]

    def _hub(self) -> HubAPI:
        """The hub API with the service's own token."""
        if self._hub_client is None:
            auth = getattr(self._provider(), "hub_auth", None)
            self._hub_client = HubAPI(auth.api_url if auth else os.environ.get("JUPYTERHUB_API_URL", ""),
                                      auth.api_token if auth else os.environ.get("JUPYTERHUB_API_TOKEN", ""),
                                      timeout_s=self._hub_timeout_s())
        return self._hub_client

    def _hub_timeout_s(self) -> float:
        """Seconds one hub request may take (``c.HubIdentityProvider.hub_timeout_s``)."""
        return float(getattr(self._provider(), "hub_timeout_s", HUB_TIMEOUT_S))

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        # As jupyterhub-singleuser does: tornado's own XSRF check runs before authentication and
        # would refuse token-authenticated API calls; jupyter_server still checks XSRF for cookie
        # (browser) requests after authentication, with JupyterHub's rules.
        serverapp.web_app.settings["xsrf_cookies"] = False
        if bound_token_checks(self._hub_timeout_s()):
            self.log.debug("jupyter_sched: hub token checks time out after %g s", self._hub_timeout_s())
        await super()._start_jupyter_server_extension(serverapp)
        # by name (newuser38 n7): admin_users now, the hub's admins at the first read of its user list
        self._admin_roll = AdminRoll(getattr(self._provider(), "admin_scope", None) or ADMIN_SCOPE, self.admin_users)
        self.log.info("jupyter_sched: %s", self._admin_roll.line())
        if getattr(self, "_say_spawner", False):
            IOLoop.current().spawn_callback(self._log_spawner_fence)
        if self.hub_poll_interval_s > 0:
            self._reaper = PeriodicCallback(self._reap_tick, self.hub_poll_interval_s * 1000)
            self._reaper.start()
            self._offboard_tick()
        else:  # no poll reads the hub's users: read once, for the admins' names
            fire_and_forget(self._name_hub_admins(), what="a read of the hub's admins")
        if self.budget_check_interval_s > 0:
            self._budget_timer = PeriodicCallback(self._budget_tick, self.budget_check_interval_s * 1000)
            self._budget_timer.start()
            self._budget_tick()
        self._listening_timer = PeriodicCallback(self._listening_tick, LISTENING_BEAT_S * 1000)
        self._listening_timer.start()
        IOLoop.current().add_callback(self._listening_tick)

    async def _name_hub_admins(self) -> None:
        """Read the hub's users once and log its admins by name (:mod:`.admin_roll`; with no hub poll)."""
        try:
            _say_admins(self, await all_users(self._hub()))
        except HubLookupError as exc:
            self.log.warning("jupyter_sched: scheduler admins: the hub's admins could not be read (%s); a hub "
                             "admin is still one at each request, as the hub says", exc)

    def _listening_tick(self) -> None:
        """Write this process's listening span, then its last sign of life (:mod:`.listening`), off the loop; one at
        a time. A store that does not answer is said by the store's outage line; tried again at the next beat."""
        if self._listening_beat is not None and not self._listening_beat.done():
            return
        server = getattr(self.serverapp, "http_server", None)

        async def beat() -> None:
            try:
                await self.off_loop(self._listening.beat, self.services.store, server, self.services.clock.now())
            except Exception as exc:
                log_store_failure(self.log, "jupyter_sched: could not keep this process's listening span in the "
                                            "store (squat reports of its time are then judged by its start only); "
                                            "will retry", exc)
            if self._listening_timer is not None and getattr(server, "listening_since", 0.0) is None:
                IOLoop.current().call_later(1.0, self._listening_tick)  # the front door binds after this start

        self._listening_beat = asyncio.ensure_future(beat())

    async def stop_extension(self) -> None:
        for timer in (self._reaper, self._budget_timer, self._listening_timer):
            if timer is not None:
                timer.stop()
        self._reaper = self._budget_timer = self._listening_timer = None
        if self._listening.spans:  # a clean stop: this process's span gets its end (red29 R6)
            try:
                self._listening.end(self.services.store, self.services.clock.now())
            except Exception as exc:
                log_store_failure(self.log, "jupyter_sched: could not write the end of this process's listening "
                                            "span (the next start infers it from its last sign of life)", exc)
        await super().stop_extension()

    # ---- identity ------------------------------------------------------------------------
    def resolve_identity(self, user: Any) -> Identity:
        """Hub user → scheduler identity (name; admin = hub admin, admin scope or ``admin_users``).

        Raises:
            AuthorizationError: the request was not authenticated by the hub.
        """
        if not isinstance(user, HubUser):
            raise AuthorizationError("this service only accepts JupyterHub users",
                                     hint="send a JupyterHub API token: Authorization: token <token>")
        name = str(user.username)
        refused = lookalike_refusal(name, getattr(self, "_name_skeletons", None) or {})
        if refused is not None:  # a name that reads as another user's (red29 R2)
            self._audit_lookalike(refused)
            refused.audited = True  # its record is _audit_lookalike's, once a minute: no other (red30 R7)
            raise refused
        scope = getattr(self._provider(), "admin_scope", None)
        admin = is_admin(user, scope) if scope else user.hub_admin
        roll = getattr(self, "_admin_roll", None)
        if admin and roll is not None and (said := roll.scope_admin(name, hub_admin=user.hub_admin)) is not None:
            self.log.info("jupyter_sched: %s", said)  # an admin by the token's scope: named once (newuser38 n7)
        return Identity(name=name, is_admin=admin or name in set(self.admin_users))

    def _audit_lookalike(self, refused: AuthorizationError) -> None:
        """Audit ``refused`` (a look-alike hub name's 403) under the name escaped, at most once a minute per name;
        off the event loop (the caller is resolved on a request thread; on the loop the record is sent there)."""
        shown = str(refused.details["user"])
        if not self._lookalikes.due(shown, time.monotonic()):
            return
        admission = getattr(self.services, "admission", None)
        if admission is None:
            return

        def record() -> None:
            try:
                admission.record_refusal(Caller(user=shown, teams=(), admin=False), refused,
                                         request="any request (hub user name)")
            except Exception as exc:  # the 403 stands; the record is best effort
                log_store_failure(self.log, "jupyter_sched: could not audit a refused look-alike hub name", exc)

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            record()  # on a request thread
            return
        fire_and_forget(self.off_loop(record), what="an audit record of a look-alike hub name", keep=self._audits)

    def _record_team_order(self, user: str, teams: tuple[str, ...]) -> None:
        """Keep ``user``'s groups in join order in the audit (read back at a start; newuser38 N3), off the loop."""
        from .default_team import record_order

        def record() -> None:
            try:
                record_order(self.services.store, user, teams)
            except Exception as exc:  # the order stands in memory; the record is best effort
                log_store_failure(self.log, "jupyter_sched: could not keep a user's team order", exc)

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            record()  # on a thread
            return
        fire_and_forget(self.off_loop(record), what="a record of a user's team order", keep=self._audits)

    def caller_key(self, user: Any) -> tuple[str, bool, tuple[str, ...] | None]:
        """``(name, admin, hub groups)``: the request's :class:`~jupyter_sched.admission.Caller`
        takes its teams from the user's hub groups (:meth:`resolve_caller`)."""
        identity = self.resolve_identity(user)
        return identity.name, identity.is_admin, tuple(user.hub_groups)

    def owner_caller(self, user: str) -> Caller:
        """The :class:`~jupyter_sched.admission.Caller` of ``user`` outside their own request (a
        job definition's firing, an admin running another's definition): admin flag and teams
        from the hub, as :meth:`resolve_caller` has them in a request (the hub admin flag and
        ``admin_users``; a token's admin scope exists only in a request).

        Raises:
            NotFoundError: the hub has no such user.
            BusyError: the hub did not answer (a firing is retried at the next tick).
        """
        provider = self._provider()
        if not hasattr(provider, "roles_now"):
            raise BusyError(f"cannot ask the hub who {user} is: the identity provider is not the hub's",
                            hint="run the central service with jupyter-sched serve")
        admin, groups = provider.roles_now(user)
        caller: Caller = self.services.caller(user, admin=admin or user in set(self.admin_users), groups=groups)
        return caller

    def owner_caller_now(self, user: str) -> Caller:
        """:meth:`owner_caller` read from the hub now, not from the record cached up to
        ``c.HubIdentityProvider.lookup_cache_s`` (a user renamed on the hub a moment ago is still cached
        under the old name: ``users rename`` would be refused as "still a user"; hubadmin26 B10).

        Raises:
            NotFoundError: the hub has no such user.
            BusyError: the hub did not answer.
        """
        forget = getattr(self._provider(), "forget", None)
        if forget is not None:
            forget(user)
        return self.owner_caller(user)

    def _provider(self) -> Any:
        return getattr(self.serverapp, "identity_provider", None)

    def _seen_models(self, models: Mapping[str, Mapping[str, Any]]) -> None:
        """The hub poll's user models, to the identity provider: it forgets the cached groups of
        users whose groups changed (red team 19, R2), and the service log says who; the quota service
        keeps them as the hub's groups (GET quotas' ``user_teams``, line checks: hubadmin22 H7); the users' names
        are the known names a look-alike caller is refused for (:func:`~.lookalike_names.lookalike_refusal`, red29 R2)."""
        _say_admins(self, models)  # named in the log at the first read and when they change (newuser38 n7)
        if hasattr(self, "team_order"):  # each user's groups in join order: the default team kept (newuser38 N3)
            self.team_order.observe(models, self.services.clock.now())
        names = frozenset(str(name) for name in models)
        if names != getattr(self, "_known_names", None):
            self._known_names = names
            self._name_skeletons = skeletons(names)
        if hasattr(self.services, "quotas"):
            before = self.services.quotas.hub_groups
            first = before is None
            off = getattr(self, "offboarding", None)  # emptied groups the hub still has (verify24 V4)
            self.services.quotas.hub_groups = groups = groups_of_models(
                models, self.services.clock.now(), off.empty_groups if off is not None else frozenset())
            if before is not None:  # a group that vanished and is listed again (hubadmin24 B15: load_groups)
                from ..services.hub_teams import back_group_text

                # an emptied group that still exists (groups.empty) is not gone (verify24 V4)
                gone = set(getattr(self, "_gone_groups", ())) | (before.groups - groups.groups - groups.empty)
                for group in sorted(gone & groups.groups):
                    log.warning("jupyter_sched: %s", back_group_text(group, groups))
                self._gone_groups = gone - groups.groups
            if first:  # the start-up check ran before the hub was read: its groups said now (hubadmin23 A2)
                from ..services.hub_teams import unlisted_group_warning

                store = self.services.store
                said = unlisted_group_warning(store.quota_set(), groups, self.services.admission.policy.default_team,
                                              store.unlisted_borrowing_limit)
                if said:
                    log.warning("jupyter_sched: %s", said)
                from ..services.hub_teams import no_group_warnings  # lines, budgets, grants naming no group (B10)

                policy = self.services.admission.policy
                for line in no_group_warnings(store.quota_set(), groups, policy.default_team,
                                              grants=getattr(getattr(policy, "grants", None), "teams", None),
                                              live=store.live_jobs()):  # a dissolved team's work (hubadmin25 B3)
                    log.warning("jupyter_sched: %s", line)
        provider = self._provider()
        if hasattr(provider, "seen_models"):
            changed = provider.seen_models(models)
            if changed:
                log.info("jupyter_sched: hub groups changed for %s: their next request reads them from the hub",
                         ", ".join(changed[:20]) + (f" and {len(changed) - 20} more" if len(changed) > 20 else ""))

    @property
    def hub_token_page(self) -> str:
        """Where a hub user gets a token, for the hint of a refused one (:mod:`~jupyter_sched.wording.tokens`):
        the hub's public URL when JupyterHub gave one (``$JUPYTERHUB_PUBLIC_HUB_URL``), else its host and
        prefix as the hub auth knows them (``/hub/token`` behind the hub's own proxy)."""
        public = os.environ.get("JUPYTERHUB_PUBLIC_HUB_URL", "").strip()
        if public:
            return public.rstrip("/") + "/token"
        auth = getattr(self._provider(), "hub_auth", None)
        prefix = str(getattr(auth, "hub_prefix", "") or "/hub/")
        return f"{getattr(auth, 'hub_host', '') or ''}{prefix.rstrip('/')}/token"

    # ---- capabilities --------------------------------------------------------------------
    def capability_fields(self) -> dict[str, Any]:
        """As embedded mode, marked ``mode: hub`` with the hub features on."""
        body = super().capability_fields()
        body["mode"] = "hub"
        body["owner"] = None
        body["features"] = {**body["features"], "hub": True}
        return body

    # ---- activity ------------------------------------------------------------------------
    def _activity_tick(self) -> None:
        """As embedded mode (this server's own activity), and post running work to the hub
        (:mod:`.activity`) so the idle culler spares the servers of users with running work."""
        super()._activity_tick()
        if self._provider() is not None:  # each tick its own report: none waits on another's hub request
            self.activity_reporter.tick(self.services, self._hub(), off_loop=self.off_loop)

    # ---- budgets ---------------------------------------------------------------------------
    def _budget_tick(self) -> None:
        if not self._budgeting:
            self._budgeting = True
            task = fire_and_forget(self._check_budgets(), what="a budget check")
            task.add_done_callback(lambda _t: setattr(self, "_budgeting", False))

    async def _check_budgets(self) -> None:
        try:
            await self.off_loop(warn_budgets, self.services)  # reads usage rows: off the loop
        except Exception as exc:  # the database not answering is the outage line's to say, once (red32 n1)
            from ..store.outage import log_store_failure

            log_store_failure(log, "jupyter_sched: budget check failed; will retry", exc)

    # ---- stopped servers -----------------------------------------------------------------
    def _reap_tick(self) -> None:
        watch = getattr(self._provider(), "token_watch", None)
        if watch is not None and not self._token_checking:  # the hub still takes the service's token (hub admin 22)
            self._token_checking = True
            task = fire_and_forget(watch.check(self._hub()), what="a check of the service's hub token")
            task.add_done_callback(lambda _t: setattr(self, "_token_checking", False))
        if watch is not None and watch.refused:
            return  # each hub call below would be refused: the watch's one ERROR says so, not a traceback a tick
        if not self._reaping:
            self._reaping = True
            task = fire_and_forget(self.release_stale_leases(), what="a release of stale leases")
            task.add_done_callback(lambda _t: setattr(self, "_reaping", False))
        self._offboard_tick()

    def _offboard_tick(self) -> None:
        if not self._offboarding and self._provider() is not None:
            self._offboarding = True
            task = fire_and_forget(self.check_removed_users(), what="a check of users the hub removed")
            task.add_done_callback(lambda _t: setattr(self, "_offboarding", False))

    async def check_removed_users(self) -> list[str]:
        """Hold, report and pause the work of users the hub no longer lists (:mod:`.offboard`);
        the users newly found removed. Hub errors are logged and retried at the next tick."""
        try:
            found = await self.offboarding.check(self.services, self._hub(), off_loop=self.off_loop)
            if self._said_unconfirmed and not self.offboarding.unconfirmed:
                self._said_unconfirmed = False
                self.log.warning("jupyter_sched: the hub (%s) answered: work queued before this start is no longer "
                                 "held for it", self._hub().api_url)
            return found
        except HubLookupError as exc:
            if self.offboarding.unconfirmed and not self._said_unconfirmed:
                self._said_unconfirmed = True  # once: a hub down at start holds work queued before it (A5)
                self.log.warning("jupyter_sched: %s", unconfirmed_warning(self._hub().api_url, exc,
                                                                           self.offboarding.unconfirmed))
            # one line, no traceback (hubadmin24 B13); an outage is said once by the hub client itself
            log.log(logging.DEBUG if exc.outage else logging.WARNING,
                    "jupyter_sched: could not list the hub's users for offboarding (%s); will retry", exc)
            log.debug("jupyter_sched: offboarding lookup failed", exc_info=True)
        except Exception as exc:  # an unreachable database: the store's outage line says it (hubadmin25 B6)
            log_store_failure(log, "jupyter_sched: offboarding check failed; will retry", exc)
        return []

    async def release_stale_leases(self) -> list[str]:
        """Release live leases of users without an active hub server (kernel-bound or not: a
        lease without a kernel is bound to its owner's servers), and leases whose kernel the
        user's servers no longer report; their ids.

        Hub errors are logged and retried at the next tick (a hub restart never drops leases);
        a user the paged listing missed is asked about alone before anything of theirs is released.
        """
        leases = await self.off_loop(self.services.list_jobs, user=None, state=_LIVE, kind="lease")
        if not leases:
            self._kernel_reports.keep_users(())
            return []
        try:
            decided = await leases_to_release(leases, self._hub(), self._kernel_reports)
        except HubLookupError as exc:  # one line, no traceback; an outage is said once by the hub client (B13)
            log.log(logging.DEBUG if exc.outage else logging.WARNING,
                    "jupyter_sched: could not list active hub servers (%s); will retry", exc)
            return []
        released: list[str] = []
        for lease, reason in decided:
            released += await self.off_loop(self._release, [lease], reason)
        if released:
            log.info("jupyter_sched: released %d lease(s) of stopped servers or gone kernels: %s", len(released),
                     released)
        return released

    async def kernel_report(self, caller: Caller, server: str, kernels: frozenset[str],
                            states: Mapping[str, KernelState] | None = None) -> list[str]:
        """Take ``caller``'s report of ``server``'s live kernels (kept while they hold a
        kernel-bound lease or report, and only for a server the hub lists as theirs: :mod:`.liveness`);
        release leases whose kernel is gone; their ids.

        Raises:
            AuthorizationError: the hub lists no such active server of the caller (audited).
        """
        user = caller.user
        listed = await self.off_loop(self.services.list_jobs, user=user, state=_LIVE, kind="lease")
        leases = [lease for lease in listed if lease.get("kernel_id") and lease.get("user") == user]
        servers = await self._kernel_reports.servers_for(self._hub(), user, server)
        if servers is None:  # the hub did not answer: the next report is taken instead
            return []
        if server not in servers:
            refusal = AuthorizationError(
                f"the hub lists no active server {server!r} of {user}; kernel reports are taken only from "
                "your running servers", field="server",
                hint="your server's jupyter_sched extension sends these; nothing to do if it just stopped")
            await self.off_loop(self.services.admission.refuse, caller, refusal, request="kernel report")
        self._kernel_reports.record(KernelReport(user=user, server=server, kernels=kernels,
                                                 received_at=self.services.clock.now(), states=dict(states or {})))
        if not leases:  # kept for a new lease's kernel_id check (REPORT_KEEP_S); nothing to release
            return []
        if all(lease["kernel_id"] in kernels for lease in leases):
            return []
        fresh = await user_servers(self._hub(), user)  # releasing: the hub's answer of now, never a remembered one
        if fresh is None:
            return []
        self._kernel_reports.remember_servers(user, fresh)
        gone = gone_leases(leases, self._kernel_reports.of(user), fresh)
        return await self.off_loop(self._release, gone, GONE_KERNEL) if gone else []

    async def admit_lease(self, caller: Caller, request: Any) -> None:
        """A new lease (``POST leases``, or ``POST jobs`` of kind lease) only for a caller the hub
        lists with a running server now, and a ``kernel_id`` that one of those servers reported
        (:func:`~.liveness.lease_refusal`; new user 9, N1: a made-up or another user's kernel id,
        or no server at all, held GPUs ~60 s until the reaper noticed). A lease of a started
        batch job's kernel (``parent_job_id``) is checked as that job instead (services/jobs.py).

        Raises:
            ValidationError: naming ``kernel_id`` (audited).
            BusyError: the hub did not answer (nothing granted; retry).
        """
        if getattr(request, "parent_job_id", None):
            return
        servers = await user_servers(self._hub(), caller.user)
        if servers is None:
            raise BusyError("cannot ask the hub whether you have a running server, so no lease is granted now",
                            hint="retry in a minute")
        self._kernel_reports.remember_servers(caller.user, servers)
        refusal = lease_refusal(getattr(request, "kernel_id", None), servers,
                                self._kernel_reports.of(caller.user))
        if refusal is not None:
            await self.off_loop(self.services.admission.refuse, caller, refusal, request="request lease")

    def _server_gone(self, lease_id: str) -> None:
        """The owner's server of the idle-reclaimed (draining) lease ``lease_id`` stopped: the engine's drain
        ends the owner's processes still on its GPU at its next pass (:meth:`~jupyter_sched.engine.idle_kernels.
        IdleKernels.server_gone`), so the lease ends once the GPU is free."""
        engine = getattr(self.services, "engine", None)
        if engine is not None:
            engine.stops.idle_kernels.server_gone(lease_id, self.services.clock.now())

    def _release(self, leases: Iterable[Mapping[str, Any]], reason: str) -> list[str]:
        released = []
        for lease in leases:
            if draining(lease):  # reclaimed while idle: the drain ends it once its GPU is free (.idle_shutdown)
                if reason in (SERVER_STOPPED, NO_SERVER):  # its kernel went with the server: what of the owner's is
                    self._server_gone(str(lease["id"]))    # left on the GPU is ended now (red team 25, R2)
                continue
            try:
                # the reason in the lease's message, not "released by jupyterhub" (new user 5 #16)
                self.services.jobs.cancel(system_caller(HUB_ACTOR), str(lease["id"]), by="the hub service", why=reason)
            except SchedError as err:  # finished meanwhile
                log.debug("jupyter_sched: lease %s not released: %s", lease.get("id"), err)
                continue
            self.services.store.add_event(actor=HUB_ACTOR, action="lease_released", job_id=lease["id"],
                                          user=lease.get("user"), message=reason,
                                          details={"kernel_id": lease.get("kernel_id")})
            released.append(str(lease["id"]))
        return released


class KernelReportHandler(SchedHandler):
    """``PUT api/sched/kernels`` ``{"server": name, "kernels": [ids], "states": {id: {"execution_state",
    "last_activity"}}}`` (``states`` optional: older servers send ids only) from a user server (its own
    hub token: the user comes from the hub, never from the body) → ``{"released": [lease ids], "shutdown":
    [{"kernel_id", "lease_id", "message"}]}`` (the reporting user's own idle kernels to shut down: .idle_shutdown).
    A body over :data:`~.liveness.MAX_REPORT_BYTES` or a malformed one is refused (400, audited)."""

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return False  # a report every 30 s is not user activity

    @web.authenticated
    @authorized
    async def put(self) -> None:
        try:
            if len(self.request.body or b"") > MAX_REPORT_BYTES:
                raise ValidationError(f"a kernel report is at most {MAX_REPORT_BYTES // 1024} KiB of JSON "
                                      f"(got {len(self.request.body) // 1024} KiB)", field="body",
                                      hint="report at most 1,000 kernel ids of one server")
            body = await self.json_body()
            server, kernels = parse_report(body)
            states = parse_states(body, kernels, now=self.services.clock.now())
        except ValidationError as err:
            await self.call(self.services.admission.refuse, self.caller, err, request="kernel report")
        released = await self.sched.kernel_report(self.caller, server, kernels, states)
        shutdowns: list[dict[str, str]] = []
        if self.sched.idle_shutdowns.waiting():  # the user's own idle kernels to shut down (.idle_shutdown)
            mine = await self.call(self.services.list_jobs, user=self.caller.user, state=_LIVE, kind="lease")
            shutdowns = self.sched.idle_shutdowns.for_report(self.caller.user, kernels, mine)
        self.reply({"released": released, "shutdown": shutdowns})


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """Load :class:`HubSchedApp` (used by ``jupyter-sched serve``)."""
    return [{"module": "jupyter_sched.hub.central", "app": HubSchedApp}]
