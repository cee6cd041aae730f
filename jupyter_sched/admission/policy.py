"""Who is in which team and who may use which class: the admin's policy, and caller resolution.

Pure: :func:`resolve_caller` turns an authenticated name (plus hub groups in hub mode), the
stored quota set and the admin's :class:`AdmissionPolicy` into a :class:`~.caller.Caller`. The
edge (:class:`~.gate.Admission`) reads the quota set and the hub groups and calls it.

Team membership, in order (the first is the default team of a request that names none):

1. hub mode: the user's hub groups, groups that are known teams (named by a quota line, budget
   or team policy) first — and nothing else: the hub's groups are the one source there, so that an
   admin who removes a user from a group removes her from the team (red team 21, R6: a membership
   stored by ``PUT quotas`` kept her in it; ``PUT quotas`` now refuses memberships in hub mode);
2. embedded: the stored quota set's ``user_teams[user]``, in its order: the config file's
   ``c.SchedApp.user_teams`` (one team or a list) as last applied, or an admin's ``PUT quotas`` —
   whichever set the memberships last (:mod:`jupyter_sched.services.members_config`; new user 20,
   N21: the config's list and a PUT's team were merged, so a PUT could never make a team a user's own);
3. embedded: every team policy that lists the user in ``members``;
4. nobody named the user: ``default_team`` alone.

An admin may also charge any team an admin named (a quota line, budget, team policy or
``user_teams`` entry): admins set the quotas anyway, and an admin's notebook charges a team's
demo work to it. Made-up teams stay refused for everyone.

Granted classes per team: the team policy's ``allowed_priorities`` (default ``normal``, ``low``),
plus ``c.SchedApp.priority_grants`` for the team and for the user — never beyond what a stored team
policy allows (``normal`` and its list: the core holds any other class; verify 21, V8).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import ValidationError, json_kind
from ..model import QuotaSet
from ..model.validation import fold_priority
from ..queues.limits import TimeLimitRule, time_limit_rules
from .caller import PRIORITY_CLASSES, Caller, PriorityGrants

__all__ = ["DEFAULT_MAX_UNFINISHED", "PENDING_SETTING", "RATE_SETTING", "AdmissionPolicy", "known_teams",
           "parse_user_teams", "resolve_caller", "team_allows"]

PENDING_SETTING = "c.SchedApp.max_pending_jobs_per_user"
"""The server setting a refusal at the pending cap names."""
RATE_SETTING = "c.SchedApp.max_submits_per_user_minute"
"""The server setting a refusal over the submit rate names."""

DEFAULT_MAX_UNFINISHED = 0
"""No limit: the in-process default (scripts, simulations, benchmarks submit thousands as one
user); servers take ``c.SchedApp.max_unfinished_per_user`` (1000 unless configured)."""


@dataclass(frozen=True, slots=True)
class AdmissionPolicy:
    """The admin's admission settings (from ``c.SchedApp``).

    Attributes:
        default_team: the team of users nobody assigned to one.
        user_teams: user → teams, the config file's (``c.SchedApp.user_teams``; the first is their
            default team): the services put them in the store when they change
            (:mod:`jupyter_sched.services.members_config`); callers are resolved from the store.
        grants: extra priority classes per user and per team (``high`` needs one).
        max_unfinished_per_user: most jobs and leases one user may have unfinished (pending,
            admitted, running, preempted) at once; 0 = no limit. One user's flood of pending work
            must not make every other user's queue answer slow (red-team finding 2).
        min_gpu_milli: smallest share of a GPU a fractional request may ask for, in milli-GPUs
            (0 = no minimum, the in-process default; servers take ``c.SchedApp.min_gpu_fraction``,
            0.1 unless configured): hundreds of 1/1000 shares beside another's work took its GPU
            time while charged nothing (red-team 5 finding 2).
        max_pending_per_user: most jobs and leases one user may have pending at once (0 = no
            limit, the in-process default; a hub's central service takes 200 unless configured,
            ``c.SchedApp.max_pending_jobs_per_user``): new user 17, N11 — one hub user queued 300
            jobs in 27 s, every one stored, re-sorted each cycle and listed to everyone.
        submits_per_minute: each user's submit rate, a token bucket of this many submits refilled
            at this many a minute (a burst of that many at once, then one every ``60 / N`` s);
            0 = no limit (the in-process default; a hub's central service takes 120).
        max_carried_bytes_held: most characters of notebooks and scripts all users' unfinished jobs carry in
            the store at once (0 = no limit, the in-process default; servers take
            ``c.SchedApp.max_carried_bytes_held``, 256 MiB unless configured): verify 25, V6.
        time_limits: default and maximum time limits per queue and class (``c.SchedApp.time_limits``;
            :mod:`jupyter_sched.queues.limits`): defaults given at submit, maximums enforced there.
    """

    default_team: str = "default"
    user_teams: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    grants: PriorityGrants = field(default_factory=PriorityGrants)
    max_unfinished_per_user: int = DEFAULT_MAX_UNFINISHED
    min_gpu_milli: int = 0
    max_pending_per_user: int = 0
    submits_per_minute: int = 0
    max_carried_bytes_held: int = 0
    time_limits: tuple[TimeLimitRule, ...] = ()

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> AdmissionPolicy:
        """Build from the plain settings ``default_team``, ``user_teams`` ({user: team | [teams]}),
        ``priority_grants`` ({"users": {user: [classes]}, "teams": {team: [classes]}}) and
        ``max_unfinished_per_user``, ``max_pending_jobs_per_user``, ``max_submits_per_user_minute``,
        ``max_carried_bytes_held`` (ints >= 0), ``time_limits`` (:func:`~..queues.limits.time_limit_rules`).

        Raises:
            ValidationError: a malformed value (field ``user_teams``, ``priority_grants.*`` or
                ``max_unfinished_per_user``, ``time_limits[i]``), a team name a job could not name (blank, control or
                bidirectional characters, too long: ``user_teams.<user>``, ``default_team``).
        """
        from .rules import check_team_name

        user_teams = parse_user_teams(settings.get("user_teams") or {})
        raw = dict(settings.get("priority_grants") or {})
        unknown = sorted(set(raw) - {"users", "teams"})
        if unknown:
            raise ValidationError(f"priority_grants has an unknown key {unknown[0]!r}", field="priority_grants",
                                  hint='use {"users": {"ana": ["high"]}, "teams": {"prod": ["high"]}}')
        grants = PriorityGrants(users=_classes(raw.get("users"), "priority_grants.users"),
                                teams=_classes(raw.get("teams"), "priority_grants.teams"))
        cap, pending, rate, carried = (_count(settings, name, example) for name, example in (
            ("max_unfinished_per_user", 1000), ("max_pending_jobs_per_user", 200), ("max_submits_per_user_minute", 120),
            ("max_carried_bytes_held", 256 << 20)))
        fraction = settings.get("min_gpu_fraction") or 0
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 <= fraction <= 1:
            raise ValidationError(f"min_gpu_fraction must be between 0 and 1 (got {fraction!r})",
                                  field="min_gpu_fraction", hint="e.g. 0.1; 0 = no minimum")
        default_team = str(settings.get("default_team") or "default")
        check_team_name(default_team, "default_team")
        return cls(default_team=default_team, user_teams=user_teams,
                   grants=grants, max_unfinished_per_user=cap, min_gpu_milli=round(float(fraction) * 1000),
                   max_pending_per_user=pending, submits_per_minute=rate, max_carried_bytes_held=carried,
                   time_limits=time_limit_rules(settings.get("time_limits")))


_USER_TEAMS_HINT = 'e.g. {"ana": "ml", "bo": ["ml", "cv"]}: a user\'s first team is charged when a request names none'


def parse_user_teams(raw: Any, where: str = "user_teams") -> dict[str, tuple[str, ...]]:
    """``{user: team | [team, ...]}`` as ``{user: (team, ...)}``: THE rule of ``c.SchedApp.user_teams``
    and of ``PUT quotas``' ``user_teams`` (new user 20, N21: the config took a list, the PUT one team).

    A user's teams are in order, the first charged when a request names none; a single name is a
    list of one (the shape PUT quotas took before, still accepted).

    Raises:
        ValidationError: naming the place: ``user_teams`` (not an object), ``user_teams.<user>`` (a
            blank or invisible-character user name, neither a name nor a list, an empty list),
            ``user_teams.<user>[i]`` (not a name, a team a job could not name, a team given twice).
    """
    from .rules import check_team_name, visible_text

    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where} must map user names to a team name or several (got {json_kind(raw)})",
                              field=where,
                              hint=_USER_TEAMS_HINT)
    out: dict[str, tuple[str, ...]] = {}
    for user, teams in raw.items():
        place = f"{where}.{user}"
        if not isinstance(user, str) or not user.strip():
            raise ValidationError(f"{where} has a blank user name", field=where, hint=_USER_TEAMS_HINT)
        visible_text(user, place, limit=200)
        if isinstance(teams, str):
            check_team_name(teams, place)  # as a job's team (new user 8, N10 follow-up)
            out[user] = (teams,)
            continue
        if not isinstance(teams, (list, tuple)) or not teams:
            raise ValidationError(f"{place} must be a team name or several team names (got "
                                  f"{'none' if isinstance(teams, (list, tuple)) else json_kind(teams)})",
                                  field=place, hint=_USER_TEAMS_HINT)
        seen: dict[str, int] = {}
        for i, team in enumerate(teams):
            if not isinstance(team, str):
                raise ValidationError(f"{place}[{i}] must be a team name (got {json_kind(team)})",
                                      field=f"{place}[{i}]", hint=_USER_TEAMS_HINT)
            check_team_name(team, f"{place}[{i}]")
            if team in seen:
                raise ValidationError(f"{place}[{i}] repeats {place}[{seen[team]}] ({team})", field=f"{place}[{i}]",
                                      hint="give each team once; the first is the user's default team")
            seen[team] = i
        out[user] = tuple(teams)
    return out


def _count(settings: Mapping[str, Any], name: str, example: int) -> int:
    """The whole number >= 0 of setting ``name`` (0 when absent: no limit).

    Raises:
        ValidationError: naming ``name``.
    """
    value = settings.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{name} must be a whole number >= 0 (got {value!r})", field=name,
                              hint=f"e.g. {example}; 0 = no limit")
    return value


def _classes(value: Any, where: str) -> dict[str, frozenset[str]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"{where} must map names to lists of classes", field=where,
                              hint='e.g. {"ana": ["high"]}')
    out: dict[str, frozenset[str]] = {}
    for name, classes in value.items():
        # class names case folded, as everywhere (new user 20, N27: "High" is high)
        folded = [fold_priority(c) for c in classes] if isinstance(classes, (list, tuple)) else None
        if not isinstance(name, str) or folded is None or any(c not in PRIORITY_CLASSES for c in folded):
            raise ValidationError(f"{where}[{name!r}] must list classes among high, normal, low (got {classes!r})",
                                  field=where, hint='e.g. ["high"]')
        out[name] = frozenset(folded)
    return out


def known_teams(quotas: QuotaSet) -> frozenset[str]:
    """Teams an admin named: by quota lines, budgets, team policies or ``user_teams``."""
    return frozenset({q.team for q in quotas.quotas} | {b.team for b in quotas.budgets}
                     | {t.team for t in quotas.teams} | {t for teams in quotas.user_teams.values() for t in teams})


def resolve_caller(user: str, *, admin: bool, quotas: QuotaSet, policy: AdmissionPolicy,
                   groups: Sequence[str] | None = None,
                   group_order: Callable[[str, Sequence[str]], Sequence[str]] | None = None) -> Caller:
    """The :class:`Caller` of ``user`` (see the module docstring for the order of teams).

    Args:
        user: the authenticated user name.
        admin: whether authentication made them an admin.
        quotas: the quota set in force (stored ``user_teams`` and team policies).
        policy: the admin's admission settings (default team, grants; its ``user_teams`` are the
            config's, read here only through the store).
        groups: hub groups in hub mode (then the only teams: stored ``user_teams`` and team policies'
            ``members`` are not read); None when embedded.
        group_order: ``(user, groups) -> groups`` in the user's join order (hub mode:
            :class:`~jupyter_sched.hub.default_team.TeamOrder`, newuser38 N3); None: alphabetical.
    """
    teams: list[str] = []
    if groups is not None:
        known = known_teams(quotas)
        ordered = list(group_order(user, groups)) if group_order is not None else sorted(groups)
        teams += [g for g in ordered if g in known] + [g for g in ordered if g not in known]
    else:
        teams += quotas.user_teams.get(user, ())
        teams += [p.team for p in quotas.teams if user in p.members]
    unique = tuple(dict.fromkeys(teams)) or (policy.default_team,)
    chargeable = (*unique, *sorted(known_teams(quotas) - set(unique))) if admin else unique
    return Caller(user=user, teams=unique, admin=admin,
                  granted=MappingProxyType({team: _granted(team, user, quotas, policy) for team in chargeable}))


def _granted(team: str, user: str, quotas: QuotaSet, policy: AdmissionPolicy) -> frozenset[str]:
    """The classes ``user`` may use in ``team``: the team policy's ``allowed_priorities`` plus the
    grants for the team and the user — bounded by a **stored** team policy, whose list the scheduling
    core enforces (:func:`jupyter_sched.scheduling.gates.gate`: a class other than ``normal`` it does not
    list waits for ever). Verify 21, V8: a user's grant of ``high`` was offered for a team whose policy
    allows only ``normal``, and the job was accepted and never started."""
    base: Iterable[str] = quotas.team_policy(team).allowed_priorities
    granted = (frozenset(base) | policy.grants.teams.get(team, frozenset())
               | policy.grants.users.get(user, frozenset()))
    stated = team_allows(quotas, team)
    return granted if stated is None else granted & stated


def team_allows(quotas: QuotaSet, team: str) -> frozenset[str] | None:
    """The classes a stored team policy lets the team's work start with (its ``allowed_priorities``,
    and ``normal``, which the core never holds), or None when ``team`` has no stored policy (then the
    grants alone decide)."""
    for stated in quotas.teams:
        if stated.team == team:
            return frozenset(stated.allowed_priorities) | {"normal"}
    return None
