"""``POST teams/{team}/move``: an admin moves a team's work to another team
(:class:`jupyter_sched.services.team_move.TeamMoveService`; hubadmin23 A9, after a hub group rename)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models.teams import MoveTeamRequest
from .web import SchedHandler

__all__ = ["MoveTeamHandler"]


class MoveTeamHandler(SchedHandler):
    """``POST teams/{team}/move`` ``{to, dry_run?, with_quota?}`` → the plan or what moved (admins; 403 audited)."""

    @web.authenticated
    @authorized
    async def post(self, team: str) -> None:
        request = self.body(MoveTeamRequest)
        self.reply(await self.call(self.services.teams.move, self.caller, team, request))
