"""Short, sortable, unique ids for jobs, leases and events (the edge makes ids, never the core).

An id is a prefix, 9 Crockford-base32 characters of the creation time in milliseconds
(sortable until the year 3084) and 6 random characters (30 bits): ``j-01hf3k2m9-x7q4za``.
Ids created in the same millisecond sort by their random part, which is fine: ordering by
submit time uses the ``submitted_at`` column, the id only needs to be unique and roughly sortable.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

__all__ = ["IdGenerator", "SequentialIds", "SortableIds", "encode_base32"]

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case (no i, l, o, u)


def encode_base32(value: int, width: int) -> str:
    """Encode a non-negative integer in ``width`` Crockford base32 characters (zero padded).

    Raises:
        ValueError: ``value`` is negative or does not fit in ``width`` characters.
    """
    if value < 0 or value >= 32**width:
        raise ValueError(f"{value} does not fit in {width} base32 characters")
    chars = []
    for _ in range(width):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


class IdGenerator(Protocol):
    """Makes a new unique id with a short prefix (``"j"`` for jobs and leases)."""

    def __call__(self, prefix: str) -> str: ...


class SortableIds:
    """Time-ordered random ids: ``<prefix>-<9 time chars>-<6 random chars>``.

    Args:
        now: the clock the time part comes from (injected so simulations stay deterministic
            in their time part; the random part always comes from :mod:`secrets`).
    """

    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now

    def __call__(self, prefix: str) -> str:
        millis = int(self._now().timestamp() * 1000)
        return f"{prefix}-{encode_base32(millis, 9)}-{encode_base32(secrets.randbits(30), 6)}"


class SequentialIds:
    """Deterministic ids ``<prefix>-000001``, ... for simulations and tests (one process only)."""

    def __init__(self, start: int = 1) -> None:
        self._next = start

    def __call__(self, prefix: str) -> str:
        value = self._next
        self._next += 1
        return f"{prefix}-{value:06d}"
