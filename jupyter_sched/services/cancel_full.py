"""What a cancel answers while the store's disk is full (red42, "held up so far" nit b).

While the store's disk is full no write commits, a cancel's stop intent included (507 ``store_full``): nothing of the
request is saved, and nothing is done that the store could not record — a job signalled by a cancel the store never
saw would be settled later as killed, its cancel lost, a service restarted by its policy. Where the log folder shares
the store's disk, the job filling it is then the one thing nobody can stop through the scheduler. So the 507 of a
cancel says, to the job's owner or an admin (the only callers that reach it), how to stop it by hand now — its
process group on its node, a Kubernetes Job by name — and that its end is recorded (as killed) once the store has
room; or to free space and cancel again.
"""

from __future__ import annotations

from typing import Any

from ..errors import StoreFullError
from ..store import JobRecord

__all__ = ["cancel_by_hand"]


def cancel_by_hand(err: StoreFullError, record: JobRecord | None) -> StoreFullError:
    """``err`` with the public hint a cancel of ``record``'s job gets while the store is full (module docstring)."""
    free = "free space on the disk of the scheduler's store (jupyter-sched doctor names it) and cancel again"
    job = None if record is None else record.job
    data: dict[str, Any] = dict(record.handle or {}) if record is not None else {}
    if job is None or not job.state.holds_gpus or job.is_lease:
        err.public_hint = f"nothing of this cancel was saved: {free}"
        return err
    executor = str(data.get("executor") or (record.executor if record is not None else "") or "")
    pgid = data.get("pgid") or data.get("pid")
    node = job.allocation.node if job.allocation is not None else ""
    if executor == "local" and isinstance(pgid, int) and pgid > 1:
        how = (f"to stop {job.id} now, end its process group by hand on {node or 'its node'}: kill -TERM -{pgid} "
               f"(as {job.spec.user} or root)")
    elif executor == "kubernetes" and isinstance(data.get("name"), str):
        how = f"to stop {job.id} now, delete its Kubernetes Job by hand: kubectl delete job {data['name']}"
    else:
        how = f"to stop {job.id} now, end its processes by hand (ps -u {job.spec.user})"
    err.public_hint = (f"nothing of this cancel was saved; {how} — its end is recorded (as killed) once the store "
                       f"has room again; or {free}")
    return err
