"""The disk under the job logs: held launches while it is (nearly) full, and a failed run said as a full disk.

A full file system under ``log_dir`` made every job of that user "fail with exit code 120" (Python's
status when it cannot flush its output) with no word anywhere — not to the owner, not in the
service log (hubadmin25 B15). The local executor now asks :class:`LogDisk`:

* before it launches a job (:meth:`LogDisk.check`): with less than ``floor_bytes`` free
  (``c.SchedApp.min_log_free_mib``) in the job's log folder, or fewer free inodes than
  :func:`inode_floor` (red team 26, R4: "… is full: 12 inodes free …") it raises :class:`ExecutorError` with
  pending-reason code ``LogDiskFull``, so the job goes back to the queue with the reason
  "the disk of the log folder … is full (12 KiB free; new jobs start with at least 16 MiB: …)"
  instead of failing, and starts once space is freed;
* when a run failed (:meth:`LogDisk.failed_run`): with the disk full (less than the floor, or
  1 MiB when no floor is set) the run's end reads "could not write its output: the disk of the
  log folder … is full (… free)", before the exit code and the log's last lines.

Each full folder is said once in the service log (one WARNING, again only after it had room).
Only the standard library is imported.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from ..errors import ExecutorError
from ..wording.reasons import figure

__all__ = ["FULL_BYTES", "LOG_DISK_FULL", "LOW_SHARE", "MAX_FREE_INODES", "MIN_FREE_INODES", "LogDisk", "free_bytes",
           "free_inodes", "inode_floor", "low_disk_line", "size_words"]

log = logging.getLogger(__name__)

LOG_DISK_FULL = "LogDiskFull"
"""The pending-reason code of a launch held for a full log disk."""

FULL_BYTES = 1 << 20
"""Free bytes under which a failed run is put down to a full disk when no floor is set."""


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the file system of ``path`` (its nearest existing
    folder; ``statvfs`` ``f_bavail * f_frsize``); None when it cannot be read."""
    stat = _statvfs(path)
    return None if stat is None else int(stat.f_bavail) * int(stat.f_frsize)


def _statvfs(path: Path) -> os.statvfs_result | None:
    """``statvfs`` of ``path``'s nearest existing folder; None when it cannot be read."""
    for folder in (path, *path.parents):
        try:
            return os.statvfs(folder)
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return None


def free_inodes(path: Path) -> tuple[int, int] | None:
    """``(free, floor)``: the inodes (files, folders) an unprivileged writer may still create on the file
    system of ``path`` (its nearest existing folder; ``statvfs`` ``f_favail``) and the least a launch
    wants there (:func:`inode_floor`); None when it cannot be read or the file system does not count
    inodes (``f_files`` 0: btrfs, some network file systems)."""
    stat = _statvfs(path)
    if stat is None or int(stat.f_files) <= 0:
        return None
    return int(stat.f_favail), inode_floor(int(stat.f_files))


def inode_floor(total: int) -> int:
    """The free inodes a launch wants on a file system of ``total`` inodes: 1 % of them, at least
    :data:`MIN_FREE_INODES`, at most :data:`MAX_FREE_INODES` (a job's run creates about seven)."""
    return min(MAX_FREE_INODES, max(MIN_FREE_INODES, total // 100))


MIN_FREE_INODES = 64
MAX_FREE_INODES = 10_000
"""Bounds of :func:`inode_floor` (red team 26, R4: with no inode left, other users' jobs FAILED with
Errno 28 instead of waiting — the check counted bytes only)."""


LOW_SHARE = 0.05
"""A log disk with less than this share free is said at start (as the floor is)."""


def low_disk_line(folder: Path, floor_bytes: int) -> str | None:
    """The start-up WARNING for a nearly full log disk: less than :data:`LOW_SHARE` of it free, or less
    than ``floor_bytes`` (new jobs then wait); None when it has room or cannot be read."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    free, total = int(stat.f_bavail) * int(stat.f_frsize), int(stat.f_blocks) * int(stat.f_frsize)
    if total <= 0 or (free >= LOW_SHARE * total and free >= floor_bytes):
        return None
    waits = " — new jobs wait until it has room" if free < floor_bytes else ""
    return (f"the disk of the job log folder {folder} is nearly full: {size_words(free)} free of {size_words(total)} "
            f"({100 * free / total:.0f} %){waits}; a job that cannot write its log fails, so free space there "
            f"(c.SchedApp.min_log_free_mib = {floor_bytes >> 20})")


def size_words(size: int) -> str:
    """``0 bytes``, ``12 KiB``, ``3.5 MiB``, ``2.1 GiB``, ``2 TiB``, ``1,000 MiB`` — never in exponent notation
    (:func:`~jupyter_sched.wording.reasons.figure`)."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{figure(size / (1 << shift), 3)} {unit}"
    return f"{size} bytes"


class LogDisk:
    """Free-space checks of the job log folders (see module docstring). Thread-safe.

    Args:
        floor_bytes: the least free bytes a launch needs (0 = no check before a launch).
    """

    def __init__(self, floor_bytes: int = 0) -> None:
        self.floor_bytes = max(0, int(floor_bytes))
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def check(self, folder: Path) -> None:
        """Before a launch into ``folder``.

        Raises:
            ExecutorError: less than the floor is free there (details ``code`` :data:`LOG_DISK_FULL`,
                ``free_bytes``, ``folder``): the job waits in the queue.
        """
        if not self.floor_bytes:
            return
        free = free_bytes(folder)
        inodes = free_inodes(folder)
        if inodes is not None and inodes[0] < inodes[1]:
            self._say(folder, free, inodes=inodes[0])
            raise ExecutorError(
                f"the disk of the log folder {folder} is full: {inodes[0]:,} inodes free (new jobs start with at "
                f"least {inodes[1]:,} free, for their files and folders)",
                hint="the job waits and starts once files are removed there: delete old job folders (an admin "
                     "sees it in the service log)",
                details={"code": LOG_DISK_FULL, "free_inodes": inodes[0], "free_bytes": free, "folder": str(folder)})
        if free is None or free >= self.floor_bytes:
            self._room(folder)
            return
        self._say(folder, free)
        raise ExecutorError(
            f"the disk of the log folder {folder} is full ({size_words(free)} free; new jobs start with at least "
            f"{size_words(self.floor_bytes)} free: c.SchedApp.min_log_free_mib)",
            hint="the job waits and starts once space is freed there: delete old job folders or large outputs "
                 "(an admin sees it in the service log)",
            details={"code": LOG_DISK_FULL, "free_bytes": free, "folder": str(folder)})

    def failed_run(self, job_dir: Path) -> str | None:
        """For a run that failed writing into ``job_dir``: "could not write its output: the disk of the
        log folder … is full (… free)" when that disk is full, else None."""
        free = free_bytes(job_dir)
        inodes = free_inodes(job_dir)
        if inodes is not None and inodes[0] < min(inodes[1], MIN_FREE_INODES):
            self._say(job_dir.parent, free, inodes=inodes[0])
            return (f"could not write its output: the disk of the log folder {job_dir.parent} is full "
                    f"({inodes[0]:,} inodes free)")
        if free is None or free >= (self.floor_bytes or FULL_BYTES):
            return None
        self._say(job_dir.parent, free)
        return f"could not write its output: the disk of the log folder {job_dir.parent} is full ({size_words(free)} free)"

    def _say(self, folder: Path, free: int | None, *, inodes: int | None = None) -> None:
        with self._lock:
            if str(folder) in self._said:
                return
            self._said.add(str(folder))
        if inodes is not None:
            log.warning("the disk of the job log folder %s is full (%s inodes free): jobs writing there fail, and new "
                        "jobs there wait in the queue — remove files on it (old job folders)", folder, f"{inodes:,}")
            return
        free = free or 0
        log.warning("the disk of the job log folder %s is full (%s free): jobs writing there fail, and new jobs "
                    "there wait in the queue (c.SchedApp.min_log_free_mib = %s) — free space on it",
                    folder, size_words(free), size_words(self.floor_bytes) if self.floor_bytes else "0, no wait")

    def _room(self, folder: Path) -> None:
        with self._lock:
            self._said.discard(str(folder))
