"""Retention: old audit events, telemetry rollups and finished jobs are pruned, in bounded batches.

Nothing was ever deleted before (issue 17, problem 4): a store grows by a job row per submit, a
few audit events per job and one telemetry rollup per GPU per minute (~525,000 rows per GPU per
year), and every listing, count and report pays for rows nobody will read again. A
:class:`RetentionPolicy` says how many days each kind is kept; :func:`prune` deletes what is
older, at most ``batch`` rows per table per call, so one call holds the store's write lock for
milliseconds (SQLite has one writer) and a backlog is worked off over several calls.

What is pruned, and what is kept so that no accounting report changes:

* **finished jobs** — rows in a terminal state whose ``finished_at`` is older than the cutoff.
  Their ``usage`` intervals (the accounting: who held which GPU, when, at what share) are NOT
  pruned: usage reports, budgets, fair share and ``GET me`` read only those, so their totals stay
  the same; a definition's run whose job was pruned lists with ``job: null``.
* **audit events** — ``events`` older than the cutoff (the audit log's horizon), except an admin's end
  corrections (``end_corrected``): they changed usage, which is kept, and the ``GET metrics`` counter of the
  GPU-seconds they took back is summed from them (:func:`~.claimed_ends.taken_back`), so it never goes down.
* **telemetry rollups** — ``gpu_rollups`` minutes older than the cutoff. Reports over months
  older than that keep their allocated GPU-hours but their utilization becomes "unknown"
  (``telemetry_coverage`` falls): the default keeps rollups longer than a year for that reason.

Quarantine notes of pruned rows are dropped with them (the doctor would otherwise name rows that
no longer exist). A ``None`` or non-positive number of days keeps that kind forever.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from ..errors import ValidationError
from ..model import TERMINAL_STATES
from . import schema
from .codec import ts

END_CORRECTED_ACTION = "end_corrected"
"""The audit action retention keeps: an admin's end correction (:mod:`.claimed_ends`, which names it from here)."""

__all__ = ["RetentionPolicy", "PruneReport", "prune"]


@dataclass(frozen=True)
class RetentionPolicy:
    """Days each kind of row is kept (None or <= 0: forever).

    Attributes:
        finished_jobs_days: terminal jobs, counted from ``finished_at`` (default 400, as the
            rollups: a quarter's or a year's review still finds every job of it — hubadmin26 B19).
        events_days: audit events, counted from ``at`` (default 365).
        rollups_days: one-minute telemetry rollups, counted from ``minute`` (default 400, so a
            year of monthly utilization reports keeps its figures).
        batch: rows deleted per table per :func:`prune` call at most (default 5,000).
        finished_jobs_per_user: finished jobs kept per user at most, the newest (by ``finished_at``); older
            ones are pruned first, before their days are up (default 10,000; None or <= 0: no bound). red30
            R4: one user's loop of instant jobs with big specs grew the store without bound for 400 days;
            now the store holds at most the users times this many finished rows.

    Raises:
        ValidationError: a number of days that is not a finite number, or ``batch`` < 1 (field
            ``retention.<name>``).
    """

    finished_jobs_days: float | None = 400.0
    events_days: float | None = 365.0
    rollups_days: float | None = 400.0
    batch: int = 5_000
    finished_jobs_per_user: int | None = 10_000

    def __post_init__(self) -> None:
        for name in ("finished_jobs_days", "events_days", "rollups_days"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or not math.isfinite(value)):
                raise ValidationError(f"retention.{name} must be a number of days (got {value!r})",
                                      field=f"retention.{name}", hint="give days, or 0 to keep forever")
        bound = self.finished_jobs_per_user
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
            raise ValidationError(f"retention.finished_jobs_per_user must be a whole number of jobs (got {bound!r})",
                                  field="retention.finished_jobs_per_user", hint="give a count, or 0 for no bound")
        if self.batch < 1:
            raise ValidationError(f"retention.batch must be at least 1 (got {self.batch})", field="retention.batch",
                                  hint="use the default 5000")

    @property
    def keeps_everything(self) -> bool:
        """True when no kind is ever pruned."""
        return all(not d or d <= 0 for d in (self.finished_jobs_days, self.events_days, self.rollups_days,
                                             self.finished_jobs_per_user))


@dataclass
class PruneReport:
    """Rows one :func:`prune` call deleted, per table, and whether a batch was full (more to do).

    Attributes:
        jobs / events / rollups: rows deleted.
        more: some table had more old rows than ``batch``: call again soon.
    """

    jobs: int = 0
    events: int = 0
    rollups: int = 0
    more: bool = False
    cutoffs: dict[str, str] = field(default_factory=dict)
    over_user_bound: dict[str, int] = field(default_factory=dict)
    """Per user past ``finished_jobs_per_user``: their oldest finished jobs deleted (counted in ``jobs``)."""

    @property
    def total(self) -> int:
        """Rows deleted in all."""
        return self.jobs + self.events + self.rollups

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (audit details)."""
        out: dict[str, Any] = {"jobs": self.jobs, "events": self.events, "rollups": self.rollups, "more": self.more,
                               "cutoffs": dict(self.cutoffs)}
        if self.over_user_bound:  # only where the bound pruned (one record per run, not per row)
            out["finished_jobs_over_user_bound"] = dict(self.over_user_bound)
        return out


def _cutoff(now: datetime, days: float | None) -> str | None:
    return ts(now - timedelta(days=days)) if days and days > 0 else None


def _delete_batch(conn: sa.Connection, table: sa.Table, key: sa.Column[Any], where: sa.ColumnElement[bool],
                  batch: int, quarantine_table: str) -> tuple[int, bool]:
    """Delete up to ``batch`` rows of ``table`` matching ``where`` (their keys read first, so the
    DELETE is by primary key on both SQLite and PostgreSQL); return (deleted, batch was full)."""
    keys = [row[0] for row in conn.execute(sa.select(key).where(where).order_by(key).limit(batch))]
    if not keys:
        return 0, False
    deleted = 0
    q = schema.quarantine
    for start in range(0, len(keys), 500):  # bound the IN list (SQLite's variable limit)
        chunk = keys[start:start + 500]
        deleted += conn.execute(table.delete().where(key.in_(chunk))).rowcount or 0
        conn.execute(q.delete().where(q.c.table_name == quarantine_table, q.c.row_key.in_([str(k) for k in chunk])))
    return deleted, len(keys) >= batch


def prune(conn: sa.Connection, policy: RetentionPolicy, *, now: datetime) -> PruneReport:
    """Delete rows older than ``policy`` allows, at most ``policy.batch`` per table (module
    docstring); run inside one write transaction (``StoreTx.conn``).

    Args:
        conn: the transaction's connection.
        policy: how long each kind is kept.
        now: the time the cutoffs count back from (UTC).

    Returns:
        What was deleted, and whether a table had more than a batch of old rows.
    """
    report = PruneReport()
    jobs_cut = _cutoff(now, policy.finished_jobs_days)
    if jobs_cut is not None:
        j = schema.jobs
        report.cutoffs["jobs"] = jobs_cut
        old = sa.and_(j.c.state.in_(sorted(s.value for s in TERMINAL_STATES)), j.c.finished_at.is_not(None),
                      j.c.finished_at < jobs_cut)
        report.jobs, more = _delete_batch(conn, j, j.c.id, old, policy.batch, "jobs")
        report.more |= more
        # a pruned job's progress report goes with it (issue 16 item 4): reports older than the cutoff of jobs gone
        p = schema.job_progress
        _, more = _delete_batch(conn, p, p.c.job_id, sa.and_(p.c.reported_at < jobs_cut,
                                                               p.c.job_id.not_in(sa.select(j.c.id))),
                                policy.batch, "job_progress")
        report.more |= more
    if policy.finished_jobs_per_user is not None and policy.finished_jobs_per_user > 0:
        more = _prune_over_user_bound(conn, policy.finished_jobs_per_user, policy.batch - report.jobs, report)
        report.more |= more
    events_cut = _cutoff(now, policy.events_days)
    if events_cut is not None:
        e = schema.events
        report.cutoffs["events"] = events_cut
        kept = e.c.action != END_CORRECTED_ACTION  # usage's corrections stay as long as usage (module docstring)
        report.events, more = _delete_batch(conn, e, e.c.id, sa.and_(e.c.at < events_cut, kept), policy.batch,
                                            "events")
        report.more |= more
    rollups_cut = _cutoff(now, policy.rollups_days)
    if rollups_cut is not None:
        r = schema.gpu_rollups
        report.cutoffs["gpu_rollups"] = rollups_cut
        report.rollups, more = _delete_batch(conn, r, r.c.id, r.c.minute < rollups_cut, policy.batch, "gpu_rollups")
        report.more |= more
    return report


USERS_PER_PRUNE = 20
"""Users past the per-user bound handled in one :func:`prune` call at most (the most rows first); more: ``more``."""


def _prune_over_user_bound(conn: sa.Connection, bound: int, budget: int, report: PruneReport) -> bool:
    """Delete the oldest finished jobs of each user who has more than ``bound`` of them (newest ``bound``
    kept, by ``finished_at`` then id), at most ``budget`` rows in all; counted in ``report`` (``jobs``,
    ``over_user_bound``). Whether some are left for the next call."""
    j = schema.jobs
    finished = j.c.state.in_(sorted(s.value for s in TERMINAL_STATES))
    count = sa.func.count()
    over = conn.execute(sa.select(j.c.user, count).where(finished).group_by(j.c.user).having(count > bound)
                        .order_by(count.desc(), j.c.user).limit(USERS_PER_PRUNE + 1)).all()
    more = len(over) > USERS_PER_PRUNE
    q, p = schema.quarantine, schema.job_progress
    for user, rows in over[:USERS_PER_PRUNE]:
        if budget <= 0:
            return True
        newest_first = (sa.func.coalesce(j.c.finished_at, j.c.submitted_at).desc(), j.c.id.desc())
        keys = [row[0] for row in conn.execute(sa.select(j.c.id).where(finished, j.c.user == user)
                                               .order_by(*newest_first).offset(bound).limit(budget))]
        deleted = 0
        for start in range(0, len(keys), 500):  # bound the IN list (SQLite's variable limit)
            chunk = keys[start:start + 500]
            deleted += conn.execute(j.delete().where(j.c.id.in_(chunk))).rowcount or 0
            conn.execute(q.delete().where(q.c.table_name == "jobs", q.c.row_key.in_(chunk)))
            conn.execute(p.delete().where(p.c.job_id.in_(chunk)))  # its progress report goes with it
        if deleted:
            report.jobs += deleted
            report.over_user_bound[str(user)] = report.over_user_bound.get(str(user), 0) + deleted
        budget -= deleted
        more |= int(rows) - bound > deleted
    return more
