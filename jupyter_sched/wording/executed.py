"""How to open a notebook job's executed notebook, in one wording for the CLI and the magics (pure).

A failed notebook job's line says where it failed — ``cell 3 (In [4] in the executed notebook) raised
ValueError …`` — so the line under it says how to open that notebook, wherever the line is read: the CLI's
``wait`` / ``submit --wait`` / ``logs -f`` (newuser39 N1) and the magics' ``%schedule wait`` / ``%schedule
status JOB``, which printed the failure sentence with no way to it (session 40). The panel's card has the
button itself (``labextension/src/executed.ts``: ``hasExecutedNotebook``, the same rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["executed_notebook_hint", "has_executed_notebook"]


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
