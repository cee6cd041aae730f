"""A lock across the test processes of one machine, for what a test run builds once and then shares.

Usage::

    from tests.locks import file_lock

    with file_lock(folder / ".build.lock"):   # blocks until no other process holds it
        ...                                   # build when missing; the next holder finds it built

The tests run in several processes at once (pytest-xdist, ``scripts/test-all``) and beside other test runs
of the machine: a thing built outside a test's own ``tmp_path`` (the venv for other accounts, the cached
``configurable-http-proxy``) is built under this lock, so no process removes or rewrites it under another.
An ``flock`` on an open file: the kernel releases it when the holder exits, even killed.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

__all__ = ["file_lock"]


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created, with its folder, when missing) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
