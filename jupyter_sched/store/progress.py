"""Progress report rows (``job_progress``): a job's latest report and the line through its run's reports.

Functions on an open :class:`~.store.StoreTx`, beside their table and out of the job store's hot
paths (as :mod:`.definitions`). One row per job: the latest stored report of its current run and the
sums of the least-squares line through that run's reports
(:class:`~jupyter_sched.backfill.progress.ProgressFit`). A report of a new run (a restart after a
preemption or a requeue: another ``run_started_at``) starts the line again. Reports come at most one
per ``min_interval_s`` per job: :func:`record_progress` keeps the stored one and says so for a report
that comes sooner (coalesced), so a training loop that reports every step writes a row every few
seconds, not every step (issue 16 item 4).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..backfill.progress import ProgressFit, ProgressReport
from . import schema
from .codec import parse_ts, ts
from .store import StoreTx

__all__ = ["StoredProgress", "completes", "fresh_progress", "read_progress", "record_progress"]

_P = schema.job_progress
_CHUNK = 500  # ids per IN (...) (SQLite's bound on parameters is far above; keeps statements small)


@dataclass(frozen=True, slots=True)
class StoredProgress:
    """A job's stored progress.

    Attributes:
        job_id: the job.
        run_started_at: the start of the run the reports are of (UTC).
        done: steps done, as reported.
        total: steps to do, as reported (> 0).
        report: ``done / total`` with when it was reported, how long the run had run then and the
            line through the run's reports (what the core reads).
    """

    job_id: str
    run_started_at: datetime
    done: float
    total: float
    report: ProgressReport


def _from_row(row: Mapping[Any, Any]) -> StoredProgress:
    at, start = parse_ts(row["reported_at"]), parse_ts(row["run_started_at"])
    assert at is not None and start is not None
    done, total = float(row["done"]), float(row["total"])
    fit = ProgressFit(int(row["fit_n"]), float(row["fit_t"]), float(row["fit_f"]), float(row["fit_tt"]),
                      float(row["fit_tf"]))
    return StoredProgress(job_id=str(row["job_id"]), run_started_at=start, done=done, total=total,
                          report=ProgressReport(fraction=done / total if total > 0 else math.nan, at=at,
                                                ran_s=float(row["ran_s"]), fit=fit))


def completes(stored: StoredProgress, done: float, total: float) -> bool:
    """Does the report ``done`` of ``total`` complete a run whose stored report is ``stored`` (it says
    all done, and the stored one does not)? Such a report is never coalesced (new user 21, N3)."""
    return done >= total > 0 and not stored.done >= stored.total


def record_progress(tx: StoreTx, job_id: str, *, run_started_at: datetime, at: datetime, done: float, total: float,
                    min_interval_s: float) -> tuple[StoredProgress, bool]:
    """Store ``done`` of ``total`` steps reported at ``at`` by the run of ``job_id`` that started at
    ``run_started_at`` — unless the stored report of that run is under ``min_interval_s`` old.

    A report that completes the run (:func:`completes`) is stored however soon it comes (once per
    run: new user 21, N3).

    Returns:
        ``(the stored progress, whether this report was stored)``; False: coalesced into the
        stored one (reported less than ``min_interval_s`` after it).
    """
    row = tx.conn.execute(sa.select(_P).where(_P.c.job_id == job_id)).mappings().first()
    old = _from_row(row) if row is not None else None
    same_run = old is not None and old.run_started_at == run_started_at
    if old is not None and same_run and (at - old.report.at).total_seconds() < min_interval_s \
            and not completes(old, done, total):
        return old, False
    ran_s = max((at - run_started_at).total_seconds(), 0.0)
    fit = (old.report.fit if old is not None and same_run else ProgressFit()).add(ran_s, done / total)
    columns = {"run_started_at": ts(run_started_at), "reported_at": ts(at), "done": done, "total": total,
               "ran_s": ran_s, "fit_n": fit.n, "fit_t": fit.t, "fit_f": fit.f, "fit_tt": fit.tt, "fit_tf": fit.tf}
    if row is None:
        tx.conn.execute(_P.insert().values(job_id=job_id, **columns))
    else:
        tx.conn.execute(_P.update().where(_P.c.job_id == job_id).values(**columns))
    stored = StoredProgress(job_id=job_id, run_started_at=run_started_at, done=done, total=total,
                            report=ProgressReport(fraction=done / total, at=at, ran_s=ran_s, fit=fit))
    return stored, True


def read_progress(tx: StoreTx, job_ids: Iterable[str]) -> dict[str, StoredProgress]:
    """The stored progress of each of ``job_ids`` that has one."""
    ids = sorted(set(job_ids))
    out: dict[str, StoredProgress] = {}
    for i in range(0, len(ids), _CHUNK):
        for row in tx.conn.execute(sa.select(_P).where(_P.c.job_id.in_(ids[i:i + _CHUNK]))).mappings():
            out[str(row["job_id"])] = _from_row(row)
    return out


def fresh_progress(tx: StoreTx, since: datetime) -> dict[str, StoredProgress]:
    """The stored progress reported at ``since`` or later (each scheduling cycle's read: older
    reports project nothing, :data:`~jupyter_sched.backfill.progress.STALE_S`)."""
    rows = tx.conn.execute(sa.select(_P).where(_P.c.reported_at >= ts(since))).mappings()
    return {str(row["job_id"]): _from_row(row) for row in rows}
