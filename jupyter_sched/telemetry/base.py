"""The collector protocol and the timestamp rule every collector applies.

A collector answers :meth:`Collector.collect` with one :class:`GpuSample` per GPU or MIG
instance it can see. Collectors never raise for one bad GPU; they raise
:class:`~jupyter_sched.errors.TelemetryError` only when the whole answer is unusable.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Protocol, runtime_checkable

from ..errors import TelemetryError
from ..model.samples import GpuSample

__all__ = ["Collector", "normalize_timestamp", "skew_warnings"]


@runtime_checkable
class Collector(Protocol):
    """Something that samples GPUs now.

    ``collect(now)`` returns the samples of this instant; ``now`` (aware UTC) is the arrival
    time the engine measured, used for samples that carry no timestamp of their own and to
    clamp future timestamps. Raises :class:`TelemetryError` when the source's answer is unusable.
    """

    def collect(self, now: datetime) -> list[GpuSample]:
        """Sample every visible GPU / MIG instance."""
        ...


def normalize_timestamp(measured: datetime | None, received: datetime) -> tuple[datetime, float]:
    """Apply the timestamp rule: future timestamps are clamped to arrival time.

    Args:
        measured: the source's own timestamp (aware), or None when it sent none.
        received: when the engine received it (aware UTC).

    Returns:
        ``(timestamp, skew_s)``: the timestamp to store (never after ``received``) and the
        skew in seconds (``measured - received``; > :data:`jupyter_sched.model.samples.CLOCK_SKEW_LIMIT_S` in absolute
        value is flagged by :attr:`GpuSample.skewed`).

    Raises:
        TelemetryError: a naive datetime (no UTC offset) was given.
    """
    if received.tzinfo is None or (measured is not None and measured.tzinfo is None):
        raise TelemetryError("telemetry timestamp without UTC offset",
                             hint="collectors must produce aware UTC datetimes")
    received = received.astimezone(timezone.utc)
    if measured is None:
        return received, 0.0
    measured = measured.astimezone(timezone.utc)
    skew = (measured - received).total_seconds()
    return (received if skew > 0 else measured), skew



def skew_warnings(samples: Iterable[GpuSample]) -> dict[str, str]:
    """One warning per node whose samples are skewed by more than 60 s (case 010).

    Returns:
        ``{node: sentence}``, e.g. ``{"gpu-3": "node gpu-3 clock is 290 s ahead of the server;
        its telemetry timestamps were clamped to arrival time"}`` (the largest skew per node).
    """
    worst: dict[str, float] = {}
    for s in samples:
        if s.skewed and abs(s.skew_s) > abs(worst.get(s.node or "unknown", 0.0)):
            worst[s.node or "unknown"] = s.skew_s
    out = {}
    for node, skew in worst.items():
        if skew > 0:
            out[node] = (f"node {node} clock is {skew:.0f} s ahead of the server; "
                         "its telemetry timestamps were clamped to arrival time")
        else:
            out[node] = f"node {node} telemetry is {-skew:.0f} s old on arrival (clock behind or delayed delivery)"
    return out
