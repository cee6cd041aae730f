"""An admin's look at, and correction of, ends jobs claimed while the service was down (red33 R3's old rows):
``GET usage/claimed-ends`` and ``POST jobs/{job_id}/end``
(:class:`jupyter_sched.services.claimed_ends.ClaimedEndsService`)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models.ends import CorrectEndRequest
from .web import SchedHandler

__all__ = ["ENDS_ROUTES", "ClaimedEndsHandler", "CorrectEndHandler"]


class ClaimedEndsHandler(SchedHandler):
    """``GET usage/claimed-ends`` → the settled jobs whose end is suspect, with why and bounds (admins; 403 audited)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.call(self.services.ends.list, self.caller))


class CorrectEndHandler(SchedHandler):
    """``POST jobs/{job_id}/end`` ``{reason, end?}`` → the correction (admins; 403 audited; audited end_corrected)."""

    @web.authenticated
    @authorized
    async def post(self, job_id: str) -> None:
        request = await self.body(CorrectEndRequest)
        self.reply(await self.call(self.services.ends.correct, self.caller, job_id, request))


ENDS_ROUTES: list[tuple[str, type[SchedHandler]]] = [
    ("usage/claimed-ends", ClaimedEndsHandler),
    ("jobs/(?P<job_id>[^/]+)/end", CorrectEndHandler),
]
"""Rows of the route table (:data:`.handlers.HANDLERS`)."""
