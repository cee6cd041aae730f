"""A JSON body that names one key twice is refused, not read as its last value (new user 20, N27:
``{"gpus": 1, "gpus": 2, …}`` submitted 2 GPUs without a word — RFC 8259 §4 leaves duplicate names'
meaning to the reader, and a reader that silently keeps one hides a mistake or a smuggling attempt
between a proxy that reads the first and a server that reads the last)."""

from __future__ import annotations

from typing import Any

__all__ = ["DuplicateKey", "unique_object"]


class DuplicateKey(Exception):  # caught by the body parser, which refuses it
    """Raised by :func:`unique_object` for the first name an object repeats (``key``: that name)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` ``object_pairs_hook``: the object as a dict.

    Raises:
        DuplicateKey: a name given twice in one object.
    """
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out
