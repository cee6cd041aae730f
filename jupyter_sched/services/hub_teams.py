"""Hub mode: who is in which team, as the hub's groups say (hubadmin22 H7).

In hub mode a user's teams are their hub groups (red team 21, R6), so the stored ``user_teams`` is
never read and GET quotas answered ``"user_teams": {}``: an admin could not see from the scheduler
who is in which team, and a quota line for a team that is no hub group (a typo, ``vison`` for
``vision``) was taken without a word — it applies to nobody. The hub poll's user listing
(:meth:`~jupyter_sched.hub.offboard.Offboarding.check`, every ``c.HubSchedApp.hub_poll_interval_s``)
is kept here, read-only: GET quotas shows it as ``user_teams`` (with when it was read), and each
line whose team no listed user is in gets one warning naming the hub group it may have meant.

Pure: no I/O; the hub service hands the models in.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..model import GPU_MILLI, QuotaSet
from ..model.case_names import case_twin
from ..model.units import gpus_phrase
from ..store import JobRecord

__all__ = ["HubGroups", "back_group_text", "groups_of_models", "no_group_warnings", "unlisted_group_warning"]


@dataclass(frozen=True)
class HubGroups:
    """The hub's groups as last read.

    Attributes:
        members: ``{user: (group, ...)}`` of every listed user whose model says their groups (a model
            without ``groups``, the token lacking ``read:users:groups``, is left out, never "in none").
        read_at: when the listing was read (UTC).
        empty: groups the hub has that no listed user is in, as the hub said when asked about each (only
            teams of live work are asked: :meth:`~jupyter_sched.hub.offboard.Offboarding.check`). Such a
            group still exists — its members were removed — and is no renamed or deleted group (verify24 V4).
    """

    members: Mapping[str, tuple[str, ...]]
    read_at: datetime
    empty: frozenset[str] = frozenset()

    @property
    def groups(self) -> set[str]:
        """Every group at least one listed user is in."""
        return {g for teams in self.members.values() for g in teams}


def groups_of_models(models: Mapping[str, Mapping[str, Any]], now: datetime,
                     empty: frozenset[str] = frozenset()) -> HubGroups:
    """:class:`HubGroups` of the hub's user models ``{name: model}`` (``model["groups"]``: a list of names),
    with ``empty``: groups the hub said exist that no user is in."""
    members = {str(name): tuple(sorted(str(g) for g in model["groups"]))
               for name, model in models.items() if isinstance(model.get("groups"), list)}
    return HubGroups(members=dict(sorted(members.items())), read_at=now, empty=empty - {g for t in members.values()
                                                                                      for g in t})


def no_group_warnings(quotas: QuotaSet, hub: HubGroups, default_team: str,
                      grants: Mapping[str, Any] | None = None, live: Iterable[JobRecord] = ()) -> list[str]:
    """One warning per quota line's team that no hub user is in (the default team aside: users in no
    group are charged to it), e.g. ``team vison: no hub group of that name, so the line applies to
    nobody — did you mean vision?``; the nearest group (letter case first, then spelling) when one is
    close. Then the same for the teams budgets, team policies and ``grants`` (``c.SchedApp.priority_grants``'s
    ``teams``) name (hubadmin24 B10: a budget for ``nlpp`` and a grant to the renamed ``vision`` were
    taken without a word), e.g. ``team nlpp: no hub group of that name (…), so its budget
    (budgets[0]) applies to nobody — did you mean nlp?``. Empty when every team named is a group with members.

    A dissolved team (its group deleted) whose ``live`` work still runs on its lines is said as such
    — the lines govern that work until it ends, so removing them "as nobody is in it" would turn it
    into work of a team without a line (hubadmin25 B3): :func:`dissolved_text`."""
    groups = hub.groups
    said = []
    running: dict[str, list[JobRecord]] = {}
    for record in live:
        if record.job.state.holds_gpus and record.job.spec.resources.total_milli > 0:
            running.setdefault(record.job.spec.team, []).append(record)
    for team in sorted({q.team for q in quotas.quotas} - groups - {default_team}):
        near = _near(team, groups)
        if running.get(team):
            said.append(dissolved_text(team, running[team], near))
            continue
        said.append(f"team {team}: no hub group of that name (no hub user is in one), so the line applies to "
                    f"nobody" + (f" — did you mean {near}?" if near else
                                 " — add the group on the hub (/hub/api/groups) or remove the line"))
    named: dict[str, list[str]] = {}
    for i, budget in enumerate(quotas.budgets):
        named.setdefault(budget.team, []).append(f"its budget (budgets[{i}])")
    for i, policy in enumerate(quotas.teams):
        named.setdefault(policy.team, []).append(f"its team policy (teams[{i}])")
    for team in sorted(grants or {}):
        named.setdefault(str(team), []).append("its priority grant (c.SchedApp.priority_grants.teams)")
    for team in sorted(set(named) - groups - {default_team}):
        near = _near(team, groups)
        what = " and ".join(named[team])
        said.append(f"team {team}: no hub group of that name (no hub user is in one), so {what} "
                    f"appl{'ies' if len(named[team]) == 1 else 'y'} to nobody"
                    + (f" — did you mean {near}?" if near else
                       " — add the group on the hub (/hub/api/groups), or remove or rename it"))
    return said


def dissolved_text(team: str, running: list[JobRecord], near: str | None = None) -> str:
    """``team rl: no hub group of that name any more (dissolved?), but its running work still counts on
    its lines: 4 GPUs (j-1, j-2, j-3) — keep the lines until it ends, or move it to its owners' new team
    with jupyter-sched teams move rl --to TEAM (its pending work is held); a group deleted on the hub
    comes back at the hub's next restart while c.JupyterHub.load_groups names it`` (hubadmin25 B3)."""
    gpus = sum(r.job.spec.resources.total_milli for r in running) / GPU_MILLI
    ids = ", ".join(r.job.id for r in running[:_JOBS_SAID]) + (f" and {len(running) - _JOBS_SAID} more"
                                                              if len(running) > _JOBS_SAID else "")
    target = near or "TEAM"
    return (f"team {team}: no hub group of that name any more (dissolved?), but its running work still counts on "
            f"its lines: {gpus_phrase(gpus)} ({ids}) — keep the lines until it ends, or move it to its owners' new "
            f"team with jupyter-sched teams move {team} --to {target} (its pending work is held); a group deleted on "
            f"the hub comes back at the hub's next restart while c.JupyterHub.load_groups names it")


_JOBS_SAID = 5
"""Running jobs named in :func:`dissolved_text` (the rest counted)."""


def _near(team: str, groups: set[str]) -> str | None:
    """The hub group ``team`` most likely meant: its letter-case twin, else the closest spelling."""
    return case_twin(team, groups) or next(iter(difflib.get_close_matches(team, sorted(groups), n=1)), None)


_GROUPS_SAID = 20
"""Hub groups named in :func:`unlisted_group_warning` (the rest counted)."""


def unlisted_group_warning(quotas: QuotaSet, hub: HubGroups, default_team: str, limit: float | None) -> str:
    """The hub groups (the default team aside: the start-up log names it) that have members but no
    quota line while other lines exist, with their member counts and what each may use under
    ``limit`` (GPUs; None: no limit), said once the hub's groups are first read (hubadmin23 A2: the
    start-up, before any hub poll, named only the default team) — e.g. ``hub groups nlp (2 members),
    research (3 members) have no quota line: each may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit);
    give them a line with PUT quotas``; "" when there are none."""
    from ..wording.quota import UNLISTED_SETTING

    teams = [t for t in quotas.unlisted(hub.groups) if t != default_team]
    if not teams:
        return ""
    counts = {t: sum(1 for groups in hub.members.values() if t in groups) for t in teams}
    named = ", ".join(f"{t} ({counts[t]} member{'s' if counts[t] != 1 else ''})" for t in teams[:_GROUPS_SAID])
    if len(teams) > _GROUPS_SAID:
        named += f" and {len(teams) - _GROUPS_SAID} more"
    many = len(teams) > 1
    head = f"hub group{'s' if many else ''} {named} ha{'ve' if many else 's'} no quota line"
    if limit is None:
        return f"{head}: no limit: {'they' if many else 'it'} may borrow every idle GPU ({UNLISTED_SETTING} is None)"
    return (f"{head}: {'each' if many else 'it'} may use {limit:g} GPUs ({UNLISTED_SETTING}); give "
            f"{'them' if many else 'it'} a line with PUT quotas")


def back_group_text(group: str, hub: HubGroups) -> str:
    """The service log's line when a hub group that had vanished is listed again (hubadmin24 B15: the hub
    config's ``c.JupyterHub.load_groups`` still named the renamed group, and the hub's restart re-created
    it with its members), e.g. ``hub group vision is back (6 members, all also in cv): …``."""
    members = [groups for groups in hub.members.values() if group in groups]
    shared = set.intersection(*(set(g) - {group} for g in members)) if members else set()
    also = f", all also in {', '.join(sorted(shared))}" if shared else ""
    return (f"hub group {group} is back ({len(members)} member{'s' if len(members) != 1 else ''}{also}): its members "
            f"may charge it again and its held jobs may start charged to it; if it was renamed, delete it on the hub "
            f"and remove it from c.JupyterHub.load_groups, which re-creates it at each hub restart")
