"""Every finished job's folder is sealed, measured and trimmed beside the engine, never on its thread (red34 R2,
red35 R1).

What a job's folder holds at its end is its owner's to shape: a job stopped for its folder's entries
(:mod:`.outside_caps`) may leave tens of thousands of files there, and any job may ``rename(2)`` a prepared tree of
100,000 folders into its folder at its last instant and SIGKILL its own wrapper, so that the wrapper's sweep
(:func:`~.wrapper._sweep_left`) never runs. Sealing that folder (:func:`.sealing.seal`: open, chown and list each
folder), counting it (:func:`.log_budget.extra_use`) and removing what it holds took the executor's poll, on the
engine's thread: red34 R2, 13 s of no starts and no ends for anyone; red35 R1, 14.6 s per such 0-GPU job.

:class:`FolderCleaner` does every job's end on threads of its own (one per owner: red35 R1, one account's trees
never hold another's ends), one folder of an owner at a time, in this order: the folder
sealed from its account first (it can add nothing more), then measured — at most
:data:`~.log_budget.EXTRA_MOST` + 1 entries walked — and what it holds beside its log and records removed when
that is more than the wrapper's sweep keeps (:data:`~.wrapper.LEFT_FILES` files / :data:`~.wrapper.LEFT_BYTES`,
what a killed wrapper never swept) or when the job was stopped for it, then measured again. :meth:`FolderCleaner.done`
hands back each job with the bytes left beside its log; the executor counts the job in its owner's total of kept
logs only then (:meth:`.log_budget.LogBudget.ended`, on the engine's thread), and counts its log meanwhile as a
running job's (:meth:`.log_budget.LogBudget.launch`), so what it left is never counted against its owner's older
jobs and never passes uncounted for long. The same thread removes what the budget trims of older folders
(:meth:`.log_budget.LogBudget.launch` → its ``remove`` hook).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .log_budget import extra_use, remove_extra
from .sealing import seal
from .wrapper import LEFT_BYTES, LEFT_FILES

__all__ = ["Cleaned", "FolderCleaner"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Cleaned:
    """A folder the cleaner is done with: ``job_id``'s, ``extra`` bytes left in it beside its log and records
    (:func:`~.log_budget.extra_use`, as its owner's total counts them)."""

    job_id: str
    extra: int


class FolderCleaner:
    """Worker threads that seal, measure and trim finished job folders: one per owner with folders waiting (started
    at its first folder, gone once its folders are done), each owner's in order — so one account's trees of
    100,000 folders never hold another account's job ends (their counts, a preempted job's start again) behind them."""

    def __init__(self) -> None:
        self._work: dict[int | None, deque[tuple[str, Path, bool]]] = {}
        self._done: queue.SimpleQueue[Cleaned] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._waiting = 0

    def clean(self, job_id: str, job_dir: Path, owner_uid: int | None, *, remove: bool = False) -> None:
        """Seal ``job_dir`` from ``owner_uid`` (None: the service's own account, nothing to seal), then remove what
        it holds but its log and records when ``remove`` (a job stopped for its folder, a budget's trim) or when it
        is more than the wrapper's sweep keeps, beside the caller; :meth:`done` names ``job_id`` after."""
        with self._lock:
            self._waiting += 1
            mine = self._work.get(owner_uid)
            if mine is not None:  # its owner's worker takes it after the ones before
                mine.append((job_id, job_dir, remove))
                return
            self._work[owner_uid] = deque([(job_id, job_dir, remove)])
        try:
            threading.Thread(target=self._run, args=(owner_uid,), name="jupyter-sched-folder-cleaner",
                             daemon=True).start()
        except RuntimeError as exc:  # no thread to be had (the host's limit): said done uncleaned, never stuck —
            with self._lock:  # a later folder of this owner tries a worker again
                left = self._work.pop(owner_uid, deque())
                self._waiting -= len(left)
            log.error("job folders %s could not be cleaned (no thread: %s); they stay as their jobs left them",
                      ", ".join(str(folder) for _, folder, _ in left), exc)
            for gone, _, _ in left:
                self._done.put(Cleaned(gone, 0))

    def done(self) -> list[Cleaned]:
        """The folders cleaned since the last call, in the order they were done."""
        finished: list[Cleaned] = []
        while True:
            try:
                finished.append(self._done.get_nowait())
            except queue.Empty:
                return finished

    def busy(self) -> bool:
        """Whether a folder is still waiting or being cleaned."""
        with self._lock:
            return self._waiting > 0

    def _run(self, owner_uid: int | None) -> None:
        while True:
            with self._lock:
                mine = self._work[owner_uid]
                if not mine:  # done: the next folder of this owner starts a worker again
                    del self._work[owner_uid]
                    return
                job_id, job_dir, remove = mine[0]
            extra = 0
            try:
                extra = _clean(job_id, job_dir, owner_uid, remove=remove)
            except Exception:  # one folder's failure never ends the cleaner: the next ones still get cleaned
                log.exception("job %s: its job folder %s could not be cleaned", job_id, job_dir)
            finally:
                self._done.put(Cleaned(job_id, extra))  # said done before it stops counting as busy: a caller
                with self._lock:  # waiting on busy() then finds it in done()
                    self._work[owner_uid].popleft()
                    self._waiting -= 1


_NOTEBOOK = frozenset({"executed.ipynb"})
"""What the wrapper's sweep keeps whatever its size (a notebook job's outputs: counted in its owner's total)."""


def _clean(job_id: str, job_dir: Path, owner_uid: int | None, *, remove: bool) -> int:
    """Seal, measure and trim one job folder (the module docstring); the bytes left beside its log."""
    if owner_uid is not None:
        seal(job_dir, owner_uid)
    if remove:
        removed = remove_extra(job_dir, owner_uid)
    else:
        entries, used = extra_use(job_dir, owner_uid, skip=_NOTEBOOK)
        if entries <= LEFT_FILES and used <= LEFT_BYTES:  # as the wrapper's sweep left it
            return extra_use(job_dir, owner_uid)[1]
        removed = remove_extra(job_dir, owner_uid, keep=_NOTEBOOK)  # a sweep its killed wrapper never did
    log.info("job %s: %s bytes it left in its job folder were removed", job_id, removed)
    return extra_use(job_dir, owner_uid)[1]
