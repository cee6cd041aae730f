"""Where a job's working directory is read and where a job starts, said by each caller for its own rule
(newuser41 n5: the magics read a relative ``--workdir`` in the notebook's folder and start jobs there without
one, but passed on the server's hint, "a relative one is read in the server's root directory … leave --workdir
out (jobs start in the server's root directory)" — both halves wrong for them).

The REST refusal of a ``working_dir`` (``services/jobs.py``) says the server's rule with :func:`relative_clause`
and :func:`start_clause`; a client that resolves the path itself before sending it (the CLI against its shell's
folder, the magics against the notebook's) says its own with :func:`caller_workdir_hint`, which puts its words
in those very clauses — one sentence, one source, each caller's rule.
"""

from __future__ import annotations

import re

__all__ = ["caller_workdir_hint", "relative_clause", "start_clause"]

_RELATIVE_OPEN = "(a relative one is read in "
_START_OPEN = "(jobs start in "


def relative_clause(where: str) -> str:
    """``(a relative one is read in WHERE)``: where a relative working directory is read."""
    return f"{_RELATIVE_OPEN}{where})"


def start_clause(where: str) -> str:
    """``(jobs start in WHERE)``: where a job that names no working directory starts."""
    return f"{_START_OPEN}{where})"


_RELATIVE = re.compile(re.escape(_RELATIVE_OPEN) + r"[^)]*\)")
_START = re.compile(re.escape(_START_OPEN) + r"[^)]*\)")


def caller_workdir_hint(hint: str, *, relative_in: str, starts_in: str | None) -> str:
    """The server's hint of a refused working directory with a caller's own rule in its clauses: a relative
    one is read in ``relative_in``; without one the job starts in ``starts_in`` (None: that clause as the server
    said it, for a command that sends no working directory of its own)."""
    hint = _RELATIVE.sub(lambda _: relative_clause(relative_in), hint)
    if starts_in is not None:
        hint = _START.sub(lambda _: start_clause(starts_in), hint)
    return hint
