"""What replacing one quota set by another changes, one phrase per line (hubadmin25 B2). Pure.

``quotas_changed`` carried both whole sets (~2 KB of JSON) and a message that said not what changed —
an admin diffed JSON by hand (sacctmgr's transactions log says ``Modified qos … set …``). These
phrases are the audit row's message, the config's start-up WARNING (:mod:`~jupyter_sched.services.quota_config`)
and the words that blame a preemption on the change (B17): ``changed vision (A100-80GB): guaranteed 2 → 1``,
``added nlp (L40S) (guaranteed 1, borrowing limit 1)``, ``changed budget vision: 4.9 → 10 GPU-hours a
month``, ``changed team vision: allowed priorities high, normal, low → normal, low``. Memberships are
said by their own rows (``team_members_changed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model import ANY_MODEL, Budget, Quota, QuotaSet, TeamPolicy
from ..model.units import gpu_hours_phrase

__all__ = ["line_name", "quota_changes", "quota_line_changes"]

def line_name(team: str, user: str | None, model: str) -> str:
    """``ml``, ``ml/ana``, ``ml (A100-80GB)``: a quota line (or budget) by its key."""
    who = team if user is None else f"{team}/{user}"
    return who if model == ANY_MODEL else f"{who} ({model})"


def _limit(value: float | None) -> str:
    return "none" if value is None else format(value, "g")


def _amounts(q: Quota) -> str:
    return f"guaranteed {q.guaranteed:g}, borrowing limit {_limit(q.borrowing_limit)}"


def _diff(fields: Sequence[tuple[str, str, str]]) -> str:
    """``guaranteed 2 → 1, borrowing limit 2 → none``: the fields (name, before, after) that differ."""
    return ", ".join(f"{name} {was} → {now}" for name, was, now in fields if was != now)


def quota_line_changes(old: Iterable[Quota], new: Iterable[Quota]) -> list[str]:
    """The quota lines' phrases: removed, then added, then changed, each in its list's order; only the
    numbers that differ are said. Empty: the same lines."""
    was, now = {q.key: q for q in old}, {q.key: q for q in new}
    said = [f"removed {line_name(*k)} ({_amounts(q)})" for k, q in was.items() if k not in now]
    said += [f"added {line_name(*k)} ({_amounts(q)})" for k, q in now.items() if k not in was]
    for k, q in now.items():
        before = was.get(k)
        if before is not None:
            diff = _diff([("guaranteed", f"{before.guaranteed:g}", f"{q.guaranteed:g}"),
                          ("borrowing limit", _limit(before.borrowing_limit), _limit(q.borrowing_limit))])
            if diff:
                said.append(f"changed {line_name(*k)}: {diff}")
    return said


def _budget(b: Budget) -> str:
    return f"{gpu_hours_phrase(b.gpu_hours, f'{b.gpu_hours:g}')} a {b.period}"


def _budget_changes(old: Iterable[Budget], new: Iterable[Budget]) -> list[str]:
    was = {(b.team, b.user): b for b in old}
    now = {(b.team, b.user): b for b in new}
    said = [f"removed budget {line_name(t, u, ANY_MODEL)} ({_budget(b)})" for (t, u), b in was.items()
            if (t, u) not in now]
    said += [f"added budget {line_name(t, u, ANY_MODEL)} ({_budget(b)})" for (t, u), b in now.items()
             if (t, u) not in was]
    said += [f"changed budget {line_name(t, u, ANY_MODEL)}: {_budget(was[(t, u)])} → {_budget(b)}"
             for (t, u), b in now.items() if (t, u) in was and _budget(was[(t, u)]) != _budget(b)]
    return said


def _policy_fields(p: TeamPolicy) -> list[tuple[str, str]]:
    return [("weight", f"{p.weight:g}"), ("allowed priorities", ", ".join(p.allowed_priorities) or "none"),
            ("reclaim", p.reclaim or "the profile's")]


def _policy_changes(old: Iterable[TeamPolicy], new: Iterable[TeamPolicy]) -> list[str]:
    was, now = {p.team: p for p in old}, {p.team: p for p in new}
    default = TeamPolicy(team="")
    said = []
    for team in [*[t for t in was if t not in now], *now]:
        before = _policy_fields(was.get(team, default))
        after = _policy_fields(now.get(team, default))
        diff = _diff([(name, b, a) for (name, b), (_, a) in zip(before, after, strict=True)])
        if diff:
            said.append(f"changed team {team}: {diff}")
    return said


def quota_changes(old: QuotaSet, new: QuotaSet) -> list[str]:
    """What replacing ``old`` by ``new`` changes: the quota lines (:func:`quota_line_changes`), then the
    budgets, then the team policies (weight, allowed priorities, reclaim; a policy removed reads as
    its defaults). Memberships are left out (``team_members_changed`` says them). Empty: no change."""
    return (quota_line_changes(old.quotas, new.quotas) + _budget_changes(old.budgets, new.budgets)
            + _policy_changes(old.teams, new.teams))
