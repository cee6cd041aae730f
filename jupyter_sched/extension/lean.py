"""A polled GET's kept answer written without a RequestHandler, when the request is one the server recognises (issue 17).

``jupyter-sched status`` (``GET config``, ``me``, ``inventory``) and polling clients (``GET jobs``,
``queue``) are answered on the event loop from the answers the services keep. Even so, each poll
cost the loop ~0.4 ms of CPU, three quarters of it tornado's and jupyter_server's machinery around
the answer: a ``RequestHandler`` made and cleared (its default headers computed, the ``Date``
formatted), an asyncio task, ``prepare`` (host, identity, CORS, origin), the ``@authorized`` step,
``finish``/``flush``, the request log. Under ``benchmarks/status_bench.py``'s fifty pollers
``jupyter-sched status`` waits behind all of that.

:class:`LeanAnswers` is the first router of the server's application. It takes a request only when
every check the normal path makes is known to pass, and each is the normal path's own:

- ``GET`` over HTTP/1.1 of exactly one of the routes of :data:`LEAN`, which the server's own routing
  sends to that very handler class (checked through the routing whenever its rules change);
  no ``Origin`` (or ``Sec-Websocket-Origin``) header — a cross-origin request, and its CORS and
  origin checks, take the normal path — and no body;
- its ``Host`` is one ``check_host`` allowed before (:func:`.auth_once.known_local`);
- its ``Authorization`` and ``Cookie`` headers are byte-for-byte those of a request jupyter_server's
  identity provider proved, and the proof still holds (:meth:`.auth_once.ProvenOnce.recognised`:
  the token unchanged, the cookie secret the same, the cookie within its max age, no ``?token=``,
  no debug logging) — any other identity provider, a forged, expired or other cookie, a wrong or
  missing token: the normal path;
- the authorizer is jupyter_server's ``AllowAllAuthorizer`` (which allows every authenticated
  request; any other authorizer is asked on the normal path);
- its query text is one the route parsed before (:mod:`.query_once`); no response transform
  (gzip) is configured; the request log is Jupyter's own and shows no line for a success
  (:mod:`.request_log`): only the Prometheus sample is recorded, as there;
- a ``GET`` of the route is no user activity (its handler's ``_track_activity`` says so for a GET).

The answer is built in the next turn of the loop (so a burst of polls shares one read of the
store's counters, as handlers do: :mod:`.arrival`), from the same kept answer its handler would
give (:mod:`.polled`); when nothing is kept, the request is handed to the normal routing then.
The headers are the handler's own: a handler of the route, made once a second on a stand-in
request without ``Origin`` and marked token-authenticated, as every request taken here is, gives
its ``clear()``, default headers, CORS headers and ``Content-Type``; the page headers, ``Etag``,
``304 Not Modified`` (``If-None-Match``, tornado's comparison) and ``Content-Length`` follow as
tornado's ``finish`` adds them. A test compares both paths' bytes for every route.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.client import responses
from typing import Any

from jupyter_server.auth.authorizer import AllowAllAuthorizer
from jupyter_server.base.handlers import log as jupyter_log
from jupyter_server.prometheus.metrics import HTTP_REQUEST_DURATION_SECONDS
from jupyter_server.utils import url_path_join
from pydantic import BaseModel
from tornado import httputil, web
from tornado.escape import utf8
from tornado.routing import AnyMatches, Router, Rule

from ..services.models import GetQueueRequest, ListJobsRequest
from .auth_once import known_local, proven_once
from .handlers import ConfigHandler, InventoryHandler, JobsHandler, MeHandler, QueueHandler
from .polled import Kept, kept_config, kept_inventory, kept_jobs, kept_me, kept_queue
from .query_once import parsed_before
from .request_log import is_jupyter_log_request, shows_debug
from .web import answer_body, no_arguments

__all__ = ["LEAN", "LeanAnswers", "etag_matches", "install_lean_answers"]

log = logging.getLogger(__name__)

LEAN: dict[type[web.RequestHandler], tuple[Kept, type[BaseModel]]] = {
    ConfigHandler: (kept_config, no_arguments), MeHandler: (kept_me, no_arguments),
    InventoryHandler: (kept_inventory, no_arguments), JobsHandler: (kept_jobs, ListJobsRequest),
    QueueHandler: (kept_queue, GetQueueRequest),
}
"""The handler classes whose GET may be answered here: their kept answer and query model."""

_TAKEN_ELSEWHERE = ("Origin", "Sec-Websocket-Origin", "Content-Length", "Transfer-Encoding")
"""Request headers that send a request the normal way: an origin to check, a body."""

_REPRESENTATION = ("Content-Encoding", "Content-Language", "Content-Type")
"""Headers a ``304`` leaves out (tornado's ``_clear_representation_headers``)."""

_ETAGS = re.compile(rb'\*|(?:W/)?"[^"]*"')
"""The entity tags of an ``If-None-Match`` header, as tornado's ``check_etag_header`` finds them."""


@dataclass
class _Route:
    """One route taken here: its handler class, kept answer, query model, and what was checked."""

    handler: type[web.RequestHandler]
    kept: Kept
    model: type[BaseModel]
    label: str
    checked: int = -1
    """The routing's rule count when :meth:`LeanAnswers._check` last ran (-1: never)."""
    taken: bool = False
    kwargs: dict[str, Any] = field(default_factory=dict)
    template: tuple[int, tuple[Any, ...], httputil.HTTPHeaders] | None = None


class _Unconnected:
    """The connection of the stand-in request a header template is made on (nothing is sent)."""

    context = None

    def set_close_callback(self, callback: Any) -> None:
        """Nothing to close."""


class LeanAnswers(Router):
    """The application's first router (module docstring); :attr:`enabled` False sends every request the normal way."""

    enabled = True

    def __init__(self, application: web.Application, sched: Any, routes: dict[str, _Route]) -> None:
        self.application = application
        self.sched = sched
        self.routes = routes
        self._declining = False

    def find_handler(self, request: httputil.HTTPServerRequest, **kwargs: Any) -> httputil.HTTPMessageDelegate | None:
        """An :class:`_Answer` for a request every check of the module docstring passes; None: the normal routing."""
        route = self.routes.get(request.path)
        if route is None or self._declining or not self.enabled or request.method != "GET" \
                or request.version != "HTTP/1.1":
            return None
        headers = request.headers
        application = self.application
        settings = application.settings
        if any(name in headers for name in _TAKEN_ELSEWHERE) or application.transforms \
                or not known_local(request, settings):
            return None
        proven = proven_once(settings, settings.get("identity_provider"))
        if proven is None or type(settings.get("authorizer")) is not AllowAllAuthorizer \
                or not is_jupyter_log_request(settings.get("log_function")) or shows_debug(jupyter_log()):
            return None
        user = proven.recognised(request, settings)
        query = None if user is None else parsed_before(route.model, request.query)
        if query is None:
            return None
        if route.checked != len(application.default_router.rules):
            try:
                self._check(route, request, user)
            except Exception:  # never in the way of the normal path
                log.exception("jupyter_sched: %s is answered the normal way only", route.label)
        if not route.taken:
            return None
        try:
            who = self.sched.caller_key(user)
        except Exception:  # refused by the identity step: the handler says how
            return None
        return _Answer(self, route, request, user, who, query)

    def normal(self, request: httputil.HTTPServerRequest) -> httputil.HTTPMessageDelegate:
        """The delegate the server's routing gives ``request`` without this router."""
        self._declining = True
        try:
            return self.application.find_handler(request)
        finally:
            self._declining = False

    def _check(self, route: _Route, request: httputil.HTTPServerRequest, user: Any) -> None:
        """Whether the normal routing sends ``request``'s path to the route's handler class (no path
        arguments) and a GET of it is no activity; noted until the routing's rules change."""
        delegate: Any = self.normal(request)
        route.checked = len(self.application.default_router.rules)
        route.taken = False
        if getattr(delegate, "handler_class", None) is not route.handler or delegate.path_args \
                or delegate.path_kwargs or delegate.stream_request_body:
            return
        route.kwargs = dict(delegate.handler_kwargs)
        route.template = None
        handler = self._stand_in(route, request.path, request.host, user, int(time.time()))
        route.taken = not handler._track_activity and not hasattr(handler, "_new_cookie") \
            and not any(name in handler._headers for name in ("Etag", "Content-Length", "Transfer-Encoding"))

    def _stand_in(self, route: _Route, path: str, host: str, user: Any, second: int) -> Any:
        """A handler of ``route`` on a stand-in GET of ``path`` to ``host`` without ``Origin``, token-authenticated
        as every request taken here, with the headers it has when its answer is written (but the
        page's and tornado's ``finish``'s): ``Date`` is ``second``'s."""
        stand_in = httputil.HTTPServerRequest(start_line=httputil.RequestStartLine("GET", path, "HTTP/1.1"),
                                              headers=httputil.HTTPHeaders({"Host": host}),
                                              connection=_Unconnected())  # type: ignore[arg-type]
        handler: Any = route.handler(self.application, stand_in, **route.kwargs)
        handler.current_user = handler._jupyter_current_user = user  # as prepare sets them, before CORS
        handler._token_authenticated = True
        handler.set_cors_headers()
        handler.set_header("Content-Type", "application/json")
        handler._headers["Date"] = httputil.format_timestamp(second)
        handler.ui = None  # its ui-module closures (tornado's _break_cycles)
        return handler

    def headers(self, route: _Route, path: str, host: str, user: Any, at: float) -> httputil.HTTPHeaders:
        """A copy of the route's header template for an answer at ``at`` (epoch seconds): rebuilt for
        each new second (its ``Date``) and whenever a setting it reads changed."""
        settings = self.application.settings
        second = int(at)
        inputs = (settings.get("headers"), settings.get("allow_origin"), settings.get("allow_origin_pat"),
                  settings.get("allow_credentials"), settings.get("base_url"), settings.get("csp_report_uri"))
        kept = route.template
        if kept is None or kept[0] != second or kept[1] != inputs:
            template = self._stand_in(route, path, host, user, second)._headers
            inputs = (dict(inputs[0]) if isinstance(inputs[0], dict) else inputs[0], *inputs[1:])
            kept = route.template = (second, inputs, template)
        return kept[2].copy()


class _Answer(httputil.HTTPMessageDelegate):
    """One request :class:`LeanAnswers` took: answered in the loop's next turn (module docstring)."""

    def __init__(self, router: LeanAnswers, route: _Route, request: httputil.HTTPServerRequest, user: Any, who: Any,
                 query: BaseModel) -> None:
        self.router, self.route, self.request, self.user, self.who, self.query = router, route, request, user, who, query
        self.asked_at = 0.0
        self.at = 0.0

    def finish(self) -> None:
        """The request is read (a GET without a body): answer it in the next turn."""
        self.asked_at, self.at = time.monotonic(), time.time()
        asyncio.get_running_loop().call_soon(self.answer)

    def answer(self) -> None:
        """Write the kept answer, or hand the request to the normal routing: nothing kept, a page
        header tornado would refuse, or any fault while the answer is made (the handler meets it
        again and answers it its own way)."""
        try:
            made = self._made()
        except Exception:
            log.debug("jupyter_sched: %s answered the normal way", self.route.label, exc_info=True)
            made = None
        if made is None:
            self._normally()
            return
        status, headers, chunk = made
        request = self.request
        connection: Any = request.connection
        try:
            connection.write_headers(httputil.ResponseStartLine("", status, responses[status]), headers, chunk)
            connection.finish()
        except Exception:  # no known way here: the client sees the connection close, the log says why
            log.exception("jupyter_sched: could not write the answer to GET %s", request.path[:200])
            connection.close()
            return
        log_function: Any = self.router.application.settings.get("log_function")
        if log_function.keywords.get("record_prometheus_metrics", True):
            HTTP_REQUEST_DURATION_SECONDS.labels(method="GET", handler=self.route.label, status_code=status).observe(
                request.request_time())

    def _made(self) -> tuple[int, httputil.HTTPHeaders, bytes] | None:
        """``(status, headers, body)`` of the kept answer as its handler writes it; None: none kept."""
        route, request = self.route, self.request
        kept = route.kept(self.router.sched, self.who, self.query, self.asked_at, request.path)
        if kept is None or any(web.RequestHandler._VALID_HEADER_CHARS.fullmatch(value) is None for _, value in kept[1]):
            return None
        body = answer_body(kept[0])
        headers = self.router.headers(route, request.path, request.host, self.user, self.at)
        for name, value in kept[1]:
            headers[name] = value
        etag = headers["Etag"] = body.tag()
        if etag_matches(etag, request.headers.get("If-None-Match", "")):
            for name in _REPRESENTATION:
                if name in headers:
                    del headers[name]
            return 304, headers, b""
        headers["Content-Length"] = str(len(body.data))
        return 200, headers, body.data

    def _normally(self) -> None:
        """Hand the request to the delegate the normal routing gives it, as the connection would have."""
        request = self.request
        delegate = self.router.normal(request)
        delegate.headers_received(httputil.RequestStartLine(request.method or "GET", request.uri or "",
                                                            request.version), request.headers)
        delegate.finish()


def etag_matches(etag: str, if_none_match: str) -> bool:
    """Tornado's ``check_etag_header``: ``If-None-Match`` lists ``*`` first, or ``etag`` (weakly compared)."""
    tags = _ETAGS.findall(utf8(if_none_match))
    if not etag or not tags:
        return False
    if tags[0] == b"*":
        return True
    mine = utf8(etag)
    mine = mine[2:] if mine.startswith(b"W/") else mine
    return any((tag[2:] if tag.startswith(b"W/") else tag) == mine for tag in tags)


def install_lean_answers(sched: Any, prefix: str, routes: Iterable[tuple[str, type[Any]]]) -> LeanAnswers:
    """Put a :class:`LeanAnswers` for ``routes`` (``(pattern under prefix, handler class)``, those of
    :data:`LEAN`) first among the rules of ``sched``'s server application; return it."""
    application = sched.serverapp.web_app
    base = application.settings.get("base_url", "/")
    taken = {url_path_join(base, prefix + pattern): _Route(handler, *LEAN[handler],
                                                          label=f"{handler.__module__}.{handler.__name__}")
             for pattern, handler in routes if handler in LEAN}
    router = LeanAnswers(application, sched, taken)
    application.default_router.rules.insert(0, Rule(AnyMatches(), router))
    return router
