"""The pages a browser or crawler asks any web server for, answered by the central service as JSON 404s.

jupyter_server routes ``/(robots.txt|favicon.ico)`` to a static-file handler built without its ``path`` argument in
the versions this project runs on, so each such request raised in the handler's constructor: an 18-line "Uncaught
exception" in the service's log and the connection closed unanswered (the hub's proxy said 503) — from anyone who can
reach the hub's public port, no account needed (red40 R3: 626 requests in 3 s, 812 KB of log). The service serves
``api/sched/`` only; these answer a JSON 404, whose access line of a request that names nobody is written once a
minute (:class:`~jupyter_sched.extension.request_log.Repeats`).
"""

from __future__ import annotations

from tornado import web

__all__ = ["NO_PAGE_ROUTE", "NoPageHandler"]


class NoPageHandler(web.RequestHandler):
    """``GET``/``HEAD`` of a page the service has not: 404 with the errors' JSON shape, no identity asked."""

    def get(self, page: str) -> None:
        self.set_status(404)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.set_header("Cache-Control", "max-age=86400")  # a browser asks for its icon once a day, not per page
        self.finish({"error": {"code": "not_found", "message": f"the scheduler service has no {page}: it serves "
                                                           "api/sched/ only", "field": None,
                               "hint": "check the URL against GET api/sched/config or openapi.yaml"}})

    def head(self, page: str) -> None:
        self.get(page)


NO_PAGE_ROUTE = (r"/(robots\.txt|favicon\.ico)", NoPageHandler)
"""The route, relative to the service's base URL; registered before jupyter_server's own (extension routes win)."""
