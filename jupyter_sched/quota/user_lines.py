"""What a user's own quota line strands: pending work asking for more than the line allows (new user 21, N9).

A per-user line (``{"team": "ml", "user": "ana", "guaranteed": 1, "borrowing_limit": 0.5}``) is a
ceiling on what the user may hold in the team: a pending job of theirs asking for more can never
start while the line stands — the queue says so to the user ("can never fit the per-user limit"),
but the admin who set the line was answered ``"warnings": []`` (the unlisted-team case already said
"its 1 pending job can never start"). :func:`user_line_warnings` says it, in GET and PUT quotas'
``warnings``. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..model.job import Job, JobKind, JobState
from ..model.quota import ANY_MODEL, QuotaSet
from ..model.units import gpus_phrase

__all__ = ["MAX_SAID", "non_member_warnings", "user_line_warnings"]

GPU_MILLI = 1000
MAX_SAID = 10
"""Users said with their stranded work, each in a warning of its own; the rest in one more."""


def user_line_warnings(quotas: QuotaSet, live: Iterable[Job]) -> list[str]:
    """One warning per (team, user) whose own quota line is below a pending job or lease request of
    theirs in that team: ``user ana's quota line in team ml allows at most 1.5 GPUs: her 1 pending job
    asking for more (2 GPUs) can never start — raise the line with PUT quotas, or resubmit it
    smaller``. A line for one GPU model counts for work that asks for that model only. Empty when
    no per-user line strands anything; at most :data:`MAX_SAID` warnings, then one for the rest."""
    lines = [q for q in quotas.quotas if q.user is not None and q.ceiling is not None]
    if not lines:
        return []
    stranded: dict[tuple[str, str, str, float], list[Job]] = {}
    for job in live:
        if job.state is not JobState.PENDING:
            continue
        milli, models = job.spec.resources.total_milli, job.spec.resources.gpu_models
        for q in lines:
            if q.team != job.spec.team or q.user != job.spec.user or q.ceiling is None:
                continue
            if q.gpu_model != ANY_MODEL and models != (q.gpu_model,):
                continue
            if milli > round(q.ceiling * GPU_MILLI):
                stranded.setdefault((q.team, q.user, q.gpu_model, q.ceiling), []).append(job)
                break
    said = [_text(team, user, model, ceiling, jobs) for (team, user, model, ceiling), jobs in sorted(stranded.items())]
    if len(said) > MAX_SAID:
        more = len(said) - MAX_SAID
        said = [*said[:MAX_SAID], f"and {more} more user{'s' if more > 1 else ''} whose own quota line is below "
                                  "work of theirs that is pending"]
    return said


def _text(team: str, user: str, model: str, ceiling: float, jobs: list[Job]) -> str:
    leases = sum(1 for j in jobs if j.spec.kind is JobKind.LEASE)
    parts = [f"{n} pending {what}{'s' if n != 1 else ''}" for n, what in ((len(jobs) - leases, "job"),
                                                                        (leases, "lease request")) if n]
    asked = sorted({j.spec.resources.total_milli / GPU_MILLI for j in jobs})
    sizes = " or ".join(gpus_phrase(a) for a in asked[:3])
    on = "" if model == ANY_MODEL else f" on {model}"
    one = len(jobs) == 1
    return (f"user {user}'s quota line in team {team} allows at most {gpus_phrase(ceiling)}{on}: their "
            f"{' and '.join(parts)} asking for more ({sizes}) can never start — raise the line with PUT quotas, "
            f"or resubmit {'it' if one else 'them'} smaller")


def non_member_warnings(quotas: QuotaSet, default_team: str, *,
                        members: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """One warning per per-user quota line whose user is not a member of the line's team (new user 23,
    N12: a ``User`` typed ``nobody`` in the panel's quota editor was saved without a word, and left
    team ml with a line for nobody). ``quotas[0] (team ml, user nobody): nobody is in no team …``.

    Args:
        quotas: the quota set as it would be in force (its line order is the request's ``quotas[i]``).
        default_team: the team of a user with no memberships (``c.SchedApp.default_team``).
        members: hub mode: ``{user: hub groups}`` (then team policies' ``members`` are not read);
            None embedded: ``quotas.user_teams`` and each team policy's ``members``.

    Returns:
        at most :data:`MAX_SAID` warnings, then one for the rest; empty when every per-user line names
        a member of its team.
    """
    teams_of: dict[str, list[str]] = {user: list(teams) for user, teams in
                                      (quotas.user_teams if members is None else members).items()}
    if members is None:
        for policy in quotas.teams:
            for user in policy.members:
                teams_of.setdefault(user, []).append(policy.team)
    said = []
    for i, q in enumerate(quotas.quotas):
        if q.user is None:
            continue
        teams = list(dict.fromkeys(teams_of.get(q.user, ())))
        if q.team in teams or (not teams and members is None and q.team == default_team):
            continue
        where = f"quotas[{i}] (team {q.team}, user {q.user})"
        if not teams:
            said.append(f"{where}: {q.user} is in no team here (user_teams and teams' members name them nowhere) — "
                        f"a typo? The line counts only for {q.user}'s own work in {q.team}; give a user name as "
                        f"they log in, or no user for a line for the whole team")
        else:
            said.append(f"{where}: {q.user} is not a member of {q.team} (their teams: {', '.join(teams)}) — the line "
                        f"counts only for work {q.user} charges to {q.team}; add them to {q.team} "
                        f"(user_teams), or give the line to one of their teams")
    if len(said) > MAX_SAID:
        more = len(said) - MAX_SAID
        said = [*said[:MAX_SAID], f"and {more} more quota line{'s' if more > 1 else ''} for a user not in its team"]
    return said
