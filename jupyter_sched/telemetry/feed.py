"""Glue for the engine: turn stored samples into the idle detector's input (``Snapshot.telemetry``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from ..model import Inventory, Job
from ..reclaim import IdleInput, LadderState, device_keys
from .ring import SampleStore

__all__ = ["idle_input"]


def idle_input(job: Job, store: SampleStore, inventory: Inventory, *, now: datetime, lookback_s: float,
               ladder: LadderState | None = None, per_minute: bool = True) -> IdleInput:
    """Build ``Snapshot.telemetry[job.id]`` for a running job or lease.

    Args:
        job: a job holding GPUs (its allocation's GPU / MIG UUIDs are mapped to sample keys).
        store: the engine's :class:`SampleStore` (its retention must cover ``lookback_s``).
        inventory: current inventory (to map ``MIG-...`` UUIDs to ``(parent, GI id)``).
        now: the cycle's time (aware UTC).
        lookback_s: seconds of history to pass: at least the longest idle limit that applies
            (``IdlePolicy.busy_kernel_window_s`` or ``window_s``) plus a minute.
        ladder: the job's persisted ladder state (default: fresh).
        per_minute: pass one max-activity sample per minute (default; cheap for multi-hour
            windows) instead of full resolution (for second-scale test policies).
    """
    uuids = job.allocation.all_gpu_uuids() if job.allocation else ()
    keys = device_keys(uuids, inventory)
    since = now - timedelta(seconds=lookback_s)
    # only this allocation's own samples: what the GPU did for its earlier holders, or while it
    # was free, says nothing about this job (new user 6 F14: a job restarted after preemption was
    # warned "idle since" 20 min before it existed)
    start = job.started_at or job.admitted_at
    if start is not None and start > since:
        since = start
    samples = [s for key in keys
               for s in (store.minute_maxima(key, since, now) if per_minute else store.window(key, since, now))]
    return IdleInput(samples=samples, ladder=ladder or LadderState(), devices=keys)
