"""``GET metrics``: the scheduler's Prometheus exposition (:mod:`.metrics` builds it)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from .metrics_accounting import METRICS_SCOPE
from .web import SchedHandler

__all__ = ["MetricsHandler"]


class MetricsHandler(SchedHandler):
    """``GET metrics``: Prometheus exposition text from a private registry — with the accounting series
    (:class:`~.metrics_accounting.AccountingCollector`) for an admin or a token holding :data:`~.metrics_accounting.METRICS_SCOPE`."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        from prometheus_client import CONTENT_TYPE_LATEST

        scopes = getattr(self.current_user, "scopes", ())  # a hub token's (HubUser); none elsewhere
        full = self.caller.admin or METRICS_SCOPE in scopes  # the accounting series: admins and scrapers (B9)
        registry = self.sched.metrics_admin_registry if full else self.sched.metrics_registry
        text = await registry.exposition(self.call)  # scrapes shared (.metrics)
        self.set_status(200)
        self.finish(text, set_content_type=CONTENT_TYPE_LATEST)
