"""Why a SQLite store folder cannot hold the store, in one sentence with its fix (newuser41 N3, n4).

A store that fails at start — its disk full (ENOSPC), its folder on a read-only file system (EROFS) or not
writable by this account (EACCES) — is said as one line naming the cause, the path, the free bytes and the
fix, never as a driver's "unable to open database file" with advice about a database server a SQLite file
does not have, and never blaming ``c.SchedApp.db_url`` when the user set none (the default store).

- :func:`folder_problem`: what is wrong with a store folder now (read by ``jupyter-sched doctor`` too);
- :func:`start_failure`: the sentence for a store that failed to open or to start (or None: the
  cause is none of the three, and the caller keeps its own words).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import sqlalchemy as sa

from ..wording.reasons import figure

__all__ = ["MIN_FREE_BYTES", "StoreFolderProblem", "folder_problem", "sqlite_file", "start_failure"]

MIN_FREE_BYTES = 8 << 20
"""Below this much free space on the store's disk a commit (a submit, the engine's cycle) can fail:
``doctor`` says so (exit 1)."""

_FULL_WORDS = ("database or disk is full", "no space left on device")
_READ_ONLY_WORDS = ("readonly database", "read-only file system")


class StoreFolderProblem:
    """One cause (``ENOSPC``, ``EROFS``, ``EACCES``), the folder, and the sentence saying it."""

    def __init__(self, code: str, folder: Path, cause: str) -> None:
        self.code, self.folder, self.cause = code, folder, cause

    def fix(self, *, url_set: bool) -> str:
        """What to do: free space or make the folder writable, or (another) ``c.SchedApp.db_url``."""
        other = "change c.SchedApp.db_url to a store on another disk" if url_set else \
            "set c.SchedApp.db_url to a store on another disk"
        if self.code == "ENOSPC":
            return f"free space on the disk of {self.folder}, or {other}"
        return f"make {self.folder} writable by this account, or {other}"


def size_words(size: int) -> str:
    """``0 bytes``, ``12 KiB``, ``3.5 MiB`` (as the log disk's WARNING says them)."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{figure(size / (1 << shift), 3)} {unit}"
    return f"{size} bytes"


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store (None: not a file-backed SQLite URL)."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        return None
    if not parsed.drivername.startswith("sqlite") or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database).expanduser().absolute()


def _existing(folder: Path) -> Path:
    """``folder`` or its nearest existing parent (the store file's folder is made at open)."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def folder_problem(store_file: Path, *, min_free: int = MIN_FREE_BYTES,
                   full_seen: bool = False) -> StoreFolderProblem | None:
    """What keeps the folder of ``store_file`` from holding the store now: a read-only file system, a
    folder (or store file) this account cannot write to, or a disk with less than ``min_free`` bytes free
    (``full_seen``: the database said its disk is full, whatever is free now). None: nothing found."""
    folder = store_file.parent
    here = _existing(folder)
    try:
        stat = os.statvfs(here)
    except OSError:
        return None
    free, total = stat.f_bavail * stat.f_frsize, stat.f_blocks * stat.f_frsize
    if stat.f_flag & os.ST_RDONLY:
        return StoreFolderProblem("EROFS", folder, f"the store folder {folder} is on a read-only file system (EROFS)")
    for path in (here, store_file):
        if path.exists() and not os.access(path, os.W_OK):
            return StoreFolderProblem("EACCES", folder, f"{path} is not writable by this account (EACCES)")
    if full_seen or free < min_free:
        return StoreFolderProblem("ENOSPC", folder, f"the store's disk {folder} is full "
                                                    f"({size_words(free)} free of {size_words(total)}; ENOSPC)")
    return None


def _said(exc: BaseException) -> tuple[str, int | None]:
    """The words and the first OS error number of ``exc`` and its causes, lowercase."""
    words, number, seen = [], None, set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        words.append(str(cur).lower())
        if number is None and isinstance(cur, OSError) and cur.errno:
            number = cur.errno
        cur = getattr(cur, "orig", None) or cur.__cause__ or cur.__context__
    return " ".join(words), number


def start_failure(url: str, exc: BaseException, *, url_set: bool) -> tuple[str, str] | None:
    """``(cause, fix)`` for a SQLite store at ``url`` that failed to open or start with ``exc``, when the
    cause is a full disk, a read-only file system or a folder this account cannot write; None otherwise
    (another cause, or not a SQLite file). ``url_set``: the user set ``c.SchedApp.db_url`` (else the
    default store is meant, and the fix says "set", never "check", the setting)."""
    store_file = sqlite_file(url)
    if store_file is None:
        return None
    folder = store_file.parent
    words, number = _said(exc)
    full = number == errno.ENOSPC or any(w in words for w in _FULL_WORDS)
    problem = folder_problem(store_file, min_free=0, full_seen=full)
    if problem is None and (number in (errno.EROFS, errno.EACCES) or any(w in words for w in _READ_ONLY_WORDS)):
        code = "EROFS" if number == errno.EROFS or "read-only file system" in words else "EACCES"
        problem = StoreFolderProblem(code, folder, f"the store at {folder} cannot be written ({code})")
    if problem is None:
        return None
    which = "the store" if url_set else "the default store"
    return f"{which} {store_file} cannot be used: {problem.cause}", problem.fix(url_set=url_set)
