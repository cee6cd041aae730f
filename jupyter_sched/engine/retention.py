"""The leader prunes what the retention policy no longer keeps (edge; the rules: :mod:`..store.retention`).

A :class:`Pruner` is one of the engine's leader hooks (:attr:`Engine.leader_hooks`): only the
engine that leads the store prunes, so two servers sharing PostgreSQL never both delete. It runs
at most every ``interval_s`` seconds (10 minutes by default: old rows need no hurry), one bounded
batch per table per run, in its own short transaction; while a table still has a backlog (a
store that never pruned before: years of rollups) it comes back after ``catch_up_s`` instead, so
the backlog is worked off in seconds-apart small transactions rather than in one that would hold
SQLite's only write lock for minutes. Every run that deleted something leaves one audit record
(action ``pruned``, details = what and the cutoffs), so an admin can see what retention did.

With ``files`` (the local executor's job directories, :mod:`..services.jobfiles`) each run also
starts, in a worker thread, a sweep of the directories and ``.state`` records of jobs past the same
cutoff, and of jobs the store no longer knows, bounded per pass (hubadmin24 B16: job files were
never deleted; red team 25, R3: never on the engine thread); its own ``pruned`` record's
``job_files`` counts them (directories, files, bytes, records).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from ..errors import NotLeaderError, ValidationError
from ..store import Store
from ..store.retention import PruneReport, RetentionPolicy, prune
from .clock import Clock
from .faults import FaultLog

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
    ``retention_events_days``, ``retention_rollups_days``, ``retention_finished_jobs_per_user``; missing = the
    defaults).

    Raises:
        ValidationError: a value that is not a number of days.
    """
    defaults = RetentionPolicy()

    def days(key: str, default: float | None) -> float | None:
        value = settings.get(f"retention_{key}_days", default)
        return None if value is None else float(value)

    per_user = settings.get("retention_finished_jobs_per_user", defaults.finished_jobs_per_user)
    if per_user is not None and (isinstance(per_user, bool) or not isinstance(per_user, int) or per_user < 0):
        raise ValidationError(f"retention_finished_jobs_per_user must be a whole number of jobs (got {per_user!r})",
                              field="retention_finished_jobs_per_user", hint="give a count, or 0 for no bound")
    return RetentionPolicy(finished_jobs_days=days("finished_jobs", defaults.finished_jobs_days),
                           events_days=days("events", defaults.events_days),
                           rollups_days=days("rollups", defaults.rollups_days),
                           finished_jobs_per_user=per_user)


class Pruner:
    """A leader hook that prunes old rows now and then (module docstring).

    Each step stands alone (red team 25, R4: one planted folder name made every run fail before it
    pruned anything, and the run was due again at the next tick): the tables are pruned even when
    the files sweep fails, a failure is said once (:class:`~.faults.FaultLog`), and the next run is
    always scheduled. The files sweep runs in its own worker thread, one at a time, never on the
    engine's (red team 25, R3: it walks folders users can fill; red team 19, R6 for the notebook
    sweep): a run starts it and returns; what it removed is audited by the worker (one ``pruned``
    record per backlog worked off, or per ``interval_s`` while one lasts, not one per catch-up run).

    Args:
        store: the store.
        clock: the engine's clock (cutoffs count back from its now).
        policy: what is kept how long.
        interval_s: least seconds between two runs without a backlog.
        catch_up_s: seconds until the next run while a table or the files still have a backlog.
        monotonic: the interval's clock (tests pass their own).
        files: the job files sweep, called with the finished-jobs cutoff (None: no job files).

    Attributes:
        last: the report of the latest table run (None before the first, or when it failed).
        runs: runs made.
        files_runs: files sweeps finished.
        faults: where failures are said.
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
        self.files_runs = 0
        self.faults = FaultLog(log)
        self._files_thread: threading.Thread | None = None
        self._files_unsaid: dict[str, int] = {}  # removed since the last audit record (FilesRemoved.to_dict sums)
        self._files_since: float | None = None  # when the unsaid counts began

    def __call__(self) -> PruneReport | None:
        """Prune if due: the tables, then start the files sweep in its worker (unless one still runs);
        the tables' report, or None when not due (or the tables could not be pruned: said once)."""
        if self.policy.keeps_everything or self._monotonic() < self._next_at:
            return None
        report: PruneReport | None = None
        now = self.clock.now()
        try:
            report = self._prune_tables(now)
        except NotLeaderError:
            raise
        except Exception as exc:
            self.faults.warn("retention could not prune old jobs, audit events and telemetry rollups", exc)
        finally:
            self.runs += 1
            self.last = report
            self._next_at = self._monotonic() + (
                self.catch_up_s if report is not None and report.more else self.interval_s)
        days = self.policy.finished_jobs_days
        if self.files is not None and days and days > 0:  # after the tables' next run is set: the worker may sooner
            self.start_files(now - timedelta(days=days))
        return report

    def _prune_tables(self, now: datetime) -> PruneReport:
        with self.store.transaction(now=now) as tx:
            report = prune(tx.conn, self.policy, now=now)
            tx.jobs_changed = tx.jobs_changed or report.jobs > 0  # answers kept by the jobs counter go stale
            if report.total:
                over = report.over_user_bound
                beyond = (f" ({sum(over.values())} of the jobs past {self.policy.finished_jobs_per_user} finished jobs "
                          f"kept per user: " + ", ".join(f"{user} {n}" for user, n in sorted(over.items())) + ")"
                          ) if over else ""
                tx.add_event(actor="retention", action="pruned", details=report.to_dict(), message=(
                    f"pruned {report.jobs} finished jobs, {report.events} audit events and "
                    f"{report.rollups} telemetry rollups past their retention{beyond}"))
        if report.total:
            log.info("retention pruned %s", report.to_dict())
        return report

    @property
    def files_running(self) -> bool:
        """Whether a files sweep is running in its worker."""
        return self._files_thread is not None and self._files_thread.is_alive()

    def start_files(self, cutoff: datetime) -> bool:
        """Start the files sweep with ``cutoff`` in a worker thread unless one still runs; whether started."""
        if self.files is None or self.files_running:
            return False
        thread = threading.Thread(target=self._files_pass, args=(cutoff,), name="job-files-sweep", daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # no thread to be had now: the next run tries again
            self.faults.warn("retention could not start its job files sweep", exc)
            return False
        self._files_thread = thread
        return True

    def wait_files(self, timeout_s: float | None = None) -> None:
        """Wait for the running files sweep to end (tests; a shutdown)."""
        thread = self._files_thread
        if thread is not None:
            thread.join(timeout_s)

    def _files_pass(self, cutoff: datetime) -> None:
        """One files sweep, in the worker: never raises (a failure is said once)."""
        assert self.files is not None
        try:
            files = self.files(cutoff)
        except Exception as exc:
            self.faults.warn("retention could not sweep old job directories", exc)
            return
        finally:
            self.files_runs += 1
        if files.more:  # the rest at the catch-up pace
            self._next_at = min(self._next_at, self._monotonic() + self.catch_up_s)
        for key, value in files.to_dict().items():
            if isinstance(value, int) and not isinstance(value, bool):
                self._files_unsaid[key] = self._files_unsaid.get(key, 0) + value
        if files.dirs or files.records:
            log.info("retention removed job files %s", files.to_dict())
        self._say_files(done=not files.more)

    def _say_files(self, *, done: bool) -> None:
        """The ``pruned`` audit record of the job files removed since the last one: when a backlog is
        worked off, or ``interval_s`` after the last record while it lasts."""
        counts = self._files_unsaid
        if not (counts.get("dirs") or counts.get("records")):
            return
        now_s = self._monotonic()
        if self._files_since is None:
            self._files_since = now_s
        if not done and now_s - self._files_since < self.interval_s:
            return
        details: dict[str, Any] = {"job_files": {**counts, "more": not done}}
        try:
            with self.store.transaction(now=self.clock.now()) as tx:
                tx.add_event(actor="retention", action="pruned", details=details, message=(
                    f"pruned {counts.get('dirs', 0)} job directories ({counts.get('bytes', 0)} bytes) past their "
                    "retention" + ("; more are being removed" if not done else "")))
        except Exception as exc:
            self.faults.warn("retention could not audit the job files it removed", exc)
            return
        self._files_unsaid = {}
        self._files_since = None
