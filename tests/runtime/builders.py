"""Builders for the runtime tests."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from jupyter_sched.model import Allocation, Job, JobSpec, JobState, ResourceRequest

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def make_job(job_id: str = "j-1", *, user: str = "ana", gpus: int = 1, state: JobState = JobState.PENDING,
             allocation: Allocation | None = None, submitted_at: datetime = T0, **spec: Any) -> Job:
    """A job with a trivial command."""
    spec.setdefault("command", ("true",))
    job = Job(id=job_id, spec=JobSpec(name=job_id, user=user, resources=ResourceRequest(gpus=gpus), **spec),
              submitted_at=submitted_at)
    if state is not JobState.PENDING:
        job = replace(job, state=state, allocation=allocation, admitted_at=submitted_at)
    return job
