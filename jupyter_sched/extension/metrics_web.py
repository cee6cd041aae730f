"""``GET metrics``: the scheduler's Prometheus exposition (:mod:`.metrics` builds it)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from .web import SchedHandler

__all__ = ["MetricsHandler"]


class MetricsHandler(SchedHandler):
    """``GET metrics``: Prometheus exposition text from a private registry."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        from prometheus_client import CONTENT_TYPE_LATEST

        text = await self.sched.metrics_registry.exposition(self.call)  # scrapes shared (.metrics)
        self.set_status(200)
        self.finish(text, set_content_type=CONTENT_TYPE_LATEST)
