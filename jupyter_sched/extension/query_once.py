"""A query text parsed into its request model once, then recognised (issue 17).

Fifty panels polling ``GET jobs?limit=50`` and ``GET queue?limit=50`` each second send the same
query text every time, and ``GET me``, ``config`` and ``inventory`` none: each poll still checked its
arguments and validated a request model (pydantic) on the server's event loop, where
``jupyter-sched status`` waits behind the polls (~1.2 % of the loop's samples under
``benchmarks/status_bench.py``). The model a query text was parsed into is kept by ``(model, text)``:
the parse is a function of those two alone, and the models are frozen values. Only a successful
parse of a text whose every argument is one of the model's fields is kept — never a refusal, a
``token`` or ``_xsrf`` argument, or a cache buster (a new text each time) — and at most
:data:`KEPT` texts of at most :data:`LONGEST` characters (oldest dropped first).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection
from typing import TypeVar, cast

from pydantic import BaseModel

__all__ = ["KEPT", "LONGEST", "parsed_before", "remember"]

KEPT = 256
"""Query texts kept at most."""

LONGEST = 1024
"""Characters of the longest query text kept."""

M = TypeVar("M", bound=BaseModel)

_parsed: OrderedDict[tuple[type[BaseModel], str], BaseModel] = OrderedDict()
"""``(model, query text) -> parsed model``; read and written on the event loop only (the handlers')."""


def parsed_before(model: type[M], query: str) -> M | None:
    """The ``model`` :func:`remember` kept for the query text ``query``; None: parse it."""
    return cast("M | None", _parsed.get((model, query)))


def remember(model: type[M], query: str, arguments: Collection[str], parsed: M) -> M:
    """Keep ``parsed`` (``model`` parsed from ``query``, whose argument names are ``arguments``)
    when it may be answered again (module docstring); return it."""
    if len(query) <= LONGEST and model.model_config.get("frozen") and set(arguments) <= set(model.model_fields):
        _parsed[(model, query)] = parsed
        while len(_parsed) > KEPT:
            _parsed.popitem(last=False)
    return parsed
