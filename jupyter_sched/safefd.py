"""The one way jupyter_sched opens a file descriptor: :func:`open_fd` (red33 R1).

The service runs as root, and as a hub-managed service or a systemd unit it is a session leader with no
controlling terminal. For such a process an ``open()`` of a terminal without ``O_NOCTTY`` makes that terminal
its controlling terminal — for good (closing the descriptor does not undo it), and whoever holds the
terminal's other end may then stop the service with a hang-up, ^C or ^\\. A job's owner decides what many
paths the service opens are (``/proc/<wrapper>/fd/1``, files in the job's folder, the host registry), so
every ``os.open`` here adds ``O_NOCTTY`` (never a controlling terminal), ``O_CLOEXEC`` (no descriptor leaks
into a child) and ``O_NONBLOCK`` (a FIFO or a terminal cannot hold the opening thread), and checks what it
opened (``fstat``, before anything is read or written) is the kind of file the caller expects.
``tests/test_architecture_opens.py`` keeps every other ``os.open`` out of the package.

Only the standard library is imported: the client, the CLI and the service's hot paths use it.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Literal

__all__ = ["ALWAYS", "Kind", "open_fd"]

ALWAYS = os.O_NOCTTY | os.O_CLOEXEC | os.O_NONBLOCK
"""The flags every :func:`open_fd` adds."""

Kind = Literal["file", "dir", "fifo"]

_IS = {"file": stat.S_ISREG, "dir": stat.S_ISDIR, "fifo": stat.S_ISFIFO}
_WORD = {"file": "a regular file", "dir": "a directory", "fifo": "a FIFO"}


def open_fd(path: str | os.PathLike[str] | bytes, flags: int, mode: int = 0o600, *, dir_fd: int | None = None,
            kind: Kind = "file") -> int:
    """``os.open(path, flags | ALWAYS, mode, dir_fd=dir_fd)``, refused unless it opened ``kind`` — and, for a file
    or FIFO that is already there, refused before it is opened at all when it is another kind (red34 R3).

    An ``open()`` of a device runs its driver's open and, at the close, its release — as root here, for a device
    a job's owner named by a link (a ``pyvenv.cfg`` linked to ``/dev/watchdog`` starts a host's hardware watchdog,
    and its close without the magic byte reboots the host). So what is there is looked at first through an
    ``O_PATH`` descriptor (no driver's open; links followed as ``flags`` say) and opened only when it is
    ``kind``, through ``/proc/self/fd`` — the very file looked at, not the path again (where ``/proc`` is not
    mounted, by its path, and refused unless it is still that file). A folder is opened with ``O_DIRECTORY``,
    which refuses any other kind before an open. A file ``O_CREAT | O_EXCL`` makes is new: opened at once.

    Args:
        path: what to open (relative to ``dir_fd`` when given).
        flags: the caller's ``os.O_*`` flags (``O_NOFOLLOW``, ``O_EXCL``… stay the caller's choice).
        mode: permission bits of a file ``O_CREAT`` makes.
        kind: ``"file"`` (a regular file: also every ``/proc``, ``/sys`` and cgroup file), ``"dir"``,
            ``"fifo"``.

    Returns:
        The descriptor (non-blocking, close-on-exec; never the process's controlling terminal).

    Raises:
        OSError: the open failed, or it opened something else than ``kind`` (EINVAL, descriptor closed).
    """
    if kind == "dir":
        flags |= os.O_DIRECTORY
    elif not (flags & os.O_CREAT and flags & os.O_EXCL):
        looked = _looked_first(path, flags, mode, dir_fd, kind)
        if looked is not None:
            return looked
    fd = os.open(path, flags | ALWAYS, mode, dir_fd=dir_fd)
    _refuse_other_kind(fd, path, kind)
    return fd


def _looked_first(path: str | os.PathLike[str] | bytes, flags: int, mode: int, dir_fd: int | None,
                  kind: Kind) -> int | None:
    """:func:`open_fd` of something that may be there: None when nothing is (a file ``O_CREAT`` makes: opened by
    its path), else the descriptor of what is there, opened only when it is ``kind`` (OSError when not)."""
    try:
        probe = os.open(path, os.O_PATH | os.O_CLOEXEC | (flags & os.O_NOFOLLOW), dir_fd=dir_fd)
    except FileNotFoundError:
        if flags & os.O_CREAT:
            return None
        raise
    try:
        seen = os.fstat(probe)
        if stat.S_ISLNK(seen.st_mode):  # O_NOFOLLOW's link itself: refused as os.open refuses it
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fsdecode(path))
        if not _IS[kind](seen.st_mode):
            raise OSError(22, f"not {_WORD[kind]}", os.fsdecode(path))
        try:  # the file looked at (its magic link; O_NOFOLLOW would refuse the link itself)
            fd = os.open(f"/proc/self/fd/{probe}", (flags & ~(os.O_NOFOLLOW | os.O_CREAT)) | ALWAYS, mode)
        except FileNotFoundError:  # no /proc here: by its path, and it must still be the file looked at
            fd = os.open(path, flags | ALWAYS, mode, dir_fd=dir_fd)
    finally:
        os.close(probe)
    try:
        opened = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino) or not _IS[kind](opened.st_mode):
        os.close(fd)
        raise OSError(22, f"not {_WORD[kind]} (it changed while it was opened)", os.fsdecode(path))
    return fd


def _refuse_other_kind(fd: int, path: str | os.PathLike[str] | bytes, kind: Kind) -> None:
    """Close ``fd`` and raise OSError unless it is ``kind``."""
    try:
        is_kind = _IS[kind](os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    if not is_kind:
        os.close(fd)
        raise OSError(22, f"not {_WORD[kind]}", os.fsdecode(path))
