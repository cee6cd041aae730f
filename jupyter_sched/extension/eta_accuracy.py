"""``GET eta-accuracy?limit=`` (admins): how good the ETAs were (case 034, issue 16).

Coverage and median absolute error of the start predicted when each job was queued against its
actual start, and that error over the median wait, over a window the admin picks, with p90/max/mean
— as JSON an admin (and the panel's admin section) can read
(:meth:`jupyter_sched.services.audit.AuditService.eta_accuracy`). Every user sees only the
fixed-window aggregate in ``GET metrics`` (:mod:`.metrics`; red-team 3 finding 5).
Kept apart from :mod:`.handlers` so that module stays within its size limit.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models import GetEtaAccuracyRequest
from .web import SchedHandler

__all__ = ["EtaAccuracyHandler"]


class EtaAccuracyHandler(SchedHandler):
    """``GET eta-accuracy?limit=`` (admins; others get 403, audited)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.call(self.services.audit.eta_accuracy, self.caller, self.query(GetEtaAccuracyRequest)))
