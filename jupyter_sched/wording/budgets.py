"""Where a GPU-hour budget stands, in one sentence said by the server (GET quotas' ``budget_standings[].text``)
and by the CLI from the same numbers (``jupyter-sched quotas``, ``queue --summary``) — so the CLI says it in
its reader's words: the reset in their zone, "today" only where their day is the UTC day the budget counts
(newuser30 n11: ``quotas`` said "used today … until Dec 7 00:00 UTC" where ``status`` said "used this UTC
day, resets 16:00 PST")."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..model.periods import this_period_text
from ..model.units import clock_text, format_duration, gpu_hours_phrase, gpu_hours_text
from .reasons import wire_time

__all__ = ["standing_text"]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def standing_text(standing: Mapping[str, Any], now: datetime) -> str | None:
    """``nlp: 240 of 300 GPU-hours this month (80%), 60 left until Jan 1 00:00 UTC; running work may use
    12 more by its time limits; a new GPU job fits while its GPUs times time limit is at most 60 GPU-hours
    (e.g. 1 GPU for 60h00m, 8 GPUs for 7h30m); 3 pending GPU jobs`` from one of GET quotas'
    ``budget_standings`` (:func:`~jupyter_sched.services.budget_standing.admin_view`: ``team``, ``user``,
    ``gpu_hours``, ``period``, ``used_gpu_hours``, ``left_gpu_hours``, ``resets_at``,
    ``running_may_use_gpu_hours`` — None: some running work has no time limit —, ``pending_gpu_jobs``), said
    as of ``now`` (UTC) in the reader's zone (:func:`~..model.units.shown_in`). None where a number is missing
    (an older server's answer: its ``text`` is said as sent)."""
    used, limit, left = (_number(standing.get(k)) for k in ("used_gpu_hours", "gpu_hours", "left_gpu_hours"))
    resets = wire_time(standing.get("resets_at"))
    if used is None or limit is None or left is None or resets is None \
            or "running_may_use_gpu_hours" not in standing:
        return None
    team, user = standing.get("team"), standing.get("user")
    who = f"user {user} in {team}" if user else str(team)
    may = _number(standing.get("running_may_use_gpu_hours"))
    share = f" ({used / limit:.0%})" if limit > 0 else ""
    running = ("running work has no time limit: what it may still use is not bounded" if may is None
               else f"running work may use {gpu_hours_text(may)} more by its time limits" if may > 0
               else "no running work")
    fits = (f"a new GPU job fits while its GPUs times time limit is at most {gpu_hours_phrase(left)} (e.g. "
            f"1 GPU for {format_duration(left * 3600)}, 8 GPUs for {format_duration(left * 3600 / 8)})" if left > 0
            else "new GPU jobs wait until it resets or an admin raises it")
    pending = _number(standing.get("pending_gpu_jobs")) or 0
    waiting = f"; {pending:g} pending GPU job{'s' if pending != 1 else ''}" if pending else ""
    return (f"{who}: {gpu_hours_text(used)} of {gpu_hours_phrase(limit)} {this_period_text(standing.get('period'))}"
            f"{share}, {gpu_hours_text(left)} left until {clock_text(resets, now)}; {running}; {fits}{waiting}")
