"""The magics' tables as DataFrames that show each cell's whole text (newuser30 n20).

pandas cuts text cells at ``display.max_colwidth`` (50 characters) in both of a notebook's views, its
HTML and its plain text: a queue reason read ``ml would use 4 GPUs, above its limit of 3 GPUs ·…`` and a
long job name lost its end. :class:`WholeTextFrame` is a DataFrame — code that filters, sorts or joins it
gets DataFrames of the same kind — whose own ``__repr__`` and ``_repr_html_`` show the whole text; pandas'
options, the user's kernel's own, are never changed (only read again inside these two calls). Imported
only when a table is made: pandas is an extra (:func:`jupyter_sched.magics.render.pandas`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

__all__ = ["WholeTextFrame", "whole_text"]


class WholeTextFrame(pd.DataFrame):  # type: ignore[misc]  # pandas ships no stubs here
    """A :class:`pandas.DataFrame` whose text cells are shown whole, however long (no ``…``).

    Everything else is pandas' own: row and column limits, number formats, and every method (a frame
    derived from it — ``df[df.state == "pending"]``, ``df.sort_values(…)`` — is one too)."""

    _metadata: ClassVar[list[str]] = []  # no attributes of its own to carry to derived frames

    @property
    def _constructor(self) -> Any:  # derived frames show whole text too
        return WholeTextFrame

    def __repr__(self) -> str:
        with pd.option_context("display.max_colwidth", None):
            return str(super().__repr__())

    def _repr_html_(self) -> str | None:
        with pd.option_context("display.max_colwidth", None):
            shown = super()._repr_html_()
        return None if shown is None else str(shown)


def whole_text(frame: pd.DataFrame) -> WholeTextFrame:
    """``frame`` as a :class:`WholeTextFrame` (the same data, not copied where pandas need not)."""
    return frame if isinstance(frame, WholeTextFrame) else WholeTextFrame(frame)
