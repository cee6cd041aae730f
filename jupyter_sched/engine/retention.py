"""The leader prunes what the retention policy no longer keeps (edge; the rules: :mod:`..store.retention`).

A :class:`Pruner` is one of the engine's leader hooks (:attr:`Engine.leader_hooks`): only the
engine that leads the store prunes, so two servers sharing PostgreSQL never both delete. It runs
at most every ``interval_s`` seconds (10 minutes by default: old rows need no hurry), one bounded
batch per table per run, in its own short transaction; while a table still has a backlog (a
store that never pruned before: years of rollups) it comes back after ``catch_up_s`` instead, so
the backlog is worked off in seconds-apart small transactions rather than in one that would hold
SQLite's only write lock for minutes. Every run that deleted something leaves one audit record
(action ``pruned``, details = what and the cutoffs), so an admin can see what retention did.

With ``files`` (the local executor's job directories, :mod:`..services.jobfiles`) the same pass
removes the directories and ``.state`` records of jobs past the same cutoff, and of jobs the store
no longer knows, bounded per pass (hubadmin24 B16: job files were never deleted); the audit
record's ``job_files`` counts them (directories, files, bytes, records).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from ..store import Store
from ..store.retention import PruneReport, RetentionPolicy, prune
from .clock import Clock

__all__ = ["Pruner", "retention_from_settings"]

log = logging.getLogger(__name__)


class FilesRemoved(Protocol):
    """What a files sweep removed (:class:`~jupyter_sched.executors.jobdirs.RemovedJobFiles`)."""

    dirs: int
    records: int
    more: bool

    def to_dict(self) -> dict[str, int | bool]: ...


def retention_from_settings(settings: Mapping[str, Any]) -> RetentionPolicy:
    """The policy from the server's settings (``retention_finished_jobs_days``,
    ``retention_events_days``, ``retention_rollups_days``; missing = the defaults).

    Raises:
        ValidationError: a value that is not a number of days.
    """
    defaults = RetentionPolicy()

    def days(key: str, default: float | None) -> float | None:
        value = settings.get(f"retention_{key}_days", default)
        return None if value is None else float(value)

    return RetentionPolicy(finished_jobs_days=days("finished_jobs", defaults.finished_jobs_days),
                           events_days=days("events", defaults.events_days),
                           rollups_days=days("rollups", defaults.rollups_days))


class Pruner:
    """A leader hook that prunes old rows now and then (module docstring).

    Args:
        store: the store.
        clock: the engine's clock (cutoffs count back from its now).
        policy: what is kept how long.
        interval_s: least seconds between two runs without a backlog.
        catch_up_s: seconds until the next run while a table still has a backlog.
        monotonic: the interval's clock (tests pass their own).
        files: the job files sweep, called with the finished-jobs cutoff (None: no job files).

    Attributes:
        last: the report of the latest run (None before the first).
        runs: runs made.
    """

    def __init__(self, store: Store, clock: Clock, policy: RetentionPolicy, *, interval_s: float = 600.0,
                 catch_up_s: float = 5.0, monotonic: Callable[[], float] = time.monotonic,
                 files: Callable[[datetime], FilesRemoved] | None = None) -> None:
        self.store = store
        self.clock = clock
        self.policy = policy
        self.interval_s = interval_s
        self.catch_up_s = catch_up_s
        self._monotonic = monotonic
        self.files = files
        self._next_at = 0.0  # the first leading tick prunes
        self.last: PruneReport | None = None
        self.runs = 0

    def __call__(self) -> PruneReport | None:
        """Prune if due; the report of this run, or None when not due (or nothing is pruned)."""
        if self.policy.keeps_everything or self._monotonic() < self._next_at:
            return None
        now = self.clock.now()
        days = self.policy.finished_jobs_days
        # files first: a job whose record goes in this pass is then found as "no longer known" next time anyway
        files = self.files(now - timedelta(days=days)) if self.files is not None and days and days > 0 else None
        removed = files is not None and (files.dirs > 0 or files.records > 0)
        with self.store.transaction(now=now) as tx:
            report = prune(tx.conn, self.policy, now=now)
            tx.jobs_changed = tx.jobs_changed or report.jobs > 0  # answers kept by the jobs counter go stale
            if report.total or removed:
                details = report.to_dict()
                message = (f"pruned {report.jobs} finished jobs, {report.events} audit events and "
                           f"{report.rollups} telemetry rollups past their retention")
                if files is not None:
                    details["job_files"] = files.to_dict()
                    message += f", and {files.dirs} job directories ({files.to_dict()['bytes']} bytes)"
                tx.add_event(actor="retention", action="pruned", message=message, details=details)
        report.more |= files is not None and files.more
        if report.total or removed:
            log.info("retention pruned %s%s", report.to_dict(),
                     f"; job files {files.to_dict()}" if files is not None else "")
        self.runs += 1
        self.last = report
        self._next_at = self._monotonic() + (self.catch_up_s if report.more else self.interval_s)
        return report
