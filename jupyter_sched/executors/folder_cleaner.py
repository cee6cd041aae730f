"""The end of a job stopped for what its folder held, done beside the engine, not on its thread (red34 R2).

A job stopped for the entries in its folder (:mod:`.outside_caps`: more than its file count) may leave tens of
thousands of files there — written through its stop's grace by a job that ignores SIGTERM. Removing them took the
executor's poll, on the engine's thread, seconds per job (four such 0-GPU jobs of one user: 13 s of no starts and
no ends for anyone). :class:`FolderCleaner` does that job's end — its folder sealed from its account first (it can
add nothing more: :func:`.sealing.seal`), then emptied but for its log and records (:func:`.log_budget.remove_extra`)
— on one thread of its own, one folder at a time, and says which are done; the executor counts such a job's log in
its owner's total only then (:meth:`.log_budget.LogBudget.ended`, on the engine's thread as before), so what it
left is never counted against its owner's older jobs.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from .log_budget import remove_extra
from .sealing import seal

__all__ = ["FolderCleaner"]

log = logging.getLogger(__name__)


class FolderCleaner:
    """One worker thread (started at the first folder) that seals and empties finished job folders in order."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[tuple[str, Path, int | None] | None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._waiting = 0

    def clean(self, job_id: str, job_dir: Path, owner_uid: int | None) -> None:
        """Seal ``job_dir`` from ``owner_uid`` (None: the service's own account, nothing to seal) and remove what
        it holds but its log and records, beside the caller; :meth:`done` names ``job_id`` after."""
        with self._lock:
            self._waiting += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="jupyter-sched-folder-cleaner", daemon=True)
                self._thread.start()
        self._work.put((job_id, job_dir, owner_uid))

    def done(self) -> list[str]:
        """The jobs whose folders were cleaned since the last call."""
        finished: list[str] = []
        while True:
            try:
                finished.append(self._done.get_nowait())
            except queue.Empty:
                return finished

    def busy(self) -> bool:
        """Whether a folder is still waiting or being cleaned."""
        with self._lock:
            return self._waiting > 0

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            job_id, job_dir, owner_uid = item
            try:
                if owner_uid is not None:
                    seal(job_dir, owner_uid)
                removed = remove_extra(job_dir, owner_uid)
                log.info("job %s: %s bytes it left in its job folder were removed", job_id, removed)
            except Exception:  # one folder's failure never ends the cleaner: the next ones still get cleaned
                log.exception("job %s: its job folder %s could not be cleaned", job_id, job_dir)
            finally:
                self._done.put(job_id)  # said done before it stops counting as busy: a caller waiting on
                with self._lock:  # busy() then finds it in done()
                    self._waiting -= 1
