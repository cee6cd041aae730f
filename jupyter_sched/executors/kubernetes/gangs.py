"""One observation of a heterogeneous gang: several Jobs (one per worker group) read as one job.

A gang of worker groups becomes one Indexed Job per group (:func:`.manifests.make_group_job_manifests`).
The executor tracks them as one job: :func:`observe_gang` folds the groups' observations
(:func:`.status.observe_job`, each with the pods of its own Job) into one, all-or-nothing:

* any group failed → the gang failed, with the first failing group's exit code and message (the
  executor then deletes the groups still running, and reports the end once their pods are gone);
* every group succeeded → succeeded (finished when the last one did);
* any group's Job is gone → gone (deleted behind our back, or being deleted by a stop);
* any group pending → pending, with that group's reason (the gang has not started);
* else running (ready when every group is; restarts summed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from .status import Observation, observe_job

__all__ = ["JOB_NAME_LABEL", "observe_gang"]

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
"""Label the Job controller puts on its pods (also the legacy ``job-name``)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _job_name(pod: Mapping[str, Any]) -> str:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return str(labels.get(JOB_NAME_LABEL) or labels.get("job-name") or "")


def observe_gang(jobs: Sequence[tuple[str, Mapping[str, Any] | None]], pods: Iterable[Mapping[str, Any]],
                 events: Iterable[Mapping[str, Any]], *, queue: str = "") -> Observation:
    """State of a gang of worker-group Jobs (module docstring).

    Args:
        jobs: ``(name, Job object or None when it no longer exists)`` per group, in group order.
        pods: the pods of all groups (label ``jupyter-sched/job-id``).
        events: Warning events, as for :func:`.status.observe_job`.
        queue: the Kueue LocalQueue (unused by gangs of groups, which Kueue cannot admit whole).
    """
    pods = list(pods)
    events = list(events)
    parts = [(name, observe_job(obj, [p for p in pods if _job_name(p) == name], events, queue=queue))
             for name, obj in jobs]
    failed = [(name, o) for name, o in parts if o.phase == "failed"]
    if failed:
        name, first = min(failed, key=lambda item: item[1].finished_at or _EPOCH)
        return replace(first, message=f"worker group Job {name} failed: {first.message}".rstrip(": "))
    observations = [o for _, o in parts]
    if observations and all(o.phase == "succeeded" for o in observations):
        ends = [o.finished_at for o in observations if o.finished_at is not None]
        return Observation(phase="succeeded", exit_code=0, finished_at=max(ends) if ends else None)
    if any(o.phase == "gone" for o in observations):
        return Observation(phase="gone")
    pending = next((o for o in observations if o.phase == "pending"), None)
    if pending is not None:
        return pending
    return Observation(phase="running", ready=all(o.ready for o in observations if o.phase == "running"),
                       restarts=sum(o.restarts for o in observations))
