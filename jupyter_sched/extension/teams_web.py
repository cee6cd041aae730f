"""The admin's acts after a hub rename: ``POST teams/{team}/move`` moves a team's work to another team
(:class:`jupyter_sched.services.team_move.TeamMoveService`; hubadmin23 A9, after a group rename) and ``POST
users/{user}/rename`` carries a user's work over to their new name
(:class:`jupyter_sched.services.user_rename.UserRenameService`; hubadmin26 B10, after a user rename)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..services.models.teams import MoveTeamRequest
from ..services.models.users import RenameUserRequest
from .web import SchedHandler

__all__ = ["RENAME_ROUTES", "MoveTeamHandler", "RenameUserHandler"]


class MoveTeamHandler(SchedHandler):
    """``POST teams/{team}/move`` ``{to, dry_run?, with_quota?}`` → the plan or what moved (admins; 403 audited)."""

    @web.authenticated
    @authorized
    async def post(self, team: str) -> None:
        request = await self.body(MoveTeamRequest)
        self.reply(await self.call(self.services.teams.move, self.caller, team, request))


class RenameUserHandler(SchedHandler):
    """``POST users/{user}/rename`` ``{to, dry_run?}`` → the plan, what moved, or that it was done (admins; 403
    audited)."""

    @web.authenticated
    @authorized
    async def post(self, user: str) -> None:
        request = await self.body(RenameUserRequest)
        self.reply(await self.call(self.services.users.rename, self.caller, user, request))


RENAME_ROUTES: list[tuple[str, type[SchedHandler]]] = [
    ("teams/(?P<team>[^/]+)/move", MoveTeamHandler),
    ("users/(?P<user>[^/]+)/rename", RenameUserHandler),
]
"""Rows of the route table (:data:`.handlers.HANDLERS`) for these acts."""
