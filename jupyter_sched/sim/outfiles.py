"""The files ``jupyter-sched simulate --out DIR`` writes, checked before the run and written without
clobbering (new user 22, N13: a folder that already held ``jobs.csv`` had it overwritten without a
word, and ``--out /etc/`` as root wrote ``/etc/jobs.csv`` and four more).

The names are generic (``jobs.csv``, ``summary.csv``, …), so a folder the user already keeps other
work in may well hold one: an existing file of those names is refused, named, unless ``--force``;
a link or anything but a plain file there is never written through, even with ``--force`` (in a
shared folder another account could plant ``jobs.csv -> ~/.bashrc``). Each file is opened with
``O_NOFOLLOW`` and, without ``--force``, ``O_EXCL``, so a file that appears between the check and
the write is not overwritten either.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import ValidationError
from ..safefd import open_fd
from ..textsafe import csv_text

__all__ = ["OPENB_FILES", "SCENARIO_FILES", "check_out_files", "frame_csv", "open_out_file"]

#: what a scenario or ``--tiresias`` run writes: per-job records, per-cycle curves, the summary, per-team figures,
#: two charts
SCENARIO_FILES = ("jobs.csv", "timeseries.csv", "summary.csv", "teams.csv", "queue.html", "utilization.html")
#: what an ``--openb`` replay writes: its three curves, the per-pod records, the allocation chart
OPENB_FILES = ("curve.csv", "pods.csv", "allocation.html")


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def check_out_files(folder: Path, names: Sequence[str], *, force: bool) -> None:
    """Refuse a run whose output files would overwrite files already in ``folder``.

    Args:
        folder: the ``--out`` folder (it exists: :func:`~.cli._check_out` made it).
        names: the file names the run will write there.
        force: ``--force`` was given: existing plain files are overwritten.

    Raises:
        ValidationError: field ``--out``: one of ``names`` is there and is not a plain file (a link,
            a folder, a FIFO — never written through), or is a plain file and ``force`` is False.
            The message names the files; the hint gives both fixes (a new folder, or ``--force``).
    """
    shown = str(folder)[:200]
    taken = [name for name in names if os.path.lexists(folder / name)]
    odd = [name for name in taken if not stat.S_ISREG(os.lstat(folder / name).st_mode)]
    if odd:
        raise ValidationError(
            f"--out {shown}: {_listed(odd)} {'is' if len(odd) == 1 else 'are'} there but not a plain file "
            "(a link, a folder, …): the run does not write through it, even with --force", field="--out",
            hint=f"give an empty or new folder, e.g. --out {shown}-2 (it is created)")
    if taken and not force:
        it = "it" if len(taken) == 1 else "them"
        raise ValidationError(
            f"--out {shown} already has {_listed(taken)}: this run would overwrite {it}", field="--out",
            hint=f"give an empty or new folder, e.g. --out {shown}-2 (it is created), or add --force to overwrite {it}")


def open_out_file(path: Path, *, force: bool) -> TextIO:
    """``path`` opened for writing text (UTF-8) without following a link; created new unless ``force``.

    Raises:
        FileExistsError: ``path`` appeared since :func:`check_out_files` and ``force`` is False.
        OSError: ``path`` is a link (``ELOOP``), or cannot be written.
    """
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_TRUNC if force else os.O_EXCL)
    fd = open_fd(path, flags, 0o644)
    return os.fdopen(fd, "w", encoding="utf-8", newline="")


def frame_csv(frame: Any, *, index: bool = False) -> str:
    """A pandas DataFrame as CSV text by the one CSV writer of every export (:func:`~jupyter_sched.textsafe.csv_text`;
    ``index``: its index first, as a column named as the index): the cells ``DataFrame.to_csv`` writes, except that
    a text cell — a scenario's user, team or job name — starting ``=`` ``+`` ``-`` ``@`` is never a formula and its
    controls are escaped (s30). Missing values (NaN, None, NaT) are empty cells."""
    if index:
        frame = frame.reset_index()
    cells = frame.astype(object).where(frame.notna(), None)
    return csv_text([str(c) for c in frame.columns], cells.itertuples(index=False, name=None))
