"""Open a file in a directory its owner controls without following anything they planted there.

The service (root in hub mode) reads files from job directories that their owners may change
while it reads: logs, ``exit.json``, ``wrapper.json``, the notebook runner's ``outcome.json``. A
symlink planted in place of one of them (or of a directory on the way) would make the service
read — and show the owner — a file they may not read themselves. :func:`open_untrusted` walks the
path one component at a time with ``O_NOFOLLOW`` (``openat``), opens the file itself with
``O_NONBLOCK`` (a FIFO cannot hang the service) and ``O_NOCTTY`` (a terminal never becomes the service's
controlling terminal: :func:`jupyter_sched.safefd.open_fd`) and accepts only a regular file, owned by
``owner_uid`` when given.

Only the standard library is imported: the notebook runner and the wrapper side use it too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..safefd import open_fd

__all__ = ["open_untrusted", "read_untrusted_bytes", "unsafe_folder"]


def open_untrusted(path: Path | str, *, owner_uid: int | None = None, write: bool = False) -> int:
    """Open ``path`` read-only (``write``: read-write) as a file descriptor, refusing symlinks anywhere in it.

    Raises:
        OSError: a component is a symlink (ELOOP/ENOTDIR), the file is missing, not a regular
            file (EINVAL), or not owned by ``owner_uid`` (EPERM).
    """
    absolute = Path(os.path.abspath(path))
    fd = open_fd("/", os.O_RDONLY | os.O_DIRECTORY, kind="dir")
    try:
        for part in absolute.parts[1:-1]:
            next_fd = open_fd(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd, kind="dir")
            os.close(fd)
            fd = next_fd
        # never the service's controlling terminal, and refused before a read unless a regular file (red33 R1)
        file_fd = open_fd(absolute.name, (os.O_RDWR if write else os.O_RDONLY) | os.O_NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)
    info = os.fstat(file_fd)
    if owner_uid is not None and info.st_uid != owner_uid:
        os.close(file_fd)
        raise OSError(1, f"owned by uid {info.st_uid}, not the job's uid {owner_uid}", str(path))
    return file_fd


def read_untrusted_bytes(path: Path | str, *, owner_uid: int | None = None, limit: int = 1 << 16,
                         tail: bool = False) -> bytes:
    """At most ``limit`` bytes of ``path`` (its first bytes, or its last with ``tail``).

    Raises:
        OSError: see :func:`open_untrusted`.
    """
    with os.fdopen(open_untrusted(path, owner_uid=owner_uid), "rb") as fh:
        if tail:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - limit))
        return fh.read(limit)


def unsafe_folder(path: Path | str, *, owner_uid: int | None = None) -> str | None:
    """Why ``path`` is not a folder only this service controls (None when it is), as sshd's
    StrictModes: ``path`` itself must be a real directory (not a symlink) owned by ``owner_uid``
    (default: this process's account) and not group/other-writable; every ancestor must be owned by
    root or that account and, if group/other-writable, sticky (``/tmp``, ``/var/tmp``). A folder
    another account made first (in a world-writable parent) could hold files it planted."""
    uid = os.geteuid() if owner_uid is None else owner_uid
    absolute = Path(os.path.abspath(path))
    try:
        info = os.lstat(absolute)
    except OSError as exc:
        return f"{absolute}: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{absolute} is not a directory (a symlink or a file)"
    if info.st_uid != uid:
        return f"{absolute} is owned by uid {info.st_uid}, not by this service's account (uid {uid})"
    if stat.S_IMODE(info.st_mode) & 0o022:
        return f"{absolute} is group/other-writable (mode {stat.S_IMODE(info.st_mode):o})"
    parent = Path(os.path.realpath(absolute.parent))
    for folder in (parent, *parent.parents):
        up = os.stat(folder)
        if up.st_uid not in (0, uid):
            return f"{folder} (above {absolute}) is owned by uid {up.st_uid}, not by root or this service's account"
        if stat.S_IMODE(up.st_mode) & 0o022 and not up.st_mode & stat.S_ISVTX:
            return f"{folder} (above {absolute}) is group/other-writable without the sticky bit"
    return None
