"""``GET usage/report``: the accounting report (allocated and utilized GPU-hours, cost, efficiency).

Query: ``by`` (comma list of user, team, gpu_model, job_id, kind, period; default ``user``),
``period`` (day/week/month, for ``by=period``; default month), ``since`` / ``until`` (ISO 8601
with offset), ``all=true`` (admins: everyone; others get their own usage only), ``format``
(``json`` default, or ``csv`` → ``text/csv`` with a header row). Rows are those of
:func:`jupyter_sched.accounting.usage_report` plus ``gpu_seconds`` / ``gpu_hours`` (= allocated,
the shape of ``GET usage``). Cost uses ``c.HubSchedApp.gpu_prices`` (no prices → ``cost`` null).

Utilization needs persisted telemetry, which the store does not keep yet: until it does, the
``utilized_*`` and ``efficiency`` columns are null ("unknown"), never zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..accounting import report_csv, usage_report
from ..errors import AuthorizationError
from ..extension.handlers import SchedHandler
from ..model.units import parse_utc

__all__ = ["UsageReportHandler", "usage_report_for"]


def usage_report_for(service: Any, *, user: str | None, by: Sequence[str] = ("user",), since: str | None = None,
                     until: str | None = None, period: str = "month",
                     prices: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """The report of ``user``'s usage (None = everyone) from the service's store, at the service's clock.

    Raises:
        ValidationError: bad grouping, period, timestamp or a model without a price.
        AccountingError: inconsistent usage records.
    """
    start = parse_utc(since, field="since") if since else None
    end = parse_utc(until, field="until") if until else None
    intervals = service.store.usage_rows(since=start, until=end, user=user)
    rows = usage_report(intervals, (), now=service.clock.now(), by=tuple(by), since=start, until=end, period=period,
                        prices=prices)
    return [{**row, "gpu_seconds": row["allocated_gpu_seconds"], "gpu_hours": row["allocated_gpu_hours"]}
            for row in rows]


class UsageReportHandler(SchedHandler):
    """``GET usage/report`` (see module docstring)."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        ident = self.identity
        everyone = self.query_bool("all")
        if everyone and not ident.is_admin:
            raise AuthorizationError("only admins may read everyone's usage", field="all",
                                     hint="leave out all to read your own usage")
        by = tuple(k.strip() for k in (self.query_str("by") or "user").split(",") if k.strip())
        prices = dict(getattr(self.sched, "gpu_prices", {}) or {}) or None
        rows = usage_report_for(self.service, user=None if everyone else ident.name, by=by,
                                since=self.query_str("since"), until=self.query_str("until"),
                                period=self.query_str("period") or "month", prices=prices)
        if (self.query_str("format") or "json") == "csv":
            self.set_header("Content-Type", "text/csv; charset=utf-8")
            self.finish(report_csv(rows, by=by))
            return
        self.reply(rows)
