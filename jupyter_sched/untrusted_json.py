"""JSON that someone other than this process wrote, read so that its shape cannot stop the reader (red35 R2).

CPython's JSON decoder raises :class:`RecursionError` — a :class:`RuntimeError`, not the :class:`ValueError`
every reader here catches as "malformed" — on arrays or objects nested deeper than the interpreter's recursion
limit (about 1,000): 60,000 bytes of ``[`` are a valid-looking 60 KiB file. A job's ``exit.json`` (its own
account writes its folder) read so on the engine's thread failed every tick, and the engine retried the same
file forever: no job started for anyone. :func:`loads` is :func:`json.loads` whose every failure is a
:class:`ValueError` (:class:`TooDeep` for the nesting), so a caller's ``except ValueError`` holds for any input.

Read through it: anything a user, a job or another account wrote (job folder files, notebooks, cursors,
request bodies, runtime files of other accounts). ``tests/core/test_s35_red35_r2_untrusted_json.py`` lists the
modules whose ``json.loads`` read only this process's own or a trusted peer's writing (the store's columns,
the Kubernetes API, the hub's API, the wrapper's control pipe) and fails on any other.
Only the standard library is imported: the wrapper and the notebook runner may use it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["TooDeep", "loads"]


class TooDeep(ValueError):
    """The JSON is nested deeper than the decoder can follow."""


def loads(raw: str | bytes | bytearray, **options: Any) -> Any:
    """:func:`json.loads` of ``raw`` (``options`` as there).

    Raises:
        ValueError: not JSON (:class:`json.JSONDecodeError`), not UTF-8 text (:class:`UnicodeDecodeError`),
            or nested too deeply (:class:`TooDeep`) — never :class:`RecursionError`.
    """
    try:
        return json.loads(raw, **options)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None
