"""Where local jobs keep their files, and how the service reads them without trusting their owners.

Layout under the executor's root directory (``c.SchedApp.log_dir``)::

    <root>/                       the service's; mode 0755 (0711 would do) so accounts reach their dirs
    <root>/.state/                the service's own records, mode 0700: <job id>.json (where the job's
                                  files are and whose they are), <job id>.err (the wrapper's stderr
                                  before it opens the job's log)
    <root>/<job id>/              embedded: the job's directory (the service's own account)
    <root>/users/<account>/       hub mode: one directory per account, the service's, mode 0711: the
                                  account reaches its job directories but adds nothing beside them
                                  (red team 25, R3)
    <root>/users/<account>/<job id>/   created by the service owned by the account, mode 0700 (the
                                  wrapper, as the account, writes in it): output.log, wrapper.json,
                                  exit.json, carried files, executed.ipynb; the service's again, mode
                                  0700, once the job ended (:mod:`.sealing`, red31 R1 variant: a later
                                  job of the account filled a finished job's folder)

The service never writes into a directory its users own (a user could have planted a symlink
there). What it reads from them — logs, ``exit.json``, ``wrapper.json`` — is opened with
:func:`open_untrusted`: every path component without following symlinks, the file itself only if
it is a regular file (not a FIFO that would block, not a device), and, where the owner is known,
only if that account owns it. A user can therefore show the service only files they own.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import untrusted_json
from ..errors import ExecutorError, NotFoundError
from ..safefd import open_fd
from .runas import RunAs
from .safeopen import open_untrusted, unsafe_folder
from .sealing import unseal
from .wrapper import remove_tree, tree_size, write_json_atomic

__all__ = ["JOB_NAME", "JobDirs", "RemovedJobFiles", "Walk", "is_job_name", "open_untrusted", "read_untrusted_json"]

_JSON_LIMIT = 1 << 16


def read_untrusted_json(path: Path, *, owner_uid: int | None = None) -> dict[str, Any] | None:
    """A small JSON object written by a job's wrapper (:func:`open_untrusted`, at most 64 KiB);
    None when missing, unsafe or malformed."""
    try:
        fd = open_untrusted(path, owner_uid=owner_uid)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read(_JSON_LIMIT + 1)
    if len(raw) > _JSON_LIMIT:
        return None
    try:
        data = untrusted_json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


@dataclass
class RemovedJobFiles:
    """What one :meth:`JobDirs.remove_job_dirs` call deleted.

    Attributes:
        dirs: job directories removed (with everything in them).
        files: files in them (logs, carried files, notebooks), counted before removal.
        bytes: their sizes in bytes.
        records: the service's own ``.state`` records removed (``<job id>.json`` / ``.err``).
        more: a per-call limit was reached: call again soon (with :attr:`cursor`).
        examined: folder entries looked at (any name).
        cursor: where the next call resumes (:attr:`Walk.cursor`); None when this one walked to the end.
    """

    dirs: int = 0
    files: int = 0
    bytes: int = 0
    records: int = 0
    more: bool = False
    examined: int = 0
    cursor: tuple[str, int] | None = None

    def to_dict(self) -> dict[str, int | bool]:
        """JSON shape (the ``pruned`` audit record's ``job_files``)."""
        return {"dirs": self.dirs, "files": self.files, "bytes": self.bytes, "records": self.records,
                "more": self.more}


class JobDirs:
    """The directory layout of the module docstring, rooted at ``root`` (resolved, no symlinks).

    Raises:
        ExecutorError: ``root`` cannot be created.
    """

    def __init__(self, root: Path) -> None:
        try:
            root.mkdir(mode=0o755, parents=True, exist_ok=True)
            self.root = root.resolve()
            self.state = self.root / ".state"
            self.state.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ExecutorError(f"cannot create the job directory {str(root)!r}: {exc.strerror}", field="log_dir",
                                hint="set c.SchedApp.log_dir to a directory this service can write") from None
        for folder in (self.root, self.state):
            unsafe = unsafe_folder(folder)
            if unsafe is not None:
                raise ExecutorError(f"refusing the job directory {str(self.root)!r}: {unsafe}", field="log_dir",
                                    hint="another account could have planted files there: remove it, or set "
                                         "c.SchedApp.log_dir to a folder owned by this service's account that "
                                         "only it can write (not under /tmp)")

    def job_dir(self, job_id: str, run_as: RunAs) -> Path:
        """The job's directory (not created here: embedded, the wrapper makes it; hub mode, :meth:`make_job_dir`)."""
        _check_job_id(job_id)
        if not run_as.switches:
            return self.root / job_id
        return self.user_dir(run_as) / job_id

    def user_dir(self, run_as: RunAs) -> Path:
        """``<root>/users/<account>``: the service's, mode 0711 (the account passes through to its
        job directories but cannot add entries beside them: red team 25, R3 planted 100,000
        folders where the service sweeps), created when missing; one an older version made owned
        by the account is taken back.

        Raises:
            ExecutorError: the directory exists but is not a directory of the service or of that
                account (someone planted it), or cannot be made.
        """
        assert run_as.account is not None and run_as.uid is not None and run_as.gid is not None
        users = self.root / "users"
        path = users / run_as.account
        try:
            users.mkdir(mode=0o755, exist_ok=True)
            try:
                os.mkdir(path, 0o711)
            except FileExistsError:
                pass
            info = os.lstat(path)
            unsafe = unsafe_folder(users)
        except OSError as exc:
            raise ExecutorError(f"cannot prepare {str(path)!r} for account {run_as.account}: {exc.strerror}",
                                field="log_dir", hint="check c.SchedApp.log_dir; the service must run as root") from None
        if unsafe is not None:
            raise ExecutorError(f"refusing {str(users)!r}: {unsafe}", field="log_dir",
                                hint="remove it; the service recreates it owned by its account, mode 0755")
        own = os.geteuid()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid not in (own, run_as.uid):
            raise ExecutorError(f"{str(path)!r} is not a directory of this service or of {run_as.account}",
                                field="log_dir", hint="remove it; the service recreates it with the right owner")
        # users/ is the service's: nobody swapped the entry since lstat (and nothing is followed)
        if info.st_uid != own:  # an older version's, the account's own: the service's from now on
            os.chown(path, own, os.getegid(), follow_symlinks=False)
        if stat.S_IMODE(info.st_mode) != 0o711 or info.st_uid != own:
            os.chmod(path, 0o711)
        return path

    def make_job_dir(self, job_id: str, run_as: RunAs) -> Path:
        """The job's directory, hub mode: ``<root>/users/<account>/<job id>``, created (or kept, for
        a restart: given back to the account when it was sealed at the run's end, :mod:`.sealing`) owned
        by the account, mode 0700 — made by the service, since the account cannot write in its :meth:`user_dir`.

        Raises:
            ExecutorError: it cannot be made, or exists but is not a directory of that account.
        """
        _check_job_id(job_id)
        assert run_as.uid is not None and run_as.gid is not None
        path = self.user_dir(run_as) / job_id
        try:
            try:
                os.mkdir(path, 0o700)  # the service's own until chowned: nobody else can enter meanwhile
                os.chown(path, run_as.uid, run_as.gid, follow_symlinks=False)
            except FileExistsError:  # a run before (preempted, restarted): sealed at its end, the account's again
                unseal(path, run_as.uid, run_as.gid)
            info = os.lstat(path)
        except OSError as exc:
            raise ExecutorError(f"cannot prepare {str(path)!r} for account {run_as.account}: {exc.strerror}",
                                field="log_dir", hint="check c.SchedApp.log_dir; the service must run as root") from None
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != run_as.uid:
            raise ExecutorError(f"{str(path)!r} is not a directory owned by {run_as.account}", field="log_dir",
                                hint="remove it; the service recreates it with the right owner")
        return path

    def check_reachable(self) -> str | None:
        """Why accounts other than the service's cannot reach their directories (None if they can):
        every ancestor of ``root`` must be searchable by others (``/root`` is mode 0700)."""
        for folder in (self.root, *self.root.parents):
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                return f"{folder} is mode {stat.S_IMODE(mode):o}: other accounts cannot reach {self.root}"
        return None

    def remove_old(self, name: str, older_than: float,
                   remove: Callable[[list[tuple[str, os.stat_result]]], set[str]], *, batch: int = 256) -> int:
        """Delete the file ``name`` of every job directory — ``<root>/<job id>/`` and, hub mode,
        ``<root>/users/<account>/<job id>/`` — last modified before ``older_than`` (epoch seconds)
        whose job id ``remove`` names; how many. ``remove`` is asked once per ``batch`` candidates
        (``[(job id, the file's lstat)]`` → the ids to delete): one store read for many folders, not
        one per folder (red team 19, R6: a user can plant 20,000 folders).

        Those folders are their users' own (red team 17, R7: the hub's executed notebooks were never
        swept), so nothing is followed: each directory is opened from its parent's descriptor with
        ``O_NOFOLLOW`` (a symlinked account or job folder is skipped, and a folder swapped for a
        link afterwards changes nothing: the descriptor is the real one); ``name`` is only looked
        at with ``lstat`` and unlinked from that descriptor, and only when it is a regular file owned
        by the directory's owner (a symlink, or a hard link to another account's file, is left) and
        still the file that was looked at (same inode).
        """
        removed = 0
        pending: list[tuple[str, int, os.stat_result]] = []

        def settle() -> int:
            try:
                chosen = remove([(job_id, info) for job_id, _, info in pending]) if pending else set()
                return sum(_unlink_same(dir_fd, name, info) for job_id, dir_fd, info in pending if job_id in chosen)
            finally:
                for _, dir_fd, _ in pending:
                    os.close(dir_fd)
                pending.clear()

        root_fd = open_fd(self.root, os.O_RDONLY | os.O_DIRECTORY, kind="dir")
        try:
            for job_id, _, dir_fd, group, _ in _job_dirs(root_fd):
                info = _old_own_file(dir_fd, name, older_than, group)
                if info is None:
                    os.close(dir_fd)
                    continue
                pending.append((job_id, dir_fd, info))
                if len(pending) >= batch:
                    removed += settle()
            removed += settle()
        finally:
            for _, dir_fd, _ in pending:
                os.close(dir_fd)
            os.close(root_fd)
        return removed

    def remove_job_dirs(self, older_than: float, choose: Callable[[list[str]], set[str]], *,
                        limit: int = 200, batch: int = 256, examine: int | None = None,
                        after: tuple[str, int] | None = None) -> RemovedJobFiles:
        """Delete whole job directories, and the service's ``.state`` records of the same jobs,
        untouched since ``older_than`` (epoch seconds) whose job id ``choose`` names (hubadmin24
        B16: they were never deleted; retention pruned the job's record and orphaned its files).

        ``choose`` gets at most ``batch`` job ids at a time (one store read per batch) and returns
        those whose files may go: the caller's rule (finished before the retention cutoff, or no
        longer in the store), never a running job's; only names shaped like job ids reach it
        (:func:`is_job_name`). "Untouched" is the newest modification time of the directory and of
        each entry in it (a log still written keeps its directory). At most ``limit`` directories go
        per call, and at most ``examine`` folder entries are looked at (red team 25, R3: planted
        folders); the next call passes ``after`` = the returned ``cursor`` to go on from there. Each
        removed directory counts its files and bytes first. Nothing is followed: directories are
        opened from their parent's descriptor with ``O_NOFOLLOW`` and removed with
        :func:`~.wrapper.remove_tree` by descriptor (a folder a user swapped for a symlink is refused, never
        what it points at). The ``.state`` records of jobs that never had a directory are looked at
        when a walk reaches the end.

        Returns:
            What was removed (:class:`RemovedJobFiles`).

        Raises:
            OSError: the root cannot be opened.
            Exception: whatever ``choose`` raises (nothing of its batch is removed).
        """
        removed = RemovedJobFiles()
        walk = Walk(after, examine)
        pending: list[tuple[str, int, int, str, int]] = []  # (job id, parent fd (a dup), job dir fd, group, index)

        def settle() -> None:
            try:
                chosen = choose([job_id for job_id, *_ in pending]) if pending else set()
                for job_id, parent_fd, dir_fd, group, index in pending:
                    if job_id not in chosen:
                        continue
                    if removed.dirs >= limit:
                        walk.stop(group, index)  # the next call starts with this one
                        break
                    files, size = _count_files(dir_fd)
                    remove_tree(job_id, parent_fd)
                    try:
                        os.stat(job_id, dir_fd=parent_fd, follow_symlinks=False)
                    except FileNotFoundError:
                        walk.removed(group)
                        removed.dirs += 1
                        removed.files += files
                        removed.bytes += size
                        removed.records += self._remove_records(job_id)
            finally:
                for _, parent_fd, dir_fd, _, _ in pending:
                    os.close(parent_fd)
                    os.close(dir_fd)
                pending.clear()

        root_fd = open_fd(self.root, os.O_RDONLY | os.O_DIRECTORY, kind="dir")
        try:
            for job_id, parent_fd, dir_fd, group, index in _job_dirs(root_fd, walk):
                if _newest_mtime(dir_fd) >= older_than:
                    os.close(dir_fd)
                    continue
                pending.append((job_id, os.dup(parent_fd), dir_fd, group, index))
                if len(pending) >= batch:
                    settle()
            settle()
        finally:
            for _, parent_fd, dir_fd, _, _ in pending:
                os.close(parent_fd)
                os.close(dir_fd)
            os.close(root_fd)
        removed.examined, removed.cursor = walk.examined, walk.cursor
        removed.more = removed.cursor is not None
        if removed.more:
            return removed
        # records of jobs that never had a directory (a start that failed before the wrapper made it)
        stale = sorted({p.name.rsplit(".", 1)[0] for p in self.state.iterdir()
                        if p.suffix in (".json", ".err") and not p.name.startswith(".") and p.is_file()
                        and p.lstat().st_mtime < older_than} - {""})
        stale = [job_id for job_id in stale if is_job_name(job_id)]
        for start in range(0, len(stale), batch):
            for job_id in choose(stale[start:start + batch]):
                folder = (self.read_record(job_id) or {}).get("job_dir")
                if isinstance(folder, str) and os.path.lexists(folder):
                    continue  # its directory is kept (touched lately): so is the record that finds it
                removed.records += self._remove_records(job_id)
        return removed

    def _remove_records(self, job_id: str) -> int:
        count = 0
        for path in (self.record_path(job_id), self.err_path(job_id)):
            try:
                path.unlink()
                count += 1
            except FileNotFoundError:
                pass
        return count

    # ---- the service's own records ----------------------------------------------------------
    def record_path(self, job_id: str) -> Path:
        _check_job_id(job_id)
        return self.state / f"{job_id}.json"

    def err_path(self, job_id: str) -> Path:
        """The wrapper's stderr until it opens the job's log (start failures end up here)."""
        _check_job_id(job_id)
        return self.state / f"{job_id}.err"

    def write_record(self, job_id: str, data: dict[str, Any]) -> None:
        write_json_atomic(self.record_path(job_id), data)

    def read_record(self, job_id: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self.record_path(job_id).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def drop_empty_err(self, job_id: str) -> None:
        """Remove ``<job id>.err`` when it is empty (the wrapper said nothing before it opened the job's
        log): a job that recorded its end needs it no more, and each kept file is an inode of the log
        disk for the retention days (red team 26, R4)."""
        path = self.err_path(job_id)
        try:
            if os.lstat(path).st_size == 0:
                path.unlink()
        except OSError:
            pass

    def start_error(self, job_id: str, limit: int = 2000) -> str:
        """The tail of the wrapper's early stderr, its last ``limit`` bytes ('' when empty or unreadable). Only the
        tail is read, whatever the file's size: it is read on the engine's thread at the end of a job whose wrapper
        was killed, and the wrapper writes it as the job's account (red35 R1's kind: nothing sized by an owner is
        read whole there)."""
        try:
            fd = open_fd(self.err_path(job_id), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return ""
        try:
            size = os.fstat(fd).st_size
            return os.pread(fd, min(size, limit), max(0, size - limit)).decode("utf-8", errors="replace").strip()
        except OSError:
            return ""
        finally:
            os.close(fd)


def _check_job_id(job_id: str) -> None:
    if not job_id or "/" in job_id or "\0" in job_id or job_id.startswith("."):
        raise NotFoundError(f"invalid job id {job_id!r}", field="job_id")


def _open_dir(parent_fd: int, name: str) -> int | None:
    """``name`` under ``parent_fd`` opened as a directory without following a link (None: a link,
    not a directory, gone or unreadable)."""
    try:
        return open_fd(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd, kind="dir")
    except OSError:
        return None


JOB_NAME = re.compile(r"[a-z][a-z0-9]{0,15}-[a-z0-9][a-z0-9-]{0,79}", re.ASCII)
"""The shape of a job id as a folder name (``j-01hf3k2m9-x7q4za``; lower-case ASCII letters, digits
and dashes): only such names are ever looked up in the store (red team 25, R4: a planted
``j-\\xff`` folder came back from ``listdir`` with surrogate escapes, which PostgreSQL refused, and
every retention pass failed)."""


def is_job_name(name: str) -> bool:
    """Whether ``name`` has the shape of a job id (:data:`JOB_NAME`)."""
    return JOB_NAME.fullmatch(name) is not None


class Walk:
    """Where a walk over the job folders stands, so that a pass can be bounded and the next one
    resume after it (red team 25, R3: a user planted 100,000 folders and each pass walked all).

    Folders are walked group by group — the root's own job folders first (``""``), then each
    account under ``users/`` in name order — and within a group in the directory's own order;
    :attr:`cursor` is ``(group, entries to pass over)``. Folders removed before the cursor are
    counted so the next pass does not skip as many unseen ones. A folder added meanwhile may be
    seen a round later; none is seen twice in a round unless the directory is reordered.

    Args:
        after: the cursor a previous pass left (None: from the start).
        limit: most entries examined (any name, job-shaped or not) before the walk stops (None: all).
    """

    def __init__(self, after: tuple[str, int] | None = None, limit: int | None = None) -> None:
        self.after = after
        self.limit = limit
        self.examined = 0
        self._removed: dict[str, int] = {}
        self._stop: tuple[str, int] | None = None

    def removed(self, group: str) -> None:
        """One folder of ``group`` seen in this walk was removed."""
        self._removed[group] = self._removed.get(group, 0) + 1

    def stop(self, group: str, index: int) -> None:
        """Stop at the ``index``-th entry of ``group`` (not examined yet: the next pass starts there;
        of two stops the earlier counts)."""
        if self._stop is None or (_group_key(group), index) < (_group_key(self._stop[0]), self._stop[1]):
            self._stop = (group, index)

    @property
    def stopped(self) -> bool:
        return self._stop is not None

    @property
    def cursor(self) -> tuple[str, int] | None:
        """Where the next pass resumes; None when this walk reached the end."""
        if self._stop is None:
            return None
        group, index = self._stop
        return group, max(0, index - self._removed.get(group, 0))


def _job_dirs(root_fd: int, walk: Walk | None = None) -> Iterator[tuple[str, int, int, str, int]]:
    """``(job id, parent fd, job dir fd, group, index)`` of the job directories under the root
    (:class:`Walk` says the order, and where it starts and stops); names that are not job ids
    (:func:`is_job_name`) are passed over, never opened. The caller closes the job dir fd; the parent
    fd is valid only until the next item (dup it to keep it)."""
    walk = walk if walk is not None else Walk()
    start_group, start_index = walk.after if walk.after is not None else ("", 0)
    groups: list[tuple[str, int]] = []  # (group, fd) — opened here, closed in the finally
    try:
        groups.append(("", os.dup(root_fd)))
        users_fd = _open_dir(root_fd, "users")
        if users_fd is not None:
            try:
                accounts = sorted(os.listdir(users_fd))  # users/ is the service's: one entry per account
                for account in accounts:
                    if account and _group_key(account) >= _group_key(start_group):
                        account_fd = _open_dir(users_fd, account)
                        if account_fd is not None:
                            groups.append((account, account_fd))
            except OSError:
                pass
            finally:
                os.close(users_fd)
        for group, group_fd in groups:
            if _group_key(group) < _group_key(start_group):
                continue
            skip = start_index if group == start_group else 0
            try:
                with os.scandir(group_fd) as entries:
                    for index, entry in enumerate(entries):
                        if index < skip:
                            continue
                        if walk.stopped:
                            return
                        if walk.limit is not None and walk.examined >= walk.limit:
                            walk.stop(group, index)
                            return
                        walk.examined += 1
                        if not is_job_name(entry.name):
                            continue
                        fd = _open_dir(group_fd, entry.name)
                        if fd is not None:
                            yield entry.name, group_fd, fd, group, index
            except OSError:
                continue
    finally:
        for _, group_fd in groups:
            os.close(group_fd)


def _group_key(group: str) -> tuple[bool, str]:
    """The walk's order of groups: the root's own folders, then accounts by name."""
    return group != "", group


def _old_own_file(dir_fd: int, name: str, older_than: float, group: str = "") -> os.stat_result | None:
    """The lstat of ``name`` in ``dir_fd`` when it is a regular file of the directory's account last
    modified before ``older_than``; else None. The account is the directory's owner, and — a folder the
    service sealed at its job's end (:mod:`.sealing`) — the account of its ``group`` (``users/<account>``)."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_uid not in _folder_accounts(dir_fd, group) \
                or info.st_mtime >= older_than:
            return None
    except OSError:
        return None
    return info


def _folder_accounts(dir_fd: int, group: str) -> set[int]:
    """The uids whose files a job folder holds: its owner, and for a sealed one (the service's, in an account's
    ``group``) that account's too."""
    owner = os.fstat(dir_fd).st_uid
    if not group or owner != os.geteuid():
        return {owner}
    try:
        return {owner, pwd.getpwnam(group).pw_uid}
    except KeyError:
        return {owner}


def _unlink_same(dir_fd: int, name: str, seen: os.stat_result) -> int:
    """1 when ``name`` in ``dir_fd`` is still the regular file ``seen`` was (same inode) and was
    unlinked; else 0."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (seen.st_dev, seen.st_ino):
            return 0
        os.unlink(name, dir_fd=dir_fd)  # never follows: a link swapped in meanwhile is itself removed
    except OSError:
        return 0
    return 1


def _newest_mtime(dir_fd: int) -> float:
    """The newest modification time (epoch seconds) of the directory and its direct entries
    (symlinks not followed); +inf when it cannot be read (kept)."""
    try:
        newest = os.fstat(dir_fd).st_mtime
        for name in os.listdir(dir_fd):
            newest = max(newest, os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mtime)
    except OSError:
        return float("inf")
    return newest


def _count_files(dir_fd: int) -> tuple[int, int]:
    """(files, bytes) under the directory, nothing followed, never by recursion (red29 R5: a job's 3,000-deep
    chain of folders; :func:`~.wrapper.tree_size`)."""
    try:
        return tree_size(os.dup(dir_fd), files_only=True)
    except OSError:
        return 0, 0


