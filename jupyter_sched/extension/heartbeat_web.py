"""``POST leases/{id}/heartbeat``: a lease's kernel still runs (:class:`~jupyter_sched.services.leases_alive.HeartbeatWatch`).

Its route is listed in :data:`HEARTBEAT_HANDLERS`, appended to the extension's route table in
:data:`.routes.ROUTES` (``handlers.py`` is at its size cap); a hub user's server forwards it as every route.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from .web import SchedHandler

__all__ = ["HEARTBEAT_HANDLERS", "HeartbeatHandler"]


class HeartbeatHandler(SchedHandler):
    """``POST leases/{id}/heartbeat`` (no body) → ``{"id", "state", "needed", "interval_s", "misses"}``. Only the
    lease's owner; another user's is refused and audited. Not activity: the server's idle culler, the idle rules
    and keepalive never see it."""

    _track_activity = False  # the kernel's keeper thread sends it every interval: no user is at work

    @web.authenticated
    @authorized
    async def post(self, lease_id: str) -> None:
        self.reply(await self.call(self.services.heartbeats.beat, self.caller, lease_id))


HEARTBEAT_HANDLERS: list[tuple[str, type[SchedHandler]]] = [
    (r"leases/(?P<lease_id>[^/]+)/heartbeat", HeartbeatHandler),
]
"""The heartbeat route (relative to ``api/sched/``)."""
