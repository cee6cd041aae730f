"""Why a file the user named cannot be run, said before the job waits for a GPU (new user 8, N7).

The CLI (``submit --script/--notebook``, ``definitions create``) and the magics (``%schedule
run|notebook|serve|define``) check the path they are given with :func:`file_problem`: a missing file,
a folder, or a file this account may not read (a folder on the way it may not search, or the file
itself) is one sentence naming the cause — not a ``PermissionError`` traceback, and not "no such
file" for a file that exists. Light: the CLI imports it on every submit.
"""

from __future__ import annotations

import os
import pwd
import stat

__all__ = ["file_problem"]


def file_problem(path: str, folder: str) -> str | None:
    """What keeps this account from reading ``path`` as a file (relative to ``folder``), or None.

    The answer is a phrase to put after the path: ``no such file in FOLDER`` (``no such file`` for an
    absolute path), ``FULL is a folder, not a file``, ``cannot be read by USER (permission denied on
    PLACE)`` where PLACE is the first folder on the way it may not search, or the file itself.
    """
    given = os.path.expanduser(path)
    full = os.path.abspath(os.path.join(folder, given))
    try:
        info = os.stat(full)
    except PermissionError:  # the folder on the way through any link, not the link's own folder (new user 11,
        return _denied(_blocking_folder(os.path.realpath(full)))  # N19: it blamed the user's home for her link)
    except (FileNotFoundError, NotADirectoryError):
        return "no such file" if os.path.isabs(given) else f"no such file in {folder}"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(info.st_mode):
        return f"{full} is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        return f"{full} is not a regular file"
    try:
        with open(full, "rb"):
            pass
    except PermissionError:
        return _denied(full)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None


def _blocking_folder(full: str) -> str:
    """The first folder on the way to ``full`` that this account may not search."""
    parts = full.split(os.sep)
    for depth in range(2, len(parts) + 1):
        try:
            os.stat(os.sep.join(parts[:depth]) or os.sep)
        except PermissionError:
            return os.sep.join(parts[:depth - 1]) or os.sep
        except OSError:
            break
    return os.path.dirname(full)


def _denied(place: str) -> str:
    return f"cannot be read by {_account()} (permission denied on {place})"


def _account() -> str:
    """The effective account's name (its uid when it has no name)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"
