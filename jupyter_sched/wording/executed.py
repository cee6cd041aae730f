"""How to open a notebook job's executed notebook, in one wording for the CLI and the magics (pure).

A failed notebook job's line says where it failed — ``cell 3 (In [4] in the executed notebook) raised
ValueError …`` — so the line under it says how to open that notebook, wherever the line is read: the CLI's
``wait`` / ``submit --wait`` / ``logs -f`` (newuser39 N1) and the magics' ``%schedule wait`` / ``%schedule
status JOB``, which printed the failure sentence with no way to it (session 40). The panel's card has the
button itself (``labextension/src/executed.ts``: ``hasExecutedNotebook``, the same rule).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

__all__ = ["NAME_BUDGET_BYTES", "executed_copy_name", "executed_notebook_hint", "fit_name_bytes",
           "has_executed_notebook"]

_UNSAFE = re.compile(r'[\x00-\x1f\x7f"\\/:*?<>|]')

NAME_MAX_BYTES = 255
"""A file name's limit on Linux, macOS and Windows file systems (NAME_MAX), in bytes of its UTF-8 form."""

NAME_BUDGET_BYTES = NAME_MAX_BYTES - len("-50")
"""The most bytes a derived name has: room is left for the ``-2`` … ``-50`` that
:func:`~..services.executed_copy.copy_without_overwrite` puts before a taken name's suffix."""

_ELLIPSIS = "\u2026"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def fit_name_bytes(stem: str, tail: str, budget: int = NAME_BUDGET_BYTES) -> str:
    """``stem + tail`` when it fits ``budget`` bytes (UTF-8), else ``stem`` cut on a character boundary and
    marked ``…`` so that it does, ``tail`` (what keeps the name unique, e.g. `` (executed j-….ipynb``) always
    whole (newuser41 N4: a legal 226-byte notebook name + its tail passed NAME_MAX, and the CLI, the panel's
    Open and the server could not write the copy). The panel's ``fitNameBytes`` (labextension/src/executed.ts)
    cuts the same way (the shared table, labextension/test/executed_names.json)."""
    if _utf8_len(stem) + _utf8_len(tail) <= budget:
        return stem + tail
    room = budget - _utf8_len(tail) - _utf8_len(_ELLIPSIS)
    kept: list[str] = []
    for char in stem:
        room -= _utf8_len(char)
        if room < 0:
            break
        kept.append(char)
    return "".join(kept).rstrip() + _ELLIPSIS + tail


def executed_copy_name(notebook: str | None, job_id: str) -> str:
    """The file name a job's executed notebook is saved under, wherever its owner saves it — the CLI's
    ``logs JOB --notebook`` (this folder), the browser's Download and the panel's Open (``scheduled-runs/``):
    ``fail (executed j-…).ipynb`` for a run of ``fail.ipynb``, so that it reads as the run's copy, never as the
    user's own notebook, and one run is always one name (newuser40 N1: the panel wrote ``fail.ipynb``,
    ``fail-2.ipynb``, … and the CLI ``fail-j-….ipynb``). Characters a file name or a download header cannot
    carry become ``_``; a name that is only dots or empty reads ``notebook``; a long one is cut (by bytes, on a
    character boundary, the tail kept whole: :func:`fit_name_bytes`) so the name fits NAME_MAX. The panel's
    ``executedCopyName`` (labextension/src/executed.ts) follows the same rule, checked against one table
    (labextension/test/executed_names.json)."""
    stem = _UNSAFE.sub("_", PurePosixPath(str(notebook or "").replace("\\", "/")).name)
    if stem.lower().endswith(".ipynb"):
        stem = stem[: -len(".ipynb")]
    stem = stem.strip().lstrip(".").strip() or "notebook"
    return fit_name_bytes(stem, f" (executed {_UNSAFE.sub('_', job_id)}).ipynb")


def has_executed_notebook(job: Mapping[str, Any]) -> bool:
    """Whether ``job`` (its REST row) has an executed notebook to open: a notebook job that started and has
    ended (the runner writes it as the run ends, however it ends); one cancelled before it started has none."""
    state = job.get("state")
    ran = state in ("succeeded", "failed") or (state in ("cancelled", "lost") and bool(job.get("started_at")))
    return bool(job.get("notebook")) and job.get("kind") != "lease" and ran


def executed_notebook_hint(job: Mapping[str, Any], *, save: str) -> str | None:
    """``its executed notebook (outputs and errors): SAVE saves it here; or the panel: My work → j-… → Open
    notebook`` for a job with one (:func:`has_executed_notebook`), else None. ``save``: the command that saves
    it where the reader is (the CLI's ``jupyter-sched logs j-… --notebook``, a kernel's ``!jupyter-sched …``)."""
    if not has_executed_notebook(job):
        return None
    return (f"its executed notebook (outputs and errors): {save} saves it here; "
            f"or the panel: My work → {job.get('id')} → Open notebook")
