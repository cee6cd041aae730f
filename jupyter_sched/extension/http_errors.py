"""The JSON body of an HTTP error tornado or Jupyter raised before a handler method ran (auth, XSRF,
an unknown route, a method the route does not take), in the shape of every other error
(:meth:`.web.SchedHandler.write_error`): ``code``, ``message``, ``field``, ``hint``.

A method the route does not take answers 405 naming the ones it does — in the ``Allow`` header (RFC
9110) and in words: ``PUT /jobs`` said only "Method Not Allowed — see openapi.yaml for the methods of
this route" (new user 13, N17).
"""

from __future__ import annotations

import re
from http.client import responses
from typing import Any

from tornado import web

from ..errors import ValidationError
from ..textsafe import CONTROL_CHARACTER
from ..wording.service_token import NO_LONGER_A_USER, NO_LONGER_A_USER_HINT, TOKEN_REFUSED_HINT, TOKEN_REFUSED_MESSAGE
from ..wording.tokens import credentials_hint

__all__ = ["CREDENTIALS_REFUSED", "Utf8Arguments", "allowed_methods", "http_error_body", "refused_host"]

_HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 409: "conflict", 413: "too_large", 422: "unprocessable",
               503: "unavailable"}

RETRY_AFTER_S = 5
"""Seconds a 503 raised outside a handler's own errors asks the caller to wait (``Retry-After``)."""
_RETRY_SAID = re.compile(r"[;,.]?\s*retry in a moment\.?$")

CREDENTIALS_REFUSED = ("the server did not accept this request's credentials: no token, a wrong token, or a browser "
                       "request without its _xsrf value")
"""The message of a 401/403 Jupyter's auth answers; ``details.credentials`` marks it for clients,
which then say how to give a token in their own terms (the CLI: ``--token``)."""

_XSRF_REFUSALS = frozenset({"'_xsrf' argument missing from POST", "'_xsrf' argument has invalid format",
                            "XSRF cookie does not match POST argument"})
"""Tornado's words when a request that is not token-authenticated (no token, a wrong one, a browser
session) changes something without a matching _xsrf value: said as :data:`CREDENTIALS_REFUSED`, the
sentence a GET with the same credentials gets — they named a cookie to someone who sent a token,
and POST for a DELETE (new user 18, N2)."""

_API_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
"""The methods a route of the REST API may take (``OPTIONS`` is every route's CORS preflight)."""


def allowed_methods(handler: type[web.RequestHandler]) -> list[str]:
    """The methods ``handler`` implements, in :data:`_API_METHODS` order: those it (or a base of
    jupyter_sched's) defines instead of tornado's 405 stand-in."""
    unimplemented = web.RequestHandler.get  # tornado's _unimplemented_method, shared by every verb
    return [method for method in _API_METHODS if getattr(handler, method.lower(), unimplemented) is not unimplemented]


class Utf8Arguments:
    """A query argument or path part that is not UTF-8 is refused as every other bad argument is —
    code ``validation_error``, naming the argument, with a fix — not by tornado's ``Invalid unicode
    in cursor: b'\\x00\\xff'`` (a Python bytes repr, code ``bad_request``, no field; new user 18, N14)."""

    def decode_argument(self, value: bytes, name: str | None = None) -> str:
        # tornado decodes the route's path parameters before it sets ``path_kwargs``, and query
        # arguments only later, in the handler's method: so an unset ``path_kwargs`` means a path part
        # (verify25: ``jobs/%ff`` was "query argument job_id is not UTF-8 text").
        in_path = getattr(self, "path_kwargs", None) is None
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            if CONTROL_CHARACTER.search(text):
                raise _control_refusal(name, in_path=in_path)
            return text
        if name is None:
            raise ValidationError("the URL path is not UTF-8 text", field="path",
                                  hint="percent-encode the path's text as UTF-8 (an id such as j-01hf3k2m9-x7q4za)")
        field = name if len(name) <= 80 else name[:77] + "..."  # user input: never whole
        if name == "cursor":
            raise ValidationError("cursor is not a cursor this server gave out (not UTF-8)", field="cursor",
                                  hint="pass next_cursor exactly as a page gave it, or leave cursor out to start "
                                       "from the first page")
        if in_path:
            raise ValidationError(f"{_path_part(field)} is not UTF-8 text", field=field, hint=_path_hint(field))
        raise ValidationError(f"query argument {field} is not UTF-8 text", field=field,
                              hint=f"percent-encode {field}'s value as UTF-8, or leave {field} out")


def _path_part(field: str) -> str:
    """How the words name a route's path parameter: ``the node in the URL path``."""
    return f"the {field} in the URL path"


def _path_hint(field: str) -> str:
    """The fix for a bad path parameter: what a good one looks like and where to find one."""
    if field.endswith("_id"):
        return ("an id looks like j-01hf3k2m9-x7q4za (leases l-…, definitions d-…); GET jobs lists yours")
    return f"percent-encode the {field}'s name as UTF-8 text, as GET inventory or GET queue?summary=1 lists them"


def _control_refusal(name: str | None, *, in_path: bool) -> ValidationError:
    """The 400 for a path part or query argument holding a control character (red team 20, R3: an
    id with ``%00`` reached PostgreSQL, which cannot store NUL in text, and was answered 503 "the
    scheduler's database failed to answer" with an ERROR log line per request). Refused here,
    before any service or store sees it, for every route: path parameters (``job_id``, ``lease_id``,
    ``definition_id``, ``node``, ``team``) and every query argument."""
    if name is None:
        return ValidationError("the URL path must not contain control characters (NUL, newline, …)", field="path",
                               hint="an id looks like j-01hf3k2m9-x7q4za")
    field = name if len(name) <= 80 else name[:77] + "..."  # user input: never whole
    if in_path:
        return ValidationError(f"{_path_part(field)} must not contain control characters (NUL, newline, …)",
                               field=field, hint=_path_hint(field))
    return ValidationError(f"query argument {field} must not contain control characters (NUL, newline, …)",
                           field=field, hint=f"send {field}'s value as plain text, or leave {field} out")


def _words(methods: list[str]) -> str:
    return methods[0] if len(methods) == 1 else f"{', '.join(methods[:-1])} and {methods[-1]}"


def _route_elsewhere(route: str, template: str, method: str) -> str | None:
    """``dryrun`` for ``POST jobs/dryrun``: the id part of a route that is itself a route taking
    ``method`` (new user 20, N13: a guessed ``jobs/dryrun`` got "jobs/dryrun takes GET and DELETE")."""
    if template == route:  # no id in this route
        return None
    from .routes import ROUTES  # here, not at import: the routes import the base that imports this

    last = route.rsplit("/", 1)[-1]
    for path, cls in ROUTES:
        if path == last and getattr(cls, method.lower(), None) is not getattr(web.RequestHandler, method.lower(), None):
            return path
    return None


def refused_host(handler: Any, status: int) -> str:
    """The ``Host`` a 403 refused (Jupyter's check of it: ``c.ServerApp.allow_remote_access``), or "" when the 403 was
    for anything else — a valid token sent to a name the server does not answer to was told its credentials were
    refused (red40 nit; the server's log said "Blocking request with non-local 'Host'")."""
    check = getattr(handler, "check_host", None)
    if status != 403 or check is None or getattr(handler, "_sched_host_said", False):
        return ""
    handler._sched_host_said = True  # check_host logs its own warning: once per request
    return "" if check() else str(handler.request.host)[:200]


def http_error_body(status: int, message: str | None, *, method: str, route: str, handler: type[web.RequestHandler],
                    token_page: str = "", template: str = "", host: str = "") -> tuple[dict[str, Any], dict[str, str]]:
    """``({"error": …}, headers)`` of an HTTP error ``status`` raised outside a handler method's own
    errors; ``route`` is the path under ``api/sched/`` (as the caller sent it, shortened);
    ``template`` the route as openapi.yaml writes it (``jobs/{job_id}``), which a 405's hint names."""
    error: dict[str, Any] = {"code": _HTTP_CODES.get(status, "http_error"),
                             "message": message or responses.get(status, "error"), "field": None, "hint": None}
    headers: dict[str, str] = {}
    if status == 403 and message and message.endswith(NO_LONGER_A_USER):  # not the token: the user (hubadmin25 B21)
        error["hint"] = NO_LONGER_A_USER_HINT
    elif host:  # Jupyter's Host check, not the credentials (red40 nit)
        error.update(message=f"this server does not answer to Host {host!r}", field="Host", details={"host": host},
                     hint="use the address the server prints at start (e.g. http://127.0.0.1:8888/), or an admin "
                          "lets it answer to that name: c.ServerApp.allow_remote_access = True (or add the name to "
                          "c.ServerApp.local_hostnames)")
    elif status in (401, 403):  # Jupyter's auth refused the request before it reached us
        said = CREDENTIALS_REFUSED if not message or message in _XSRF_REFUSALS else message
        error.update(message=said, details={"credentials": "refused"},
                     hint=credentials_hint(token_page))  # a hub's token page (new user 13, N13)
    elif status == 404:
        error["hint"] = "check the URL against GET api/sched/config or openapi.yaml"
    elif status == 503 and message == TOKEN_REFUSED_MESSAGE:  # retrying cannot help: the admin's fix (hub admin 22)
        error["hint"] = TOKEN_REFUSED_HINT
    elif status == 503:  # e.g. the hub did not answer a token check (new user 20, N28): the caller retries
        # the hint says when: a message's own "; retry in a moment" would say it twice (hubadmin22 H1)
        error["message"] = _RETRY_SAID.sub("", str(error["message"])) or error["message"]
        error["hint"] = f"retry in {RETRY_AFTER_S} seconds"
        headers["Retry-After"] = str(RETRY_AFTER_S)
    elif status == 405:
        allowed = allowed_methods(handler)
        shown = route[:80] or "this route"
        headers["Allow"] = ", ".join([*allowed, "OPTIONS"])
        if allowed:
            pattern = template[:80] or shown
            hint = f"{pattern} takes {_words(allowed)} (see openapi.yaml)"
            if (other := _route_elsewhere(route, template or route, method)) is not None:
                hint = f"{method[:10]} goes to api/sched/{other}, a route of its own; {hint}"
            error.update(message=f"{method[:10]} is not a method of {shown}", field="method", hint=hint,
                         details={"allowed": allowed})
        else:
            error["hint"] = "see openapi.yaml for the methods of this route"
    return {"error": error}, headers
