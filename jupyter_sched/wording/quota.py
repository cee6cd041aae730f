"""A user's quota in one line, from ``GET me``: ``jupyter-sched status``'s ``quota`` line and ``%gpu``'s
``Quota:`` line say it in the same words (new user 11, N21; new user 12's brief: ``%gpu`` had none)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.units import gpus_phrase

__all__ = ["quota_lines", "quota_text"]


def _gpus(value: Any) -> str:
    return gpus_phrase(float(value or 0))  # one GPU-count formatter: never "1 GPUs" (new user 17, N22)


def quota_text(me: Mapping[str, Any]) -> str:
    """``team ml: guaranteed 2 GPUs, borrowing limit 1 (at most 3); 2 GPUs in use by the team, 1 GPU
    of them yours`` from ``GET me``: one line (joined by newlines) per team in ``by_team`` — the
    caller's default team, then each other team their GPU-holding work is charged to — each saying
    that team's quota lines, what the team holds and what of it is the caller's (new user 18, N1:
    "2 GPUs in use by the team, 4 GPUs of them yours", the caller's total beside one team's). A line
    of one GPU model or of the caller alone is said as such. See :func:`quota_lines`."""
    return "\n".join(quota_lines(me))


def quota_lines(me: Mapping[str, Any]) -> list[str]:
    """:func:`quota_text`'s lines (``jupyter-sched status`` indents those after the first)."""
    default = str(me.get("team") or "")
    teams = [t for t in me.get("by_team") or () if isinstance(t, Mapping) and t.get("team")]
    if teams:
        return [_team_line(str(t["team"]), t.get("quotas"), t.get("in_use"), t.get("yours"),
                           default=str(t["team"]) == default) for t in teams]
    # an older server: its default team only, beside what the caller holds in all
    in_use = me.get("in_use") if isinstance(me.get("in_use"), Mapping) else {}
    return [_team_line(default, me.get("quotas"), me.get("team_in_use"), (in_use or {}).get("gpus"), default=True)]


def _team_line(team: str, quotas: Any, team_in_use: Any, mine: Any, *, default: bool) -> str:
    lines = [q for q in quotas or () if isinstance(q, Mapping)]
    parts = []
    for q in sorted(lines, key=lambda q: (q.get("user") is not None, str(q.get("gpu_model") or "*"))):
        model = str(q.get("gpu_model") or "*")
        whose = ("you" if default else f"you in team {team}") if q.get("user") else f"team {team}"
        on = "" if model == "*" else f" on {model}"
        limit = q.get("borrowing_limit")
        if limit is None:
            bounds = "no borrowing limit"
        else:
            bounds = f"borrowing limit {float(limit):g} (at most {float(q.get('guaranteed') or 0) + float(limit):g})"
        parts.append(f"{whose}{on}: guaranteed {_gpus(q.get('guaranteed'))}, {bounds}")
    text = "; ".join(parts) if parts else f"team {team} has no quota line: no GPUs guaranteed, no limit"
    over = _over(lines, team_in_use=team_in_use, mine=mine)
    if team_in_use is not None:
        return f"{text}; {_gpus(team_in_use)} in use by the team, {_gpus(mine)} of them yours{over}"
    return f"{text}; {_gpus(mine)} in use by you{over}"


def _over(lines: list[Mapping[str, Any]], *, team_in_use: Any, mine: Any) -> str:
    """`` — 1 GPU over the team's limit of 1: nothing more of the team starts until that much is
    released`` when what runs is above a limit (all models: a line of one model has no usage here to
    compare) — a quota lowered below what already ran, which status said nothing about (new user 13,
    N9: "at most 1; 2 GPUs in use by the team")."""
    for q in lines:
        limit = q.get("borrowing_limit")
        used = mine if q.get("user") else team_in_use
        if limit is None or q.get("gpu_model") not in (None, "*") or not isinstance(used, (int, float)):
            continue
        most = float(q.get("guaranteed") or 0) + float(limit)
        if float(used) > most:
            whose, who = ("your cap", "of yours") if q.get("user") else ("the team's limit", "of the team")
            return (f" — {_gpus(float(used) - most)} over {whose} of {most:g}: nothing more {who} starts "
                    f"until that much is released")
    return ""
