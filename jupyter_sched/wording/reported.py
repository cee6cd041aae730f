"""A running job's own progress report in words: ``42 % done, reported 02:10 UTC (3m ago)``.

A job reports its progress (``jupyter_sched.report_progress(done, total)``, ``POST
jobs/{id}/progress``; issue 16 item 4) and the job answers carry the latest report (``progress``:
fraction, at, run_started_at, …). :func:`progress_text` is the one wording of it: the server writes
it without a clock of its own into ``progress.text`` (``42 % done, reported Dec 5 02:10 UTC``, which
stays true while an answer is kept), the panel shows that with the clock as of its own now and how
long ago (labextension/src/format.ts ``progressLine``), and the CLI (``jupyter-sched jobs``, ``wait``)
and the magics (``%schedule jobs``, ``%schedule status JOB``) call it with theirs. A job that never
reported says nothing ("no progress reported" on every other row would be noise), nor does a report
of an earlier run of a restarted job, nor one of work that no longer runs. Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..model.units import ago_text, clock_text
from .estimates import done_text
from .reasons import wire_time

__all__ = ["progress_text"]

_RUNNING = ("admitted", "running")


def progress_text(job: Mapping[str, Any], now: datetime | None) -> str:
    """``42 % done, reported 02:10 UTC (3m ago)`` for ``job`` (REST shape, with ``progress``) at ``now``
    (UTC); ``now`` None: ``42 % done, reported Dec 5 02:10 UTC`` (the clock with its day, no "ago":
    the server's ``progress.text``). The fraction is rounded down (:func:`~.estimates.done_text`: a
    job never reads "100 % done" before it is).

    Returns "" when there is nothing to say: no report (``progress`` absent or not an object), a
    fraction that is no finite number, a report of another run than the current one
    (``progress.run_started_at`` is not the job's ``started_at``, else ``admitted_at``: a requeued job
    starts its count again), or a job that is not ``admitted``/``running``."""
    progress = job.get("progress")
    if not isinstance(progress, Mapping) or job.get("state") not in _RUNNING:
        return ""
    fraction, at = progress.get("fraction"), wire_time(progress.get("at"))
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not math.isfinite(fraction):
        return ""
    if at is None:
        return ""
    run, start = wire_time(progress.get("run_started_at")), wire_time(job.get("started_at") or job.get("admitted_at"))
    if run is None or run != start:
        return ""
    said = f"{done_text(float(fraction))}, reported {clock_text(at, now)}"
    return said if now is None else f"{said} ({ago_text((now - at).total_seconds())})"
