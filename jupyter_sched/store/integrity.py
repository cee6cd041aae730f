"""Store integrity check: the invariants a crash, a race or a bug must never break.

Checked, in one read transaction:

1. every job row decodes into a :class:`~jupyter_sched.model.Job` (spec, allocation, reason);
2. states are legal: a known state; admitted/running jobs hold an allocation; pending jobs hold
   none; terminal jobs have ``finished_at``;
3. no GPU is over-allocated: over live (admitted/running) jobs, the milli-GPUs on each GPU
   sum to at most 1000 (so a whole GPU is never held by two jobs);
4. usage intervals are sane: closed ones do not end before they start, and open ones belong to
   jobs that hold GPUs (a finished job left no open interval behind);
5. the schema is at the version this code writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from ..model import GPU_MILLI, JobState
from . import schema
from .codec import record_from_row
from .migrations import current_version, latest_version
from .store import Store

__all__ = ["IntegrityReport", "check_integrity"]


@dataclass(frozen=True, slots=True)
class IntegrityReport:
    """Outcome of :func:`check_integrity`.

    Attributes:
        jobs_checked: job rows read.
        live_jobs: jobs in admitted or running state.
        gpus_allocated: distinct GPUs held by live jobs.
        problems: one sentence per violation (empty when the store is sound).
    """

    jobs_checked: int
    live_jobs: int
    gpus_allocated: int
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def check_integrity(store: Store) -> IntegrityReport:
    """Check the invariants listed in the module docstring; never raises on a violation."""
    problems: list[str] = []
    milli_by_gpu: dict[str, list[tuple[str, int]]] = {}
    holding: set[str] = set()
    checked = 0
    with store.transaction(write=False) as tx:
        version = current_version(tx.conn)
        if version != latest_version():
            problems.append(f"schema version is {version}, expected {latest_version()}")
        for row in tx.conn.execute(sa.select(schema.jobs)).mappings():
            checked += 1
            try:
                job = record_from_row(row).job
            except Exception as exc:  # any decoding failure is a finding, not a crash
                problems.append(f"job {row['id']}: row does not decode ({exc.__class__.__name__}: {exc})")
                continue
            if job.state.holds_gpus:
                if job.allocation is None:
                    problems.append(f"job {job.id} is {job.state.value} without an allocation")
                    continue
                holding.add(job.id)
                for uuid in job.allocation.all_gpu_uuids():
                    milli_by_gpu.setdefault(uuid, []).append((job.id, job.allocation.gpu_milli))
            elif job.state is JobState.PENDING and job.allocation is not None:
                problems.append(f"job {job.id} is pending but still holds an allocation")
            if job.state.terminal and job.finished_at is None:
                problems.append(f"job {job.id} is {job.state.value} without finished_at")
        for uuid, holders in sorted(milli_by_gpu.items()):
            total = sum(milli for _, milli in holders)
            if total > GPU_MILLI:
                names = ", ".join(f"{job_id} ({milli} milli)" for job_id, milli in holders)
                problems.append(f"GPU {uuid} is allocated {total} milli-GPUs (> {GPU_MILLI}) to {names}")
        for interval in tx.usage_rows():
            if interval.ended_at is not None and interval.ended_at < interval.started_at:
                problems.append(f"usage of job {interval.job_id} on {interval.gpu_uuid} ends before it starts")
            if interval.ended_at is None and interval.job_id not in holding:
                problems.append(f"usage of job {interval.job_id} on {interval.gpu_uuid} is open but the job holds no GPUs")
    return IntegrityReport(jobs_checked=checked, live_jobs=len(holding), gpus_allocated=len(milli_by_gpu),
                           problems=tuple(problems))
