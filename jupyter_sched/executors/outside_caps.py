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
  where the service may read it; each line of a process's ``/proc/<pid>/maps`` one item: red35 R3): the blocks they hold (``st_blocks`` times 512: disk spent, so a sparse
  file counts what it spends) and the folder's bytes, together past :func:`folder_bound`, end the job
  (:func:`unlinked_reason`). A deleted file counts only when it is the job account's and the job may have
  written it — held open for writing, mapped shared and writable, or modified since the job started (red32 R2:
  a job that only READ a file another account replaced by a rename, or that mapped a library an upgrade
  replaced, was ended and told to write its outputs into its home). A job that wrote a file, set its time back
  and kept it open read-only only is not ended by this look; the low-disk rule below still counts its blocks;
* at the free space of each disk running jobs' logs are on (one ``statvfs`` a disk): under
  ``c.SchedApp.min_log_free_mib`` a job is ended (one a disk a tick, :func:`low_disk_reason`) only when its own
  writes there explain the fall (red31 R1: the rule ended "the job that wrote most since the previous look",
  counting logs and folders only, so a job that filled the same disk from its home or /tmp got a bystander with a
  chatty log ended and blamed). What a job wrote there is measured, not guessed: its log's growth, its folder's,
  and the blocks of the files its processes hold open on that disk — deleted, or written since it started,
  outside its folder (the same ``stat`` of each open file the look above makes). The fall is the disk's free
  space when the running jobs there started (the most of them: at a job's first look, plus what it had written
  by then) less its free space now. A job is ended when it wrote at least :data:`EXPLAINS_SHARE` of that fall and
  is still writing there (:data:`WRITING_MOST_BYTES` since the previous look); when no job does, none is ended:
  new jobs wait (:class:`~.disk_space.LogDisk`) and admins read one WARNING (:func:`unexplained_low_disk_line`)
  naming the running jobs that wrote most anywhere by their processes' I/O counters (``/proc/<pid>/io``: an
  upper bound — bytes passed to write calls and sent to any disk — so it names, it never ends).

:meth:`WriteWatch.look` returns why each job to end must end; the executor stops it. Only the standard
library and the executor's own modules are imported.
"""

from __future__ import annotations

import logging
import os
import pwd
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..safefd import open_fd
from .disk_space import size_words
from .jobdirs import is_job_name
from .safeopen import open_untrusted
from .wrapper import LEFT_BYTES, LEFT_FILES, OWN_JSON_BYTES, STOP_FIFO, TREE_DEPTH, regular_file, tally, truncated_line

__all__ = ["ENTRIES_PER_TICK", "EXPLAINS_SHARE", "FDS_PER_TICK", "FD_LOOKS_PER_TICK", "FOLDER_FILES", "LINES_SLACK",
           "STOPPED_LOOKS", "WRITING_MOST_BYTES", "Running", "WriteWatch", "cut_log", "folder_bound", "folder_reason",
           "beside_reason", "low_disk_reason", "stopped_wrapper_reason", "unexplained_low_disk_line", "unlinked_reason"]

log = logging.getLogger(__name__)

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
"""The least a job must have written on its log disk since the previous look to be ended for that disk under its
floor."""
EXPLAINS_SHARE = 0.5
"""The least share of a log disk's fall (see the module docstring) a job must have written there itself to be ended
for that disk under its floor (red31 R1)."""
START_SLACK = 2.0
"""Seconds past a job's start before which a deleted file it holds only for reading is not taken as written by it: a
start time is its wrapper's ``create_time`` (boot time in whole seconds plus clock ticks: up to a second early), and a
dataset written just before the job was started for it is not the job's write."""
WRITTEN_FILES = 4 * FDS_PER_TICK
"""Open files a job's look remembers the counted bytes of (so a file is not counted twice); past it, those not open
at the last look are forgotten."""


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
        started: when its wrapper started (seconds since the epoch): files its processes hold open on its log's
            disk, outside its folder, modified since count as its writes there (None: only deleted ones count).
        began: its wrapper read its launch (False: it was started but has not begun; a stop then says so).
        account: the words naming the account it runs as (`` as account NAME (uid N)``; "" embedded).
    """

    job_id: str
    wrapper_pid: int | None
    job_dir: Path
    owner_uid: int | None
    log_cap: int
    setting: str
    stopping: bool = False
    members: Callable[[], Iterable[int]] | None = None
    started: float | None = None
    began: bool = True
    account: str = ""


@dataclass
class _Seen:
    """What the previous looks found of one job."""

    stopped: int = 0
    log_bytes: int = 0
    folder_bytes: int = 0
    wrote: int = 0
    device: int | None = None
    log_key: tuple[int, int] | None = None
    fds: Iterator[_OpenFile | None] | None = None
    """The look through its open files under way (one item per open file: an :class:`_OpenFile` for one that
    counts, None for any other)."""
    deleted: dict[tuple[int, int], int] | None = None
    elsewhere: dict[tuple[int, int], int] = field(default_factory=dict)
    """What that look found so far of files written in ANOTHER job folder beside its own (red31 R1 variant):
    ``{(device, inode): bytes on disk}``."""
    """What that look found so far of deleted files: ``{(device, inode): bytes on disk}``."""
    held: dict[tuple[int, int], int] | None = None
    """What that look found so far of the files counted as its writes (deleted, or written since it started):
    ``{(device, inode): bytes on disk}``."""
    counted: dict[tuple[int, int], int] | None = None
    """Bytes of each such file already counted in :attr:`total` (at most :data:`WRITTEN_FILES` files)."""
    total: int = 0
    """What it wrote on its log's disk since it started (bytes; log, folder and open files grown)."""
    start_free: int | None = None
    """The free bytes of its log's disk at its start: at its first look, plus what it had written by then."""
    pids: tuple[int, ...] = ()
    """Its processes at the last look through its open files begun (for their I/O counters)."""


def folder_bound(log_cap: int) -> int:
    """The most bytes a running job's folder may hold beside its log: as much as its log may (``log_cap``:
    ``c.SchedApp.max_log_mib``, or less where its owner's total of kept logs leaves less), never less than what
    a folder keeps once its job ended (:data:`~.wrapper.LEFT_BYTES`); 0 (no bound) where its log has no cap."""
    return max(LEFT_BYTES, log_cap) if log_cap > 0 else 0


def stopped_wrapper_reason(state: str, cap: int, setting: str, *, began: bool = True, account: str = "") -> str:
    """The end of a job whose wrapper stayed stopped (``state`` ``T``/``t``); ``began``: after it read its launch
    (else it was stopped while it started, red32 R7), ``account``: :attr:`Running.account`."""
    how = "under a debugger" if state == "t" else "by SIGSTOP"
    if not began:
        return (f"its wrapper was stopped ({how}) before it began{account}: the job never ran and was ended — do not "
                "signal or trace a job's processes while it starts")
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


def beside_reason(job_dir: Path, files: int, held: int, folder_bytes: int, bound_bytes: int, setting: str) -> str:
    """The end of a job that held ``files`` files open for writing in OTHER job folders beside its own (``held``
    bytes of disk in them), with ``folder_bytes`` in its own folder beside its log: together past ``bound_bytes``
    (red31 R1 variant: a job filled its owner's finished job's folder, which no bound counted)."""
    return (f"it wrote {size_words(held)} into {files:,} {'file' if files == 1 else 'files'} of other job folders "
            f"beside its own {job_dir} (and {size_words(folder_bytes)} in its folder beside its log) while it ran, "
            f"over the {bound_bytes >> 20} MiB a running job's folder may hold (as much as its log: {setting}): "
            "stopped — job folders are on the service's log disk; write a job's outputs into your home or another "
            "folder of yours")


def low_disk_reason(folder: Path, free: int, floor: int, fall: int, wrote: int, lately: int) -> str:
    """The end of a job whose own writes explain why a log disk has less than ``floor`` bytes ``free``: the disk's
    free space fell by ``fall`` bytes while the jobs there ran, ``wrote`` of them this job's (``lately`` since the
    previous look)."""
    return (f"the disk of the log folder {folder} had {size_words(free)} free, under c.SchedApp.min_log_free_mib = "
            f"{floor >> 20}: its free space fell by {size_words(fall)} while the jobs there ran, and this job wrote "
            f"{size_words(wrote)} of it on that disk (its log, its job folder and the files it held open there; "
            f"{size_words(lately)} since the previous look): stopped — every user's logs (often the store too) are "
            "on that disk; write large outputs on another disk (df shows which disk a folder is on), or ask an "
            "admin to free space there")


def unexplained_low_disk_line(folder: Path, free: int, floor: int, fall: int,
                              most: tuple[str, str, int] | None, writers: Sequence[tuple[str, str, int]]) -> str:
    """The admins' WARNING for a log disk under its floor whose fall no running job's writes there explain.

    Args:
        folder: the log folder; ``free``/``floor``/``fall``: bytes, as :func:`low_disk_reason`.
        most: the running job that wrote most there, measured: ``(job id, account, bytes)``; None: none wrote.
        writers: the running jobs that wrote most anywhere by their processes' I/O counters, most first:
            ``(job id, account, bytes)``.
    """
    there = (f"the most: job {most[0]} of {most[1]}, {size_words(most[2])} in its log, folder and open files there"
             if most is not None else "none wrote there")
    named = ", ".join(f"{job} of {who}: {size_words(n)}" for job, who, n in writers)
    anywhere = (f"; the running jobs that wrote most anywhere by their processes' I/O counters (an upper bound: "
                f"any disk, pipes too) — {named}" if named else "")
    return (f"the disk of the job log folder {folder} has {size_words(free)} free, under c.SchedApp.min_log_free_mib "
            f"= {floor >> 20}: it fell by {size_words(max(0, fall))} while the jobs there ran, and no running job's "
            f"writes there explain it ({there}), so no job was ended for it; new jobs there wait in the queue until "
            f"space is freed — find what filled it (du -x on that disk){anywhere}")


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
        self._said: set[int] = set()
        """Disks under their floor whose unexplained fall admins were told of (told again once they had room)."""

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
                ends[job.job_id] = ("wrapper", stopped_wrapper_reason(state, job.log_cap, job.setting,
                                                                      began=job.began, account=job.account))
        open_jobs = [job for job in running if not job.stopping and job.job_id not in ends]
        ends.update(self._look_folders(open_jobs))
        ends.update(self._look_unlinked([job for job in open_jobs if job.job_id not in ends]))
        for job in running:
            seen = self._seen[job.job_id]
            seen.total += seen.wrote
        if self.min_free:
            ends.update(self._look_disks(running, ends))
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
            files, used = running_folder_use(job.job_dir, job.owner_uid, log_key=self._seen[job.job_id].log_key)
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
        and whose deleted files on its log's disk and folder hold more than its bound is to end. What its counted
        files (:func:`_open_files`) grew by is added to what it wrote on that disk (for the low-disk rule)."""
        ends: dict[str, tuple[str, str]] = {}
        order = sorted((job for job in jobs if job.members is not None and (folder_bound(job.log_cap) or self.min_free)),
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
                seen.pids = tuple(sorted(set(job.members())))
                seen.fds = _open_files(seen.pids, device, seen.log_key, job.started, job.job_dir)
                seen.deleted, seen.held = {}, {}
            assert seen.fds is not None and seen.held is not None
            for found in seen.fds:
                budget -= 1
                if found is not None and found.uid == (os.geteuid() if job.owner_uid is None else job.owner_uid):
                    # another account's file open here is not its write (red32 R2: a shared dataset its owner
                    # replaced, a library an admin's upgrade replaced)
                    if found.deleted and found.written:
                        seen.deleted[found.key] = found.used
                    if found.elsewhere:
                        seen.elsewhere[found.key] = found.used
                    seen.held[found.key] = found.used
                if budget <= 0:
                    break
            else:  # this job's look is done
                held, files = sum(seen.deleted.values()), len(seen.deleted)
                beside, besides = sum(seen.elsewhere.values()), len(seen.elsewhere)
                seen.wrote += _grown(seen, seen.held)  # for the low-disk rule
                seen.fds = seen.deleted = seen.held = None
                seen.elsewhere = {}
                bound = folder_bound(job.log_cap)
                if bound and files and held + seen.folder_bytes > bound:
                    ends[job.job_id] = ("folder", unlinked_reason(job.job_dir, files, held, seen.folder_bytes,
                                                                  bound, job.setting))
                elif bound and besides and held + beside + seen.folder_bytes > bound:
                    ends[job.job_id] = ("folder", beside_reason(job.job_dir, besides, beside, seen.folder_bytes,
                                                                bound, job.setting))
                self._fd_cursor = start + step + 1
                continue
            break  # this tick's open files are looked at; the next tick goes on in this job
        return ends

    def _look_disks(self, running: Sequence[Running], ends: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        """On each log disk under its floor (one ``statvfs`` a disk), the job whose writes there explain its fall
        (see the module docstring), among ``running`` not in ``ends`` nor stopping; else none, and admins told once."""
        by_disk: dict[int, list[Running]] = {}
        for job in running:
            device = self._seen[job.job_id].device
            if device is not None:
                by_disk.setdefault(device, []).append(job)
        found: dict[str, tuple[str, str]] = {}
        for device, on_disk in by_disk.items():
            try:
                info = os.statvfs(on_disk[0].job_dir)
            except OSError:
                continue
            free = int(info.f_bavail) * int(info.f_frsize)
            seen = [self._seen[job.job_id] for job in on_disk]
            for one in seen:
                if one.start_free is None:  # its first look: what it wrote by now came out of the free space
                    one.start_free = free + one.total
            if free >= self.min_free:
                self._said.discard(device)
                continue
            fall = max(one.start_free or 0 for one in seen) - free  # stopping jobs' starts count too
            can_end = [(job, one) for job, one in zip(on_disk, seen, strict=True)
                       if not job.stopping and job.job_id not in ends]
            explains = [(job, one) for job, one in can_end
                        if fall > 0 and one.total >= EXPLAINS_SHARE * fall and one.wrote >= WRITING_MOST_BYTES]
            folder = on_disk[0].job_dir.parent
            if explains:
                job, one = max(explains, key=lambda pair: pair[1].total)
                found[job.job_id] = ("disk", low_disk_reason(folder, free, self.min_free, fall, one.total, one.wrote))
                self._said.add(device)  # its end is said; the disk stays under its floor while it stops, and after
            elif device not in self._said:
                self._said.add(device)
                log.warning("%s", self._unexplained(folder, free, fall, on_disk))
        return found

    def _unexplained(self, folder: Path, free: int, fall: int, on_disk: Sequence[Running]) -> str:
        """:func:`unexplained_low_disk_line` for the jobs ``on_disk`` (each one's processes' I/O counters read
        once: the pids of its last look through its open files, and its wrapper)."""
        top = max(on_disk, key=lambda job: self._seen[job.job_id].total)
        total = self._seen[top.job_id].total
        most = (top.job_id, _account(top.owner_uid), total) if total else None
        counted = []
        for job in on_disk:
            pids = set(self._seen[job.job_id].pids) | ({job.wrapper_pid} if job.wrapper_pid is not None else set())
            wrote = sum(_io_written(pid) for pid in pids)
            if wrote:
                counted.append((job.job_id, _account(job.owner_uid), wrote))
        counted.sort(key=lambda item: -item[2])
        return unexplained_low_disk_line(folder, free, self.min_free, fall, most, counted[:3])


def _grown(seen: _Seen, held: dict[tuple[int, int], int]) -> int:
    """The bytes the files of a look done (``held``) grew by past what was counted of each (a file new to the
    count counts whole); remembers them."""
    counted = seen.counted if seen.counted is not None else {}
    grew = 0
    for key, used in held.items():
        before = counted.get(key, 0)
        if used > before:
            grew += used - before
            counted[key] = used
    if len(counted) > WRITTEN_FILES:  # the files no longer open are forgotten
        counted = {key: counted[key] for key in held}
    seen.counted = counted
    return grew


def _io_written(pid: int) -> int:
    """What process ``pid`` (and the children it reaped) wrote by its I/O counters: the larger of ``wchar``
    (bytes passed to write calls: files, pipes, a tmpfs) and ``write_bytes`` (bytes sent to a disk, mappings too);
    0 when it is gone or its counters cannot be read (the service reads them as root, or as the jobs' account)."""
    try:
        with open(f"/proc/{pid}/io", "rb") as fh:
            lines = fh.read(4096).splitlines()
    except OSError:
        return 0
    counts: dict[bytes, int] = {}
    for line in lines:
        name, _, value = line.partition(b":")
        if value.strip().isdigit():
            counts[name] = int(value)
    return max(counts.get(b"wchar", 0), counts.get(b"write_bytes", 0))


def _account(uid: int | None) -> str:
    """The account name of ``uid`` (``uid 1234`` where it has none; ``the service's account`` for None)."""
    if uid is None:
        return "the service's account"
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _device_of(folder: Path) -> int | None:
    """The device ``folder`` is on (None: it cannot be read)."""
    try:
        return os.stat(folder, follow_symlinks=False).st_dev
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class _OpenFile:
    """A file a job's process holds open (or maps) on its log's disk that counts as written by it."""

    key: tuple[int, int]
    """``(device, inode)``."""
    used: int
    """Its blocks, in bytes (disk spent: a sparse file counts what it spends; space fallocate()d too)."""
    deleted: bool
    """No link left to it."""
    uid: int
    """Its owner."""
    written: bool = True
    """Held so that the job may write it (a descriptor opened for writing, a shared writable mapping), or modified
    since the job started: False for a file it only reads (red32 R2: a dataset its owner replaced, a library an
    upgrade replaced — deleted, held, and not the job's doing)."""
    elsewhere: bool = False
    """In another job folder beside the job's own (the same account's: a finished one is sealed, :mod:`.sealing`,
    so only a descriptor opened before its end still writes there): counted against the job's own folder's bound
    (red31 R1 variant)."""


def _open_files(pids: Iterable[int], device: int, skip: tuple[int, int] | None, since: float | None,
                job_dir: Path) -> Iterator[_OpenFile | None]:
    """One item per open file of ``pids`` (each a ``stat`` of ``/proc/<pid>/fd/<n>``, which is the file whatever
    its name): an :class:`_OpenFile` for a regular file on ``device`` other than ``skip`` (the job's log: held
    to its cap apart) that is deleted, or that was modified at or after ``since`` and lies outside ``job_dir``
    (its folder is walked apart; one ``readlink`` tells), None for any other; and one item per process looked at
    (a process of no open file costs its look too). A process gone or unreadable yields nothing more. Each item is
    bounded work, whatever the processes hold (red35 R3): their descriptors are listed as they are looked at, never
    all at once, and their mappings are read a line an item (:func:`_deleted_mapped`), so the caller's per-tick
    budget of items bounds the tick's work."""
    for pid in pids:
        yield None
        for name in _fd_names(pid):
            try:
                info = os.stat(f"/proc/{pid}/fd/{name}")
            except OSError:
                yield None
                continue
            found = _if_counted(info, device, skip, since)
            if found is not None and not found.deleted:
                where = _where(f"/proc/{pid}/fd/{name}", job_dir)
                found = None if where == "own" else replace(found, elsewhere=True) if where == "beside" else found
            if found is not None and found.deleted and not found.written and _opened_for_writing(pid, name):
                found = replace(found, written=True)
            yield found
        yield from _deleted_mapped(pid, device, skip, since)


def _if_counted(info: os.stat_result, device: int, skip: tuple[int, int] | None,
                since: float | None) -> _OpenFile | None:
    """An :class:`_OpenFile` of a regular file on ``device`` (not ``skip``) with no link left, or modified at or after
    ``since``; None for any other."""
    key = (info.st_dev, info.st_ino)
    if not stat.S_ISREG(info.st_mode) or info.st_dev != device or key == skip:
        return None
    if info.st_nlink == 0:
        fresh = since is not None and info.st_mtime >= since + START_SLACK
        return _OpenFile(key, int(info.st_blocks) * 512, True, info.st_uid, fresh)
    if since is not None and info.st_mtime >= since:
        return _OpenFile(key, int(info.st_blocks) * 512, False, info.st_uid)
    return None


def _where(link: str, folder: Path) -> str:
    """Where the open file ``link`` (``/proc/<pid>/fd/<n>``) lies: ``"own"`` inside the job's ``folder`` (also when it
    cannot be read: not counted twice), ``"beside"`` inside another job folder next to it, ``"outside"`` anywhere
    else."""
    try:
        target = os.readlink(link)
    except OSError:
        return "own"
    if target == str(folder) or target.startswith(str(folder) + os.sep):
        return "own"
    if not target.startswith(str(folder.parent) + os.sep):
        return "outside"
    first, sep, _ = target[len(str(folder.parent)) + 1:].partition(os.sep)
    return "beside" if sep and is_job_name(first) else "outside"  # in a job folder, not a file beside them


def _fd_names(pid: int) -> Iterator[str]:
    """The names in ``/proc/<pid>/fd``, listed as they are taken (nothing: gone or unreadable)."""
    try:
        with os.scandir(f"/proc/{pid}/fd") as entries:
            for entry in entries:
                yield entry.name
    except OSError:
        return


def _deleted_mapped(pid: int, device: int, skip: tuple[int, int] | None,
                    since: float | None) -> Iterator[_OpenFile | None]:
    """The deleted files ``pid`` maps with no descriptor left (opened, mapped, closed, unlinked, written through
    the mapping): one item per line of its ``/proc/<pid>/maps`` read (a process may hold 65,530 mappings, 5.6 MB of
    lines: red35 R3 — one read of it counted as one item, 275 ms), and a mapping of a deleted file a ``stat`` of
    ``/proc/<pid>/map_files/<range>`` in its line's item (where that cannot be read — it takes CAP_SYS_ADMIN —
    nothing)."""
    try:
        fh = open(f"/proc/{pid}/maps", "rb")  # read across ticks: closed at its end or with the generator
    except OSError:
        return
    with fh:
        while True:
            try:
                line = fh.readline()
            except OSError:
                return
            if not line:
                return
            if not line.rstrip().endswith(b" (deleted)"):
                yield None
                continue
            yield _mapped_file(pid, line, device, skip, since)


def _mapped_file(pid: int, line: bytes, device: int, skip: tuple[int, int] | None,
                 since: float | None) -> _OpenFile | None:
    """The deleted file mapped in ``line`` of ``pid``'s maps when the job may have written it (None: not counted)."""
    fields = line.split(None, 2)
    try:
        info = os.stat(f"/proc/{pid}/map_files/{fields[0].decode('ascii')}")
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    found = _if_counted(info, device, skip, since)
    if found is not None and not found.written and fields[1][1:2] == b"w" and fields[1][3:4] == b"s":
        found = replace(found, written=True)  # a shared writable mapping writes the file; a private one does not
    return found if found is not None and found.deleted else None


def _opened_for_writing(pid: int, name: str) -> bool:
    """Whether descriptor ``name`` of ``pid`` is open for writing (``/proc/<pid>/fdinfo/<n>``'s ``flags``, octal;
    True where it cannot be read: counted, the safe side for the disk)."""
    try:
        with open(f"/proc/{pid}/fdinfo/{name}", "rb") as fh:
            for line in fh:
                if line.startswith(b"flags:"):
                    return int(line.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY
    except (OSError, ValueError, IndexError):
        pass
    return True


def _state(pid: int) -> str | None:
    """The one-letter state of process ``pid`` (``/proc/<pid>/stat``; None: gone or unreadable)."""
    try:
        fd = open_fd(f"/proc/{pid}/stat", os.O_RDONLY)
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
        try:  # whatever the owner made the wrapper's stdout: a terminal there never becomes root's (red33 R1)
            fd = open_fd(f"/proc/{job.wrapper_pid}/fd/1", os.O_RDWR)
        except OSError:
            fd = None
    try:
        if fd is None:
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


def _is_the_log(entry: os.DirEntry[str], log_key: tuple[int, int] | None) -> bool:
    """Whether ``entry`` (named ``output.log``) is the log the service measures: a regular file, and the inode
    ``log_key`` when known (:func:`running_folder_use`)."""
    info = regular_file(entry)
    return info is not None and (log_key is None or (info.st_dev, info.st_ino) == log_key)


def running_folder_use(job_dir: Path, owner_uid: int | None, *,
                       log_key: tuple[int, int] | None = None) -> tuple[int, int]:
    """``(files and folders, bytes)`` in a running job's folder beside its log and the wrapper's own records
    (folders with all below them, never through a link, at most :data:`FOLDER_FILES` + 1 entries counted);
    ``(0, 0)`` where it is not a folder of ``owner_uid`` (when given) or cannot be read. Each entry counts its length
    or the disk it holds, whichever is more (:func:`~.wrapper.held_bytes`: a file given blocks past its end reads 0
    bytes long).

    ``output.log`` is left out only when it is a regular file and, with ``log_key`` (``(st_dev, st_ino)`` of
    the log the service measures: the wrapper's stdout), that very file: a file or folder the job renamed over
    that name is counted as any other entry (red33 R4: 512 MiB past a 32 MiB log cap, and a folder of 30,000
    files under the log's name, were counted by nothing)."""
    try:
        fd = open_fd(job_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, kind="dir")
    except OSError:
        return 0, 0
    files = used = 0
    try:
        if owner_uid is not None and os.fstat(fd).st_uid != owner_uid:
            return 0, 0
        with os.scandir(fd) as entries:
            for entry in entries:
                if _wrappers_own(entry) or (entry.name == "output.log" and _is_the_log(entry, log_key)):
                    continue
                # the disk each entry holds where that is more than its length (red35 R1: fallocate's KEEP_SIZE)
                count, size = tally(entry, fd, most=FOLDER_FILES - files, allocated=True)
                files, used = files + count, used + size
                if files > FOLDER_FILES:
                    break
    except OSError:
        pass
    finally:
        os.close(fd)
    return min(files, FOLDER_FILES + 1), used
