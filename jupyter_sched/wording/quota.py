"""A user's quota in one line, from ``GET me``: ``jupyter-sched status``'s ``quota`` line and ``%gpu``'s
``Quota:`` line say it in the same words (new user 11, N21; new user 12's brief: ``%gpu`` had none)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.units import gpus_phrase

__all__ = ["quota_text"]


def _gpus(value: Any) -> str:
    return gpus_phrase(float(value or 0))  # one GPU-count formatter: never "1 GPUs" (new user 17, N22)


def quota_text(me: Mapping[str, Any]) -> str:
    """``team ml: guaranteed 2 GPUs, borrowing limit 1 (at most 3); 2 GPUs in use by the team, 1 GPU
    yours`` from ``GET me`` (its default team's quota lines, ``team_in_use``, ``in_use``); a line of
    one GPU model or of the caller alone is said as such."""
    team = str(me.get("team") or "")
    lines = [q for q in me.get("quotas") or () if isinstance(q, Mapping)]
    parts = []
    for q in sorted(lines, key=lambda q: (q.get("user") is not None, str(q.get("gpu_model") or "*"))):
        model = str(q.get("gpu_model") or "*")
        whose = "you" if q.get("user") else f"team {team}"
        on = "" if model == "*" else f" on {model}"
        limit = q.get("borrowing_limit")
        if limit is None:
            bounds = "no borrowing limit"
        else:
            bounds = f"borrowing limit {float(limit):g} (at most {float(q.get('guaranteed') or 0) + float(limit):g})"
        parts.append(f"{whose}{on}: guaranteed {_gpus(q.get('guaranteed'))}, {bounds}")
    text = "; ".join(parts) if parts else f"team {team} has no quota line: no GPUs guaranteed, no limit"
    in_use = me.get("in_use") if isinstance(me.get("in_use"), Mapping) else {}
    mine = _gpus((in_use or {}).get("gpus"))
    over = _over(lines, team_in_use=me.get("team_in_use"), mine=(in_use or {}).get("gpus"))
    if me.get("team_in_use") is not None:
        return f"{text}; {_gpus(me['team_in_use'])} in use by the team, {mine} of them yours{over}"
    return f"{text}; {mine} in use by you{over}"


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
