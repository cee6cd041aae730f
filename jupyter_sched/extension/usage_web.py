"""The usage routes: ``GET usage``, ``usage/report``, ``usage/waste``
(:class:`~jupyter_sched.services.accounting.AccountingService`) and ``GET quotas/what-if``: a past period's
usage against a proposed quota line (hubadmin26 B7)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models import GetUsageReportRequest, GetUsageRequest, GetUsageWasteRequest
from ..services.models.quotas import GetQuotaWhatIfRequest
from .web import SchedHandler

__all__ = ["QuotaWhatIfHandler", "UsageHandler", "UsageReportHandler", "UsageWasteHandler"]


class UsageHandler(SchedHandler):
    """``GET usage?by=&since=&until=&all=``: GPU-seconds rolled up (own usage; admins: ``all=true``)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.call(self.services.accounting.usage, self.caller, self.query(GetUsageRequest)))


class UsageReportHandler(SchedHandler):
    """``GET usage/report?by=&period=&since=&until=&all=&format=``: allocated and utilized
    GPU-hours, telemetry coverage, efficiency, cost; ``format=csv`` answers ``text/csv``."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        request = self.query(GetUsageReportRequest)
        rows = await self.call(self.services.accounting.report, self.caller, request)
        if request.format == "csv":
            self.finish(self.services.accounting.report_csv(rows, request), set_content_type="text/csv; charset=utf-8")
            return
        self.reply(rows)


class UsageWasteHandler(SchedHandler):
    """``GET usage/waste?since=&until=`` (admins): jobs and users ranked by allocated-but-idle GPU-hours."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.call(self.services.accounting.waste, self.caller, self.query(GetUsageWasteRequest)))


class QuotaWhatIfHandler(SchedHandler):
    """``GET quotas/what-if?team=&guaranteed=&borrowing_limit=&gpu_model=&since=&until=`` (admins): what a
    proposed line would have meant over a past period (the last full quarter unless since/until say)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.call(self.services.accounting.what_if, self.caller, self.query(GetQuotaWhatIfRequest)))
