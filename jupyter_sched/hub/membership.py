"""Work charged to a team its owner has left (red team 18, R4).

Admission checks the team and the priority class of a request against its caller when it is
submitted (:mod:`jupyter_sched.admission`). Before this module nothing looked again: red18c queued
a 2-GPU job on ``teama``, an admin removed red18c from hub group ``teama``, and the job started later
charged to teama's quota, budget and fair share, so teama's own member was then refused by the
quota it filled. A removed-then-re-created user's held job likewise pended again on a team they
were no longer in. Slurm pends such a job ``Reason=InvalidAccount``; Kueue re-evaluates a Workload
at every admission.

At every offboarding check (:meth:`~.offboard.Offboarding.check`, every ``hub_poll_interval_s``)
the owners of live work whom the hub lists are resolved as a request of theirs would be (their hub
groups and admin flag from the hub's user model, ``c.SchedApp.admin_users``, the stored quota set:
:func:`hub_caller_of`), and then:

* each **pending** job whose owner may no longer charge its team, or is no longer granted its class
  there, is held (``Snapshot.held_jobs``; it pends with code ``TeamMembership`` and never starts);
  nothing is cancelled, so an admin who removed the wrong user adds them back and the job goes on;
* one ``team_left`` audit record and event per (user, team[, class]) found, naming the held jobs
  and the user's **running** work still charged to that team (left running, as offboarding does:
  an admin cancels it if it must stop). Once its owner is no longer a member, that work is outside
  the team's guarantee (``details.reclaimable``; :meth:`TeamHolds.in_force`): the team's remaining
  members take its GPUs back as reclaim takes borrowed work, and a lease's keepalive no longer
  extends it (red team 24, R6: a left member's lease held the team's guarantee, its members waiting
  with no word why); a later pending job held on the same change gets its own,
  and so does running work not named before (admitted before admission saw the change, started
  before a check could hold it: red team 19, R2);
* one ``team_rejoined`` record when the owner may charge it again (their held jobs may start).

A class no longer granted (the owner still a member) is its own change, never "left the team" (hubadmin24
B6: revoking ``high`` was audited ``team_left`` by ``jupyterhub``): ``priority_class_revoked``, and
``priority_class_regranted`` once granted again, each naming the class, by whoever changed it — the
admin whose ``PUT quotas`` changed a team policy (embedded; in hub mode the central service checks again
right after that request: :meth:`~.offboard.Offboarding.recheck`), else ``jupyter_sched`` (the server's
settings, ``c.SchedApp.priority_grants``, read at its start). The hub never changes a class: a check
after a hub poll that finds one says ``jupyter_sched``, not ``jupyterhub``.

Safety: a user model without ``"groups"`` (the service's token lacks ``read:users:groups``) is
*unknown* and holds nothing; the fallback ``default_team`` is never held (a user later added to a
group keeps the default-team jobs they queued while in none). Admin status comes from the hub
model's ``admin`` flag and ``admin_users``: a token's admin *scope* exists only in a request, so an
admin by scope alone is resolved as a member, and their job on a team they are not in is held.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from ..admission import Caller
from ..model.units import clock_text
from ..scheduling.snapshot import JobHold

__all__ = ["CLASS_REGRANTED_ACTION", "CLASS_REVOKED_ACTION", "SETTINGS_ACTOR", "TEAM_LEFT_ACTION",
           "TEAM_REJOINED_ACTION", "CallerOf", "TeamHolds", "hub_caller_of"]

log = logging.getLogger(__name__)

TEAM_LEFT_ACTION = "team_left"
"""Audit action and event type: an owner of live work may no longer charge its team (or class)."""
TEAM_REJOINED_ACTION = "team_rejoined"
"""Audit action: that owner may charge it again (their held jobs may start)."""
CLASS_REVOKED_ACTION = "priority_class_revoked"
"""Audit action and event type: an owner of live work, still a member of its team, is no longer granted its
priority class there (hubadmin24 B6: was ``team_left``)."""
CLASS_REGRANTED_ACTION = "priority_class_regranted"
"""Audit action: that class is granted to them there again (their held jobs may start)."""
SETTINGS_ACTOR = "jupyter_sched"
"""Who changed a class found changed by no request: the server's settings (``c.SchedApp.priority_grants``)."""

CallerOf = Callable[[str, Mapping[str, Any]], Caller | None]
"""``(user name, hub user model) -> Caller``, or None when the model does not say the user's groups."""

_ACTOR = "jupyterhub"
_RESTORED = 2000
"""Newest ``team_left`` (and ``team_rejoined``) records read back at the first check after a start."""
_SHOWN = 20
_Key = tuple[str, str, str | None]  # (user, team, class no longer granted or None: no longer a member)


def hub_caller_of(services: Any, admin_users: Callable[[], Collection[str]]) -> CallerOf:
    """The :data:`CallerOf` of the central service: a request's :class:`Caller` rebuilt from the
    hub's user model (``groups``, ``admin``) plus ``admin_users``, through ``services.caller``."""

    def caller_of(name: str, model: Mapping[str, Any]) -> Caller | None:
        groups = model.get("groups")
        if not isinstance(groups, list):  # not said (token scope): unknown, never "in no group"
            return None
        admin = model.get("admin") is True or name in set(admin_users())
        caller: Caller = services.caller(name, admin=admin, groups=[str(g) for g in groups])
        return caller

    return caller_of


def _why(caller: Caller, team: str, priority: str) -> _Key | None:
    if not caller.may_charge(team):
        return caller.user, team, None
    if priority not in caller.classes_for(team):
        return caller.user, team, priority
    return None


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:_SHOWN]) + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def _change(key: _Key) -> str:
    user, team, priority = key
    return (f"{user} is no longer a member of team {team}" if priority is None
            else f"priority {priority} is no longer granted to {user} in team {team}")


class TeamHolds:
    """The held jobs of one central service and the changes already announced. The announced ones
    are read back from the audit log at the first check after a start (:meth:`_restore`), so a
    restart neither announces a change again nor moves the time it was found (hubadmin22 H2)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds: dict[str, JobHold] = {}  # replaced whole on change: the engine's thread reads it
        self._in_force: dict[str, JobHold] = {}  # _holds and the running work charged to a team its owner left
        self._found: dict[_Key, datetime] = {}  # each change announced, with when it was found
        self._told: set[str] = set()  # running work already named in a team_left record
        self._named: set[str] = set()  # pending jobs named by the records read back at start
        self._restored = False

    def _restore(self, services: Any) -> None:
        """Read back the changes still in force from the newest :data:`_RESTORED` ``team_left`` and
        ``team_rejoined`` records, oldest first: a ``team_left`` adds its change (found at its
        ``since``) and the work it named; a later ``team_rejoined`` of the same change drops it."""
        rows = [row for action in (TEAM_LEFT_ACTION, TEAM_REJOINED_ACTION, CLASS_REVOKED_ACTION, CLASS_REGRANTED_ACTION)
                for row in services.store.list_events(action=action, limit=_RESTORED, newest_first=True)]
        named: dict[_Key, set[str]] = {}
        for row in sorted(rows, key=lambda r: r.id):
            details = row.details or {}
            user, team, priority = details.get("user"), details.get("team"), details.get("priority")
            if not isinstance(user, str) or not isinstance(team, str) or not isinstance(priority, str | None):
                continue
            key: _Key = (user, team, priority)
            if row.action in (TEAM_REJOINED_ACTION, CLASS_REGRANTED_ACTION):
                self._found.pop(key, None)
                named.pop(key, None)
                continue
            try:
                since = datetime.fromisoformat(str(details.get("since") or ""))
            except ValueError:
                since = row.at
            since = since if since.tzinfo is not None else row.at
            self._found.setdefault(key, since)
            ids = [str(i) for i in (*details.get("held", ()), *details.get("running", ())) if isinstance(i, str)]
            named.setdefault(key, set()).update(ids)
        self._named = {job for ids in named.values() for job in ids}
        self._told = set(self._named)

    def held(self) -> Mapping[str, JobHold]:
        """``{job id: JobHold}`` of pending jobs held."""
        return self._holds

    def in_force(self) -> Mapping[str, JobHold]:
        """The engine's ``held_jobs`` source: :meth:`held` and the running work still charged to a
        team its owner is no longer a member of (``Snapshot.held_jobs``: quota reclaim for a team
        the owner is in now never takes it, hubadmin23 A11)."""
        return self._in_force

    def update(self, services: Any, live: Iterable[Mapping[str, Any]], listed: Mapping[str, Mapping[str, Any]],
               caller_of: CallerOf, *, default_team: str, now: datetime, actor: str = _ACTOR,
               existing: Collection[str] = (), class_actor: str | None = None) -> set[str]:
        """Recompute the holds from ``live`` jobs of users the hub ``listed`` (module docstring) and
        write the records of what changed, as ``actor`` (the hub; embedded: the admin whose ``PUT
        quotas`` changed the membership, :mod:`jupyter_sched.services.membership`); the job ids held
        or released by this update. ``existing``: groups the hub said exist although no listed user is
        in one — a team among them is no vanished group (``JobHold.vanished`` False: its owner was
        removed from it, and an admin may add them back; verify24 V4). ``class_actor``: who changed the
        classes granted (the ``priority_class_*`` records; default ``actor``, module docstring).

        One update at a time (a lock): the hub poll's and a ``PUT quotas`` recheck may overlap."""
        with self._lock:
            return self._update(services, live, listed, caller_of, default_team=default_team, now=now, actor=actor,
                                existing=existing, class_actor=class_actor or actor)

    def _update(self, services: Any, live: Iterable[Mapping[str, Any]], listed: Mapping[str, Mapping[str, Any]],
                caller_of: CallerOf, *, default_team: str, now: datetime, actor: str, existing: Collection[str],
                class_actor: str) -> set[str]:
        if not self._restored:
            self._restore(services)
            self._restored = True
        callers: dict[str, Caller | None] = {}
        holds: dict[str, JobHold] = {}
        moved: dict[str, JobHold] = {}  # running work charged to a team its owner left
        groups = _hub_groups(listed)
        if groups is not None:
            groups |= set(existing)
        ran: set[str] = set()  # pending jobs that ran before (requeued): never "never started"
        left: dict[_Key, tuple[list[str], list[str]]] = {}  # per change: (pending ids, running ids)
        unseen: set[str] = set()
        for job in live:
            user, team = str(job.get("user") or ""), str(job.get("team") or "")
            if user not in listed:  # missed by the paged walk, or removed (held by owner): unknown, no change
                unseen.add(user)
                if (kept := self._holds.get(str(job.get("id")))) is not None and job.get("state") == "pending":
                    holds[str(job["id"])] = kept
                continue
            if not team or team == default_team:
                continue
            if user not in callers:
                callers[user] = caller_of(user, listed[user])
            caller = callers[user]
            if caller is None or (key := _why(caller, team, str(job.get("priority") or "normal"))) is None:
                continue
            since = self._found.get(key, now)
            pending, running = left.setdefault(key, ([], []))
            hold = JobHold(team=team, since=since, teams=caller.teams, priority=key[2],
                           vanished=groups is not None and team not in groups)
            if job.get("state") == "pending":
                pending.append(str(job["id"]))
                holds[str(job["id"])] = hold
                if int(job.get("attempts") or 0) > 0:
                    ran.add(str(job["id"]))
            else:
                running.append(str(job["id"]))
                if key[2] is None:  # no longer a member (a class no longer granted: still the team's work)
                    moved[str(job["id"])] = hold
        before = self._holds
        changed = set(before) ^ set(holds)
        self._holds = holds
        self._in_force = {**moved, **holds}
        told: set[str] = set()
        for key, (pending, running) in left.items():
            new = [j for j in pending if j not in before and j not in self._named]
            # running work not named yet: admitted or started after the change (red team 19, R2: admitted in
            # the window before admission saw it, it started before this check could hold it)
            started = [j for j in running if j not in self._told]
            if key not in self._found or new or started:
                self._announce(services, key, new, started, now, actor if key[2] is None else class_actor, ran=ran,
                               found=self._found.get(key))
            self._found.setdefault(key, now)
            told.update(running)
        self._told = told
        self._named = set()  # read back for the first check only: later ones compare with their own holds
        for key in [k for k in self._found if k not in left and k[0] not in unseen]:
            del self._found[key]
            caller = callers.get(key[0])
            if caller is not None and caller.may_charge(key[1]) and (key[2] is None or key[2] in caller.classes_for(key[1])):
                _rejoined(services, key, actor if key[2] is None else class_actor)  # else: its work ended, or the
                # user is unknown now
        return changed

    def _announce(self, services: Any, key: _Key, held: list[str], running: list[str], now: datetime,
                  actor: str, *, ran: Collection[str] = (), found: datetime | None = None) -> None:
        """One ``team_left`` record (``priority_class_revoked`` for a class no longer granted), worded from the
        jobs' states at this check: a pending job that ran before (requeued by a preemption) is "not started
        again", never "never started" (hubadmin23 A11: written 2 s after a 5-minute run was reclaimed).

        ``found``: when this change was announced before, if it was — the record then names only the work
        it adds (a running job reclaimed and now held, work started after the change) and keeps the
        change's first ``since``, so one removal reads as one removal (verify25: a reclaim 6 s after a
        member left wrote a second "is no longer a member" record with a new time)."""
        user, team, priority = key
        head = _change(key) if found is None else f"{_change(key)} (found {clock_text(found, now)}, recorded then)"
        said: list[str] = []
        fresh = [j for j in held if j not in ran]
        again = [j for j in held if j in ran]
        if fresh:
            said.append(f"{len(fresh)} pending job(s) held, never started charged to {team} ({_ids(fresh)})")
        if again:
            said.append(f"{len(again)} pending job(s) held that ran before (requeued), not started again charged "
                        f"to {team} ({_ids(again)})")
        if running and priority is None:  # outside the team's guarantee from now (red team 24, R6)
            said.append(f"{len(running)} running job(s)/lease(s) still charged to {team}, left running outside "
                        f"{team}'s guarantee: {team}'s members may take their GPUs back (grace period and minimum "
                        f"runtime kept), a lease is not renewed; cancel them if they must stop ({_ids(running)})")
        elif running:
            said.append(f"{len(running)} running job(s)/lease(s) still charged to {team}, left running: "
                        f"cancel them if they must stop ({_ids(running)})")
        message = head + (" — since then: " if found is not None and said else "; " if said else "") + "; ".join(said)
        details = {"user": user, "team": team, "priority": priority, "held": held, "running": running,
                   "since": (found or now).isoformat(), **({"follow_up": True} if found is not None else {}),
                   **({"reclaimable": running} if priority is None else {})}
        action = TEAM_LEFT_ACTION if priority is None else CLASS_REVOKED_ACTION
        services.store.add_event(actor=actor, action=action, job_id=held[0] if len(held) == 1 else None,
                                 user=user, message=message, details=details)
        services.bus.publish({"type": action, "data": {**details, "actor": actor, "message": message}})
        log.warning("jupyter_sched: %s", message)


def _hub_groups(listed: Mapping[str, Mapping[str, Any]]) -> set[str] | None:
    """The hub groups the listed users' models name (a group no listed user is in is unknown here:
    GET quotas says "no hub group of that name (no hub user is in one)" of it too), or None when no
    model says its groups (embedded mode; a hub token without ``read:users:groups``)."""
    found = [m["groups"] for m in listed.values() if isinstance(m.get("groups"), list)]
    return {str(g) for gs in found for g in gs} if found else None


def _rejoined(services: Any, key: _Key, actor: str) -> None:
    user, team, priority = key
    change = (f"{user} is a member of team {team} again" if priority is None
              else f"priority {priority} is granted to {user} in team {team} again")
    services.store.add_event(actor=actor, action=TEAM_REJOINED_ACTION if priority is None else CLASS_REGRANTED_ACTION,
                             job_id=None, user=user,
                             message=f"{change}: their held jobs there may start",
                             details={"user": user, "team": team, "priority": priority})
