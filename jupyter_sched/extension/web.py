"""The base of every REST handler: auth, the caller, request models in, response models out, and
THE error mapping (STYLE §7, §8).

Every handler derives from :class:`SchedHandler` (a jupyter_server ``APIHandler``), so every
method is ``@web.authenticated`` + ``@authorized`` on resource ``"sched"`` and XSRF is enforced
for cookie-authenticated browsers. A handler method reads like this::

    request = self.body(SubmitJobRequest)                                # parse a request model (400 naming the field)
    job = await self.call(self.services.jobs.submit, self.caller, request)  # one service call, off the loop
    self.reply(job, status=201)                                          # serialise the response model

Errors are mapped in one place (:meth:`SchedHandler.write_error`): a
:class:`~jupyter_sched.errors.SchedError` becomes ``errors.http_status_for(err)`` +
``err.to_json()``; a tornado ``HTTPError`` (auth, XSRF, 404) keeps its status with the same JSON
shape; anything else is logged with its traceback and answered 500 with a generic JSON error
(no internals leak). Handlers hold no try/except ladders.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from http.client import responses
from typing import Any, TypeVar

from jupyter_server.base.handlers import APIHandler
from pydantic import BaseModel
from tornado import web

from ..admission import Caller
from ..errors import (
    AuthorizationError,
    QuotaError,
    SchedError,
    UnschedulableError,
    ValidationError,
    http_status_for,
    json_kind,
    shown,
)
from ..services.models import parse, wire_json

__all__ = ["AUTH_RESOURCE", "SchedHandler"]

AUTH_RESOURCE = "sched"
_HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 409: "conflict", 413: "too_large", 422: "unprocessable"}

CREDENTIALS_REFUSED = ("the server did not accept this request's credentials: no token, a wrong token, or a browser "
                       "request without its _xsrf value")
"""The message of a 401/403 Jupyter's auth answers; ``details.credentials`` marks it for clients,
which then say how to give a token in their own terms (the CLI: ``--token``)."""

_REFUSALS = (ValidationError, AuthorizationError, QuotaError, UnschedulableError)
"""Errors that refuse what the caller asked (audited); not-found, conflict and busy answers describe state."""

BULK_READS = frozenset({"jobs", "leases", "queue", "audit", "usage", "usage/report", "usage/waste",
                        "telemetry/history", "metrics"})
"""Routes whose GET lists many rows: served on their own request threads (:attr:`SchedHandler._bulk`)."""

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")


def _reject_constant(name: str) -> Any:
    """``json.loads`` hook: ``NaN``/``Infinity`` are not JSON and no field accepts them."""
    raise ValueError(f"{name} is not a valid JSON value")


class SchedHandler(APIHandler):
    """Base of every jupyter_sched handler (see module docstring)."""

    auth_resource = AUTH_RESOURCE

    # ---- context -------------------------------------------------------------------------
    @property
    def sched(self) -> Any:
        """The running :class:`~.app.SchedApp` extension (settings key ``jupyter_sched``)."""
        return self.settings["jupyter_sched"]

    @property
    def services(self) -> Any:
        """The scheduler's :class:`~jupyter_sched.services.Services`."""
        return self.sched.services

    _sched_caller: Caller | None = None

    async def prepare(self) -> None:  # type: ignore[override]
        """Authenticate (jupyter_server), then resolve the caller once, off the event loop (it
        reads the quota set)."""
        await super().prepare()
        if self.current_user is not None and self._sched_caller is None:
            self._sched_caller = await self.call(self.sched.resolve_caller, self.current_user)

    @property
    def caller(self) -> Caller:
        """The admission step's :class:`Caller` of this request (resolved in :meth:`prepare`).

        Raises:
            AuthorizationError: no authenticated caller (``@web.authenticated`` refuses those first).
        """
        if self._sched_caller is None:
            raise AuthorizationError("this request is not authenticated", hint="send the server token",
                                     details={"credentials": "refused"})
        return self._sched_caller

    async def call(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """Run ``fn(*args, **kwargs)`` — a service call: store transactions, validation — on the
        extension's request threads, so the server's event loop stays free for other requests
        and streams while it waits for the database (``c.SchedApp.request_threads``)."""
        run = self.sched.bulk_off_loop if self._bulk else self.sched.off_loop
        result: R = await run(fn, *args, **kwargs)
        return result

    @property
    def _bulk(self) -> bool:
        """True for a GET of a route that lists many rows (:data:`BULK_READS`): it runs on the
        bulk request threads, so the quick answers (``config``, ``me``, ``inventory``, one job,
        a submit) never wait in line behind fifty panels' page reads (issue 17)."""
        if self.request.method != "GET":
            return False
        return self.request.path.rstrip("/").split("api/sched/", 1)[-1] in BULK_READS

    # ---- request parsing -----------------------------------------------------------------
    def json_value(self, *, optional: bool = False) -> Any:
        """The request body as decoded JSON (``{}`` when ``optional`` and the body is empty).

        Raises:
            ValidationError: field ``body`` when it is empty, not JSON or nested too deeply.
        """
        raw = self.request.body
        if not raw or not raw.strip():
            if optional:
                return {}
            raise ValidationError("request body is empty", field="body",
                                  hint='send a JSON object, e.g. {"gpus": 1, "command": ["python", "train.py"]}')
        try:
            value = json.loads(raw, parse_constant=_reject_constant)
        except json.JSONDecodeError as err:
            raise ValidationError(f"request body is not valid JSON (line {err.lineno}, column {err.colno})",
                                  field="body", hint="send a JSON object with Content-Type: application/json") from None
        except (ValueError, UnicodeDecodeError):
            raise ValidationError("request body is not valid JSON (not UTF-8 text, or NaN/Infinity)", field="body",
                                  hint="send a JSON object with Content-Type: application/json") from None
        except RecursionError:
            raise ValidationError("request body is nested too deeply", field="body",
                                  hint="send a flat JSON object of the documented fields") from None
        where = _lone_surrogate(value)
        if where is not None:  # "\ud800" escapes decode to text no UTF-8 client can print (stored, shown to all)
            raise ValidationError(f"{where} contains a lone UTF-16 surrogate (an invalid character)", field=where,
                                  hint="send valid Unicode text: surrogates only in pairs, as \\uD83D\\uDE00")
        return value

    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object (for routes without a request model yet).

        Raises:
            ValidationError: field ``body`` when it is empty, not JSON or not an object.
        """
        value = self.json_value()
        if not isinstance(value, dict):
            raise ValidationError(f"request body must be a JSON object (got {json_kind(value)})", field="body",
                                  hint="wrap the fields in {...}")
        return value

    def query_int(self, name: str, default: int, *, minimum: int = 0, maximum: int = 2**62) -> int:
        """An integer query argument in ``[minimum, maximum]`` (empty = ``default``).

        Raises:
            ValidationError: naming the argument.
        """
        raw = self.get_query_argument(name, None)
        if raw in (None, ""):
            return default
        try:
            value = int(str(raw))
        except ValueError:
            raise ValidationError(f"{name} must be a whole number (got {shown(raw)})", field=name,
                                  hint=f"give {name} as a whole number >= {minimum}") from None
        if not minimum <= value <= maximum:
            bound = f"at least {minimum}" if value < minimum else f"at most {maximum}"
            raise ValidationError(f"{name} must be {bound} (got {value})", field=name,
                                  hint=f"give a whole number from {minimum} to {maximum}, or leave {name} out "
                                       f"(default: {default})")
        return value

    def query_bool(self, name: str) -> bool:
        """A boolean query argument: ``1/true/yes`` or ``0/false/no`` (empty = false).

        Raises:
            ValidationError: any other value.
        """
        raw = (self.get_query_argument(name, None) or "").lower()
        if raw in ("", "0", "false", "no"):
            return False
        if raw in ("1", "true", "yes"):
            return True
        raise ValidationError(f"{name} must be true or false (got {raw!r})", field=name, hint="use true or false")

    def body(self, model: type[M], *, optional: bool = False) -> M:
        """The request body parsed as ``model`` (see :func:`jupyter_sched.services.models.parse`).

        Raises:
            ValidationError: naming ``body`` or the first bad field.
        """
        return parse(model, self.json_value(optional=optional))

    def query(self, model: type[M]) -> M:
        """The query arguments named by ``model``'s fields, parsed as ``model`` (empty = absent).

        Raises:
            ValidationError: naming the bad argument.
        """
        values = {name: value for name in model.model_fields
                  if (value := self.get_query_argument(name, None)) not in (None, "")}
        return parse(model, values, where="query")

    # ---- responses -----------------------------------------------------------------------
    def reply(self, answer: Any, status: int = 200) -> None:
        """Write ``answer`` (a response model, or plain JSON data) with ``status`` and finish."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(wire_json(answer))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """THE error mapping: SchedError → its status + JSON; HTTPError → its status; else 500."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, SchedError):
            status = http_status_for(exc)
            if status >= 500:  # may carry a driver's words: log them, answer ours (errors.py)
                reference = secrets.token_hex(4)
                self.log.error("jupyter_sched %s %s -> %s [reference %s]: %s", self.request.method, self.request.path,
                               status, reference, exc)
                body = exc.public_json(reference)
            else:
                body = exc.to_json()
                self._audit_refusal(exc)
        elif isinstance(exc, web.HTTPError):
            status = exc.status_code
            message = exc.log_message % exc.args if exc.log_message and exc.args else exc.log_message
            body = {"error": {"code": _HTTP_CODES.get(status, "http_error"),
                              "message": message or responses.get(status, "error"),
                              "field": None, "hint": _hint_for_status(status)}}
            if status in (401, 403):  # Jupyter's auth refused the request before it reached us
                body["error"].update(message=message or CREDENTIALS_REFUSED, details={"credentials": "refused"})
        else:
            status = 500
            body = {"error": {"code": "internal_error", "message": "internal server error",
                              "field": None, "hint": "the server log has the details; please report it"}}
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def _audit_refusal(self, err: SchedError) -> None:
        """Put a refusal the admission step did not record (a request model's or the spec's
        validation) on the audit log, off the loop: every refused request of an authenticated
        caller is audited, whichever layer refused it."""
        if err.audited or self._sched_caller is None or not isinstance(err, _REFUSALS):
            return
        route = self.request.path.split("api/sched/", 1)[-1][:80]
        self.sched.audit_refusal(self._sched_caller, err, request=f"{self.request.method} {route}")

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """SchedErrors are expected answers (one line); anything else keeps its traceback."""
        if isinstance(value, SchedError) and http_status_for(value) >= 500:
            return  # write_error logs it whole, with the reference the client gets
        if isinstance(value, SchedError):
            self.log.info("jupyter_sched %s %s -> %s: %s", self.request.method, self.request.path,
                          http_status_for(value), value)
            return
        super().log_exception(typ, value, tb)


def _lone_surrogate(value: Any, path: str = "body", depth: int = 0) -> str | None:
    """Dotted path (at most 80 characters) of the first string or key in decoded JSON ``value``
    holding a lone surrogate; None when there is none."""
    if isinstance(value, str):
        return path if _has_surrogate(value) else None
    if depth > 64:  # deeper bodies are refused by their models
        return None
    items: Any = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _has_surrogate(key):
            return path
        where = (key if path == "body" else f"{path}.{key}") if isinstance(key, str) else f"{path}[{key}]"
        found = _lone_surrogate(item, where[:80], depth + 1)
        if found is not None:
            return found
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _hint_for_status(status: int) -> str | None:
    if status == 403:
        return ("send the server token (Authorization: token <token>) or, from a browser session, "
                "the _xsrf cookie value in the X-XSRFToken header")
    if status == 404:
        return "check the URL against GET api/sched/config or openapi.yaml"
    if status == 405:
        return "see openapi.yaml for the methods of this route"
    return None
