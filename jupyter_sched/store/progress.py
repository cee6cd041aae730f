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
from sqlalchemy.dialects import postgresql, sqlite

from ..backfill.progress import ProgressFit, ProgressReport
from . import schema
from .codec import parse_ts, ts
from .store import StoreTx

__all__ = ["BACKWARDS_TOLERANCE", "JUMP_MIN", "JUMP_RATE", "StoredProgress", "check_progress_row", "completes",
           "contradiction", "fresh_progress", "read_progress", "record_progress", "record_report"]

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
    ignored: str = ""
    """Why this run's reports are not read for ETAs ("": they are): :func:`contradiction`."""


_NUMBERS = ("done", "total", "ran_s", "fit_n", "fit_t", "fit_f", "fit_tt", "fit_tf")


def check_progress_row(row: Mapping[Any, Any]) -> str | None:
    """What makes a ``job_progress`` row unusable, or None when it is sound: both timestamps readable; every
    number a finite number (NaN or an infinity — SQLite keeps 9e999 as one, PostgreSQL keeps 'NaN' — would
    reach the job's answers as ``NaN``, which is not JSON: s29); ``total`` above 0, the others not negative."""
    where = f"progress row of job {row['job_id']}"
    for column in ("reported_at", "run_started_at"):
        raw = row[column]
        try:
            parsed = parse_ts(raw) if isinstance(raw, str) else None
        except Exception:  # any parse failure (ValidationError, ValueError): the finding
            parsed = None
        if parsed is None:
            return f"{where}: {column} {raw!r} is not a timestamp"
    for column in _NUMBERS:
        value = row[column]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"{where}: {column} {value!r} is not a finite number"
        if value < 0 or (column == "total" and value <= 0):
            return f"{where}: {column} {value!r} must be {'above 0' if column == 'total' else '0 or more'}"
    return None


def _sound(tx: StoreTx, row: Mapping[Any, Any]) -> bool:
    """Whether ``row`` reads; a row that does not is quarantined (named; ``jupyter-sched doctor`` lists it) and
    left out: the job shows no progress, its ETA is not projected from it."""
    problem = check_progress_row(row)
    if problem is not None:
        tx._skip("job_progress", row, "job_id", problem)
    return problem is None


def _from_row(row: Mapping[Any, Any]) -> StoredProgress:
    at, start = parse_ts(row["reported_at"]), parse_ts(row["run_started_at"])
    assert at is not None and start is not None
    done, total = float(row["done"]), float(row["total"])
    fit = ProgressFit(int(row["fit_n"]), float(row["fit_t"]), float(row["fit_f"]), float(row["fit_tt"]),
                      float(row["fit_tf"]))
    return StoredProgress(job_id=str(row["job_id"]), run_started_at=start, done=done, total=total,
                          report=ProgressReport(fraction=done / total if total > 0 else math.nan, at=at,
                                                ran_s=float(row["ran_s"]), fit=fit),
                          ignored=str(row.get("ignored") or ""))


BACKWARDS_TOLERANCE = 0.01
"""A run's reported share done may fall this much (1 percentage point: a total re-counted) before its
reports are taken to contradict themselves."""
JUMP_MIN = 0.25
"""A rise in share done of at least this much ...  (see :data:`JUMP_RATE`)."""
JUMP_RATE = 100.0
"""... at more than this many times the run's own rate so far (the slope of the line through at least
three of its reports) contradicts the run's reports — unless it reports the run done (early stopping)."""


def contradiction(old: StoredProgress | None, done: float, total: float, ran_s: float) -> str:
    """Why a report of ``done`` of ``total`` after ``ran_s`` seconds of run contradicts ``old``, the
    stored report of the same run ("" when it does not; ``old`` None: the run's first report).

    A report is its job's own claim, read for the ETAs of the jobs waiting on it; a run whose reports
    contradict themselves is not read for them at all (red team 21, R2: 99 % then 1.1 % every 10 s
    flipped every waiting job's ETA): progress going backwards by more than
    :data:`BACKWARDS_TOLERANCE`, or rising by :data:`JUMP_MIN` or more at over :data:`JUMP_RATE` times
    the run's own rate so far (a report that the run is done excepted).
    """
    if old is None or not total > 0:
        return ""
    before, now = old.report.fraction, done / total
    at = old.report.at.strftime("%H:%M:%S")
    if now < before - BACKWARDS_TOLERANCE:
        return f"its progress went backwards within one run: {_pct(before)} done at {at} UTC, then {_pct(now)}"
    slope, seconds = _slope(old.report.fit), ran_s - old.report.ran_s
    if now < 1.0 and now - before >= JUMP_MIN and slope is not None and seconds > 0 \
            and (now - before) / seconds > JUMP_RATE * slope:
        return (f"its progress jumped from {_pct(before)} (at {at} UTC) to {_pct(now)} in {seconds:.0f} s, over "
                f"{JUMP_RATE:.0f} times its own rate so far")
    return ""


def _pct(fraction: float) -> str:
    """``99 %``, ``1.1 %`` (three figures at most)."""
    return f"{fraction * 100:.3g} %"


def _slope(fit: ProgressFit) -> float | None:
    """The slope (share done per second) of the line through a run's reports: None with under three,
    all at one time, or none rising."""
    if fit.n < 3:
        return None
    mean_t = fit.t / fit.n
    var = fit.tt / fit.n - mean_t * mean_t
    if not var > 1e-9 * max(mean_t * mean_t, 1.0):
        return None
    slope = (fit.tf / fit.n - mean_t * fit.f / fit.n) / var
    return slope if math.isfinite(slope) and slope > 0 else None


def completes(stored: StoredProgress, done: float, total: float) -> bool:
    """Does the report ``done`` of ``total`` complete a run whose stored report is ``stored`` (it says
    all done, and the stored one does not)? Such a report is never coalesced (new user 21, N3)."""
    return done >= total > 0 and not stored.done >= stored.total


def record_progress(tx: StoreTx, job_id: str, *, run_started_at: datetime, at: datetime, done: float, total: float,
                    min_interval_s: float) -> tuple[StoredProgress, bool]:
    """:func:`record_report` without saying whether this report got the run ignored."""
    stored, fresh, _ = record_report(tx, job_id, run_started_at=run_started_at, at=at, done=done, total=total,
                                     min_interval_s=min_interval_s)
    return stored, fresh


def record_report(tx: StoreTx, job_id: str, *, run_started_at: datetime, at: datetime, done: float, total: float,
                  min_interval_s: float) -> tuple[StoredProgress, bool, str]:
    """Store ``done`` of ``total`` steps reported at ``at`` by the run of ``job_id`` that started at
    ``run_started_at`` — unless the stored report of that run is under ``min_interval_s`` old.

    A report that completes the run (:func:`completes`) is stored however soon it comes (once per
    run: new user 21, N3), and so is the first report that contradicts the run's stored one
    (:func:`contradiction`): it marks the run's reports ignored for ETAs (``ignored``) until a new run.

    Returns:
        ``(the stored progress, whether this report was stored, why the run is ignored from this
        report on)``; False: coalesced into the stored one (reported less than ``min_interval_s``
        after it); the reason is "" unless this very report got the run ignored.
    """
    row = tx.conn.execute(sa.select(_P).where(_P.c.job_id == job_id).with_for_update()).mappings().first()
    old = _from_row(row) if row is not None and _sound(tx, row) else None  # a bad row: this report replaces it
    same_run = old is not None and old.run_started_at == run_started_at
    ran_s = max((at - run_started_at).total_seconds(), 0.0)
    carried = old.ignored if old is not None and same_run else ""
    newly = "" if carried else contradiction(old if same_run else None, done, total, ran_s)
    if old is not None and same_run and (at - old.report.at).total_seconds() < min_interval_s \
            and not completes(old, done, total) and not newly:
        return old, False, ""
    ignored = carried or newly
    fit = (old.report.fit if old is not None and same_run else ProgressFit()).add(ran_s, done / total)
    columns = {"run_started_at": ts(run_started_at), "reported_at": ts(at), "done": done, "total": total,
               "ran_s": ran_s, "fit_n": fit.n, "fit_t": fit.t, "fit_f": fit.f, "fit_tt": fit.tt, "fit_tf": fit.tf,
               "ignored": ignored or None}
    if row is None:
        if not _insert_if_absent(tx, job_id, columns):  # another report of the job stored the first row meanwhile
            return record_report(tx, job_id, run_started_at=run_started_at, at=at, done=done, total=total,
                                 min_interval_s=min_interval_s)
    else:
        tx.conn.execute(_P.update().where(_P.c.job_id == job_id).values(**columns))
    tx.progress_changed = True  # its commit moves the progress counter: a follower's pages show it (session 22)
    stored = StoredProgress(job_id=job_id, run_started_at=run_started_at, done=done, total=total,
                            report=ProgressReport(fraction=done / total, at=at, ran_s=ran_s, fit=fit), ignored=ignored)
    return stored, True, newly


def _insert_if_absent(tx: StoreTx, job_id: str, columns: dict[str, Any]) -> bool:
    """Insert ``job_id``'s first row unless one is there already (False then: the first reports of a
    job's workers at one moment race for it — red team 26, R5: the loser's plain INSERT was a
    UniqueViolation, answered 503 "the database failed"). ``ON CONFLICT DO NOTHING`` on PostgreSQL and
    SQLite: the loser waits for the winner's commit and then finds its row (read under a row lock by
    :func:`record_report`, which applies the report to it)."""
    values = {"job_id": job_id, **columns}
    dialect = tx.conn.dialect.name
    if dialect == "postgresql":
        stmt: Any = postgresql.insert(_P).values(**values).on_conflict_do_nothing(index_elements=[_P.c.job_id])
    elif dialect == "sqlite":
        stmt = sqlite.insert(_P).values(**values).on_conflict_do_nothing(index_elements=[_P.c.job_id])
    else:
        tx.conn.execute(_P.insert().values(**values))
        return True
    return tx.conn.execute(stmt.returning(_P.c.job_id)).first() is not None  # (rowcount is -1 on this engine)


def read_progress(tx: StoreTx, job_ids: Iterable[str]) -> dict[str, StoredProgress]:
    """The stored progress of each of ``job_ids`` that has one."""
    ids = sorted(set(job_ids))
    out: dict[str, StoredProgress] = {}
    for i in range(0, len(ids), _CHUNK):
        for row in tx.conn.execute(sa.select(_P).where(_P.c.job_id.in_(ids[i:i + _CHUNK]))).mappings():
            if _sound(tx, row):
                out[str(row["job_id"])] = _from_row(row)
    return out


def fresh_progress(tx: StoreTx, since: datetime) -> dict[str, StoredProgress]:
    """The stored progress reported at ``since`` or later (each scheduling cycle's read: older
    reports project nothing, :data:`~jupyter_sched.backfill.progress.STALE_S`), but for runs whose
    reports are ignored (``ignored``: they contradict themselves)."""
    rows = tx.conn.execute(sa.select(_P).where(_P.c.reported_at >= ts(since),
                                               sa.or_(_P.c.ignored.is_(None), _P.c.ignored == ""))).mappings()
    return {str(row["job_id"]): _from_row(row) for row in rows if _sound(tx, row)}
