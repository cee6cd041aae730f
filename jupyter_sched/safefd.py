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
    """``os.open(path, flags | ALWAYS, mode, dir_fd=dir_fd)``, refused unless it opened ``kind``.

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
    fd = os.open(path, flags | ALWAYS, mode, dir_fd=dir_fd)
    try:
        is_kind = _IS[kind](os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    if not is_kind:
        os.close(fd)
        raise OSError(22, f"not {_WORD[kind]}", os.fsdecode(path))
    return fd
