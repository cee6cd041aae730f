"""The leader prunes what the retention policy no longer keeps (edge; the rules: :mod:`..store.retention`).

A :class:`Pruner` is one of the engine's leader hooks (:attr:`Engine.leader_hooks`): only the
engine that leads the store prunes, so two servers sharing PostgreSQL never both delete. It runs
at most every ``interval_s`` seconds (10 minutes by default: old rows need no hurry), one bounded
batch per table per run, in its own short transaction; while a table still has a backlog (a
store that never pruned before: years of rollups) it comes back after ``catch_up_s`` instead, so
the backlog is worked off in seconds-apart small transactions rather than in one that would hold
SQLite's only write lock for minutes. Every run that deleted something leaves one audit record
(action ``pruned``, details = what and the cutoffs), so an admin can see what retention did.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..store import Store
from ..store.retention import PruneReport, RetentionPolicy, prune
from .clock import Clock

__all__ = ["Pruner", "retention_from_settings"]

log = logging.getLogger(__name__)


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

    Attributes:
        last: the report of the latest run (None before the first).
        runs: runs made.
    """

    def __init__(self, store: Store, clock: Clock, policy: RetentionPolicy, *, interval_s: float = 600.0,
                 catch_up_s: float = 5.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.clock = clock
        self.policy = policy
        self.interval_s = interval_s
        self.catch_up_s = catch_up_s
        self._monotonic = monotonic
        self._next_at = 0.0  # the first leading tick prunes
        self.last: PruneReport | None = None
        self.runs = 0

    def __call__(self) -> PruneReport | None:
        """Prune if due; the report of this run, or None when not due (or nothing is pruned)."""
        if self.policy.keeps_everything or self._monotonic() < self._next_at:
            return None
        now = self.clock.now()
        with self.store.transaction(now=now) as tx:
            report = prune(tx.conn, self.policy, now=now)
            tx.jobs_changed = tx.jobs_changed or report.jobs > 0  # answers kept by the jobs counter go stale
            if report.total:
                tx.add_event(actor="retention", action="pruned",
                             message=f"pruned {report.jobs} finished jobs, {report.events} audit events and "
                                     f"{report.rollups} telemetry rollups past their retention",
                             details=report.to_dict())
        if report.total:
            log.info("retention pruned %s", report.to_dict())
        self.runs += 1
        self.last = report
        self._next_at = self._monotonic() + (self.catch_up_s if report.more else self.interval_s)
        return report
