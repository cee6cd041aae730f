"""``POST jobs/{id}/progress``: a running job reports its progress (:mod:`jupyter_sched.services.progress`).

Its route is listed in :data:`PROGRESS_HANDLERS`, appended to the extension's route table in
:data:`.routes.ROUTES` (``handlers.py`` is at its size cap).
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models import ReportProgressRequest
from .web import SchedHandler

__all__ = ["PROGRESS_HANDLERS", "ProgressHandler"]


class ProgressHandler(SchedHandler):
    """``POST jobs/{id}/progress`` ``{"done": n, "total": m}`` → what is stored (``stored: false``: coalesced)."""

    _track_activity = False  # the job's own process reports; its run is the activity, not this call
    job_token_methods = frozenset({"POST"})  # the one route a job's JUPYTER_SCHED_JOB_TOKEN may call

    @web.authenticated
    @authorized
    async def post(self, job_id: str) -> None:
        request = await self.body(ReportProgressRequest)
        self.reply(await self.call(self.services.progress.report, self.caller, job_id, request))


PROGRESS_HANDLERS: list[tuple[str, type[SchedHandler]]] = [
    (r"jobs/(?P<job_id>[^/]+)/progress", ProgressHandler),
]
"""The progress route (relative to ``api/sched/``)."""
