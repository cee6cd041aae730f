"""A loopback HTTP server speaking the JupyterHub REST API JSON of the calls the central service
makes — a double for the unit-level hub tests (the slow integration test runs a real JupyterHub).

* ``GET /hub/api/users?state=active`` (and ``GET /hub/api/users``: every user) paged as JupyterHub 5/6 pages it (``apihandlers/base.py``:
  ``limit`` capped at ``api_page_max_limit``; with ``Accept: application/jupyterhub-pagination+json``
  the answer is ``{"items", "_pagination": {"offset", "limit", "total", "next"}}``, else the first
  page as a bare list); ``hidden`` users are left out of the listing as if they had moved between
  pages while a client walked them;
* ``GET /hub/api/users/{name}`` (404 for unknown users); a user's model carries ``groups`` and
  ``admin`` only when the test gives them (``roles``);
* ``POST /hub/api/users/{name}/activity``, which, like the hub's ``ActivityAPIHandler``, refuses
  unknown users (404), unknown server names (400) and bodies without ``last_activity``/``servers``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from tornado import web

__all__ = ["TOKEN", "hub_app"]

TOKEN = "service-token-for-the-loopback-hub"


def _model(users: Mapping[str, Mapping[str, bool]], name: str,
           roles: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    servers = users[name]
    model: dict[str, Any] = {"kind": "user", "name": name, "servers": {s: {"name": s, "ready": True} for s, on in servers.items() if on}}
    # "groups" / "admin" as the hub's model has them for a token with read:users (absent when not given)
    model.update({k: v for k, v in (roles or {}).get(name, {}).items() if k in ("groups", "admin")})
    return model


class _Base(web.RequestHandler):
    def prepare(self) -> None:
        assert self.request.headers.get("Authorization") == f"token {TOKEN}"

    @property
    def users(self) -> Mapping[str, Mapping[str, bool]]:
        users: Mapping[str, Mapping[str, bool]] = self.settings["users"]
        return users


class Users(_Base):
    """``GET users?state=active`` as JupyterHub pages it (``apihandlers/base.py``)."""

    def get(self) -> None:
        state = self.get_argument("state", None)
        assert state in (None, "active")
        max_limit = self.settings.get("page_max", 200)
        paginated = self.request.headers.get("Accept") == "application/jupyterhub-pagination+json"
        offset = int(self.get_argument("offset", "0"))
        limit = min(int(self.get_argument("limit", str(max_limit if not paginated else 50))), max_limit)
        active = [_model(self.users, name, self.settings["roles"]) for name, servers in self.users.items()
                  if (state is None or any(servers.values())) and name not in self.settings["hidden"]]
        items = active[offset:offset + limit]
        if not paginated:
            self.finish(json.dumps(items))
            return
        following = {"offset": offset + limit, "limit": limit, "url": "..."} if offset + limit < len(active) else None
        self.finish(json.dumps({"items": items, "_pagination": {"offset": offset, "limit": limit,
                                                                "total": len(active), "next": following}}))


class User(_Base):
    def get(self, name: str) -> None:
        if name not in self.users:
            raise web.HTTPError(404, f"No such user: {name}")
        self.finish(json.dumps(_model(self.users, name, self.settings["roles"])))


class Activity(_Base):
    def post(self, name: str) -> None:
        if name not in self.users:
            raise web.HTTPError(404, f"No such user: {name}")
        body = json.loads(self.request.body)
        if not isinstance(body, dict) or not (body.get("last_activity") or body.get("servers")):
            raise web.HTTPError(400, "body must contain at least one of `last_activity` or `servers`")
        for server, info in (body.get("servers") or {}).items():
            if server not in self.users[name] or "last_activity" not in info:
                raise web.HTTPError(400, f"No such server '{server}' for user {name}")
            datetime.fromisoformat(info["last_activity"].replace("Z", "+00:00"))
        datetime.fromisoformat(body["last_activity"].replace("Z", "+00:00"))
        self.settings["posts"][name] = body
        self.finish("")




def hub_app(users: Mapping[str, Mapping[str, bool]], *, posts: dict[str, Any] | None = None, page_max: int = 200,
            hidden: Collection[str] = (), roles: Mapping[str, Mapping[str, Any]] | None = None) -> web.Application:
    """The double as a tornado application.

    Args:
        users: ``{user: {server name: active?}}`` the hub knows.
        posts: filled with ``{user: activity body}`` as activity arrives.
        page_max: the hub's ``api_page_max_limit``.
        hidden: users the listing leaves out although they are active.
        roles: per user, ``{"groups": [...], "admin": bool}`` added to their model (read on each
            request, so a test changes them between calls); a user without an entry has neither key
            (as for a service token without ``read:users:groups``).
    """
    return web.Application([(r"/hub/api/users", Users), (r"/hub/api/users/([^/]+)", User),
                            (r"/hub/api/users/([^/]+)/activity", Activity)],
                           users=users, posts={} if posts is None else posts, page_max=page_max, hidden=set(hidden),
                           roles={} if roles is None else roles)
