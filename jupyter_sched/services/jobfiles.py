"""Job files follow their job's retention (hubadmin24 B16): the leader's :class:`~..engine.retention.Pruner`
runs a :class:`JobFilesSweep` in its worker thread (never on the engine's: red team 25, R3).

A job directory (``c.SchedApp.log_dir``: the output log, up to ``max_log_mib`` each, carried files,
the executed notebook) and the executor's ``.state`` records of the job go when the job finished
before the finished-jobs cutoff (``retention_finished_jobs_days``), or when the store no longer
knows the job (pruned earlier, or a folder left by an older version) and nothing in the directory
changed since the cutoff. A job that is not finished is never touched, whatever its age. A pass
removes at most ``limit`` directories and looks at most at ``examine`` folder entries (a user can
plant any number in their own folder), then the next pass goes on from where it stopped; the rest
are taken at the Pruner's catch-up pace. Only names shaped like job ids reach the store, and a
batch the store cannot answer is passed over (said once: :class:`~..engine.faults.FaultLog`), the
others still go (red team 25, R4: one ``j-\\xff`` folder stopped all retention).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from ..engine.faults import FaultLog
from ..executors.jobdirs import JobDirs, RemovedJobFiles
from ..store import Store

__all__ = ["JobFilesSweep", "job_files_sweep"]

log = logging.getLogger(__name__)


class JobFilesSweep:
    """The sweep of ``dirs``: called with the finished-jobs cutoff (UTC), it removes what the module
    docstring says and returns the counts (an unreadable root: said once, nothing removed).

    Args:
        store: the jobs' store.
        dirs: the local executor's job directories.
        limit: most directories removed per pass.
        examine: most folder entries looked at per pass.
        faults: where faults are said (one WARNING per distinct fault).

    Attributes:
        cursor: where the next pass starts (None: from the beginning).
    """

    def __init__(self, store: Store, dirs: JobDirs, *, limit: int = 200, examine: int = 5000,
                 faults: FaultLog | None = None) -> None:
        self.store = store
        self.dirs = dirs
        self.limit = limit
        self.examine = examine
        self.faults = faults if faults is not None else FaultLog(log)
        self.cursor: tuple[str, int] | None = None

    def chooser(self, cutoff: datetime) -> Callable[[list[str]], set[str]]:
        """Which of a batch of job ids may have their files removed (``remove_job_dirs``'s
        ``choose``): the store's answer for the batch; a batch it cannot answer is kept (said once)."""

        def choose(ids: list[str]) -> set[str]:
            try:
                with self.store.transaction(write=False) as tx:  # one read per batch of folders
                    records = tx.get_jobs(ids)
            except Exception as exc:  # this batch stays; the others still go
                self.faults.warn(f"job directories: the store could not be asked about {len(ids)} of them "
                                 f"under {self.dirs.root}; they are kept", exc)
                return set()
            chosen = set()
            for job_id in ids:
                record = records.get(job_id)
                if record is None:  # untouched since the cutoff (JobDirs checked) and no longer known
                    chosen.add(job_id)
                elif (record.job.state.terminal and record.job.finished_at is not None
                      and record.job.finished_at < cutoff):
                    chosen.add(job_id)
            return chosen

        return choose

    def __call__(self, cutoff: datetime) -> RemovedJobFiles:
        """One pass (module docstring), from :attr:`cursor`; what it removed."""
        choose = self.chooser(cutoff)
        try:
            removed = self.dirs.remove_job_dirs(cutoff.timestamp(), choose, limit=self.limit, examine=self.examine,
                                                after=self.cursor)
        except OSError as exc:
            self.faults.warn(f"could not sweep old job directories under {self.dirs.root}", exc)
            self.cursor = None
            return RemovedJobFiles()
        self.cursor = removed.cursor
        return removed


def job_files_sweep(store: Store, dirs: JobDirs, *, limit: int = 200, examine: int = 5000) -> JobFilesSweep:
    """The :class:`JobFilesSweep` of ``dirs`` (``limit`` directories removed, ``examine`` entries
    looked at, per pass)."""
    return JobFilesSweep(store, dirs, limit=limit, examine=examine)
