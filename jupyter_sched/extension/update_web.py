"""``PATCH jobs/{id}``: hold, release, a new time limit or class, an admin's top (hubadmin25 B18).

A mixin of the ``jobs/{id}`` handler (:class:`~.handlers.JobHandler`): one request model, one service call
(:meth:`~jupyter_sched.services.jobs.JobsService.update`, whose :mod:`~jupyter_sched.services.job_update` says
who may change what). A lease's route does not take it (``LeaseHandler.patch`` is tornado's 405).
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models import UpdateJobRequest
from .web import SchedHandler

__all__ = ["UpdatesJob"]


class UpdatesJob(SchedHandler):
    """``PATCH jobs/{id}``: the fields given change, or none (4xx naming the field and the fix)."""

    @web.authenticated
    @authorized
    async def patch(self, job_id: str) -> None:
        request = await self.body(UpdateJobRequest)
        self.reply(await self.call(self.services.jobs.update, self.caller, job_id, request))
