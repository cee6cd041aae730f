"""Embedded mode: work charged to a team its owner was removed from by ``PUT quotas`` (red team 18, R4).

Without a hub, team membership is the admin's: ``c.SchedApp.user_teams``, and the quota set's
``user_teams`` and team policies' ``members`` (``PUT quotas``;
:func:`~jupyter_sched.admission.policy.resolve_caller`). Admission checks it at submit only, so a
user removed from a team by ``PUT quotas`` kept their queued jobs there, and they started charged
to that team's quota, budget and fair share. Hub mode holds such jobs at every offboarding check
(:mod:`jupyter_sched.hub.membership`); here the same :class:`~jupyter_sched.hub.membership.TeamHolds`
runs whenever the membership can have changed — after every ``PUT quotas`` (as the admin who sent
it) and when the server starts (as ``jupyter_sched``: the settings may have changed) — with each
owner resolved as a request of theirs would be now. Held pending jobs pend ``TeamMembership`` and
never start; running work is left running (named in the ``team_left`` record); a re-added owner's
jobs are released (``team_rejoined``). Admins (``c.SchedApp.admin_users`` and the server's owner)
may charge any named team, as at submit.

A server whose held jobs come from elsewhere (the hub's central service sets its own source with
:meth:`~.root.Services.set_held_jobs`) turns this off: hub groups, not the quota set, say who is in
a team there.
"""

from __future__ import annotations

import getpass
from collections.abc import Collection, Mapping
from typing import Any

from ..admission import Caller
from ..hub.membership import TeamHolds
from ..scheduling.snapshot import JobHold

__all__ = ["EmbeddedMembership"]

_LIVE = "pending,admitted,running"
_STARTUP = "jupyter_sched"


class EmbeddedMembership:
    """The embedded server's team holds (module docstring).

    Args:
        services: the :class:`~.root.Services` (``list_jobs``, ``caller``, ``store``, ``bus``,
            ``admission``, ``clock``, ``kick``).
        admin_users: ``c.SchedApp.admin_users``; the server's owner is an admin too.
    """

    def __init__(self, services: Any, admin_users: Collection[str] = ()) -> None:
        self.services = services
        self.admins = frozenset(admin_users) | {getpass.getuser()}
        self.active = True
        """False once another source of held jobs is set (hub mode)."""
        self.teams = TeamHolds()

    def held(self) -> Mapping[str, JobHold]:
        """``{job id: JobHold}`` of the pending jobs held now, with the running work charged to a
        team its owner left (the engine's ``held_jobs`` source: :meth:`TeamHolds.in_force`)."""
        return self.teams.in_force()

    def check(self, actor: str = _STARTUP) -> set[str]:
        """Recompute the holds against the quota set in force and audit what changed as ``actor``;
        asks for a cycle when a job was held or released. Returns those job ids (empty when off)."""
        if not self.active:
            return set()
        services = self.services
        live = services.list_jobs(user=None, state=_LIVE)
        owners = {str(j["user"]) for j in live if j.get("user")}
        if not owners and not self.teams.held():
            return set()

        def caller_of(name: str, _model: Mapping[str, Any]) -> Caller:
            caller: Caller = services.caller(name, admin=name in self.admins)
            return caller

        changed: set[str] = self.teams.update(
            services, live, {user: {} for user in owners}, caller_of,
            default_team=services.admission.policy.default_team, now=services.clock.now(), actor=actor)
        if changed:
            services.kick()  # their reasons say "held" (or no longer) at the next cycle
        return changed
