"""s40-views: the drain's sentences (a lease's message while its kernel or processes still hold the GPU) wrote their
clocks by their own strftime (``engine/idle_kernels.py``, ``engine/stops.py``, ``engine/leftovers.py``:
``HH:MM:SS UTC``, never a date) — a second formatter beside :func:`~jupyter_sched.model.units.clock_text`. A
sentence written after midnight about a moment before it read as that time of the new day: each reader places an
undated server clock on the UTC day the sentence was written (``clocks_said``, the panel's ``clocksAsOf``), so a
kernel asked to shut down at 23:59:50 read as asked 24 h later. Now every drain clock is ``clock_text``'s, as of
the sentence's moment: dated when it is of another day.

Pure: :class:`~jupyter_sched.engine.idle_kernels.IdleKernels` with no store (nothing here reads it), a lease row.
"""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.engine.idle_kernels import IdleKernels
from jupyter_sched.model import JobKind, JobState
from jupyter_sched.model.units import clocks_said, shown_in
from jupyter_sched.store import JobRecord
from tests.runtime.builders import make_job

ASKED = datetime(2026, 12, 7, 23, 59, 50, tzinfo=timezone.utc)
AFTER_MIDNIGHT = datetime(2026, 12, 8, 0, 0, 30, tzinfo=timezone.utc)


def test_s40_views_a_drain_clock_of_another_day_carries_its_date() -> None:
    kernels = IdleKernels(store=None, publish=lambda event: None)  # type: ignore[arg-type]
    lease = make_job("l-1", user="ana", state=JobState.RUNNING, kind=JobKind.LEASE, kernel_id="k-1")
    record = JobRecord(job=lease, stop_intent="idle", stop_requested_at=ASKED)
    kernels.server_gone("l-1", ASKED)

    due = kernels.end_due(record, AFTER_MIDNIGHT)
    assert due is not None and due[1] == "ana's server stopped at Dec 7 23:59:50 UTC", due  # failed before: no date
    same_day = kernels.end_due(record, ASKED)
    assert same_day is not None and same_day[1] == "ana's server stopped at 23:59:50 UTC", same_day

    # what a reader in Los Angeles reads of the lease's message written after midnight: the right day
    with shown_in("America/Los_Angeles"):
        said = clocks_said(due[1], AFTER_MIDNIGHT)
    assert said == "ana's server stopped at 15:59:50 PST", said  # Dec 7 there too: no date against its now
