"""Job files follow their job's retention (hubadmin24 B16): the leader's :class:`~..engine.retention.Pruner`
calls :func:`job_files_sweep`'s sweep in the same pass that prunes the job records.

A job directory (``c.SchedApp.log_dir``: the output log, up to ``max_log_mib`` each, carried files,
the executed notebook) and the executor's ``.state`` records of the job go when the job finished
before the finished-jobs cutoff (``retention_finished_jobs_days``), or when the store no longer
knows the job (pruned earlier, or a folder left by an older version) and nothing in the directory
changed since the cutoff. A job that is not finished is never touched, whatever its age. At most
``limit`` directories go per pass; the rest are taken at the Pruner's catch-up pace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from ..executors.jobdirs import JobDirs, RemovedJobFiles
from ..store import Store

__all__ = ["job_files_sweep"]

log = logging.getLogger(__name__)


def job_files_sweep(store: Store, dirs: JobDirs, *, limit: int = 200) -> Callable[[datetime], RemovedJobFiles]:
    """The sweep for ``dirs``: called with the finished-jobs cutoff (UTC), it removes what the
    module docstring says and returns the counts (an unreadable root: logged, nothing removed)."""

    def sweep(cutoff: datetime) -> RemovedJobFiles:
        def choose(ids: list[str]) -> set[str]:
            with store.transaction(write=False) as tx:  # one read per batch of folders
                records = tx.get_jobs(ids)
            chosen = set()
            for job_id in ids:
                record = records.get(job_id)
                if record is None:  # untouched since the cutoff (JobDirs checked) and no longer known
                    chosen.add(job_id)
                elif (record.job.state.terminal and record.job.finished_at is not None
                      and record.job.finished_at < cutoff):
                    chosen.add(job_id)
            return chosen

        try:
            return dirs.remove_job_dirs(cutoff.timestamp(), choose, limit=limit)
        except OSError:
            log.warning("could not sweep old job directories under %s", dirs.root, exc_info=True)
            return RemovedJobFiles()

    return sweep
