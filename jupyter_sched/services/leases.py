"""``LeasesService``: interactive GPUs bound to a kernel — request, keep alive, release with the kernel.

A lease is a job of kind ``lease`` (one scheduling path): requesting, listing, reading and
releasing go through :class:`~.jobs.JobsService` with ``kind=lease``; this service adds what only
leases have.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from ..admission import Caller, system_caller
from ..engine.idle import IdleLadders
from ..engine.telemetry import ladder_to_dict
from ..errors import ConflictError, ValidationError
from ..model import Job as CoreJob
from ..model import JobKind
from ..model.units import clock_text
from ..scheduling.snapshot import JobHold
from ..store import LIVE_STATES
from ..wording.reasons import departed_lease_notice
from .context import Context
from .idle import IdlePolicyService
from .jobs import JobsService, ended_words
from .models import Job, KeepaliveLeaseRequest, KeepaliveLeaseResponse, SubmitJobRequest

__all__ = ["LeasesService"]


class LeasesService:
    """Leases (see module docstring)."""

    def __init__(self, ctx: Context, jobs: JobsService, idle: IdlePolicyService) -> None:
        self.ctx = ctx
        self.jobs = jobs
        self.idle = idle

    def request(self, caller: Caller, request: SubmitJobRequest) -> Job:
        """Ask for GPUs for a kernel (``kernel_id``); the lease (``pending``). Raises as
        :meth:`JobsService.submit`."""
        return self.jobs.submit(caller, request, kind=JobKind.LEASE)

    def keepalive(self, caller: Caller, lease_id: str, request: KeepaliveLeaseRequest) -> KeepaliveLeaseResponse:
        """Keep an idle lease's GPUs: the one extension of this allocation, until ``now + seconds``
        (default and maximum: the admin's ``keepalive_max_s``), recorded as an ``idle_keepalive``
        audit record carrying the new ladder state, which the leading engine picks up. Only the
        lease's owner keeps it (an admin releases instead). A lease whose owner is no longer a member
        of the team it is charged to is not renewed: nothing is extended, and the answer's ``notice``
        says so and how to ask again (red team 24, R6; the team's members may take its GPUs back).

        Raises:
            NotFoundError: no such lease, or another user's.
            ValidationError: a batch job, not a lease.
            ConflictError: the lease ended, holds no GPUs yet, used its keepalive, or keepalive is off.
        """
        from ..reclaim import extend_keepalive

        owner_view = Caller(user=caller.user, teams=caller.teams, granted=caller.granted, admin=False)
        record = self.ctx.visible(owner_view, lease_id, request="keep a lease alive", field="lease_id")
        job = record.job
        if not job.is_lease:
            raise ValidationError(f"{lease_id} is a {job.spec.kind.value} job, not a lease", field="lease_id",
                                  hint="keepalive applies to interactive leases only")
        if job.state.terminal:
            raise ConflictError(ended_words(job), field="lease_id",
                                hint="request a new lease")
        if not job.state.holds_gpus:
            raise ConflictError(f"lease {lease_id} is {job.state.value}: it holds no GPUs yet", field="lease_id",
                                hint="keepalive applies once the lease is granted")
        now = self.ctx.clock.now()
        ladder, _ = IdleLadders.stored_ladder(self.ctx.store, job)
        left = self._departed(job)
        if left is not None:  # not renewed: outside the team's guarantee (red team 24, R6)
            kept = ladder.keepalive_until if ladder.keepalive_until and ladder.keepalive_until > now else None
            notice = departed_lease_notice(
                lease_id, left.team, clock_text(left.since, now), gpus=job.spec.resources.total_milli / 1000,
                teams=caller.teams, kept_until=clock_text(kept, now) if kept else None)
            lease = self.jobs.get(owner_view, lease_id)
            return KeepaliveLeaseResponse.model_validate({**lease.to_wire(), "notice": notice,
                                                          "keepalive_until": kept.isoformat() if kept else None})
        ladder = extend_keepalive(ladder, now=now, policy=self.idle.policies.for_job(job),
                                  requested_s=request.seconds)
        until = ladder.keepalive_until.isoformat() if ladder.keepalive_until else None
        with self.ctx.store.transaction(now=now) as tx:
            current = tx.get_job(lease_id)
            tx.try_update_job(replace(current, activity_at=now))
            tx.add_event(actor=caller.user, action="idle_keepalive", job_id=lease_id, user=job.spec.user,
                         message=f"keepalive: GPUs kept until {until}",
                         details={"keepalive_until": until, "ladder": ladder_to_dict(ladder), "attempt": job.attempts})
        self.ctx.kick()
        lease = self.jobs.get(owner_view, lease_id)
        return KeepaliveLeaseResponse.model_validate({**lease.to_wire(), "keepalive_until": until})

    def _departed(self, job: CoreJob) -> JobHold | None:
        """The hold of ``job`` when its owner is no longer a member of the team it is charged to (the
        engine's ``held_jobs`` source: hub groups, or the quota set's members embedded), else None."""
        source = self.ctx.engine.decider.held_jobs
        hold = source().get(job.id) if source is not None else None
        if hold is None or hold.priority is not None or hold.team != job.spec.team:
            return None
        return hold

    def release_kernel(self, kernel_id: str, *, reason: str) -> list[Job]:
        """Release every live lease bound to ``kernel_id`` (the kernel shut down or restarted)."""
        server = system_caller("server")
        released = []
        for record in self.ctx.store.list_jobs(states=LIVE_STATES, kinds=[JobKind.LEASE]):
            if record.job.spec.kernel_id != kernel_id or record.stop_intent == "idle":
                continue  # an idle-reclaimed lease ends once its GPU's process list is clear (engine.idle_kernels)
            # the server's own act, audited as the server's (new user 30, n8: "cancel by root … released by the
            # server" beside "lease_released by server"); said as why, not "released by <owner>" (issue 20)
            why = {"kernel shutdown": "its kernel was shut down", "kernel restart": "its kernel was restarted"}.get(
                reason, reason)
            with contextlib.suppress(ConflictError):
                released.append(self.jobs.cancel(server, record.job.id, by="the server", why=why))
                self.ctx.store.add_event(actor=server.user, action="lease_released", job_id=record.job.id,
                                         user=record.job.spec.user, message=reason, details={"kernel_id": kernel_id})
        return released

