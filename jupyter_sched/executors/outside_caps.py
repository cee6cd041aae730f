"""Caps on what a running job writes, kept from outside the job's account (red30 R3).

The wrapper holds ``output.log`` to its cap (:mod:`.wrapper`, ``_LogCap``), but it runs as the job's own
account: a job that ``kill -STOP``-ed its parent (the wrapper) wrote 1.5 GiB past a 1 GiB cap, and
nothing bounded what a running job wrote beside its log (the wrapper's sweep of the job folder runs at its
end). The job folder lies on the log disk, often the store's: a full disk stops every user's work. So the
local executor (the service: root in hub mode, the job's own account embedded) looks, at each tick,
through :class:`WriteWatch`:

* at each running job's log — one ``stat`` of its wrapper's stdout (``/proc/<pid>/fd/1``: the file the
  job writes into, renamed or unlinked or not; its path where ``/proc`` does not answer) — and cuts a log
  past its cap by more than :data:`LINES_SLACK` back to its first ``cap`` bytes and the wrapper's own
  closing line (:func:`~.wrapper.truncated_line`: the same bytes, so a wrapper that runs again holds the
  same file). A log so holds at most its cap and what the job writes in one tick;
* at its wrapper's state: stopped (``T``, or ``t`` under a debugger) at :data:`STOPPED_LOOKS` looks in a
  row ends the job (:func:`stopped_wrapper_reason`);
* at the running jobs' folders, round robin, up to :data:`ENTRIES_PER_TICK` entries a tick (each walked
  with :func:`~.wrapper.tally`, never by recursion, at most :data:`FOLDER_FILES` + 1 entries): a folder
  holding more than :data:`FOLDER_FILES` files and folders, or more bytes than its bound
  (:func:`folder_bound`: as much as its log may hold), beside its log ends the
  job (:func:`folder_reason`);
* at the files the running jobs hold open that are DELETED and on their log's disk (red30 R9: a job that opened
  a file in its folder, unlinked it and wrote into it held 1.5 GiB there for its whole run, seen by no folder
  walk), round robin, up to :data:`FDS_PER_TICK` open files of :data:`FD_LOOKS_PER_TICK` jobs a tick, each one ``stat`` of ``/proc/<pid>/fd/<n>``
  of the job's processes (its tracking group; and their mappings of deleted files, ``/proc/<pid>/map_files``
  where the service may read it): the blocks they hold (``st_blocks`` times 512: disk spent, so a sparse
  file counts what it spends) and the folder's bytes, together past :func:`folder_bound`, end the job
  (:func:`unlinked_reason`);
* at the free space of each disk running jobs' logs are on (one ``statvfs`` a disk): under
  ``c.SchedApp.min_log_free_mib`` the job that wrote most there since the previous look (at least
  :data:`WRITING_MOST_BYTES`) is ended, one a tick (:func:`low_disk_reason`).

:meth:`WriteWatch.look` returns why each job to end must end; the executor stops it. Only the standard
library and the executor's own modules are imported.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .disk_space import size_words
from .safeopen import open_untrusted
from .wrapper import LEFT_BYTES, LEFT_FILES, OWN_JSON_BYTES, STOP_FIFO, TREE_DEPTH, tally, truncated_line

__all__ = ["ENTRIES_PER_TICK", "FDS_PER_TICK", "FD_LOOKS_PER_TICK", "FOLDER_FILES", "LINES_SLACK", "STOPPED_LOOKS", "WRITING_MOST_BYTES", "Running",
           "WriteWatch", "cut_log", "folder_bound", "folder_reason", "low_disk_reason", "stopped_wrapper_reason",
           "unlinked_reason"]

LINES_SLACK = 64 << 10
"""Bytes a log may hold past its cap before the service cuts it (the wrapper's closing lines: the cut's,
a stop's reason, its sweep's)."""
STOPPED_LOOKS = 2
"""Looks in a row at which a running job's wrapper is stopped before the job is ended."""
FOLDER_FILES = 10_000
"""The most files and folders a running job's folder may hold beside its log."""
ENTRIES_PER_TICK = 4096
"""Entries of job folders walked a tick, at least (the last folder is walked whole, up to
:data:`FOLDER_FILES` + 1); the next tick goes on with the next folder."""
FDS_PER_TICK = 4096
"""Open files of running jobs looked at a tick (one ``stat`` each); the next tick goes on where this one
stopped, in the same job or the next."""
FD_LOOKS_PER_TICK = 2
"""Looks through a job's open files begun a tick, at most (each asks for the job's processes: where jobs are
tracked by marker rather than cgroup that reads every process's environment, milliseconds): with 100 running
jobs each is looked at every 50 ticks; the low-disk rule (``min_log_free_mib``) counts what they hold meanwhile."""
WRITING_MOST_BYTES = 1 << 20
"""The least a job must have written since the previous look to be ended for a log disk under its floor."""


@dataclass(frozen=True, slots=True)
class Running:
    """One running job as :meth:`WriteWatch.look` sees it.

    Attributes:
        job_id: the job.
        wrapper_pid: its wrapper's pid (None: the wrapper ended; its leftovers may still run).
        job_dir: its folder (``<log_dir>/…/<job id>``; ``output.log`` in it).
        owner_uid: the uid its files belong to (None embedded: not checked).
        log_cap: its log's cap in bytes (0: none).
        setting: the setting the cap's line names (``c.SchedApp.max_log_mib``).
        stopping: a stop of it is under way (its log is still held; nothing else is looked at).
        members: the pids of its processes (its tracking group), asked once for each look through its open
            files; None: its open files are not looked at.
    """

    job_id: str
    wrapper_pid: int | None
    job_dir: Path
    owner_uid: int | None
    log_cap: int
    setting: str
    stopping: bool = False
    members: Callable[[], Iterable[int]] | None = None


@dataclass
class _Seen:
    """What the previous looks found of one job."""

    stopped: int = 0
    log_bytes: int = 0
    folder_bytes: int = 0
    wrote: int = 0
    device: int | None = None
    log_key: tuple[int, int] | None = None
    fds: Iterator[tuple[int, int, int] | None] | None = None
    """The look through its open files under way (one item per open file: ``(device, inode, bytes)`` of a
    deleted regular file, None for any other)."""
    deleted_bytes: int = 0
    """The blocks (bytes) its deleted open files held at the last look done."""
    deleted: dict[tuple[int, int], int] | None = None
    """What that look found so far: ``{(device, inode): bytes on disk}``."""


def folder_bound(log_cap: int) -> int:
    """The most bytes a running job's folder may hold beside its log: as much as its log may (``log_cap``:
    ``c.SchedApp.max_log_mib``, or less where its owner's total of kept logs leaves less), never less than what
    a folder keeps once its job ended (:data:`~.wrapper.LEFT_BYTES`); 0 (no bound) where its log has no cap."""
    return max(LEFT_BYTES, log_cap) if log_cap > 0 else 0


def stopped_wrapper_reason(state: str, cap: int, setting: str) -> str:
    """The end of a job whose wrapper stayed stopped (``state`` ``T``/``t``)."""
    how = "under a debugger" if state == "t" else "by SIGSTOP"
    return (f"its wrapper was stopped ({how}) while it ran: the wrapper keeps its log within {setting} "
            f"({cap / 2**20:g} MiB) and records its end, so a job that stops it is ended; its log was held to the "
            "cap — do not signal or trace the job's parent process (os.getppid())")


def folder_reason(job_dir: Path, files: int, used: int, bound_bytes: int, setting: str) -> str:
    """The end of a job whose folder passed its bound while it ran (``files`` entries, ``used`` bytes; its log's
    cap is named by ``setting``)."""
    held = (f"more than {FOLDER_FILES:,} files and folders (or folders nested over {TREE_DEPTH} deep)"
            if files > FOLDER_FILES
            else f"{size_words(used)} in {files:,} files and folders")
    return (f"its job folder {job_dir} held {held} beside its log while it ran, over the {FOLDER_FILES:,} files / "
            f"{bound_bytes >> 20} MiB a running job's folder may hold (as much as its log: {setting}; "
            f"once a job ended it keeps {LEFT_FILES} files / {LEFT_BYTES >> 20} MiB): stopped — the folder is on the "
            "service's log disk; write a job's outputs into your home or another folder of yours")


def unlinked_reason(job_dir: Path, files: int, held: int, folder_bytes: int, bound_bytes: int, setting: str) -> str:
    """The end of a job that held ``files`` deleted files open on its log's disk, ``held`` bytes of disk in them
    (blocks), with ``folder_bytes`` in its folder beside its log: together past ``bound_bytes``."""
    return (f"it held {files:,} deleted {'file' if files == 1 else 'files'} open on the disk of its job folder "
            f"{job_dir} ({size_words(held)} on disk, and {size_words(folder_bytes)} in its folder beside its log) "
            f"while it ran, over the {bound_bytes >> 20} MiB a running job's folder may hold (as much as its log: "
            f"{setting}): stopped — a deleted file keeps its disk space until it is closed, and the folder is on "
            "the service's log disk; write a job's outputs and scratch files into your home or another folder "
            "of yours")


def low_disk_reason(folder: Path, free: int, floor: int, wrote: int) -> str:
    """The end of the job that wrote most on a log disk with less than ``floor`` bytes ``free``."""
    return (f"the disk of the log folder {folder} had {size_words(free)} free, under c.SchedApp.min_log_free_mib = "
            f"{floor >> 20}, and this job wrote the most there ({size_words(wrote)} since the previous look): "
            "stopped — every user's logs (often the store too) are on that disk; write large outputs into your "
            "home, or ask an admin to free space there")


class WriteWatch:
    """The looks of the module docstring, for one executor.

    Args:
        min_free_bytes: ``c.SchedApp.min_log_free_mib`` in bytes (0: free space is not looked at).
    """

    def __init__(self, *, min_free_bytes: int) -> None:
        self.min_free = max(0, min_free_bytes)
        self._seen: dict[str, _Seen] = {}
        self._cursor = 0
        self._fd_cursor = 0

    def forget(self, job_id: str | None = None) -> None:
        """Drop what was seen of a job that ended (None: of every job)."""
        if job_id is None:
            self._seen.clear()
        else:
            self._seen.pop(job_id, None)

    def look(self, running: Sequence[Running]) -> dict[str, tuple[str, str]]:
        """One tick's looks at ``running``; ``{job id: (what, why it must end)}`` — what: ``"wrapper"``,
        ``"folder"`` or ``"disk"``, why: the reasons above; the caller stops each (nothing here signals a job).
        Logs past their cap are cut here."""
        ends: dict[str, tuple[str, str]] = {}
        for job in running:
            seen = self._seen.setdefault(job.job_id, _Seen())
            seen.wrote = self._look_log(job, seen)
            if job.stopping or job.wrapper_pid is None:
                seen.stopped = 0
                continue
            state = _state(job.wrapper_pid)
            seen.stopped = seen.stopped + 1 if state in ("T", "t") else 0
            if seen.stopped >= STOPPED_LOOKS and state is not None:
                ends[job.job_id] = ("wrapper", stopped_wrapper_reason(state, job.log_cap, job.setting))
        open_jobs = [job for job in running if not job.stopping and job.job_id not in ends]
        ends.update(self._look_folders(open_jobs))
        ends.update(self._look_unlinked([job for job in open_jobs if job.job_id not in ends]))
        if self.min_free:
            ends.update(self._look_disks([job for job in open_jobs if job.job_id not in ends]))
        return ends

    def _look_log(self, job: Running, seen: _Seen) -> int:
        """Stat (and past its cap, cut) the job's log; the bytes it grew by since the previous look."""
        info = _log_stat(job)
        if info is None:
            return 0
        size, seen.device, seen.log_key = info.st_size, info.st_dev, (info.st_dev, info.st_ino)
        if job.log_cap > 0 and size > job.log_cap + LINES_SLACK:
            cut = cut_log(job, job.log_cap)
            size = cut if cut is not None else size
        grew = max(0, info.st_size - seen.log_bytes)
        seen.log_bytes = size
        return grew

    def _look_folders(self, jobs: Sequence[Running]) -> dict[str, tuple[str, str]]:
        """Walk folders round robin from where the previous tick stopped, :data:`ENTRIES_PER_TICK` entries."""
        ends: dict[str, tuple[str, str]] = {}
        if not jobs:
            return ends
        order = sorted(jobs, key=lambda job: job.job_id)
        start, walked = self._cursor % len(order), 0
        for step in range(len(order)):
            job = order[(start + step) % len(order)]
            files, used = running_folder_use(job.job_dir, job.owner_uid)
            seen = self._seen[job.job_id]
            seen.wrote += max(0, used - seen.folder_bytes)
            seen.folder_bytes = used
            bound = folder_bound(job.log_cap)
            if files > FOLDER_FILES or (bound and used > bound):
                ends[job.job_id] = ("folder", folder_reason(job.job_dir, files, used, bound, job.setting))
            walked += files + 1
            self._cursor = start + step + 1
            if walked >= ENTRIES_PER_TICK:
                break
        return ends

    def _look_unlinked(self, jobs: Sequence[Running]) -> dict[str, tuple[str, str]]:
        """Go on through the jobs' open files round robin, :data:`FDS_PER_TICK` a tick; a job whose look is done
        and whose deleted files on its log's disk and folder hold more than its bound is to end."""
        ends: dict[str, tuple[str, str]] = {}
        order = sorted((job for job in jobs if job.members is not None and folder_bound(job.log_cap)),
                       key=lambda job: job.job_id)
        if not order:
            return ends
        start, budget, begun = self._fd_cursor % len(order), FDS_PER_TICK, 0
        for step in range(len(order)):
            job = order[(start + step) % len(order)]
            seen = self._seen[job.job_id]
            self._fd_cursor = start + step
            if seen.fds is None or seen.deleted is None:
                if begun >= FD_LOOKS_PER_TICK:
                    break
                begun += 1
                device = seen.device if seen.device is not None else _device_of(job.job_dir)
                if device is None or job.members is None:
                    continue
                seen.fds, seen.deleted = _deleted_open(job.members(), device, seen.log_key), {}
            for found in seen.fds:
                budget -= 1
                if found is not None:
                    seen.deleted[found[:2]] = found[2]
                if budget <= 0:
                    break
            else:  # this job's look is done
                held, files = sum(seen.deleted.values()), len(seen.deleted)
                seen.fds = seen.deleted = None
                seen.wrote += max(0, held - seen.deleted_bytes)  # for the low-disk rule
                seen.deleted_bytes = held
                bound = folder_bound(job.log_cap)
                if files and held + seen.folder_bytes > bound:
                    ends[job.job_id] = ("folder", unlinked_reason(job.job_dir, files, held, seen.folder_bytes,
                                                                  bound, job.setting))
                self._fd_cursor = start + step + 1
                continue
            break  # this tick's open files are looked at; the next tick goes on in this job
        return ends

    def _look_disks(self, jobs: Sequence[Running]) -> dict[str, tuple[str, str]]:
        """The job that wrote most on each log disk under its floor (one ``statvfs`` a disk)."""
        by_disk: dict[int, list[Running]] = {}
        for job in jobs:
            device = self._seen[job.job_id].device
            if device is not None:
                by_disk.setdefault(device, []).append(job)
        ends: dict[str, tuple[str, str]] = {}
        for on_disk in by_disk.values():
            try:
                found = os.statvfs(on_disk[0].job_dir)
            except OSError:
                continue
            free = int(found.f_bavail) * int(found.f_frsize)
            if free >= self.min_free:
                continue
            most = max(on_disk, key=lambda job: self._seen[job.job_id].wrote)
            wrote = self._seen[most.job_id].wrote
            if wrote >= WRITING_MOST_BYTES:
                ends[most.job_id] = ("disk", low_disk_reason(most.job_dir.parent, free, self.min_free, wrote))
        return ends


def _device_of(folder: Path) -> int | None:
    """The device ``folder`` is on (None: it cannot be read)."""
    try:
        return os.stat(folder, follow_symlinks=False).st_dev
    except OSError:
        return None


def _deleted_open(pids: Iterable[int], device: int,
                  skip: tuple[int, int] | None) -> Iterator[tuple[int, int, int] | None]:
    """One item per open file of ``pids`` (each a ``stat`` of ``/proc/<pid>/fd/<n>``, which is the file whatever
    its name): ``(device, inode, bytes on disk)`` for a regular file deleted (no link left) on ``device``,
    other than ``skip`` (the job's log: held to its cap apart), None for any other. A process gone or
    unreadable yields nothing."""
    for pid in sorted(set(pids)):
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                info = os.stat(f"/proc/{pid}/fd/{name}")
            except OSError:
                yield None
                continue
            yield _if_deleted(info, device, skip)
        yield from _deleted_mapped(pid, device, skip)


def _if_deleted(info: os.stat_result, device: int, skip: tuple[int, int] | None) -> tuple[int, int, int] | None:
    """``(device, inode, bytes on disk)`` of a regular file with no link left on ``device`` (not ``skip``)."""
    key = (info.st_dev, info.st_ino)
    if stat.S_ISREG(info.st_mode) and info.st_nlink == 0 and info.st_dev == device and key != skip:
        return info.st_dev, info.st_ino, int(info.st_blocks) * 512
    return None


def _deleted_mapped(pid: int, device: int, skip: tuple[int, int] | None) -> Iterator[tuple[int, int, int] | None]:
    """The deleted files ``pid`` maps with no descriptor left (opened, mapped, closed, unlinked, written through
    the mapping): one item for reading its ``/proc/<pid>/maps``, one per mapping of a deleted file (a ``stat``
    of ``/proc/<pid>/map_files/<range>``; where that cannot be read — it takes CAP_SYS_ADMIN — nothing)."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as fh:
            lines = [line for line in fh if line.rstrip().endswith(b" (deleted)")]
    except OSError:
        return
    yield None
    for line in lines:
        try:
            info = os.stat(f"/proc/{pid}/map_files/{line.split(None, 1)[0].decode('ascii')}")
        except (OSError, UnicodeDecodeError):
            yield None
            continue
        yield _if_deleted(info, device, skip)


def _state(pid: int) -> str | None:
    """The one-letter state of process ``pid`` (``/proc/<pid>/stat``; None: gone or unreadable)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 4096).rsplit(b")", 1)[1].split(None, 1)[0].decode()
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def _log_stat(job: Running) -> os.stat_result | None:
    """The job's log as a ``stat``: its wrapper's stdout, else the file at ``<job_dir>/output.log`` (no link
    followed); None when neither is a regular file of the job's owner."""
    info = None
    if job.wrapper_pid is not None:
        try:
            info = os.stat(f"/proc/{job.wrapper_pid}/fd/1")
        except OSError:
            info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        try:
            info = os.lstat(job.job_dir / "output.log")
        except OSError:
            return None
    if not stat.S_ISREG(info.st_mode) or (job.owner_uid is not None and info.st_uid != job.owner_uid):
        return None
    return info


def cut_log(job: Running, cap: int, *, then: str = "") -> int | None:
    """Cut the job's log (its wrapper's stdout, else ``<job_dir>/output.log``, no link followed) when it holds
    more than ``cap`` + :data:`LINES_SLACK` bytes, to its first ``cap`` bytes and the wrapper's closing line (:func:`~.wrapper.truncated_line`), and ``then`` as one more
    ``[jupyter_sched]`` line when given; its new size in bytes (None: not a regular file of the job's owner,
    or it could not be cut)."""
    fd = None
    if job.wrapper_pid is not None:
        try:
            fd = os.open(f"/proc/{job.wrapper_pid}/fd/1", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            fd = None
    try:
        if fd is None or not stat.S_ISREG(os.fstat(fd).st_mode):
            if fd is not None:
                os.close(fd)
            fd = open_untrusted(job.job_dir / "output.log", owner_uid=job.owner_uid, write=True)
        info = os.fstat(fd)
        if job.owner_uid is not None and info.st_uid != job.owner_uid:
            return None
        if info.st_size <= cap + LINES_SLACK:  # the wrapper's closing lines stay
            return int(info.st_size)
        os.ftruncate(fd, cap)
        line = truncated_line(cap, job.setting, joined=cap > 0 and os.pread(fd, 1, cap - 1) != b"\n")
        if then:
            line += f"[jupyter_sched] {then}\n".encode()
        os.pwrite(fd, line, cap)  # over whatever the job appended since the cut
        return cap + len(line)
    except OSError:
        return None
    finally:
        if fd is not None:
            os.close(fd)


_OWN_NAMES = frozenset({"exit.json", "wrapper.json", "outcome.json", STOP_FIFO})


def _wrappers_own(entry: os.DirEntry[str]) -> bool:
    """A record or the stop FIFO the wrapper keeps in the folder (not a folder, at most
    :data:`~.wrapper.OWN_JSON_BYTES`: a bigger one under that name is the job's)."""
    if entry.name not in _OWN_NAMES:
        return False
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return not stat.S_ISDIR(info.st_mode) and info.st_size <= OWN_JSON_BYTES


def running_folder_use(job_dir: Path, owner_uid: int | None) -> tuple[int, int]:
    """``(files and folders, bytes)`` in a running job's folder beside its ``output.log`` and the wrapper's own
    records (folders with all
    below them, never through a link, at most :data:`FOLDER_FILES` + 1 entries counted); ``(0, 0)`` where it
    is not a folder of ``owner_uid`` (when given) or cannot be read."""
    try:
        fd = os.open(job_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return 0, 0
    files = used = 0
    try:
        if owner_uid is not None and os.fstat(fd).st_uid != owner_uid:
            return 0, 0
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.name == "output.log" or _wrappers_own(entry):
                    continue
                count, size = tally(entry, fd, most=FOLDER_FILES - files)
                files, used = files + count, used + size
                if files > FOLDER_FILES:
                    break
    except OSError:
        pass
    finally:
        os.close(fd)
    return min(files, FOLDER_FILES + 1), used
