"""Offboarding: work of users the hub no longer lists (red team 15, R9).

A hub admin deletes a user; their token dies at once, so they can no longer see or cancel their
work. Before this module their *queued* job still started afterwards as their OS account, their
running work ran on unnoticed, and each of their job definitions was "rejected" once a minute for
ever. As Slurm does when an association is removed, the central service now notices (every
``hub_poll_interval_s``, and once at start) owners of live work or active definitions whom the
hub no longer lists — a user missing from the paged listing (:func:`~.hubapi.all_users`) is asked
about alone and counts as removed only on the hub's 404 (:func:`~.hubapi.user_exists`); a hub that
does not answer changes nothing — and then, once per removed user:

* their **pending** jobs are held: never started, pending with code ``OwnerRemoved`` and the reason
  "held: owner no longer a user of this hub" (``Snapshot.held_users``; nothing is cancelled, so an
  admin who deleted the wrong user re-adds them and the jobs go on);
* their **running** jobs and leases are reported to admins: one ``owner_removed`` audit record
  (``GET audit?action=owner_removed``) and event naming them, and, when
  ``c.HubSchedApp.removed_user_grace_s`` is above 0, stopped once that many seconds have passed
  (default 0: left running for an admin to decide — stopping someone's training run is not a
  side effect a user deletion should have unless the site says so). Left running, they are outside
  the guarantee of the team they are charged to (:meth:`Offboarding.held_jobs`, as work whose owner
  left the team: red team 24, R6), so its members may take their GPUs back as reclaim does;
* their **definitions** are paused (one ``definition_updated`` record each) instead of being
  rejected at every firing.

A user the hub lists again is released from the hold (one ``owner_returned`` record).

At a start (:meth:`Offboarding.prime`, before the engine's first cycle: hubadmin23 A5) the removals
still in force are read back from the ``owner_removed``/``owner_returned`` records, so they hold at
once and a restart announces nothing again; and every other owner of pending work queued before the
start is held (``OwnerUnconfirmed``) until a check has heard from the hub that they are still a user —
a user deleted while the service was down, or whose removal the first cycle would otherwise beat,
never has work started as their account. A hub that does not answer keeps that hold (one WARNING
names the hub); work submitted since the start comes from a user the hub has just authenticated
and is not held, and a definition's firing asks the hub who its owner is (``owner_caller``).

The same check holds pending jobs of users the hub *does* list whose owner is no longer a member
of the job's team, or no longer granted its class there (:mod:`.membership`, red team 18 R4) —
also a re-created user's, before their ``owner_returned`` release, which names them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from ..admission import system_caller
from ..errors import SchedError
from ..scheduling.gates import UNCONFIRMED_WHY
from ..scheduling.snapshot import JobHold
from .hubapi import HubClient, HubLookupError, all_users, group_exists, user_exists
from .membership import SETTINGS_ACTOR, TEAM_LEFT_ACTION, CallerOf, TeamHolds

__all__ = ["ADMIN_REMOVED_ACTION", "OWNER_REMOVED_ACTION", "OWNER_RETURNED_ACTION", "REMOVED_WHY", "Offboarding", "unconfirmed_warning"]

log = logging.getLogger(__name__)

REMOVED_WHY = "owner no longer a user of this hub"
"""The hold's reason (the pending reason says ``held: <this>``) and the stop's cause."""
OWNER_REMOVED_ACTION = "owner_removed"
ADMIN_REMOVED_ACTION = "admin_removed"
"""Audit action and event type of a user whose hub admin flag was removed (hubadmin26 B12)."""
"""Audit action and event type of a user the hub no longer lists."""
OWNER_RETURNED_ACTION = "owner_returned"
"""Audit action of a removed user the hub lists again (their held jobs may start)."""

_LIVE = "pending,admitted,running"
_ACTOR = "jupyterhub"
_SHOWN = 20
_RESTORED = 2000
"""Newest ``owner_removed`` (and ``owner_returned``) records read back at a start."""


class Offboarding:
    """The removed users of one central service and what was done about them.

    Args:
        grace_s: seconds after a user was found removed before their running work is stopped
            (0: never; admins are told and decide).
    """

    def __init__(self, *, grace_s: float = 0.0, caller_of: CallerOf | None = None) -> None:
        self.grace_s = grace_s
        self.caller_of = caller_of
        self._removed: dict[str, datetime] = {}  # user -> when found removed
        self._groups: dict[str, tuple[str, ...]] = {}  # removed user -> hub groups when last listed (n18)
        self._held: dict[str, str] = {}  # replaced whole on change: the engine's thread reads it
        self._waiting: set[str] = set()  # owners of work queued before the start, not yet confirmed by the hub
        self.teams = TeamHolds()
        self._gone: dict[str, JobHold] = {}  # running work of removed users: outside its team's guarantee
        self.on_models: Callable[[Mapping[str, Mapping[str, Any]]], object] | None = None
        """Called with each listing of the hub's user models (the identity provider forgets the
        cached groups of users whose groups changed: red team 19, R2)."""
        self._models: Mapping[str, Mapping[str, Any]] | None = None  # the last listing (:meth:`recheck`)
        self._admins: frozenset[str] | None = None  # hub admins (the model's flag) at the last check
        self.empty_groups: frozenset[str] = frozenset()
        """Teams of live work no listed user is in that the hub said still exist as groups (empty: their
        members were removed, verify24 V4), as of the last check; read with :attr:`on_models`."""

    def prime(self, services: Any) -> None:
        """At a start, before the engine's first cycle (module docstring): read back the removals in
        force from the newest :data:`_RESTORED` ``owner_removed``/``owner_returned`` records (oldest
        first; a return ends the removal before it) and hold every owner of pending work until the hub
        confirms them. Store reads only; no hub request."""
        rows = [*services.store.list_events(action=OWNER_REMOVED_ACTION, limit=_RESTORED, newest_first=True),
                *services.store.list_events(action=OWNER_RETURNED_ACTION, limit=_RESTORED, newest_first=True)]
        for row in sorted(rows, key=lambda r: r.id):
            user = (row.details or {}).get("user") or row.user
            if not isinstance(user, str) or not user:
                continue
            if row.action == OWNER_REMOVED_ACTION:
                self._removed.setdefault(user, row.at)
                groups = (row.details or {}).get("groups")
                if isinstance(groups, list):
                    self._groups[user] = tuple(str(g) for g in groups)
            else:
                self._removed.pop(user, None)
                self._groups.pop(user, None)
        pending = services.list_jobs(user=None, state="pending")
        self._waiting = {str(j["user"]) for j in pending if j.get("user")} - set(self._removed)
        self._hold()

    def _hold(self) -> None:
        self._held = {**dict.fromkeys(self._waiting, UNCONFIRMED_WHY), **dict.fromkeys(self._removed, REMOVED_WHY)}

    @property
    def unconfirmed(self) -> frozenset[str]:
        """Owners of work queued before the start whom the hub has not yet confirmed (held)."""
        return frozenset(self._waiting)

    def held(self) -> Mapping[str, str]:
        """``{user: why}`` of owners whose pending work is held (the engine's ``held_users`` source)."""
        return self._held

    def removed_groups(self) -> Mapping[str, tuple[str, ...]]:
        """``{user: hub groups}`` of removed users, as the hub listed them last before the removal (the
        engine's ``removed_groups`` source: their held line says to re-add both, newuser38 n18)."""
        return self._groups

    def held_jobs(self) -> Mapping[str, JobHold]:
        """``{job id: JobHold}`` of pending jobs whose owner left their team (the engine's
        ``held_jobs`` source, with the running work charged to a team its owner left: :mod:`.membership`),
        and the running work of removed users (no member of any team now: red team 24, R6)."""
        gone, in_force = self._gone, self.teams.in_force()
        return {**gone, **in_force} if gone else in_force

    @property
    def removed(self) -> dict[str, datetime]:
        """Users found removed (or read back at the start), with when."""
        return dict(self._removed)

    def recheck(self, services: Any, actor: str) -> set[str]:
        """The team holds again right after ``actor`` (an admin) changed the quota set (``PUT quotas``: a team
        policy's ``allowed_priorities``, or the lines an admin may charge), against the hub's last listing:
        a class that change revoked is recorded ``priority_class_revoked`` by that admin at once, not by the
        next hub poll as the hub's doing (hubadmin24 B6). Nothing before the first hub listing; the job ids
        held or released (a cycle is asked for when there are some). Store reads and writes: off the event loop."""
        models = self._models
        if models is None or self.caller_of is None:
            return set()
        live = services.list_jobs(user=None, state=_LIVE)
        changed: set[str] = self.teams.update(services, live, models, self.caller_of,
                                              default_team=services.admission.policy.default_team,
                                              now=services.clock.now(), actor=actor, existing=self.empty_groups)
        if changed:
            services.kick()
        return changed

    async def check(self, services: Any, hub: HubClient, *,
                    off_loop: Callable[..., Awaitable[Any]]) -> list[str]:
        """One check (module docstring); the users newly found removed.

        Raises:
            HubLookupError: the hub's user listing could not be read (nothing changes).
        """
        live = await off_loop(services.list_jobs, user=None, state=_LIVE)
        definitions = await off_loop(_active_definitions, services)
        owners = {str(j["user"]) for j in live if j.get("user")} | {str(d.user) for d in definitions}
        if not owners and not self._removed:
            # nothing to hold; the groups are still read for GET quotas (hubadmin22 H7), a hub that does
            # not answer then is no fault to report (the next poll reads them)
            self.empty_groups = frozenset()
            if self.on_models is not None:
                try:
                    self._models = await all_users(hub)  # a removal's groups are read from it (n18)
                    self.on_models(self._models)
                except HubLookupError as exc:
                    log.debug("jupyter_sched: hub groups not read (no live work): %s", exc)
            self._waiting = set()  # no live work: nothing of theirs is left to hold
            self._gone = {}
            self._hold()
            return []
        models = await all_users(hub)
        before, self._models = self._models or {}, models
        self.empty_groups = await _empty_groups(hub, live, models, services.admission.policy.default_team)
        if self.on_models is not None:
            self.on_models(models)
        listed = set(models)
        now = services.clock.now()
        admins = frozenset(name for name, model in models.items() if model.get("admin") is True)
        demoted = sorted((self._admins - admins) & listed) if self._admins is not None else []
        self._admins = admins  # the first check after a start only learns them (a change while down is not said)
        for user in demoted:
            await off_loop(_admin_removed, services, user, models[user], definitions, self.caller_of)
        # team holds first: a re-created owner's job on a team they are no longer in is held before
        # their owner hold ends (red team 18, R4)
        regrouped = False
        if self.caller_of is not None:
            default_team = services.admission.policy.default_team
            regrouped = bool(await off_loop(self.teams.update, services, live, models, self.caller_of,
                                            default_team=default_team, now=now, existing=self.empty_groups,
                                            # the hub never changes a class grant: the settings did (B6)
                                            class_actor=SETTINGS_ACTOR))  # store reads and audit writes
        held_jobs = self.teams.held()
        for user in [u for u in self._removed if u in listed]:
            del self._removed[user]
            still = [str(j["id"]) for j in live if j.get("user") == user and str(j.get("id")) in held_jobs]
            await off_loop(_returned, services, user, still)
        for user in [u for u in self._removed if u not in owners]:
            del self._removed[user]  # nothing of theirs is left to hold
        self._groups = {u: g for u, g in self._groups.items() if u in self._removed}
        found, unknown = [], set()
        for user in sorted(owners - listed - set(self._removed)):
            exists = await user_exists(hub, user)
            if exists is False:
                self._removed[user] = now
                groups = (before.get(user) or {}).get("groups")
                if isinstance(groups, list) and groups:  # JupyterHub dropped them with the user (n18)
                    self._groups = {**self._groups, user: tuple(sorted(str(g) for g in groups))}
                found.append(user)
            elif exists is None:  # the hub did not answer about them: still not confirmed
                unknown.add(user)
        self._waiting &= unknown
        self._hold()
        default_team = services.admission.policy.default_team
        self._gone = {str(j["id"]): JobHold(team=str(j["team"]), since=self._removed[str(j["user"])])
                      for j in live if j.get("user") in self._removed and j.get("state") in ("admitted", "running")
                      and j.get("team") and j.get("team") != default_team}
        for user in found:  # after the hold: the record says what their work is at that moment
            await off_loop(_offboard, services, user, definitions, self.grace_s, self._groups.get(user, ()))
        if self.grace_s > 0:
            due = {u for u, since in self._removed.items() if (now - since).total_seconds() >= self.grace_s}
            running = [j for j in live if j.get("user") in due and j.get("state") in ("admitted", "running")]
            if running:
                await off_loop(_stop, services, running)
        if found or regrouped:
            services.kick()  # their pending jobs' reasons say "held" at the next cycle
        return found


_GROUPS_ASKED = 50
"""Most teams one check asks the hub about (:func:`_empty_groups`); the others stay unknown (taken as gone)."""


async def _empty_groups(hub: HubClient, live: Iterable[Mapping[str, Any]], models: Mapping[str, Mapping[str, Any]],
                        default_team: str) -> frozenset[str]:
    """The teams of ``live`` work that no user of the hub's listing ``models`` is in but that the hub still has
    as groups, each asked alone (:func:`~.hubapi.group_exists`): their members were removed, the group was
    not renamed or deleted (verify24 V4: "team nlp is no hub group any more" of an emptied group). A team the
    hub does not answer about is left out (taken as gone, as before); none when no model says its groups."""
    said = [m["groups"] for m in models.values() if isinstance(m.get("groups"), list)]
    if not said:
        return frozenset()
    listed = {str(g) for groups in said for g in groups}
    teams = sorted({str(j.get("team")) for j in live if j.get("team")} - listed - {default_team})
    found = set()
    for team in teams[:_GROUPS_ASKED]:
        if await group_exists(hub, team) is True:
            found.add(team)
    return frozenset(found)


def unconfirmed_warning(hub_url: str, error: object, owners: Iterable[str]) -> str:
    """The start-up WARNING of a hub that did not say who its users are (hubadmin23 A5): the hub,
    its answer, and whose queued work stays held until it does."""
    names = sorted(owners)
    return (f"the hub ({hub_url}) did not say who its users are ({error}): pending work queued before this start "
            f"by {len(names)} owner(s) ({_ids_of(names)}) stays held until it does, so that a user deleted meanwhile "
            "never has work started as their account (work submitted since is not held); asked again every "
            "c.HubSchedApp.hub_poll_interval_s — check that the hub runs and that this service's token is valid")


def _active_definitions(services: Any) -> list[Any]:
    from ..store.definitions import list_definitions

    with services.store.transaction(write=False) as tx:
        return list_definitions(tx, active_only=True)


def _ids(jobs: Iterable[Mapping[str, Any]]) -> str:
    return _ids_of([str(j["id"]) for j in jobs])


def _ids_of(ids: list[str]) -> str:
    return ", ".join(ids[:_SHOWN]) + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def _offboard(services: Any, user: str, definitions: list[Any], grace_s: float,
              groups: tuple[str, ...] = ()) -> None:
    """Pause ``user``'s definitions, then write the one audit record and event for admins, naming
    their work as the store has it now (read after their hold is in force: a job the engine admitted
    while the hub was asked is named running, never "held, never started": hubadmin23 A5)."""
    live = services.list_jobs(user=user, state=_LIVE)
    pending = [j for j in live if j.get("state") == "pending"]
    running = [j for j in live if j.get("state") in ("admitted", "running")]
    paused = _pause(services, [d for d in definitions if d.user == user], whose="removed user")
    said = [f"{user} is no longer a user of this hub"]
    if pending:
        said.append(f"{len(pending)} pending job(s) held, never started as their account ({_ids(pending)})")
    if running:
        fate = (f"stopped {grace_s:g} s from now (c.HubSchedApp.removed_user_grace_s)" if grace_s > 0
                else "left running outside their teams' guarantees (the teams' members may take their GPUs back): "
                     "cancel them if they must stop (c.HubSchedApp.removed_user_grace_s stops them after a grace)")
        said.append(f"{len(running)} running job(s)/lease(s) {fate} ({_ids(running)})")
    if paused:
        said.append(f"{len(paused)} definition(s) paused ({', '.join(paused[:_SHOWN])})")
    message = "; ".join(said)
    details = {"user": user, "held": [j["id"] for j in pending], "running": [j["id"] for j in running],
               "paused_definitions": paused, "grace_s": grace_s, "groups": list(groups)}
    services.store.add_event(actor=_ACTOR, action=OWNER_REMOVED_ACTION, job_id=None, user=user, message=message,
                             details=details)
    services.bus.publish({"type": OWNER_REMOVED_ACTION, "data": {**details, "message": message}})
    log.warning("jupyter_sched: %s", message)


def _pause(services: Any, definitions: list[Any], *, whose: str) -> list[str]:
    """Pause ``definitions`` as ``jupyterhub``; the ids paused (one deleted meanwhile is passed over)."""
    paused = []
    for definition in definitions:
        try:
            services.definitions.pause(system_caller(_ACTOR), definition.id)
        except SchedError as err:  # deleted meanwhile
            log.debug("jupyter_sched: definition %s of %s %s not paused: %s", definition.id, whose, definition.user, err)
            continue
        paused.append(definition.id)
    return paused


def _admin_removed(services: Any, user: str, model: Mapping[str, Any], definitions: list[Any],
                   caller_of: CallerOf | None) -> None:
    """``user``'s hub admin flag was removed (hubadmin26 B12: nothing recorded it, and the definitions
    they made as an admin charging a team they are not in fired into a refusal every time): pause
    those definitions (as a removed owner's are), then one ``admin_removed`` record and event, by
    ``jupyterhub``. Nothing when ``admin_users`` (the settings) still makes them an admin."""
    caller = caller_of(user, model) if caller_of is not None else None
    if caller is not None and caller.admin:
        return
    paused = _pause(services, [d for d in definitions if d.user == user and caller is not None
                               and not caller.may_charge(d.team)], whose="former admin")
    message = f"{user} is no longer a hub admin"
    if paused:
        message += (f"; {len(paused)} definition(s) charging teams they are not in paused ({_ids_of(paused)}): "
                    "change the team with jupyter-sched definitions edit ID --team, then resume")
    details = {"user": user, "paused_definitions": paused}
    services.store.add_event(actor=_ACTOR, action=ADMIN_REMOVED_ACTION, job_id=None, user=user, message=message,
                             details=details)
    services.bus.publish({"type": ADMIN_REMOVED_ACTION, "data": {**details, "message": message}})
    log.warning("jupyter_sched: %s", message)


def _returned(services: Any, user: str, still: list[str]) -> None:
    """``owner_returned``; ``still``: their pending jobs held on teams they are no longer in (``team_left``)."""
    may = ("their held jobs may start" if not still else
           f"their held jobs may start, except {len(still)} on teams they are no longer in ({_ids_of(still)}: "
           f"see {TEAM_LEFT_ACTION})")
    services.store.add_event(actor=_ACTOR, action=OWNER_RETURNED_ACTION, job_id=None, user=user,
                             message=f"{user} is a user of this hub again: {may} (their paused definitions stay "
                                     "paused until they resume them)", details={"user": user, "still_held": still})
    services.kick()


def _stop(services: Any, running: list[Mapping[str, Any]]) -> None:
    for job in running:
        try:
            services.jobs.cancel(system_caller(_ACTOR), str(job["id"]), by="the hub service",
                                 why=f"{REMOVED_WHY} (c.HubSchedApp.removed_user_grace_s passed)")
        except SchedError as err:  # finished meanwhile
            log.debug("jupyter_sched: %s not stopped: %s", job.get("id"), err)
