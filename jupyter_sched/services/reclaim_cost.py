"""What ending work that took GPUs back by reclaim costs its team, told at its release or cancel (newuser36 N6).

The reclaim cool-down (:mod:`jupyter_sched.scheduling.preempt.cooldown`, DESIGN.md *Reclaim*): a preemptor that
ends less than ``reclaim_cooldown_s`` after its reclaim holds its team's reclaims of other teams' borrowed GPUs
until that long after the reclaim. The core decides it from the audit's ``reclaim`` records; this reads the same
records for the one job being ended, so the cancel's answer can say what the release costs before anyone waits
on it (the quickstart's ``%gpu release``, 2 s after its lease evicted another team's job, said nothing; the
team's next reclaim then waited 15 minutes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ..model import Job
from ..store import Store, ts
from ..wording.preemption import release_cooldown_text

__all__ = ["release_cost", "release_costs"]

_PAGE = 5000
"""``reclaim`` records read at most (those of the last cool-down: one per victim)."""


def release_cost(store: Store, job: Job, now: datetime, cooldown_s: float) -> dict[str, Any] | None:
    """The ``reclaim_cooldown`` of a cancel's answer (``services.models.jobs.ReclaimCooldown``'s fields) when
    ``job``, ended ``now``, took other teams' running work back by reclaim less than ``cooldown_s`` seconds ago;
    None otherwise (no reclaim, its own team's or a departed member's work only, the cool-down off or over)."""
    return release_costs(store, [job], now, cooldown_s).get(job.id)


def release_costs(store: Store, jobs: Iterable[Job], now: datetime, cooldown_s: float) -> dict[str, dict[str, Any]]:
    """:func:`release_cost` of each of ``jobs`` (ended ``now``) that has one, by id, from one read of the audit:
    ``DELETE jobs/{id}`` asks it of one job, ``POST jobs/cancel`` of every job it ended (s38: ``cancel --mine``
    said nothing of the cool-down a single cancel says)."""
    by_id = {job.id: job for job in jobs}
    if not by_id or not cooldown_s or cooldown_s <= 0:
        return {}
    since = now - timedelta(seconds=cooldown_s)
    took: dict[str, datetime] = {}
    for event in store.list_events(action="reclaim", since=since, limit=_PAGE):
        info = event.details if isinstance(event.details, Mapping) else {}
        job_id = info.get("for_job")
        if not isinstance(job_id, str) or job_id not in by_id or info.get("departed"):
            continue
        if info.get("victim_team") is not None and info.get("victim_team") == info.get("for_team"):
            continue  # its own team's work: no other team's loss (as engine.reclaim_history reads it)
        took[job_id] = event.at if job_id not in took else min(took[job_id], event.at)
    costs: dict[str, dict[str, Any]] = {}
    for job_id, took_at in took.items():
        until = took_at + timedelta(seconds=cooldown_s)
        if until <= now:
            continue
        job = by_id[job_id]
        held = None if job.started_at is None else max(0.0, (now - job.started_at).total_seconds())
        costs[job_id] = {"team": job.spec.team, "until": ts(until), "took_at": ts(took_at),
                         "held_s": round(held, 1) if held is not None else None, "cooldown_s": float(cooldown_s),
                         "text": release_cooldown_text(job.spec.team, until, held, now)}
    return costs
