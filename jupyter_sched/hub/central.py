"""``HubSchedApp``: the jupyter_sched extension as the central hub service loads it.

The same ``SchedApp`` (same engine, same REST routes, same store migrations), with three
hub-specific parts:

- **identity** — the caller is the hub user of :class:`~.identity.HubIdentityProvider`; scheduler
  admins are hub admins, holders of the admin scope, and ``c.SchedApp.admin_users``;
- **teams = hub groups** — every request's :class:`~jupyter_sched.admission.Caller` takes the
  caller's teams from their hub groups (groups that are known teams first; see
  :func:`jupyter_sched.admission.resolve_caller`). Nothing is written to the quota set, so
  identifying a user never depends on quota validation (a drained node locks nobody out);
- **usage report** — ``GET usage/report`` (also served embedded) with cost per ``gpu_prices`` (:mod:`.usage`);
- **budget warnings** — every ``budget_check_interval_s`` seconds, 80 % / 100 % warnings
  (:mod:`.budgets`);
- **activity** — every ``activity_interval_s`` seconds, users with admitted/running jobs or
  leases are reported active to the hub (``POST users/{name}/activity``, :mod:`.activity`);
- **stopped servers** — every ``hub_poll_interval_s`` seconds the service asks the hub which
  users have an active server and releases live kernel-bound leases of users who have none (a
  server that was killed without stopping its extension, or culled).

Loaded by ``jupyter-sched serve`` as the server extension module ``jupyter_sched.hub.central``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from tornado.ioloop import PeriodicCallback
from traitlets import Dict, Float

from ..admission import Caller, system_caller
from ..errors import AuthorizationError
from ..extension.app import SchedApp
from ..extension.identity import Identity
from .activity import report_activity
from .budgets import warn_budgets
from .identity import HubUser, is_admin

__all__ = ["HUB_ACTOR", "HubSchedApp", "known_teams", "stale_leases"]

log = logging.getLogger(__name__)

HUB_ACTOR = "jupyterhub"
"""Audit actor of changes the service makes on the hub's behalf (team sync, lease release)."""

_LIVE = "pending,admitted,running"


def known_teams(quotas: Mapping[str, Any]) -> set[str]:
    """Teams named by quota lines, budgets or team policies of a ``quotas()`` body."""
    return {str(item["team"]) for key in ("quotas", "budgets", "teams") for item in quotas.get(key) or ()
            if item.get("team")}


def stale_leases(leases: Iterable[Mapping[str, Any]], active_users: Iterable[str]) -> list[Mapping[str, Any]]:
    """Live kernel-bound leases whose user has no active server on the hub (to release).

    Args:
        leases: lease dicts (``job_to_dict`` shape: ``user``, ``kernel_id``, ``state``).
        active_users: names of users with at least one active (running or starting) server.
    """
    active = set(active_users)
    return [lease for lease in leases
            if lease.get("kernel_id") and lease.get("state") in ("pending", "admitted", "running")
            and lease.get("user") not in active]


class HubSchedApp(SchedApp):
    """The central service's extension (see module docstring). Configured as ``c.SchedApp.*``
    (shared traits) and ``c.HubSchedApp.*`` (hub traits)."""

    name = "jupyter_sched"
    load_other_extensions = False

    hub_poll_interval_s = Float(
        60.0, config=True,
        help="""Seconds between asks to the hub for users with active servers; live leases of
        users without one are released. Default 60 s; 0 disables (leases are then released only
        by the user servers' extensions and idle reclamation).""",
    )

    budget_check_interval_s = Float(
        60.0, config=True,
        help="""Seconds between budget checks that send the 80 % / 100 % warnings (audited once per
        budget, threshold and period; event type "budget_warning"). Default 60 s; 0 disables.""",
    )

    gpu_prices = Dict(
        value_trait=Float(), config=True,
        help="""Price per GPU-hour by GPU model name (e.g. {"NVIDIA H100 80GB HBM3": 4.0, "*": 1.5};
        "*" prices every other model) for the cost column of GET usage/report. Default {}: no cost.""",
    )

    def initialize_settings(self) -> None:
        """Build the engine as embedded mode does, then switch identity to the hub's."""
        super().initialize_settings()
        self.identity_mode = "jupyterhub"
        self._reaper: PeriodicCallback | None = None
        self._budget_timer: PeriodicCallback | None = None
        self._reaping = False
        self._reporting = False

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        # As jupyterhub-singleuser does: tornado's own XSRF check runs before authentication and
        # would refuse token-authenticated API calls; jupyter_server still checks XSRF for cookie
        # (browser) requests after authentication, with JupyterHub's rules.
        serverapp.web_app.settings["xsrf_cookies"] = False
        await super()._start_jupyter_server_extension(serverapp)
        if self.hub_poll_interval_s > 0:
            self._reaper = PeriodicCallback(self._reap_tick, self.hub_poll_interval_s * 1000)
            self._reaper.start()
        if self.budget_check_interval_s > 0:
            self._budget_timer = PeriodicCallback(self._budget_tick, self.budget_check_interval_s * 1000)
            self._budget_timer.start()
            self._budget_tick()

    async def stop_extension(self) -> None:
        for timer in (self._reaper, self._budget_timer):
            if timer is not None:
                timer.stop()
        self._reaper = self._budget_timer = None
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
        scope = getattr(self._provider(), "admin_scope", None)
        admin = is_admin(user, scope) if scope else user.hub_admin
        return Identity(name=name, is_admin=admin or name in set(self.admin_users))

    def resolve_caller(self, user: Any) -> Caller:
        """The request's :class:`~jupyter_sched.admission.Caller`, teams from the user's hub groups."""
        identity = self.resolve_identity(user)
        caller: Caller = self.services.caller(identity.name, admin=identity.is_admin, groups=user.hub_groups)
        return caller

    def _provider(self) -> Any:
        return getattr(self.serverapp, "identity_provider", None)

    # ---- capabilities --------------------------------------------------------------------
    def capabilities(self) -> dict[str, Any]:
        """As embedded mode, marked ``mode: hub`` with the hub features on."""
        body = super().capabilities()
        body["mode"] = "hub"
        body["owner"] = None
        body["features"] = {**body["features"], "hub": True}
        return body

    # ---- activity ------------------------------------------------------------------------
    def _activity_tick(self) -> None:
        """As embedded mode (this server's own activity), and post running work to the hub
        (:mod:`.activity`) so the idle culler spares the servers of users with running work."""
        super()._activity_tick()
        provider = self._provider()
        if not self._reporting and provider is not None and hasattr(provider, "hub_api"):
            self._reporting = True
            task = asyncio.ensure_future(report_activity(self.services, provider.hub_api))
            task.add_done_callback(lambda _t: setattr(self, "_reporting", False))

    # ---- budgets ---------------------------------------------------------------------------
    def _budget_tick(self) -> None:
        try:
            warn_budgets(self.services)
        except Exception:
            log.exception("jupyter_sched: budget check failed; will retry")

    # ---- stopped servers -----------------------------------------------------------------
    def _reap_tick(self) -> None:
        if not self._reaping:
            self._reaping = True
            task = asyncio.ensure_future(self.release_stale_leases())
            task.add_done_callback(lambda _t: setattr(self, "_reaping", False))

    async def release_stale_leases(self) -> list[str]:
        """Release live kernel-bound leases of users without an active hub server; their ids.

        Hub errors are logged and retried at the next tick (a hub restart never drops leases).
        """
        provider = self._provider()
        try:
            active = await provider.hub_api("GET", "users?state=active&limit=100000")
        except Exception:
            log.warning("jupyter_sched: could not list active hub servers; will retry", exc_info=True)
            return []
        names = {str(u["name"]) for u in active or () if isinstance(u, dict) and "name" in u}
        released = []
        hub = system_caller(HUB_ACTOR)
        for lease in stale_leases(self.services.work(_LIVE, kind="lease"), names):
            with contextlib.suppress(Exception):
                self.services.jobs.cancel(hub, str(lease["id"]))
                self.services.store.add_event(actor=HUB_ACTOR, action="lease_released", job_id=lease["id"],
                                             user=lease.get("user"), message="the user's server stopped",
                                             details={"kernel_id": lease.get("kernel_id")})
                released.append(str(lease["id"]))
        if released:
            log.info("jupyter_sched: released %d lease(s) of stopped servers: %s", len(released), released)
        return released


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """Load :class:`HubSchedApp` (used by ``jupyter-sched serve``)."""
    return [{"module": "jupyter_sched.hub.central", "app": HubSchedApp}]
