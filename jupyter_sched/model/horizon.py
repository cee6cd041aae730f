"""The furthest the core projects anything: every end or start it computes as ``now + seconds``.

A projected end is a number computed from inputs a user controls (a progress report's fitted line,
a learnt runtime, a time limit). ``datetime + timedelta`` raises ``OverflowError`` past year 9999,
and a number that large reached the ETA replay from three progress reports 0.5, 0.5,
0.5000000000000001 (a slope of ~1e-17: ~1.9e16 s left): every engine tick then raised and nothing
started for anyone (red team 21, R5). So the core turns seconds into times only here:

* :func:`later` — a projection shown to users: ``None`` ("unknown") when the seconds are not finite
  or lie past :data:`HORIZON_S`; the caller says why (:data:`BEYOND_HORIZON`).
* :func:`capped` — a time the core only compares or orders by (a job's latest end, the queue's
  order at a future moment): the seconds clamped to ``[-HORIZON_S, HORIZON_S]``, never raising.

``now`` is a real time (this century), so ``now ± HORIZON_S`` never leaves ``datetime``'s range.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

__all__ = ["BEYOND_HORIZON", "HORIZON_S", "capped", "later", "within_horizon"]

HORIZON_S = 10 * 366 * 86400.0
"""The furthest projection the core makes (seconds; ten years, ten times the longest time limit the
API takes): a start, an end or a runtime further than this is "unknown", not a date."""

BEYOND_HORIZON = "it is projected to start more than ten years from now, which is no estimate"
"""The ETA reason of a job whose projected start lies past :data:`HORIZON_S`."""


def within_horizon(seconds: float) -> bool:
    """True for a finite number of seconds no further than :data:`HORIZON_S` either way."""
    return math.isfinite(seconds) and -HORIZON_S <= seconds <= HORIZON_S


def later(now: datetime, seconds: float) -> datetime | None:
    """``now + seconds`` for a projection shown to users; None (unknown) when ``seconds`` is not
    finite or further than :data:`HORIZON_S` from ``now`` (never raises)."""
    if not within_horizon(seconds):
        return None
    return now + timedelta(seconds=seconds)


def capped(now: datetime, seconds: float) -> datetime:
    """``now + seconds`` with ``seconds`` clamped to ``[-HORIZON_S, HORIZON_S]`` (NaN: ``+HORIZON_S``),
    for times the core only compares or orders by (never raises)."""
    if not seconds <= HORIZON_S:  # NaN too
        seconds = HORIZON_S
    elif seconds < -HORIZON_S:
        seconds = -HORIZON_S
    return now + timedelta(seconds=seconds)
