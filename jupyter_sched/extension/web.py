"""The base of every REST handler: auth, the caller, request models in, response models out, THE error mapping (§7, §8).

Every handler derives from :class:`SchedHandler` (a jupyter_server ``APIHandler``), so every
method is ``@web.authenticated`` + ``@authorized`` on resource ``"sched"`` and XSRF is enforced
for cookie-authenticated browsers. A handler method reads like this::

    request = await self.body(SubmitJobRequest)               # parse a request model, off the loop when large
    job = await self.call(self.services.jobs.submit, self.caller, request)  # one service call, off the loop
    self.reply(job, status=201)                                          # serialise the response model

Errors are mapped in one place (:meth:`SchedHandler.write_error`): a
:class:`~jupyter_sched.errors.SchedError` becomes ``errors.http_status_for(err)`` +
``err.to_json()``; a tornado ``HTTPError`` (auth, XSRF, 404) keeps its status with the same JSON
shape; anything else is logged with its traceback and answered 500 with a generic JSON error
(no internals leak). Handlers hold no try/except ladders.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import secrets
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

from jupyter_server.base.handlers import APIHandler
from pydantic import BaseModel, ConfigDict
from tornado import web

from ..admission import Caller
from ..errors import AuthorizationError, SchedError, StoppingError, ValidationError, http_status_for, json_kind, shown
from ..hub.forward import FORWARDED_HEADER
from ..model.validation import LEASE_FIELDS, empty_field
from ..services.models import CancelJobRequest, WaitLeaseRequest, parse, wire_json
from ..services.models.base import dump_set
from ..services.models.definitions import DeleteDefinitionRequest
from ..services.models.jobs import SubmitJobQuery
from ..store.outage import said_by_store
from .arrival import Arrival
from .audit_names import is_audited_refusal, request_name
from .auth_once import ProvenOnceHandler
from .body_bounds import ON_LOOP_BYTES, TooLargeError, audit_too_large, decoded_body
from .floods import audit_flood
from .hangup import StopsOnHangUp
from .http_errors import Utf8Arguments, http_error_body, refused_host
from .job_tokens import JobTokenHandler
from .query_once import parsed_before, remember
from .request_log import logged_quietly
from .stopping import refuse_if_stopping

__all__ = ["AUTH_RESOURCE", "SchedHandler", "answer_body", "no_arguments"]

AUTH_RESOURCE = "sched"

_AUTH_QUERY = frozenset({"token", "_xsrf", "_"})
"""Query arguments Jupyter's auth (``?token=``), its XSRF check or a cache-buster may add to any
route: never refused as unknown."""

LATE_CALLER = frozenset({("GET", "config"), ("GET", "me"), ("GET", "inventory"), ("GET", "jobs"), ("GET", "queue"),
                         ("POST", "jobs"), ("POST", "leases")})
"""``(method, route)`` whose caller is resolved on the request thread of its one service call (or
never, for ``config``), not in a hop of its own: ``jupyter-sched status``, the polled pages, submits."""

HOLD_KICKS = frozenset({("POST", "jobs")})
"""``(method, route)`` whose engine kicks wait until the answer is written (not a lease: a
long-polling ``POST leases?wait_ms=`` waits for the very decision its kick starts)."""

WRITE_QUERIES: dict[tuple[str, str], type[BaseModel]] = {
    ("POST", "leases"): WaitLeaseRequest, ("DELETE", "jobs/{job_id}"): CancelJobRequest, ("POST", "jobs"): SubmitJobQuery,
    ("DELETE", "leases/{lease_id}"): CancelJobRequest, ("DELETE", "definitions/{definition_id}"): DeleteDefinitionRequest}
"""The query arguments of the routes that change something, as openapi.yaml names them; every other
POST, PUT, PATCH and DELETE takes none (checked before the handler runs: new user 14, N25 — ``POST
jobs?user=ana`` submitted as the caller, the argument ignored, while an unknown body field is a 400)."""

OFFERED: dict[tuple[str, str], frozenset[str]] = {("POST", "leases"): LEASE_FIELDS}
"""Body fields of a route that shares a request model but takes fewer of its fields (new user 14,
N20: ``POST leases`` listed ``command, script, …`` as the fields it knows)."""

_RESOLVED_ON_CALL = cast(Caller, object())
"""What :attr:`SchedHandler.caller` stands for until :meth:`SchedHandler.call` resolves it."""

BULK_READS = frozenset({"jobs", "leases", "queue", "audit", "usage", "usage/report", "usage/waste",
                        "telemetry/history", "metrics", "definitions"})
"""Routes whose GET lists many rows: served on their own request threads (:attr:`SchedHandler._bulk`)."""

M = TypeVar("M", bound=BaseModel)


class _NoArguments(BaseModel):
    """The query of a route that takes no arguments (:meth:`SchedHandler.no_query`)."""

    model_config = ConfigDict(frozen=True)


no_arguments: type[BaseModel] = _NoArguments
"""The request model :meth:`SchedHandler.no_query` parses a route's query as."""
R = TypeVar("R")


class SchedHandler(StopsOnHangUp, JobTokenHandler, Arrival, Utf8Arguments, ProvenOnceHandler, APIHandler):
    """Base of every jupyter_sched handler (see module docstring)."""

    auth_resource = AUTH_RESOURCE

    # ---- context -------------------------------------------------------------------------
    @property
    def sched(self) -> Any:
        """The running :class:`~.app.SchedApp` extension (settings key ``jupyter_sched``)."""
        return self.settings["jupyter_sched"]

    @property
    def kernels_checked(self) -> bool:
        """Sent on by a user server, which checked the request's kernel_id against its kernels; or
        a hub's central service, which owns no kernels and checks a lease's kernel_id against its
        users' kernel reports instead (``HubSchedApp.admit_lease``): the kernel states it holds for
        the idle rules are no list of "this server's kernels"."""
        return FORWARDED_HEADER in self.request.headers or not getattr(self.sched, "owns_kernels", True)

    @property
    def services(self) -> Any:
        """The scheduler's :class:`~jupyter_sched.services.Services`."""
        return self.sched.services

    _sched_caller: Caller | None = None
    _decoded: Any = None  # the body as decoded JSON, once decoded
    _held_kicks: tuple[tuple[str, str | None], ...] = ()

    async def prepare(self) -> None:  # type: ignore[override]
        """Authenticate (jupyter_server), then resolve the caller once, off the event loop (it
        reads the quota set) — on the thread of the route's one service call for the polled
        routes of :data:`LATE_CALLER` (one hop to a request thread instead of two, issue 17). A
        stopping server answers 503 first (:func:`.stopping.refuse_if_stopping`, new user 24, N7)."""
        refuse_if_stopping(self.sched)
        await super().prepare()
        if self.current_user is not None and self._sched_caller is None and not self._late:
            self._sched_caller = await self.call(self.sched.resolve_caller, self.current_user)
        if self.current_user is not None and self.request.method not in ("GET", "HEAD", "OPTIONS"):
            self.query(WRITE_QUERIES.get((self.request.method, self._template), _NoArguments))

    @property
    def _template(self) -> str:
        """The route as openapi.yaml writes it: ``jobs/{job_id}`` for ``jobs/j-1``."""
        route = self._route
        for name, value in (getattr(self, "path_kwargs", None) or {}).items():  # unset: a method tornado refuses (verify39 V2)
            if value:
                route = route.replace(str(value), "{" + name + "}", 1)
        return route

    @property
    def _route(self) -> str:
        """The path under ``api/sched/`` (``jobs``, ``queue``, ``jobs/<id>``...)."""
        return self.request.path.rstrip("/").split("api/sched/", 1)[-1]

    @property
    def _late(self) -> bool:
        return (self.request.method, self._route) in LATE_CALLER

    @property
    def caller(self) -> Caller:
        """The admission step's :class:`Caller` of this request (resolved in :meth:`prepare`; on a
        route of :data:`LATE_CALLER`, a stand-in :meth:`call` resolves on the request thread).

        Raises:
            AuthorizationError: no authenticated caller (``@web.authenticated`` refuses those first).
        """
        if self._sched_caller is None:
            if self.current_user is not None and self._late:
                return _RESOLVED_ON_CALL
            raise AuthorizationError("this request is not authenticated", hint="send the server token",
                                     details={"credentials": "refused"})
        return self._sched_caller

    def caller_key(self) -> tuple[str, bool, tuple[str, ...] | None] | None:
        """The caller's name, admin flag and hub groups from the identity step alone (no store: a kept
        answer is served on the loop with it); None when refused there (the service call answers as always)."""
        try:
            return None if self.current_user is None else cast(Any, self.sched).caller_key(self.current_user)
        except SchedError:
            return None

    def own_name(self) -> str | None:
        """The caller's name from the identity step alone (:meth:`caller_key`)."""
        key = self.caller_key()
        return None if key is None else key[0]

    async def call(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """Run ``fn(*args, **kwargs)`` — a service call: store transactions, validation — on the
        extension's request threads, so the server's event loop stays free for other requests
        and streams while it waits for the database (``c.SchedApp.request_threads``). The
        :attr:`caller` stand-in among ``args`` is resolved there first."""
        late = any(arg is _RESOLVED_ON_CALL for arg in args)
        run, fn = self.pooled_run(fn, bulk=self._bulk)  # bounded per user (red27 R5, red37 R3)
        if late:
            return cast(R, await run(self._on_thread, fn, self.current_user if late else None, *args, **kwargs))
        return cast(R, await run(fn, *args, **kwargs))

    def _on_thread(self, fn: Callable[..., R], user: Any, *args: Any, **kwargs: Any) -> R:
        """On a request thread: resolve the caller of ``user`` (when given) in place of the
        stand-in, and hold the engine kicks ``fn`` makes until the answer is written
        (:meth:`on_finish`; a decision started at once would compete with writing it)."""
        if user is not None:
            caller = self._sched_caller = self.sched.resolve_caller(user)
            args = tuple(caller if arg is _RESOLVED_ON_CALL else arg for arg in args)
        context: Any = getattr(self.services, "ctx", None)
        if (self.request.method, self._route) not in HOLD_KICKS or not hasattr(context, "holding_kicks"):
            return fn(*args, **kwargs)
        with context.holding_kicks() as held:
            result = fn(*args, **kwargs)
        self._held_kicks = (*self._held_kicks, *held)
        return result

    def on_finish(self) -> None:
        """The answer is written: send the engine kicks its service call held (:meth:`_on_thread`)."""
        super().on_finish()
        if self._held_kicks:
            held, self._held_kicks = list(self._held_kicks), ()
            self.services.ctx.send_kicks(held)

    @property
    def _bulk(self) -> bool:
        """True for a GET of a route that lists many rows (:data:`BULK_READS`): it runs on the
        bulk request threads, so the quick answers (``config``, ``me``, ``inventory``, one job,
        a submit) never wait in line behind fifty panels' page reads (issue 17)."""
        return self.request.method == "GET" and self._route in BULK_READS

    # ---- request parsing -----------------------------------------------------------------
    def _json_now(self, optional: bool) -> Any:
        """The request body as decoded JSON, decoded here (:func:`.body_bounds.decoded_body`)."""
        if not (raw := self.request.body) or not raw.strip():
            if optional:
                return {}
            job_route = self.request.path.rstrip("/").endswith(("/jobs", "/dryrun", "/leases"))
            raise ValidationError("request body is empty", field="body",
                                  hint='send a JSON object, e.g. {"gpus": 1, "command": ["python", "train.py"]}'
                                  if job_route else "send a JSON object of this route's fields (see openapi.yaml)")
        self._decoded = decoded_body(raw)
        return self._decoded

    async def _body_work(self, work: Callable[[], R]) -> R:
        """``work()`` — a body's decode, walks and model — on the loop for a body of at most
        :data:`.body_bounds.ON_LOOP_BYTES`, else on a request thread in the caller's line (red38 R1:
        a 16 MiB body of tiny objects held the loop ~4.6 s; now it waits behind its sender's own calls)."""
        if len(self.request.body or b"") <= ON_LOOP_BYTES:
            return work()
        run, fn = self.pooled_run(work, bulk=False)
        return cast(R, await run(fn))

    async def json_value(self, *, optional: bool = False) -> Any:
        """The request body as decoded JSON (``{}`` when ``optional`` and the body is empty), decoded off
        the loop when large (:meth:`_body_work`).

        Raises:
            TooLargeError: field ``body``, more JSON items than :data:`.body_bounds.MAX_BODY_ITEMS` (413).
            ValidationError: field ``body`` when it is empty, not JSON or nested too deeply.
        """
        return await self._body_work(functools.partial(self._json_now, optional))

    async def body_parsed(self, convert: Callable[[Any], R]) -> R:
        """``convert(`` the body as decoded JSON ``)``: a route's own parse, off the loop with the decode when large.

        Raises:
            ValidationError: as :meth:`json_value`, or as ``convert`` raises.
        """
        return await self._body_work(lambda: convert(self._json_now(False)))

    async def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object (for routes without a request model yet).

        Raises:
            ValidationError: field ``body`` when it is empty, not JSON or not an object.
        """
        value = await self.json_value()
        if not isinstance(value, dict):
            raise ValidationError(f"request body must be a JSON object (got {json_kind(value)})", field="body",
                                  hint="wrap the fields in {...}")
        return value

    async def body(self, model: type[M], *, optional: bool = False) -> M:
        """The request body parsed as ``model`` (see :func:`jupyter_sched.services.models.parse`;
        an unknown field's hint lists what this route takes: :data:`OFFERED`), decoded and parsed off
        the loop when large (:meth:`_body_work`).

        Raises:
            ValidationError: naming ``body`` or the first bad field (:class:`TooLargeError`, 413: too many items).
        """
        offered = OFFERED.get((self.request.method, self._template))
        return await self._body_work(lambda: parse(model, self._json_now(optional), offered=offered))

    def query(self, model: type[M]) -> M:
        """The query arguments named by ``model``'s fields, parsed as ``model`` (one given empty is
        refused as an empty body field is: ``jobs?state=`` answered every job, newuser 13-17).

        A query text parsed before is answered from :mod:`.query_once` (issue 17: the polls').

        Raises:
            ValidationError: naming the bad argument, or an argument the route does not take
                (``GET queue?state=running`` was answered with the whole queue).
        """
        if (kept := parsed_before(model, self.request.query)) is not None:
            return kept
        arguments = self.request.query_arguments
        # JupyterLab's ServerConnection appends a cache buster to GETs made with cache: 'no-store'
        # (`?1796197047291`: digits, no value): it is the panel's, not a mistyped argument
        unknown = sorted(name for name in set(arguments) - set(model.model_fields) - _AUTH_QUERY
                         if not (name.isdigit() and all(value == b"" for value in arguments[name])))
        if unknown:  # refused, never ignored: queue?state=running must not answer the whole queue
            route = self.request.path.rstrip("/").rsplit("api/sched/", 1)[-1]
            if model.model_fields:
                takes = "takes: " + ", ".join(sorted(model.model_fields))
            else:  # a write's fields travel in its body (POST jobs?user=ana was read as bob's submit)
                takes = "takes no query arguments" + ("; send every field in the body" if self.request.method in (
                    "POST", "PUT", "PATCH") else "")
            name = unknown[0] if len(unknown[0]) <= 80 else unknown[0][:77] + "..."  # user input: never whole
            raise ValidationError(f"unknown query argument {shown(name)}", field=name,
                                  hint=f"{self.request.method} {route[:80]} {takes}")
        if empty := next((name for name in sorted(model.model_fields)
                          if name in arguments and not any(value.strip() for value in arguments[name])), None):
            examples = model.model_fields[empty].examples
            example = f" (e.g. {empty}={examples[0]})" if examples else ""
            raise ValidationError(empty_field(empty).message, field=empty,
                                  hint=f"give {empty} a value{example}, or leave it out")
        values = {name: value for name in model.model_fields
                  if (value := self.get_query_argument(name, None)) is not None}
        return remember(model, self.request.query, arguments, parse(model, values, where="query"))

    def no_query(self, hint: str = "") -> None:
        """Refuse any query argument on a route that takes none (red team 6: ``GET events?since=abc``
        and ``GET inventory?x=1`` answered as if it were not there).

        Raises:
            ValidationError: naming the argument; ``hint`` (when given) says what to use instead.
        """
        try:
            self.query(_NoArguments)
        except ValidationError as refused:
            if hint:
                raise ValidationError(refused.message, field=refused.field, hint=hint) from None
            raise

    # ---- responses -----------------------------------------------------------------------
    _body: _Body | None = None
    _outage = False  # answered 503 for an unreachable database or a stopping server (logged in one line)

    def reply(self, answer: Any, status: int = 200) -> None:
        """Write ``answer`` (a response model, or plain JSON data) with ``status`` and finish."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        body = self._body = _written(answer)
        self.finish(body.data)

    def compute_etag(self) -> str | None:
        """Tornado's ETag of a GET answer — the SHA-1 of its body, so a client that sends it back
        in ``If-None-Match`` gets ``304 Not Modified`` and no body while the answer is unchanged —
        computed once per answer object (:func:`_written`) instead of once per request: fifty
        pollers given the same kept page hashed its ~40 kB fifty times (issue 17). The same value
        tornado computes; any other body (an error, a stream) is left to tornado."""
        body = self._body
        buffer = getattr(self, "_write_buffer", None)
        if body is None or not buffer or len(buffer) != 1 or buffer[0] is not body.data:
            return super().compute_etag()
        return body.tag()

    def _log(self) -> None:
        """Jupyter's request log, without building a line nobody will see (:mod:`.request_log`)."""
        if not logged_quietly(self, self.log):
            super()._log()

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """THE error mapping: SchedError → its status + JSON; HTTPError → its status; else 500."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, SchedError):
            status = http_status_for(exc)
            if (after := exc.details.get("retry_after_s")) is not None:  # a submit rate (N11), a stopping server (N7)
                self.set_header("Retry-After", str(after))  # RFC 9110 §10.2.3: whole seconds
            if status >= 500:  # may carry a driver's words: log them, answer ours (errors.py)
                reference = secrets.token_hex(4)
                stopping, outage = isinstance(exc, StoppingError), said_by_store(exc)
                self._outage = outage or stopping  # one line, no headers at ERROR (B6; n11: restarts; N3: full disks)
                log = self.log.info if stopping else self.log.warning if outage else self.log.error  # a stop is no fault (N7)
                log("jupyter_sched %s %s -> %s [reference %s]: %s", self.request.method, self.request.path,
                    status, reference, exc)
                body = exc.public_json(reference)
            else:
                body = exc.to_json()
                self._audit_refusal(exc)  # a busy answer is no refusal there: audited only by its rule (N4)
                if status == 429 and not exc.audited and (who := self._sched_caller) is not None:  # R10: 1 row/min
                    audit_flood(self, who.user, code="busy", request=f"{self.request.method} {self._route}",
                                message=f"{who.user} was answered 429 (busy): {exc.message}")
        elif isinstance(exc, web.HTTPError):  # auth, XSRF, a method the route does not take (405 names them)
            status = exc.status_code
            message = exc.log_message % exc.args if exc.log_message and exc.args else exc.log_message
            body, headers = http_error_body(status, message, method=self.request.method or "", route=self._route,
                                            handler=type(self), template=self._template, host=refused_host(self, status),
                                            token_page=str(getattr(self.settings.get("jupyter_sched"), "hub_token_page", "") or ""))
            for name, value in headers.items():
                self.set_header(name, value)
        else:
            status = 500
            body = {"error": {"code": "internal_error", "message": "internal server error",
                              "field": None, "hint": "the server log has the details; please report it"}}
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def _audit_refusal(self, err: SchedError) -> None:
        """Put a refusal the admission step did not record (a request model's or the spec's validation) on
        the audit log, off the loop: every refusal of an authenticated caller is audited, whichever layer (is_audited_refusal)."""
        if isinstance(err, TooLargeError):  # a flood: one row a minute per user, not one per body (red38 R1)
            return audit_too_large(self, err)
        if err.audited or not is_audited_refusal(self.request.method or "", err):
            return
        who = self._sched_caller or (self.current_user if self._late else None)  # refused before its call
        if who is None:
            return
        method, lease = self.request.method or "", False  # the services' name of the request (new user 15, N8)
        if (method, self._template) == ("POST", "jobs"):
            with contextlib.suppress(ValueError, AttributeError, RecursionError):  # refused for it already
                value = self._decoded if len(self.request.body or b"") > ON_LOOP_BYTES else json.loads(
                    self.request.body or b"{}")  # a large body: never decoded again on the loop (red38 R1)
                lease = value.get("kind") == "lease"
        self.sched.audit_refusal(who, err, request=request_name(method, self._template, lease=lease))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """SchedErrors are expected answers (one line); anything else keeps its traceback."""
        if isinstance(value, SchedError) and http_status_for(value) >= 500:
            return  # write_error logs it whole, with the reference the client gets
        if isinstance(value, SchedError):  # a caller that named nobody says so: request_log.Repeats (verify39 V4)
            self.log.info("jupyter_sched %s %s -> %s%s: %s", self.request.method, self.request.path, http_status_for(value),
                          " (nobody named)" if getattr(self, "_current_user", None) is None else "", value)
            return
        super().log_exception(typ, value, tb)


class _Body:
    """The JSON text of one answer object, and its ETag once a GET asked for it."""

    __slots__ = ("data", "etag")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.etag: str | None = None

    def tag(self) -> str:
        """The ETag tornado computes for this body (the SHA-1 of its bytes, quoted), computed once."""
        if self.etag is None:
            self.etag = f'"{hashlib.sha1(self.data).hexdigest()}"'
        return self.etag


_WRITTEN: dict[int, tuple[weakref.ref[Any], _Body]] = {}
"""The :class:`_Body` of every live answer object written so far, by identity; an entry leaves with
its answer (weak reference): the JSON of exactly the answers still held (kept ones, ones being written)."""


def answer_body(answer: Any) -> _Body:
    """The JSON bytes (``.data``) and ETag (``.tag()``) :meth:`SchedHandler.reply` writes for ``answer``."""
    return _written(answer)


def _written(answer: Any) -> _Body:
    """:func:`wire_json` of ``answer``, once per answer object: a page the services keep while its
    jobs are unchanged (:mod:`jupyter_sched.services.readcache`) is the same frozen model for
    every poller, so it is serialised once, not fifty times.

    Kept while the answer lives (a weak reference), not in a fixed number of slots: a 16-answer
    LRU lost the kept pages under load (issue 17: one-off submit answers pushed them out; 6.6 % of
    the GIL in ``status_bench``'s loaded phase went to serialising pages again). An entry cannot
    outlive its answer, so an ``id`` is never matched to a later object that reuses it."""
    if not isinstance(answer, BaseModel):
        return _Body(wire_json(answer))
    key = id(answer)
    kept = _WRITTEN.get(key)
    if kept is not None and kept[0]() is answer:
        return kept[1]
    body = _Body(_serialised(answer))

    def forget(ref: weakref.ref[Any], key: int = key) -> None:  # runs when the answer is freed, on any thread
        entry = _WRITTEN.get(key)
        if entry is not None and entry[0] is ref:
            _WRITTEN.pop(key, None)

    _WRITTEN[key] = (weakref.ref(answer, forget), body)
    return body


def _serialised(answer: BaseModel) -> bytes:
    """:func:`wire_json` of ``answer`` — or, for a list whose items many answers share
    (``items_shared``, the queue's lines), the kept JSON of each item joined: the same bytes
    (items written as the list writes them, ``exclude_unset``; no whitespace), but a new 50-line
    queue page (~120 kB) serialises only its changed lines (whole pages: ~5 % of the GIL under
    ``status_bench``'s pollers). Item JSON is kept while the items live (the service keeps 5,000)."""
    kind = type(answer)
    if getattr(kind, "items_shared", False) and getattr(kind, "to_wire", None) is dump_set:
        items = getattr(answer, "root", None)
        if isinstance(items, list) and all(getattr(type(item), "to_wire", None) is dump_set for item in items):
            return b"[" + b",".join([_written(item).data for item in items]) + b"]"
    return wire_json(answer)
