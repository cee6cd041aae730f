"""The config file's team memberships (``c.SchedApp.user_teams``) at a start, against those an admin
set at run time (``PUT quotas``' ``user_teams``).

The rule is the quota lines' (:mod:`.quota_config`, new user 20, N26), for memberships (new user 20,
N21: a PUT's team was added after the config's list — "root's team is exp" made exp root's third team —
and GET quotas showed none of the config's memberships):

1. the config's memberships are applied at a start only when they **changed** since they were last
   applied (their digest is kept in the store's ``quota_source`` row ``user_teams``); unchanged, the
   memberships in force — maybe an admin's PUT quotas — stay;
2. changed memberships replace those in force; when those differ, the start-up log says so at WARNING,
   naming each user whose teams change and who set the replaced ones, and the audit row
   (``team_members_changed``, actor ``config``) says the same;
3. a store that never recorded the config's memberships (written before schema version 15): the
   memberships in force there were the config's, then the one team a PUT quotas gave a user; both are
   kept, in that order (said at WARNING when a PUT had given any), and the config is remembered — from
   then on 1 and 2 hold.

No config memberships (``user_teams`` empty or unset): the config does not manage them and nothing
changes — unless the memberships in force are the config's (it was emptied: they are emptied, as any
change; red team 18, R4: a member taken out of the settings while the server was down). Hub mode takes teams from hub groups: its service applies none. ``GET quotas`` says who set
the memberships in force (``user_teams_source``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..store.quota_source import CONFIG_ACTOR, MEMBERS, config_digest
from .quota_config import source_text

if TYPE_CHECKING:
    from .quotas import QuotasService

__all__ = ["SETTING", "apply_config_members", "member_changes", "members_digest"]

SETTING = "c.SchedApp.user_teams"
"""The config file's setting of team memberships."""

Members = Mapping[str, tuple[str, ...]]


def members_digest(members: Members) -> str:
    """SHA-256 (hex) of ``{user: (team, ...)}``: user order does not change it, team order does (the
    first team is the user's default)."""
    return config_digest([{"user": user, "teams": list(teams)} for user, teams in sorted(members.items())])


def member_changes(old: Members, new: Members) -> list[str]:
    """What replacing the memberships ``old`` by ``new`` does, one phrase per user: ``removed ana (ml)``,
    ``added bo (ml, cv)``, ``changed root: ml, vision → exp``; removed first, then added, then changed,
    each by user name. Empty: the same memberships."""
    said = [f"removed {user} ({', '.join(teams)})" for user, teams in sorted(old.items()) if user not in new]
    said += [f"added {user} ({', '.join(teams)})" for user, teams in sorted(new.items()) if user not in old]
    said += [f"changed {user}: {', '.join(old[user])} → {', '.join(teams)}" for user, teams in sorted(new.items())
             if user in old and tuple(old[user]) != tuple(teams)]
    return said


def apply_config_members(quotas: QuotasService, members: Members, logger: logging.Logger) -> None:
    """Apply the config file's ``members`` (``{user: (team, ...)}``, already checked by
    :func:`~..admission.policy.parse_user_teams`) at a start, by the rule of the module docstring.
    The holds of queued jobs are recomputed when the services start (:mod:`.membership`)."""
    store = quotas.ctx.store
    digest = members_digest(members)
    source = store.quota_source(MEMBERS)
    if source is not None and source.config_digest == digest:
        return  # as last applied: the memberships in force (maybe an admin's PUT) stay (N21, as N26)
    if not members and (source is None or source.set_by != CONFIG_ACTOR):
        return  # no config memberships: not the config's to manage (an admin's PUT, or none, stays)
    in_force = dict(store.quota_set().user_teams)
    if source is None and in_force:  # before version 15: the config's teams first, then a PUT's one team
        kept = {user: tuple(dict.fromkeys((*members.get(user, ()), *in_force.get(user, ()))))
                for user in sorted(set(members) | set(in_force))}
        added = member_changes(dict(members), kept)
        last = store.list_events(action="quotas_changed", newest_first=True, limit=1)
        actor = last[0].actor if last and last[0].actor != CONFIG_ACTOR and added else CONFIG_ACTOR
        why = (f"user_teams: the config's memberships ({SETTING}) are kept with the teams PUT quotas gave at run "
               f"time after them ({'; '.join(added)}) — from now on the config replaces the memberships only "
               f"when {SETTING} changes") if added else None
        if why:
            logger.warning("jupyter_sched: %s", why)
        quotas.set_members(actor, kept, config_digest=digest, message=why, notify=False)
        return
    changes = member_changes(in_force, members)
    replaced = f"the memberships set by {source_text(source, SETTING)}" if source is not None and in_force \
        else "the memberships in force"
    why = (f"user_teams: {SETTING} changed since it was last applied"
           f"{' at ' + source.config_at.strftime('%Y-%m-%d %H:%M UTC') if source and source.config_at else ''}: "
           f"the config's teams of {len(members)} users replace {replaced} ({'; '.join(changes)})")
    if changes and in_force:
        logger.warning("jupyter_sched: %s", why)
    quotas.set_members(CONFIG_ACTOR, members, config_digest=digest, message=why if in_force else None, notify=False)
