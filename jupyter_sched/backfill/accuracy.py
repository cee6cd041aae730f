"""How good the ETAs were: predicted-at-submit against actual start (case 034).

The engine records, for every started job, the start predicted when it was queued
(:attr:`~jupyter_sched.scheduling.Admit.predicted_start`) and the actual start; this module turns
those pairs into the figures the panel ("ETAs here are typically off by ...") and ``/metrics`` show.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

__all__ = ["MIN_WAIT_S", "EtaAccuracy", "accuracy_from_admits", "eta_accuracy"]

MIN_WAIT_S = 1.0
"""The least median wait (s) the error is related to: below it, the wait is the cycle's own latency."""


@dataclass(frozen=True, slots=True)
class EtaAccuracy:
    """ETA accuracy over a set of started jobs.

    Attributes:
        jobs: started jobs counted.
        coverage: share (0..1) of them that had a predicted start when queued; None when ``jobs`` is 0
            (new user 14, N11: 0.0 read as "no waiting job got an ETA" when none was measured).
        median_abs_error_s: median of ``|actual - predicted|`` in seconds over covered jobs (None: none).
        errors_s: ``{"p90": ..., "max": ..., "mean_signed": ...}`` in seconds (signed: late is positive).
        median_wait_s: median time those jobs waited, seconds (None: not known).
    """

    jobs: int
    coverage: float | None
    median_abs_error_s: float | None
    errors_s: Mapping[str, float] = field(default_factory=dict)
    median_wait_s: float | None = None

    @property
    def error_of_wait(self) -> float | None:
        """The median absolute error over the median wait (``benchmarks/jct_loaded.py``'s
        figure; issue 16's goal is at most 0.15); None when either is unknown or the median wait
        is under :data:`MIN_WAIT_S` (a ratio to a sub-second wait is the cycle's timing noise)."""
        if self.median_abs_error_s is None or not self.median_wait_s or self.median_wait_s < MIN_WAIT_S:
            return None
        return self.median_abs_error_s / self.median_wait_s


def eta_accuracy(pairs: Iterable[tuple[datetime | None, datetime]]) -> EtaAccuracy:
    """Accuracy of ``(predicted start or None, actual start)`` pairs (aware UTC datetimes)."""
    rows = list(pairs)
    signed = [(actual - predicted).total_seconds() for predicted, actual in rows if predicted is not None]
    if not rows:
        return EtaAccuracy(jobs=0, coverage=None, median_abs_error_s=None)
    errors = sorted(abs(e) for e in signed)
    extra: dict[str, float] = {}
    if errors:
        extra = {"p90": errors[min(len(errors) - 1, int(0.9 * len(errors)))], "max": errors[-1],
                 "mean_signed": statistics.fmean(signed)}
    return EtaAccuracy(jobs=len(rows), coverage=len(signed) / len(rows),
                       median_abs_error_s=statistics.median(errors) if errors else None, errors_s=extra)


def accuracy_from_admits(admits: Iterable[tuple[datetime, Mapping[str, object]]]) -> EtaAccuracy:
    """ETA accuracy over recorded admissions of jobs that waited.

    Args:
        admits: ``(admitted at, details)`` of ``admit`` audit records; the engine writes
            ``predicted_start`` (ISO 8601 or None), ``waited_s`` (seconds since submit) and
            ``queued`` (:attr:`~jupyter_sched.scheduling.Admit.queued`) in the details.
            Records without ``waited_s`` (older ones), of jobs that started at once and of jobs
            admitted in their first cycle (``queued`` False) are left out.

    A job admitted by the first cycle that saw it waited only for that cycle (a fraction of a
    second): no ETA was shown for it and its "prediction" is that cycle's own time. Counted, such
    jobs made the median error and the median wait both about 0 s, and their ratio noise (new user
    6 finding 6: "off by 0 s at the median, 45 % of the median wait (0 s)"); the simulator's figure
    (``benchmarks/jct_loaded.py``) never counted them (they wait 0 s there). Older records without
    ``queued`` are counted as before.
    """
    pairs: list[tuple[datetime | None, datetime]] = []
    waits: list[float] = []
    for at, details in admits:
        waited = details.get("waited_s")
        if not isinstance(waited, (int, float)) or waited <= 0 or details.get("queued") is False:
            continue
        predicted = details.get("predicted_start")
        try:
            when = datetime.fromisoformat(predicted) if isinstance(predicted, str) else None
        except ValueError:
            when = None
        pairs.append((when, at))
        waits.append(float(waited))
    return replace(eta_accuracy(pairs), median_wait_s=statistics.median(waits) if waits else None)
