"""The edge of the reclaim cool-down (red31 R5; the rule: :mod:`jupyter_sched.scheduling.preempt.cooldown`).

:func:`note_dropped_reclaim` — at its owner's cancel of a job that took GPUs back by reclaim (audit ``reclaim``
records naming it ``for_job``) and had not run :data:`FIRST_MINUTE_S` (or never started), one audit record
``reclaim_dropped`` for admins naming the work it took back and the cool-down; :func:`dropped_reclaims` — per user,
the latest such record of the last :data:`LOOKBACK_S`, for ``Snapshot.dropped_reclaims`` (one indexed read of the
audit log by action a full snapshot).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..model.job import public_name
from ..model.units import format_duration
from ..store import JobRecord, Store, StoreTx

__all__ = ["ACTION", "FIRST_MINUTE_S", "LOOKBACK_S", "dropped_reclaims", "note_dropped_reclaim"]

ACTION = "reclaim_dropped"
FIRST_MINUTE_S = 60.0
"""A cancel by its owner this soon after its start (or before it) drops what its reclaim took back."""
LOOKBACK_S = 3600.0
"""How far back the snapshot reads ``reclaim_dropped`` records (the longest cool-down the profile allows)."""


def note_dropped_reclaim(tx: StoreTx, record: JobRecord, actor: str, now: datetime, cooldown_s: float) -> bool:
    """Record ``reclaim_dropped`` when ``actor``, the owner of ``record``'s job, cancels it within its first minute
    after its admission reclaimed other teams' work; True when recorded."""
    job = record.job
    if actor != job.spec.user or job.is_lease or not job.spec.resources.total_milli:
        return False
    started = job.started_at or job.admitted_at
    ran = (now - started).total_seconds() if started is not None else 0.0
    if ran > FIRST_MINUTE_S:
        return False
    since = job.submitted_at or (now - timedelta(seconds=LOOKBACK_S))
    taken = [e for e in tx.list_events(action="reclaim", since=since, limit=500)
             if isinstance(e.details, dict) and e.details.get("for_job") == job.id]
    if not taken:
        return False
    victims = [{"job_id": e.job_id, "user": e.user} for e in taken]
    named = ", ".join(f"{e.user}'s job {e.job_id}" for e in taken[:5]) + (f" and {len(taken) - 5} more"
                                                                           if len(taken) > 5 else "")
    when = f"{format_duration(ran)} after its start" if started is not None else "before it started"
    cool = (f"; {actor}'s reclaims of other teams' borrowed GPUs wait {format_duration(cooldown_s)} "
            "(c.SchedApp.reclaim_cooldown_s)") if cooldown_s else ""
    details: dict[str, Any] = {"victims": victims, "ran_s": round(ran, 1), "cooldown_s": cooldown_s}
    tx.add_event(actor=actor, action=ACTION, job_id=job.id, user=actor, details=details,
                 message=f"{actor} cancelled job {public_name(job.spec)} ({job.id}) {when}; its admission had taken "
                         f"GPUs back by reclaim from {named}, whose work restarts{cool}")
    return True


def dropped_reclaims(store: Store, now: datetime) -> dict[str, datetime]:
    """Per user, the latest ``reclaim_dropped`` record of the last :data:`LOOKBACK_S` (``Snapshot.dropped_reclaims``)."""
    latest: dict[str, datetime] = {}
    for event in store.list_events(action=ACTION, since=now - timedelta(seconds=LOOKBACK_S), limit=1000):
        if event.user and (event.user not in latest or event.at > latest[event.user]):
            latest[event.user] = event.at
    return latest
