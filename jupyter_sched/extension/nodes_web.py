"""``POST nodes/{node}/cordon`` and ``POST nodes/{node}/uncordon``: an admin takes a node out of
service for maintenance and back (:class:`jupyter_sched.services.nodes.NodesService`; hubadmin24)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models.nodes import CordonNodeRequest, UncordonNodeRequest
from .web import SchedHandler

__all__ = ["CordonNodeHandler", "UncordonNodeHandler"]


class CordonNodeHandler(SchedHandler):
    """``POST nodes/{node}/cordon`` ``{reason, evict_after_s?, dry_run?}`` → the cordon and the work on the
    node (admins; 403 audited)."""

    @web.authenticated
    @authorized
    async def post(self, node: str) -> None:
        request = await self.body(CordonNodeRequest)
        self.reply(await self.call(self.services.nodes.cordon, self.caller, node, request))


class UncordonNodeHandler(SchedHandler):
    """``POST nodes/{node}/uncordon`` ``{dry_run?}`` → the node open to new work again (admins; 403 audited)."""

    @web.authenticated
    @authorized
    async def post(self, node: str) -> None:
        request = await self.body(UncordonNodeRequest, optional=True)
        self.reply(await self.call(self.services.nodes.uncordon, self.caller, node, request))
