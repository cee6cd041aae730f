"""Which code runs: the package version, with the checkout's commit when run from a git checkout.

``__version__`` ("0.1.0") stays the same from one commit to the next, so an upgrade from a checkout was
invisible in the start-up line and ``jupyter-sched status`` (hubadmin23 A7). :func:`version_string`
adds the commit (``0.1.0+g3763618``, ``…+dirty`` with uncommitted changes) when the package sits in a
git checkout (an editable install). An installed wheel has no checkout: it says the commit its build
recorded (``jupyter_sched/_build_commit.py``, written by the build hook ``scripts/panel_build.py``;
hubadmin24 B1), ``0.1.0+g3763618``, and plain ``0.1.0`` only when built without git.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

from . import __version__

__all__ = ["checkout_commit", "recorded_commit", "version_string"]

_CHECKOUT = Path(__file__).resolve().parent.parent


def recorded_commit() -> str | None:
    """The commit the build recorded (``_build_commit.COMMIT``), None when there is none or it is malformed."""
    try:
        from ._build_commit import COMMIT  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    commit = str(COMMIT)
    return commit if commit and all(c.isalnum() or c == "-" for c in commit) else None


def _with(commit: str) -> str:
    return f"{__version__}+g{commit.replace('-dirty', '.dirty')}"


def checkout_commit(checkout: Path) -> str | None:
    """``git describe --always --dirty`` of the git checkout ``checkout`` (``3763618``, ``3763618-dirty``);
    None without git, outside a checkout, or when git does not answer within 2 s."""
    git = shutil.which("git")
    if git is None or not (checkout / ".git").exists():
        return None
    try:
        done = subprocess.run([git, "-C", str(checkout), "describe", "--always", "--dirty", "--abbrev=7",
                               "--match", "no-tag-matches-this"], capture_output=True, text=True, timeout=2.0,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    if done.returncode != 0 or not commit or not all(c.isalnum() or c == "-" for c in commit):
        return None
    return commit


@functools.cache
def version_string() -> str:
    """``__version__``, plus ``+g<commit>`` (and ``.dirty``) from a git checkout; computed once per process.

    Never raises: without git, outside a checkout, or when git does not answer within 2 s it is
    ``__version__``.
    """
    if shutil.which("git") is None or not (_CHECKOUT / ".git").exists():
        recorded = recorded_commit()  # an installed wheel: the commit it was built from
        return _with(recorded) if recorded else __version__
    commit = checkout_commit(_CHECKOUT)
    return _with(commit) if commit else __version__
