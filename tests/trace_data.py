"""Where tests find public trace data: the committed slices always, the full traces when present.

A user's fresh clone has no ``../shared/data`` beside it, so every test that replays trace rows
reads the small slices in ``tests/fixtures/traces`` (sources and licences in its README). Checks
that need a whole trace (its row counts, the published results) are marked
:data:`requires_full_traces` and skip with a reason naming the command that gets the data; CI,
which has ``../shared/data``, runs them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.errors import NotFoundError
from jupyter_sched.sim.traces import data_dir

__all__ = ["FIXTURES", "FULL_TRACES_MISSING", "full_traces", "requires_full_traces"]

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "traces"
"""The committed slices, in the same layout as the full traces folder."""

FULL_TRACES_MISSING = ("full public traces not found (no ../shared/data/traces beside the checkout and no "
                       "JUPYTER_SCHED_DATA); get them with `jupyter-sched fetch-traces --dest DIR` and set "
                       "JUPYTER_SCHED_DATA=DIR")


def full_traces() -> Path | None:
    """The full traces folder (:func:`jupyter_sched.sim.traces.data_dir`), or None when absent."""
    try:
        return data_dir()
    except NotFoundError:
        return None


requires_full_traces = pytest.mark.skipif(full_traces() is None, reason=FULL_TRACES_MISSING)
"""Mark a test that needs a whole public trace (skips in a clone without it, runs in CI)."""
