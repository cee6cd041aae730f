"""The usage routes: ``GET usage``, ``usage/report``, ``usage/waste``
(:class:`~jupyter_sched.services.accounting.AccountingService`) and ``GET quotas/what-if``: a past period's
usage against a proposed quota line (hubadmin26 B7)."""

from __future__ import annotations

from urllib.parse import urlencode

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models import GetUsageReportRequest, GetUsageRequest, GetUsageWasteRequest, UsageReportPage
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
    """``GET usage/report?by=&period=&since=&until=&all=&format=&limit=&cursor=``: allocated and utilized
    GPU-hours, telemetry coverage, efficiency, cost; ``format=csv`` answers ``text/csv``; one page
    (``Link: rel=next`` and ``X-Total-Count`` when more follow: red30 R8)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        request = self.query(GetUsageReportRequest)
        page = await self.call(self.services.accounting.report_page, self.caller, request)
        for name, value in report_headers(page, request):  # paged as GET jobs (red30 R8)
            self.set_header(name, value)
        if request.format == "csv":
            self.finish(self.services.accounting.report_csv(page.rows, request),
                        set_content_type="text/csv; charset=utf-8")
            return
        self.reply(page.rows)


def report_headers(page: UsageReportPage, request: GetUsageReportRequest) -> list[tuple[str, str]]:
    """The ``Link`` header of a ``GET usage/report`` page with a next one (every filter kept, as
    :func:`~.polled.jobs_headers`: relative to the route's last path part) and ``X-Total-Count``, the
    groups of the whole report, when more follow."""
    if not page.next_cursor:
        return []
    query = {k: v for k, v in {"by": request.by, "period": request.period, "since": request.since,
                               "until": request.until, "all": "true" if request.all else None,
                               "user": request.user, "format": request.format}.items() if v}
    query.update(limit=str(request.limit), cursor=page.next_cursor)
    return [("Link", f'<report?{urlencode(query)}>; rel="next"'), ("X-Total-Count", str(page.total))]


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
