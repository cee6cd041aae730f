"""A finished job's folder is the service's: its account writes there no more (red31 R1 variant).

In hub mode a job folder (``<log_dir>/users/<account>/<job id>/``) is its account's while the job runs
(the wrapper, as the account, writes its log there). Once the job ended nothing of the account needs to
write there: the service reads the log, ``exit.json``, ``outcome.json`` and ``executed.ipynb`` as root.
But the folder stayed the account's, mode 0700, so a LATER job of the same account could write into an
earlier job's folder — red31 wrote 315 MB into a finished job's folder: on the log disk, beside no
running job's folder (so no folder bound and no low-disk count saw it), and kept after the writer ended
until the retention days passed (the leftovers' sweep runs at that folder's own job's end, long before).

So at a job's end (:func:`seal`, after the wrapper and every process of the job ended) the service takes
the folder and every folder below it: the top one becomes the service's, mode 0700 (the account can no
longer reach anything in it by path), each folder below the service's with no write bit for group or
others (a process of the account holding one open from before can no longer add to it). Files stay the
account's: the readers check each file is its job's account's (:mod:`.safeopen`) and that is unchanged.
A file an account's process held open for writing from before the end stays writable through that
descriptor only; its growth counts as that running job's writes (:mod:`.outside_caps`). Each folder is
taken before it is listed, so nothing added while the walk runs is missed.

When the same job runs again (a preempted or restarted job reuses its folder) :func:`unseal` gives the
folders back to the account (the ones the service took: an account can neither make nor move in a
folder of the service's). Folders a version before this one left to their accounts are taken the first
time the service launches a job of that account (:func:`seal_finished`).

Only the standard library and the executor's own modules are imported.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Collection
from pathlib import Path

from ..safefd import open_fd
from .wrapper import TREE_DEPTH, TREE_MOST

__all__ = ["SEALED_MODE", "seal", "seal_finished", "sealed", "unseal", "unsealed_finished"]

log = logging.getLogger(__name__)

SEALED_MODE = 0o700
"""A sealed job folder's mode (the service's own: its account reaches nothing in it)."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def sealed(job_dir: Path) -> bool:
    """Whether ``job_dir`` (no link followed) is a folder of this service's account."""
    try:
        info = os.lstat(job_dir)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


def seal(job_dir: Path, owner_uid: int) -> bool:
    """Take ``job_dir`` and each folder below it from ``owner_uid`` (see the module docstring): True when the
    top folder is the service's now. Nothing is followed; folders of another owner than ``owner_uid`` are
    left as they are; at most :data:`~.wrapper.TREE_MOST` folders, :data:`~.wrapper.TREE_DEPTH` deep, are
    walked (a folder deeper is left, reachable by nobody through its sealed top). A service that is not
    root (embedded: the account is the service's) seals nothing."""
    own = os.geteuid()
    if own != 0 or owner_uid == own:
        return False
    try:
        top = open_fd(job_dir, _DIR_FLAGS, kind="dir")
    except OSError:
        return False
    try:
        info = os.fstat(top)
        if info.st_uid not in (owner_uid, own):
            return False
        os.fchown(top, own, os.getegid())
        os.fchmod(top, SEALED_MODE)
    except OSError as exc:
        log.warning("job folder %s could not be taken from uid %s at its job's end: %s", job_dir, owner_uid, exc)
        os.close(top)
        return False
    _walk(top, job_dir, take=owner_uid, give=(own, os.getegid()), strip=True)
    return True


def unseal(job_dir: Path, owner_uid: int, owner_gid: int) -> None:
    """Give a sealed ``job_dir`` back to its account (its job runs again there): the folders below it the
    service took first, then the top one (mode 0700, as it was made); nothing when it is not sealed."""
    own = os.geteuid()
    if own != 0 or owner_uid == own:
        return
    try:
        top = open_fd(job_dir, _DIR_FLAGS, kind="dir")
    except OSError:
        return
    try:
        if os.fstat(top).st_uid != own:
            return
        _walk(os.dup(top), job_dir, take=own, give=(owner_uid, owner_gid), strip=False)
        os.fchown(top, owner_uid, owner_gid)
        os.fchmod(top, 0o700)
    except OSError as exc:
        log.warning("job folder %s could not be given back to uid %s: %s", job_dir, owner_uid, exc)
    finally:
        os.close(top)


def unsealed_finished(user_dir: Path, owner_uid: int, running: Collection[str]) -> list[Path]:
    """The job folders in ``user_dir`` (an account's ``<log_dir>/users/<account>``) not of a job in ``running``
    and not sealed yet (folders an older version left to the account): one listing of ``user_dir``, a folder only
    the service adds to; what each holds is not looked at (the executor seals them beside its engine: red35 R1)."""
    from .jobdirs import is_job_name  # jobdirs imports this module

    try:
        with os.scandir(user_dir) as entries:
            return [user_dir / e.name for e in entries if is_job_name(e.name) and e.name not in running
                    and e.is_dir(follow_symlinks=False) and e.stat(follow_symlinks=False).st_uid == owner_uid]
    except OSError:
        return []


def seal_finished(user_dir: Path, owner_uid: int, running: Collection[str]) -> int:
    """Seal every folder of :func:`unsealed_finished`, here; how many were sealed."""
    count = 0
    for folder in unsealed_finished(user_dir, owner_uid, running):
        count += seal(folder, owner_uid)
    if count:
        log.info("%s finished job folder(s) in %s made the service's (their account writes there no more)", count,
                 user_dir)
    return count


def _walk(top: int, where: Path, *, take: int, give: tuple[int, int], strip: bool) -> None:
    """Each folder below the open folder ``top`` (closed here) owned by ``take``: owned by ``give`` from now on
    (``strip``: and no write bit for group or others), before it is listed. An explicit stack of at most
    :data:`~.wrapper.TREE_DEPTH` open folders, never recursion (red29 R5)."""
    frames: list[tuple[int, list[str]]] = []
    walked = 0
    try:
        frames.append((top, _folders(top)))
        while frames and walked < TREE_MOST:
            fd, names = frames[-1]
            if not names:
                os.close(frames.pop()[0])
                continue
            name = names.pop()
            walked += 1
            if len(frames) >= TREE_DEPTH:
                continue
            try:
                child = open_fd(name, _DIR_FLAGS, dir_fd=fd, kind="dir")
            except OSError:
                continue
            try:
                info = os.fstat(child)
                if info.st_uid == take:
                    os.fchown(child, *give)
                    if strip:
                        os.fchmod(child, stat.S_IMODE(info.st_mode) & 0o755)
            except OSError as exc:
                log.warning("a folder in %s could not change owner: %s", where, exc)
            frames.append((child, _folders(child)))
    finally:
        for fd, _ in frames:
            os.close(fd)


def _folders(fd: int) -> list[str]:
    """Names of the folders (not links) directly in the open folder ``fd``."""
    try:
        with os.scandir(fd) as entries:
            return [e.name for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
