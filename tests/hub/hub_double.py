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
  unknown users (404), unknown server names (400) and bodies without ``last_activity``/``servers``;
* ``GET /hub/api/groups/{name}`` (404 for a group the hub does not have): the groups are those the users'
  ``roles`` name plus ``groups`` (a group no user is in: emptied, not deleted);
* ``GET /hub/api/user`` with a user's token, as ``HubAuth`` checks a token (a token it does not know refused
  403, after ``refuse_after_s``: a hub busy with a flood of made-up tokens);
* any of these requests held unanswered once (``hold``), as a busy hub or a proxy that
  black-holes a request does (issue 17).
"""

from __future__ import annotations

import asyncio
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

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Errors as JupyterHub's ``APIHandler.write_error`` writes them: ``{"status", "message"}``."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        message = exc.log_message if isinstance(exc, web.HTTPError) and exc.log_message else self._reason
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"status": status_code, "message": message}))

    @property
    def users(self) -> Mapping[str, Mapping[str, bool]]:
        users: Mapping[str, Mapping[str, bool]] = self.settings["users"]
        return users


async def _held(handler: web.RequestHandler, key: str) -> None:
    """Hold the request while ``key`` is in ``settings["hold"]`` (once per key: a hub that held one
    request and answers the next), until the test sets ``settings["release"]``."""
    hold: set[str] = handler.settings["hold"]
    if key in hold:
        hold.discard(key)
        handler.settings["holding"].add(key)
        await handler.settings["release"].wait()
        handler.settings["holding"].discard(key)


class Users(_Base):
    """``GET users?state=active`` as JupyterHub pages it (``apihandlers/base.py``)."""

    async def get(self) -> None:
        await _held(self, "users")
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
    async def get(self, name: str) -> None:
        await _held(self, f"user:{name}")
        if name not in self.users:
            raise web.HTTPError(404, f"No such user: {name}")
        self.finish(json.dumps(_model(self.users, name, self.settings["roles"])))


class Activity(_Base):
    async def post(self, name: str) -> None:
        await _held(self, f"activity:{name}")
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




class Group(_Base):
    """``GET groups/{name}``: the group model (``{"kind": "group", "name", "users"}``), 404 when the hub has none."""

    async def get(self, name: str) -> None:
        roles: Mapping[str, Mapping[str, Any]] = self.settings["roles"]
        users = sorted(u for u, role in roles.items() if name in (role.get("groups") or ()))
        if not users and name not in self.settings["groups"]:
            raise web.HTTPError(404, f"No such group: {name}")
        self.finish(json.dumps({"kind": "group", "name": name, "users": users, "properties": {}, "roles": []}))


class TokenOwner(_Base):
    """``GET /hub/api/user`` with a user's token (HubAuth's token check): that user's model with the
    token's scopes, 403 for a token the hub does not know."""

    def prepare(self) -> None:  # the caller's own token, not the service's
        pass

    async def get(self) -> None:
        await _held(self, "token")
        token = self.request.headers.get("Authorization", "").removeprefix("token ")
        name = self.settings["tokens"].get(token)
        if name is None:
            await asyncio.sleep(self.settings["refuse_after_s"])
            raise web.HTTPError(403, "invalid token")
        self.finish(json.dumps({**_model(self.users, name, self.settings["roles"]),
                                "scopes": ["access:services!service=jupyter-sched"]}))


def hub_app(users: Mapping[str, Mapping[str, bool]], *, posts: dict[str, Any] | None = None, page_max: int = 200,
            hidden: Collection[str] = (), roles: Mapping[str, Mapping[str, Any]] | None = None,
            hold: Collection[str] = (), release: asyncio.Event | None = None,
            tokens: Mapping[str, str] | None = None, groups: Collection[str] | None = None,
            refuse_after_s: float = 0.0) -> web.Application:
    """The double as a tornado application.

    Args:
        users: ``{user: {server name: active?}}`` the hub knows.
        posts: filled with ``{user: activity body}`` as activity arrives.
        page_max: the hub's ``api_page_max_limit``.
        hidden: users the listing leaves out although they are active.
        roles: per user, ``{"groups": [...], "admin": bool}`` added to their model (read on each
            request, so a test changes them between calls); a user without an entry has neither key
            (as for a service token without ``read:users:groups``).
        hold: requests the hub holds, once each, until ``release`` is set (a busy hub or proxy
            black-holing one request): ``"users"`` (the next user listing page), ``"user:<name>"`` (the
            next lookup of that user), ``"activity:<user>"`` (the next activity post of that user),
            ``"token"`` (the next token check); ``settings["holding"]`` names those held now.
        release: the event that lets held requests go on.
        tokens: ``{user token: user name}`` the token check (``GET /hub/api/user``) knows.
        groups: groups the hub has beyond those ``roles`` name (read on each request: a group whose last
            member a test removes stays, emptied, while it is listed here).
        refuse_after_s: seconds the token check takes to refuse a token it does not know (a busy hub).
    """
    return web.Application([(r"/hub/api/user", TokenOwner), (r"/hub/api/users", Users), (r"/hub/api/users/([^/]+)", User),
                            (r"/hub/api/users/([^/]+)/activity", Activity), (r"/hub/api/groups/([^/]+)", Group)],
                           users=users, posts={} if posts is None else posts, page_max=page_max, hidden=set(hidden),
                           roles={} if roles is None else roles, hold=set(hold), holding=set(),
                           release=release if release is not None else asyncio.Event(),
                           tokens=dict(tokens or {}), groups=set() if groups is None else groups,
                           refuse_after_s=refuse_after_s)
