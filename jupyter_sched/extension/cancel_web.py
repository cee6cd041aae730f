"""``POST jobs/cancel``: the bulk cancel (:func:`jupyter_sched.services.cancelling.cancel_jobs`).

Its route comes before ``jobs/{id}`` in the route table (``cancel`` would otherwise be read as a
job id: no job id is ``cancel``, ids start with ``j-`` or ``l-``).
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models import CancelJobsRequest
from .web import SchedHandler

__all__ = ["CancelJobsHandler"]


class CancelJobsHandler(SchedHandler):
    """``POST jobs/cancel`` ``{ids | mine | all, states?}`` → each job's outcome and the counts."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        request = await self.body(CancelJobsRequest)
        self.reply(await self.call(self.services.jobs.cancel_many, self.caller, request))
