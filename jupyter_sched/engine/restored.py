"""Pending jobs that already run: a store restored from a backup is older than the host (hubadmin23 A13).

After ``pg_restore`` of a dump (or a copied-back SQLite file) a job admitted after the dump is
``pending`` again in the store while its first copy still runs. Left alone, the scheduler admits it
a second time and starts a second copy beside the first (same id, job directory and token), and
the first copy's GPUs are not accounted. Right after this engine becomes leader, before anything is
decided, :func:`adopt_running_pending` asks the executor (its optional ``live_copy(job)``) whether
each pending job's work is alive; such a job is written as ``running`` on the allocation its copy
was launched with, with the copy's handle, and the executor watches it from then on; one WARNING
and one ``adopted`` audit record naming it. A copy whose allocation is unknown is not adopted here, and
the executor never starts a second copy of it (local: the start is refused naming the live wrapper;
Kubernetes: the existing Job is reused).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone

from ..errors import NotFoundError
from ..executors.base import Executor, ExecutorHandle
from ..model import Allocation, Job, JobState
from ..model.codec import allocation_to_dict
from ..store import Store
from .clock import Clock
from .transitions import JobWriter

__all__ = ["adopt_running_pending"]

log = logging.getLogger(__name__)

LiveCopy = Callable[[Job], "tuple[ExecutorHandle, Allocation | None] | None"]


def adopt_running_pending(store: Store, executor: Executor, writer: JobWriter, clock: Clock) -> list[str]:
    """Write every pending job whose work still runs as ``running`` (module docstring).

    Returns:
        The ids adopted (empty when the executor cannot tell, e.g. the simulator).

    Raises:
        StoreError: the store failed (an executor that cannot answer is logged and skipped).
    """
    live_copy: LiveCopy | None = getattr(executor, "live_copy", None)
    if live_copy is None:
        return []
    adopted: list[str] = []
    for record in store.list_jobs(states=(JobState.PENDING,)):
        job = record.job
        if job.is_lease:
            continue
        try:
            found = live_copy(job)
        except Exception as exc:  # the executor cannot tell now (an API server down); its start never makes a 2nd copy
            log.warning("job %s: could not check whether its work already runs (%s)", job.id, exc)
            continue
        if found is None:
            continue
        handle, allocation = found
        if allocation is None:
            log.warning("job %s is pending in the store but its work still runs (%s); its GPUs are not recorded, "
                        "so it is not adopted and will not be started again", job.id, _where(handle))
            continue
        written = _write(store, clock, job.id, handle, allocation)
        if written is not None:
            adopted.append(job.id)
            # watched from now on (one audit record, this one); work that ended meanwhile is settled by the
            # regular adoption of the running job (recovery.AdoptReconciler)
            executor.adopt(written, handle)
            log.warning("job %s of %s was pending in the store but runs on this host (%s, GPUs %s): adopted as "
                        "running — the store is older than the host (restored from a backup?)", job.id,
                        job.spec.user, _where(handle), ", ".join(allocation.all_gpu_uuids()) or "none")
            writer.audit_id(job.id, "adopted",
                            f"job {job.id} was pending in the store but still runs ({_where(handle)}): adopted as "
                            "running (the store is older than the host)",
                            {"handle": handle.to_dict(), "allocation": allocation_to_dict(allocation),
                             "restored": True})
    return adopted


def _where(handle: ExecutorHandle) -> str:
    pid, name = handle.data.get("pid"), handle.data.get("name")
    return f"wrapper pid {pid}" if pid is not None else f"{handle.executor} object {name}"


def _write(store: Store, clock: Clock, job_id: str, handle: ExecutorHandle, allocation: Allocation) -> Job | None:
    now = clock.now()
    created = handle.data.get("create_time")
    started = datetime.fromtimestamp(created, tz=timezone.utc) \
        if isinstance(created, (int, float)) and not isinstance(created, bool) and created > 0 else now
    with store.transaction(now=now) as tx:
        try:
            current = tx.get_job(job_id)
        except NotFoundError:
            return None
        if current.job.state is not JobState.PENDING:
            return None
        message = "running (adopted: it was pending in a store older than this host)"
        job = current.job.transition(JobState.ADMITTED, allocation=allocation, admitted_at=started, reason=None,
                                     nominated=None, attempts=current.job.attempts + 1, not_before=None,
                                     message=message).transition(JobState.RUNNING, started_at=started,
                                                                 message=message)
        stored = tx.try_update_job(replace(current, job=job, handle=handle.to_dict(), executor=handle.executor))
        if stored is None:
            return None
        tx.open_usage(job_id=job.id, attempt=job.attempts, user=job.spec.user, team=job.spec.team,
                      kind=job.spec.kind.value, started_at=started,
                      gpus=[(g, "unknown", allocation.gpu_milli / 1000) for g in allocation.all_gpu_uuids()])
    return stored.job
