"""Where ``POST jobs/{id}/notebook/open`` copies a run's executed notebook without writing over a
file of the user's (new user 22, N13's kind: output written over an existing file without a word).

The copy lands at ``<root>/<open_dir>/<name> (executed <job id>).ipynb`` (newuser40 N1: the panel's name).
A file already there holding these very bytes is the copy opened before: it is reused. One with other
bytes is the user's (edited since, or saved while the run went on): it is kept, and the copy goes to
the first free ``<stem>-2.ipynb``, ``-3``, … (the panel's "Open notebook", which saves through the
contents API and cannot compare bytes, opens the copy there as it is and never writes over it).
A link or anything but a plain file is never written through; a new file is created with
``O_EXCL | O_NOFOLLOW``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import ConflictError
from ..safefd import open_fd

__all__ = ["MAX_COPIES", "copy_without_overwrite"]

MAX_COPIES = 50
"""Names tried (``name``, ``<stem>-2`` … ``<stem>-50``) before the copy is refused."""


def copy_without_overwrite(folder: Path, name: str, data: bytes) -> Path:
    """``folder / name`` holding ``data``: reused when it holds it already, else written at the
    first free name of ``name``, ``<stem>-2<suffix>``, …

    Args:
        folder: an existing folder of the server's root.
        name: the notebook's file name (no folder part).
        data: the executed notebook's bytes.

    Returns:
        The path of the file that holds ``data``.

    Raises:
        ConflictError: field ``job_id``: :data:`MAX_COPIES` names are taken by other files.
        OSError: the folder cannot be written.
    """
    stem, suffix = Path(name).stem, Path(name).suffix
    for n in range(1, MAX_COPIES + 1):
        path = folder / (name if n == 1 else f"{stem}-{n}{suffix}")
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            try:
                fd = open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            except FileExistsError:  # made meanwhile: look at it as any other
                continue
            with os.fdopen(fd, "wb") as sink:
                sink.write(data)
            return path
        if stat.S_ISREG(info.st_mode) and info.st_size == len(data) and _holds(path, data):
            return path
    raise ConflictError(f"{folder.name} holds {MAX_COPIES} files named like {name} that differ from the run's notebook",
                        field="job_id", hint=f"open one of them, or delete some from {folder}")


def _holds(path: Path, data: bytes) -> bool:
    """Whether the regular file at ``path`` (no link followed: swapped since its ``lstat``, it is not read) holds
    exactly ``data``."""
    try:
        fd = open_fd(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as source:
        return source.read(len(data) + 1) == data
