"""Builders for the definitions tests: a store, a clock, and the jobs side of a firing.

``SpecRunJobs`` is the jobs side the firing loop needs, made of the real pieces a submission
uses (``spec_from_request`` validation, sortable ids, the job model); only the engine wake-up is
a list the test reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import SchedError
from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.model.validation import spec_from_request
from jupyter_sched.store import SortableIds, Store


@dataclass
class SpecRunJobs:
    clock: ManualClock
    submitted_jobs: list[Job] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ids = SortableIds(self.clock.now)

    def check(self, body: Mapping[str, Any], *, user: str) -> JobSpec:
        return spec_from_request(body, user=user)

    def build(self, body: Mapping[str, Any], *, user: str) -> Job:
        return Job(id=self.ids("j"), spec=spec_from_request(body, user=user), submitted_at=self.clock.now())

    def rejected(self, body: Mapping[str, Any], *, user: str, error: SchedError) -> Job:
        spec = JobSpec(name=str(body.get("name", "run")), user=user, notebook=body.get("notebook"))
        now = self.clock.now()
        return Job(id=self.ids("j"), spec=spec, state=JobState.REJECTED, submitted_at=now, finished_at=now,
                   message=error.message)

    def submitted(self, jobs: list[Job]) -> None:
        self.submitted_jobs.extend(jobs)


def render(job: Job) -> dict[str, Any]:
    from jupyter_sched.model.codec import job_to_dict

    return job_to_dict(job)


def open_store(url: str, clock: ManualClock) -> Store:
    return Store(url, now=clock.now)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)
