"""A signed login cookie is verified once per request, never remembered between requests (issue 17).

jupyter_server's auth reads the login cookie twice on a request with a token and the cookie;
:class:`~jupyter_sched.extension.cookies.CookieOnce` keeps the first verification for the rest
of that request only. These scenarios run a real tornado server with real signed cookies.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from tornado import web
from tornado.httpclient import AsyncHTTPClient
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from jupyter_sched.extension.cookies import CookieOnce
from jupyter_sched.extension.handlers import SchedHandler

SECRET = "cookie-secret-for-tests"
OTHER_SECRET = "another-servers-secret"


class CountingHandler(web.RequestHandler):
    """Counts tornado's own signature checks (the work :class:`CookieOnce` saves)."""

    verified = 0

    def get_signed_cookie(self, *args: Any, **kwargs: Any) -> bytes | None:
        type(self).verified += 1
        return super().get_signed_cookie(*args, **kwargs)


class ReadsTwice(CookieOnce, CountingHandler):
    """Reads the login cookie as jupyter_server's auth does: twice, by its older name."""

    def get(self) -> None:
        first = self.get_secure_cookie("login")
        second = self.get_secure_cookie("login")
        third = self.get_signed_cookie("login")
        self.write({"first": None if first is None else first.decode(),
                    "same": first == second == third})


def signed(value: str, secret: str = SECRET) -> str:
    return web.create_signed_value(secret, "login", value).decode()


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[str]:
    """A real tornado server of :class:`ReadsTwice` on a free loopback port; yields its URL."""
    app = web.Application([(r"/", ReadsTwice)], cookie_secret=SECRET)
    sockets = bind_sockets(0, "127.0.0.1")  # non-blocking, as tornado needs
    server = HTTPServer(app)
    server.add_sockets(sockets)
    try:
        yield f"http://127.0.0.1:{sockets[0].getsockname()[1]}/"
    finally:
        server.stop()
        await server.close_all_connections()


async def fetch(url: str, cookie: str | None) -> dict[str, Any]:
    headers = {"Cookie": f"login={cookie}"} if cookie is not None else {}
    answer = await AsyncHTTPClient().fetch(url, headers=headers)
    return dict(json.loads(answer.body))


async def test_one_request_verifies_its_signed_cookie_once_however_often_auth_reads_it() -> None:
    ReadsTwice.verified = 0
    async with serving() as base_url:
        body = await fetch(base_url, signed("ivan"))
    assert body == {"first": "ivan", "same": True}
    assert ReadsTwice.verified == 1, "three reads of one cookie in one request: one signature check"


async def test_nothing_is_remembered_between_requests() -> None:
    ReadsTwice.verified = 0
    async with serving() as base_url:
        assert (await fetch(base_url, signed("ivan")))["first"] == "ivan"
        # the next request carries a cookie signed with another secret (a forged or stale one): refused
        assert (await fetch(base_url, signed("ivan", OTHER_SECRET)))["first"] is None
        assert (await fetch(base_url, None))["first"] is None
        assert (await fetch(base_url, signed("judy")))["first"] == "judy"
    assert ReadsTwice.verified == 4, "each request checks its own cookie"


def test_the_scheduler_handlers_use_it_for_both_names_jupyter_server_calls() -> None:
    assert issubclass(SchedHandler, CookieOnce)
    assert SchedHandler.get_secure_cookie is CookieOnce.get_signed_cookie
    assert SchedHandler.get_signed_cookie is CookieOnce.get_signed_cookie
