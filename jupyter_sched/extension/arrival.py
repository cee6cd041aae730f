"""When a request arrived, for the answers kept at a store counter (issue 17).

A kept answer is served on the event loop after one read of the store's change counters
(``Store.counters_now``). A burst of polls brings many requests into one turn of the loop: tornado
reads and parses each and makes its handler, and the handlers run in the next turn. A counter read
that began after a request had arrived is as good for it as its own read (``asked_at`` of
``Store.counters_now``), so the handlers of one turn share the first one's read instead of each
making one (~7 % of the loop's time under ``benchmarks/status_bench.py``'s fifty pollers).
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["Arrival"]


class Arrival:
    """Handler mixin (first in the bases): :attr:`asked_at` is ``time.monotonic()`` (seconds) when
    tornado made the handler — after the whole request was read, so at or after its arrival."""

    asked_at: float

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.asked_at = time.monotonic()
        super().__init__(*args, **kwargs)
