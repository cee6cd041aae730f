"""A total of kept job logs per account (``c.SchedApp.max_user_log_mib``; verify27 V3: one user filled
the log disk in about a minute — each job kept up to ``max_log_mib`` of ``output.log`` for the retention
days, and nothing bounded the sum of one user's logs).

:class:`LogBudget` knows, per account, the kept size of each of its finished jobs' logs, oldest first.
Before a job of that account is launched (:meth:`LogBudget.launch`) the account's oldest finished logs
are cut to their last :data:`TAIL_BYTES` (whole lines), a first line saying what was cut and why, until
its finished logs, the bytes its running jobs really wrote and a full ``max_log_bytes`` for the new job
fit in the total (only :data:`FLOOR_BYTES` for it where the running jobs' caps leave no room for a full
cap); when every finished log is down to its tail and it still does not fit (many small jobs), the
oldest tails go too (the log keeps only that first line). Running jobs count by what they wrote, not by
their caps (newuser28 N6, newuser29 N1: reservations cut every finished log to nothing in ordinary use —
three or four jobs at once under the defaults). The new job's log cap is what is left of the
total (at most ``max_log_bytes``, at least :data:`FLOOR_BYTES`): a job launched while its owner's
running jobs hold the total is capped low, and its log's last line names the setting. When a job ends
(:meth:`LogBudget.ended`) its log is looked at once (one ``fstat``) and counted, and so is what else its
folder holds (its leftovers, ``executed.ipynb``: red28 R5) — removed, oldest first, before any log is cut. So an account's kept
logs stay within its total plus :data:`FLOOR_BYTES` per job it runs at once, with no look at the disk
per line written, and another account's logs are never touched.

An account is counted from its folder the first time one of its jobs is launched after the service
started (one scan of ``<log_dir>/users/<account>``, a folder only the service adds to; embedded, of
``<log_dir>``). Logs are opened with :func:`~.safeopen.open_untrusted` (``write``: no symlink on the
way, a regular file owned by the job's owner), so a cut reaches only that owner's own file.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from ..safefd import open_fd
from .jobdirs import is_job_name
from .safeopen import open_untrusted
from .wrapper import LEFT_FILES, OWN_JSON_BYTES, held_bytes, regular_file, remove_tree, tally

__all__ = ["COUNT_MOST", "EXTRA_MOST", "FLOOR_BYTES", "KEPT_NAMES", "TAIL_BYTES", "LogBudget", "Remover", "extra_use", "folder_extra",
           "remove_extra"]

log = logging.getLogger(__name__)

TAIL_BYTES = 64 << 10
"""What a cut log keeps of its end (64 KiB, from the first whole line in it)."""
FLOOR_BYTES = 1 << 20
"""The least log cap a job is launched with (1 MiB), its owner's total spent or not."""
_HEAD_ROOM = 1024
"""A log at most :data:`TAIL_BYTES` plus this is already a tail (its first line included)."""
EXTRA_MOST = LEFT_FILES
"""The most entries beside its log and records one finished job folder is walked for (:func:`extra_use`), all its
top-level entries together: as many as the wrapper's sweep keeps (:data:`~.wrapper.LEFT_FILES`). A folder holding
more was never swept (its wrapper was killed, an older version's) and is emptied by the folder cleaner
(:mod:`.folder_cleaner`), never walked further on the engine's thread (red35 R1: 8 trees of 100,000 folders were each
walked whole at a job's end)."""
_LOG_SLACK = 1 << 20
"""Disk a log may hold past its length before it is counted by its blocks (:func:`_size`): a file system's own
rounding and preallocation, never a ``fallocate`` of gigabytes (red35 R1)."""

COUNT_MOST = 20 * EXTRA_MOST
"""The most entries beside their logs one account's first count walks (:func:`_count`, on the engine's thread), all its
finished folders together: the folders past it are measured beside the engine and counted once told
(:meth:`LogBudget.measured`; red35 R1: thousands of finished folders of 256 entries each)."""

Remover = Callable[[str, str, Path, "int | None", bool], None]
"""``remove(account, job_id, folder, owner_uid, empty)``: beside the caller (the executor's folder cleaner,
:meth:`.folder_cleaner.FolderCleaner.clean`), seal and measure a finished job's folder, emptied but for its log and
records when ``empty`` (else only past what the wrapper's sweep keeps); the bytes left are told back through
:meth:`LogBudget.left` (``empty``) or :meth:`LogBudget.measured`."""


@dataclass
class _Account:
    """One account's finished logs: ``whole`` (never cut) and ``tails`` (cut to their tail), each
    job id -> (log path, bytes), oldest first; ``rest``: bytes of logs cut to their first line."""

    whole: OrderedDict[str, tuple[Path, int]] = field(default_factory=OrderedDict)
    tails: OrderedDict[str, tuple[Path, int]] = field(default_factory=OrderedDict)
    extra: OrderedDict[str, tuple[Path, int]] = field(default_factory=OrderedDict)
    rest: int = 0
    total: int = 0

    def add(self, job_id: str, path: Path, size: int, extra: int = 0) -> None:
        """Count a finished job's log (``size`` bytes at ``path``) and the ``extra`` bytes beside it in
        its folder (red28 R5)."""
        self.drop(job_id)
        (self.tails if size <= TAIL_BYTES + _HEAD_ROOM else self.whole)[job_id] = (path, size)
        self.total += size
        if extra:
            self.extra[job_id] = (path.parent, extra)
            self.total += extra

    def drop(self, job_id: str) -> None:
        for kept in (self.whole, self.tails, self.extra):
            if job_id in kept:
                self.total -= kept.pop(job_id)[1]


class LogBudget:
    """The per-account totals of the module docstring.

    Args:
        limit_bytes: the most bytes of job logs one account keeps (0: no total, :meth:`launch`
            gives ``max_log_bytes``).
        max_log_bytes: one job's log cap (``c.SchedApp.max_log_mib``; 0: none).
        remove: empties a folder beside the caller (:data:`Remover`; the executor's folder cleaner, so that no
            owner's tree is walked on the engine's thread: red35 R1); None: at once, here (:func:`remove_extra`).
    """

    def __init__(self, limit_bytes: int, max_log_bytes: int, *, remove: Remover | None = None) -> None:
        self.limit = limit_bytes
        self.max_log = max_log_bytes
        self._remove = remove
        self._accounts: dict[str, _Account] = {}

    def setting(self) -> str:
        """The setting as the words of a cut name it."""
        return f"c.SchedApp.max_user_log_mib = {self.limit >> 20}"

    def kept(self, account: str) -> int | None:
        """Bytes of ``account``'s finished logs as counted (None: not counted yet)."""
        counted = self._accounts.get(account)
        return None if counted is None else counted.total

    def launch(self, account: str, folder: Path, owner_uid: int | None, running: Collection[str],
               running_caps: int, *, job_id: str = "") -> int:
        """The log cap of a job of ``account`` about to be launched, after cutting its oldest
        finished logs as the module docstring says.

        Args:
            account: the job's OS account ("" embedded: the service's own).
            folder: where the account's job directories are (counted from it the first time).
            owner_uid: the account's uid (None embedded: the owner is not checked).
            running: ids of the account's jobs this service runs, and of its ended jobs whose folders are still being
                cleaned (not counted as finished; their logs count by what they hold).
            running_caps: the sum of their log caps (bytes).
            job_id: the job launched: a run of it before (a preempted or restarted job appends to its
                log) is no longer counted as finished nor cut; its end counts the whole log.

        Returns:
            bytes: the cap for the wrapper (``max_log_bytes`` when there is no total).
        """
        if self.limit <= 0:
            return self.max_log
        counted = self._accounts.get(account)
        if counted is None:
            counted = self._accounts[account] = _count(account, folder, owner_uid, {*running, job_id}, self._remove)
        counted.drop(job_id)
        want = min(self.max_log, self.limit) if self.max_log > 0 else self.limit
        room = self.limit - running_caps  # what finished logs and the new job may hold, running jobs at their caps
        # Finished logs are cut for bytes really written, never for the running jobs' caps: a cap is a bound,
        # not bytes (newuser28 N6 with 4 jobs running, newuser29 N1 with 3: reservations cut every finished log
        # to nothing while the account's logs were a few KB). The running jobs' caps bound the new job's cap
        # instead (the return below), so the account's logs stay within the total as the module docstring says.
        # Where the caps leave room for a whole cap, the oldest logs make way for it (logrotate's way); where
        # they do not, a cut could not give it, so only the floor is made room for.
        need = want if room >= want else min(want, FLOOR_BYTES)
        written = sum(_size(folder / ran / "output.log", owner_uid) for ran in running) if running else 0
        while counted.total + written + need > self.limit and (counted.whole or counted.tails or counted.extra):
            self._cut_oldest(account, counted, owner_uid)
        return max(min(FLOOR_BYTES, want), min(want, room - counted.total))

    def ended(self, account: str, job_id: str, path: Path, owner_uid: int | None, extra: int | None = None) -> None:
        """Count the log of ``account``'s job that ended (nothing when the account is not counted yet:
        its first count finds it) and ``extra``, the bytes beside it in its folder as the folder cleaner measured
        them (:func:`extra_use`; None: measured here)."""
        counted = self._accounts.get(account)
        if self.limit <= 0 or counted is None:
            return
        if extra is None:
            extra = folder_extra(path.parent, owner_uid)
        counted.add(job_id, path, _size(path, owner_uid), extra)

    def left(self, account: str, job_id: str, extra: int) -> None:
        """Count ``extra`` bytes a trim handed to the ``remove`` hook left in ``account``'s job folder (what could
        not be removed), with the bytes of logs cut to their first line."""
        counted = self._accounts.get(account)
        if extra > 0 and counted is not None and job_id not in counted.extra:  # else counted again since, whole
            counted.rest += extra
            counted.total += extra

    def measured(self, account: str, job_id: str, folder: Path, extra: int) -> None:
        """Count ``extra`` bytes beside the log in ``account``'s finished job folder ``folder``, measured beside the
        engine after the account's first count (:data:`COUNT_MOST`); nothing when the job is no longer counted, or
        its folder counted since."""
        counted = self._accounts.get(account)
        if extra > 0 and counted is not None and job_id not in counted.extra and \
                (job_id in counted.whole or job_id in counted.tails):
            counted.extra[job_id] = (folder, extra)
            counted.total += extra

    def _cut_oldest(self, account: str, counted: _Account, owner_uid: int | None) -> None:
        """Remove what the oldest finished job left in its folder beside its log and records (red28 R5),
        else cut the oldest whole log to its tail, else the oldest tail to its first line."""
        if counted.extra:
            job_id, (folder, size) = counted.extra.popitem(last=False)
            counted.total -= size
            if self._remove is not None:  # beside the engine: what is left is told back (left())
                self._remove(account, job_id, folder, owner_uid, True)
                log.warning("job %s of %s: the %s bytes it left in its job folder beside its log are being removed "
                            "(%s MiB kept in all)", job_id, account or "this account", size, self.setting())
                return
            removed = remove_extra(folder, owner_uid)
            left = max(0, size - removed)
            counted.rest += left
            counted.total += left
            log.warning("job %s of %s: %s bytes it left in its job folder beside its log were removed (%s MiB kept "
                        "in all)", job_id, account or "this account", removed, self.setting())
            return
        whole = bool(counted.whole)
        job_id, (path, size) = (counted.whole if whole else counted.tails).popitem(last=False)
        counted.total -= size
        keep = TAIL_BYTES if whole else 0
        if not whole and size <= _HEAD_ROOM // 2:  # a small log: its first line alone would be no less
            counted.rest += size
            counted.total += size
            return
        try:
            new_size = cut_to_tail(path, keep, owner_uid=owner_uid,
                                   why=f"{account or 'this account'}'s job logs passed {self.setting()} MiB "
                                       "kept in all; the oldest finished jobs' logs are cut first")
        except FileNotFoundError:  # removed by the retention sweep (or its owner)
            return
        except OSError as exc:  # replaced by its owner with something not theirs to cut: not counted again
            log.warning("job %s: its log %s was not cut to %s bytes: %s", job_id, path, keep, exc)
            return
        if whole:
            counted.tails[job_id] = (path, new_size)
            counted.total += new_size
        else:
            counted.rest += new_size
            counted.total += new_size
        log.warning("job %s of %s: its log was cut from %s to %s bytes (%s MiB kept in all)", job_id,
                    account or "this account", size, new_size, self.setting())


def cut_to_tail(path: Path, keep: int, *, owner_uid: int | None, why: str) -> int:
    """Cut the log at ``path`` to its last ``keep`` bytes from the first whole line in them, after one
    first line ``[jupyter_sched] … cut …: <why>``; returns its new size in bytes.

    Raises:
        OSError: the file is missing, refused (:func:`~.safeopen.open_untrusted` with ``write``) or
            cannot be written.
    """
    fd = open_untrusted(path, owner_uid=owner_uid, write=True)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - keep)
        tail = os.pread(fd, size - start, start) if keep else b""
        if start and (newline := tail.find(b"\n")) >= 0:
            tail = tail[newline + 1:]
        shown = f"its last {len(tail):,} bytes are kept" if tail else "none of it is kept"
        head = (f"[jupyter_sched] this log was cut: {size - len(tail):,} of its {size:,} bytes removed, {shown}: "
                f"{why}\n").encode()
        os.pwrite(fd, head + tail, 0)
        os.ftruncate(fd, len(head) + len(tail))
        return len(head) + len(tail)
    finally:
        os.close(fd)


def _size(path: Path, owner_uid: int | None) -> int:
    """The log's size in bytes (0: missing or refused): its length, or the disk it holds where that is more than
    :data:`_LOG_SLACK` past it (red35 R1: blocks given past a file's end read as 0 bytes long)."""
    try:
        fd = open_untrusted(path, owner_uid=owner_uid)
    except OSError:
        return 0
    try:
        return _log_bytes(os.fstat(fd))
    finally:
        os.close(fd)


def _log_bytes(info: os.stat_result) -> int:
    """A log's length, or the disk it holds where that is more than :data:`_LOG_SLACK` past it."""
    held = held_bytes(info)
    return held if held > info.st_size + _LOG_SLACK else info.st_size


KEPT_NAMES = frozenset({"output.log", "exit.json", "wrapper.json", "outcome.json"})
"""What :func:`remove_extra` keeps of a finished job's folder (the log and the few-hundred-byte records
the wrapper's sweep leaves: :data:`~.wrapper.OWN_JSON_BYTES`), each only as a regular file (:func:`_kept`)."""


def _kept(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` of a finished job's folder is one of :data:`KEPT_NAMES` as the wrapper leaves it: a
    regular file (no link), a record of at most :data:`~.wrapper.OWN_JSON_BYTES`. A folder or a big file under
    one of those names is the job's (red33 R4: a folder of 30,000 files and 257 MiB named ``output.log`` was
    kept for the retention days, counted nowhere)."""
    info = regular_file(entry) if entry.name in KEPT_NAMES else None
    return info is not None and (entry.name == "output.log" or info.st_size <= OWN_JSON_BYTES)


def _folder_fd(folder: Path, owner_uid: int | None) -> int | None:
    """A descriptor of the job folder ``folder`` opened without following a link, owned by ``owner_uid``
    when given, or by the service once it was sealed at its job's end (:mod:`.sealing`) (None: not a folder,
    refused or missing)."""
    try:
        fd = open_fd(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, kind="dir")
    except OSError:
        return None
    if owner_uid is not None and os.fstat(fd).st_uid not in (owner_uid, os.geteuid()):
        os.close(fd)
        return None
    return fd


def extra_use(folder: Path, owner_uid: int | None, *, most: int = EXTRA_MOST,
              skip: frozenset[str] = frozenset()) -> tuple[int, int]:
    """``(entries, bytes)`` of everything in a finished job's ``folder`` but :data:`KEPT_NAMES` (and regular files
    named in ``skip``): folders with all below them and their own blocks, never through a link; each entry's
    length or the disk it holds, whichever is more (:func:`~.wrapper.held_bytes`: red35 R1, a file given blocks
    past its end reads 0 bytes long); ``(0, 0)``: refused or missing. At most ``most`` + 1 entries are walked, all
    top-level entries together (red35 R1: 8 trees of 100,000 folders each were walked whole): more reads as
    ``most + 1`` entries and the bytes seen so far. What the per-account total counts of a job besides its log
    (red28 R5: leftovers up to the sweep's bound and ``executed.ipynb`` were counted nowhere); the records beside
    the log are a few hundred bytes (the wrapper's sweep removes any over :data:`~.wrapper.OWN_JSON_BYTES`)."""
    fd = _folder_fd(folder, owner_uid)
    if fd is None:
        return 0, 0
    entries = used = 0
    try:
        with os.scandir(fd) as listing:
            for entry in listing:
                if _kept(entry) or (entry.name in skip and regular_file(entry) is not None):
                    continue
                count, size = tally(entry, fd, most=max(0, most - entries), allocated=True)
                entries, used = entries + count, used + size
                if entries > most:
                    break
    except OSError:
        pass
    finally:
        os.close(fd)
    return min(entries, most + 1), used


def folder_extra(folder: Path, owner_uid: int | None) -> int:
    """The bytes of :func:`extra_use` (at most :data:`EXTRA_MOST` + 1 entries walked)."""
    return extra_use(folder, owner_uid)[1]


def remove_extra(folder: Path, owner_uid: int | None, *, keep: frozenset[str] = frozenset()) -> int:
    """Remove what a finished job's ``folder`` holds but :data:`KEPT_NAMES` (``executed.ipynb`` and the
    job's leftovers; regular files named in ``keep`` stay too), through a descriptor of the folder (no link
    followed); returns the bytes removed (:func:`~.wrapper.held_bytes`). Each tree is walked whole, up to its
    bounds (:func:`~.wrapper.remove_tree`): call it beside the engine, never on its thread (red35 R1)."""
    fd = _folder_fd(folder, owner_uid)
    if fd is None:
        return 0
    removed = 0
    try:
        for entry in list(os.scandir(fd)):
            if _kept(entry) or (entry.name in keep and regular_file(entry) is not None):
                continue
            size = tally(entry, fd, allocated=True)[1]
            remove_tree(entry.name, fd)  # never by recursion (red29 R5: a 3,000-deep chain of folders)
            try:
                os.stat(entry.name, dir_fd=fd, follow_symlinks=False)
                log.warning("%s/%s was not removed whole", folder, entry.name)
            except FileNotFoundError:
                removed += size
            except OSError:
                pass
    except OSError:
        pass
    finally:
        os.close(fd)
    return removed


def _count(account: str, folder: Path, owner_uid: int | None, running: Collection[str],
           remove: Remover | None = None) -> _Account:
    """An account counted from its job directories in ``folder`` (not those of ``running``), oldest log first. A
    folder holding more than :data:`EXTRA_MOST` entries beside its log was never swept (an older version's, or one
    whose wrapper was killed before this version): emptied (by ``remove``, beside the caller, when given) and
    counted as what is left (told back through :meth:`LogBudget.left`). Past :data:`COUNT_MOST` entries walked in
    all, the other folders are handed to ``remove`` to be measured (told back through :meth:`LogBudget.measured`)."""
    found: list[tuple[float, str, Path, int]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        entries = []
    for entry in entries:
        if not is_job_name(entry.name) or entry.name in running:
            continue
        path = Path(entry.path) / "output.log"
        try:
            fd = open_untrusted(path, owner_uid=owner_uid)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        found.append((info.st_mtime, entry.name, path, _log_bytes(info)))
    counted = _Account()
    walked = 0
    for _, job_id, path, size in sorted(found):
        if walked > COUNT_MOST and remove is not None:
            remove(account, job_id, path.parent, owner_uid, False)
            counted.add(job_id, path, size)
            continue
        held, extra = extra_use(path.parent, owner_uid)
        walked += held
        if held > EXTRA_MOST and remove is not None:
            remove(account, job_id, path.parent, owner_uid, True)
            extra = 0
        elif held > EXTRA_MOST:
            remove_extra(path.parent, owner_uid)
            extra = folder_extra(path.parent, owner_uid)
        counted.add(job_id, path, size, extra)
    return counted
