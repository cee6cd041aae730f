"""The jobs side of job definitions, on the scheduler's services (:class:`.firing.RunJobs`).

A run is submitted exactly as ``POST jobs`` would submit it for the definition's owner: the same
validation (profiles, known GPU models), team membership and priority rules, default time limit,
and the "can this ever fit" check — so a definition that could never run is refused when it is
saved, and a firing that can no longer submit is recorded as a rejected run with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import SchedError
from ..model import Job, JobKind, JobSpec, JobState
from ..model.codec import job_to_dict
from ..services.models import SubmitJobRequest, parse

__all__ = ["ServiceRunJobs"]


class ServiceRunJobs:
    """:class:`~.firing.RunJobs` over :class:`~jupyter_sched.services.Services`: a run is prepared by
    ``services.jobs.prepare`` for the definition's owner as the admission step resolves them."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def check(self, body: Mapping[str, Any], *, user: str) -> JobSpec:
        return self.build(body, user=user).spec

    def build(self, body: Mapping[str, Any], *, user: str) -> Job:
        svc = self.service
        caller = svc.caller(user, admin=False)
        job: Job = svc.jobs.prepare(caller, parse(SubmitJobRequest, dict(body)), kind=JobKind.TRAINING,
                                    what="run a definition")
        return job

    def rejected(self, body: Mapping[str, Any], *, user: str, error: SchedError) -> Job:
        now = self.service.clock.now()
        spec = JobSpec(name=str(body.get("name") or "run")[:200], user=user, team=str(body.get("team") or "default"),
                       notebook=body.get("notebook"), script=body.get("script"))
        return Job(id=self.service.ctx.ids("j"), spec=spec, state=JobState.REJECTED, submitted_at=now, finished_at=now,
                   message=f"could not submit this run: {error.message}")

    def submitted(self, jobs: list[Job]) -> None:
        self.service.kick()
        simulated = self.service.ctx.simulated()
        for job in jobs:
            self.service.bus.publish({"type": "job", "data": job_to_dict(job, simulated=simulated)})

    def render(self, job: Job) -> dict[str, Any]:
        """A job as ``GET jobs/{id}`` shows it (with the leading engine's live pending reason)."""
        return job_to_dict(self.service.ctx.live(job), simulated=self.service.ctx.simulated())
