"""REST handlers of ``{base_url}api/sched/``: parse → one service call → serialize (STYLE §8).

Every handler derives from :class:`SchedHandler` (a jupyter_server ``APIHandler``), so every
method is ``@web.authenticated`` + ``@authorized`` on resource ``"sched"``, XSRF is enforced for
cookie-authenticated browsers, and errors are mapped in one place
(:meth:`SchedHandler.write_error`): a :class:`~jupyter_sched.errors.SchedError` becomes
``errors.http_status_for(err)`` + ``err.to_json()``; a tornado ``HTTPError`` (auth, XSRF, 404)
keeps its status with the same JSON shape; anything else is logged with its traceback and
answered 500 with a generic JSON error (no internals leak).

Read-only and push endpoints set ``_track_activity = False`` so panel polling never keeps an
idle server alive; running work reports activity through ``SchedApp.current_activity()``.
"""

from __future__ import annotations

import asyncio
import json
from http.client import responses
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from tornado.iostream import StreamClosedError

from ..accounting import report_csv
from ..accounting.store_report import usage_report_for
from ..errors import AuthorizationError, NotFoundError, SchedError, ValidationError, http_status_for
from .identity import Identity

__all__ = ["HANDLERS", "SchedHandler"]

AUTH_RESOURCE = "sched"
_HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 409: "conflict", 413: "too_large", 422: "unprocessable"}
_MAX_LOG_LIMIT = 1 << 20  # bytes per logs call: bounded memory per request
_FOLLOW_WAIT_S = 25.0     # long-poll ceiling for logs?follow=true, under proxy idle timeouts
_FOLLOW_POLL_S = 0.25
_MAX_QUERY_INT = 2**62
"""Largest integer query argument accepted (offsets and limits fit in 64-bit file offsets)."""


def _reject_constant(name: str) -> Any:
    """``json.loads`` hook: ``NaN``/``Infinity`` are not JSON and no field accepts them."""
    raise ValueError(f"{name} is not a valid JSON value")


class SchedHandler(APIHandler):
    """Base of every jupyter_sched handler: auth resource, identity, parsing, one error mapping."""

    auth_resource = AUTH_RESOURCE

    # ---- context -------------------------------------------------------------------------
    @property
    def sched(self) -> Any:
        """The running :class:`SchedApp` extension (settings key ``jupyter_sched``)."""
        return self.settings["jupyter_sched"]

    @property
    def service(self) -> Any:
        """The engine's ``SchedulerService``."""
        return self.sched.service

    @property
    def identity(self) -> Identity:
        """The caller's scheduler identity (embedded: the server owner)."""
        resolved: Identity = self.sched.resolve_identity(self.current_user)
        return resolved

    def require_admin(self, action: str) -> Identity:
        """Return the identity if it is an admin.

        Raises:
            AuthorizationError: the caller is not an admin.
        """
        ident = self.identity
        if not ident.is_admin:
            raise AuthorizationError(f"{action} needs admin rights; {ident.name} is not an admin",
                                     hint="ask the server owner or a hub admin")
        return ident

    # ---- request parsing -----------------------------------------------------------------
    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object.

        Raises:
            ValidationError: field ``body`` when it is empty, not JSON or not an object.
        """
        raw = self.request.body
        if not raw:
            raise ValidationError("request body is empty", field="body",
                                  hint='send a JSON object, e.g. {"gpus": 1, "command": ["python", "train.py"]}')
        try:
            value = json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, UnicodeDecodeError) as err:
            raise ValidationError(f"request body is not valid JSON ({err})", field="body",
                                  hint="send a JSON object with Content-Type: application/json") from None
        except RecursionError:
            raise ValidationError("request body is nested too deeply", field="body",
                                  hint="send a flat JSON object of the documented fields") from None
        if not isinstance(value, dict):
            raise ValidationError(f"request body must be a JSON object (got {type(value).__name__})",
                                  field="body", hint='wrap the fields in {...}')
        return value

    def query_int(self, name: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
        """An integer query argument.

        Raises:
            ValidationError: naming the argument when it is not an integer in range.
        """
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ValidationError(f"{name} must be an integer (got {raw!r})", field=name,
                                  hint=f"give {name} as a whole number >= {minimum}") from None
        if maximum is None:
            maximum = _MAX_QUERY_INT  # beyond this no offset or limit means anything
        if value < minimum or value > maximum:
            upper = f" and <= {maximum}" if maximum is not None else ""
            raise ValidationError(f"{name} must be >= {minimum}{upper} (got {value})", field=name,
                                  hint=f"give {name} between {minimum} and {maximum if maximum is not None else 'any'}")
        return value

    def query_bool(self, name: str) -> bool:
        """A boolean query argument (``1/true/yes`` or ``0/false/no``).

        Raises:
            ValidationError: any other value.
        """
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return False
        lowered = raw.lower()
        if lowered in ("1", "true", "yes"):
            return True
        if lowered in ("0", "false", "no"):
            return False
        raise ValidationError(f"{name} must be true or false (got {raw!r})", field=name, hint="use true or false")

    def query_str(self, name: str) -> str | None:
        """An optional string query argument (empty means absent)."""
        raw = self.get_query_argument(name, None)
        return raw or None

    # ---- responses -----------------------------------------------------------------------
    def reply(self, body: Any, status: int = 200) -> None:
        """Write ``body`` as JSON with ``status`` and finish."""
        self.set_status(status)
        self.finish(json.dumps(body, default=str))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """THE error mapping: SchedError → its status + JSON; HTTPError → its status; else 500."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, SchedError):
            status, body = http_status_for(exc), exc.to_json()
        elif isinstance(exc, web.HTTPError):
            status = exc.status_code
            message = exc.log_message % exc.args if exc.log_message and exc.args else exc.log_message
            body = {"error": {"code": _HTTP_CODES.get(status, "http_error"),
                              "message": message or responses.get(status, "error"),
                              "field": None, "hint": _hint_for_status(status)}}
        else:
            status = 500
            body = {"error": {"code": "internal_error", "message": "internal server error",
                              "field": None, "hint": "the server log has the details; please report it"}}
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """SchedErrors are expected answers (one line); anything else keeps its traceback."""
        if isinstance(value, SchedError):
            self.log.info("jupyter_sched %s %s -> %s: %s", self.request.method, self.request.path,
                          http_status_for(value), value)
            return
        super().log_exception(typ, value, tb)


def _hint_for_status(status: int) -> str | None:
    if status == 403:
        return ("send the server token (Authorization: token <token>) or, from a browser session, "
                "the _xsrf cookie value in the X-XSRFToken header")
    if status == 404:
        return "check the URL against GET api/sched/config or openapi.yaml"
    if status == 405:
        return "see openapi.yaml for the methods of this route"
    return None


# ---- resources ---------------------------------------------------------------------------


class ConfigHandler(SchedHandler):
    """``GET config``: what this backend supports (read by the panel and the CLI)."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.reply(self.sched.capabilities())


class MeHandler(SchedHandler):
    """``GET me``: identity, admin flag, usage against quota."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        ident = self.identity
        body = dict(self.service.me(ident.name))
        body.setdefault("user", ident.name)
        body["is_admin"] = ident.is_admin
        self.reply(body)


class InventoryHandler(SchedHandler):
    """``GET inventory``: nodes and GPUs (simulated ones labelled), NVML status (case 015)."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.reply(self.service.inventory())


class JobsHandler(SchedHandler):
    """``GET jobs`` (own jobs; admins may pass ``user`` or ``all=true``) and ``POST jobs`` (submit, 201)."""

    kind: str | None = None

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return self.request.method != "GET"

    @web.authenticated
    @authorized
    def get(self) -> None:
        ident = self.identity
        wanted = self.query_str("user")
        everyone = self.query_bool("all")
        if (everyone or (wanted and wanted != ident.name)) and not ident.is_admin:
            raise AuthorizationError("only admins may list other users' jobs", field="all" if everyone else "user",
                                     hint="leave out user and all to list your own jobs")
        user = None if everyone else (wanted or ident.name)
        self.reply(self.service.list_jobs(user=user, state=self.query_str("state"),
                                          kind=self.kind or self.query_str("kind")))

    @web.authenticated
    @authorized
    def post(self) -> None:
        body = self.json_body()
        self.reply(self.service.submit(body, user=self.identity.name, kind=self.kind), status=201)


class LeasesHandler(JobsHandler):
    """``GET|POST leases``: interactive GPUs bound to a kernel (jobs of kind ``lease``)."""

    kind = "lease"


class JobHandler(SchedHandler):
    """``GET jobs/{id}`` and ``DELETE jobs/{id}`` (cancel). Others' jobs answer 404."""

    kind: str | None = None

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return self.request.method != "GET"

    def _check_kind(self, job: dict[str, Any], job_id: str) -> dict[str, Any]:
        if self.kind is not None and job.get("kind") != self.kind:
            raise NotFoundError(f"no {self.kind} {job_id}", field="id", hint=f"list yours with GET {self.kind}s")
        return job

    @web.authenticated
    @authorized
    def get(self, job_id: str) -> None:
        ident = self.identity
        job = self.service.get_job(job_id, user=ident.name, is_admin=ident.is_admin)
        self.reply(self._check_kind(job, job_id))

    @web.authenticated
    @authorized
    def delete(self, job_id: str) -> None:
        ident = self.identity
        if self.kind is not None:
            self._check_kind(self.service.get_job(job_id, user=ident.name, is_admin=ident.is_admin), job_id)
        self.reply(self.service.cancel(job_id, user=ident.name, is_admin=ident.is_admin))


class LeaseHandler(JobHandler):
    """``GET|DELETE leases/{id}``."""

    kind = "lease"


class LogsHandler(SchedHandler):
    """``GET jobs/{id}/logs?offset=&limit=&follow=``: a bounded slice of the job's log.

    ``follow=true`` long-polls: it answers as soon as new text exists or the job finished, or
    after 25 s with empty text, so a client loops with ``offset = next_offset``.
    """

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self, job_id: str) -> None:
        ident = self.identity
        offset = self.query_int("offset", 0)
        limit = self.query_int("limit", 65536, minimum=1, maximum=_MAX_LOG_LIMIT)
        follow = self.query_bool("follow")
        chunk = self.service.logs(job_id, user=ident.name, is_admin=ident.is_admin, offset=offset, limit=limit)
        waited = 0.0
        while follow and not chunk["text"] and not chunk["finished"] and waited < _FOLLOW_WAIT_S:
            if self._client_gone:
                return
            await asyncio.sleep(_FOLLOW_POLL_S)
            waited += _FOLLOW_POLL_S
            chunk = self.service.logs(job_id, user=ident.name, is_admin=ident.is_admin, offset=offset, limit=limit)
        self.reply(chunk)

    _client_gone = False

    def on_connection_close(self) -> None:
        self._client_gone = True


class DryrunHandler(SchedHandler):
    """``POST dryrun``: would this fit, where, and when — without enqueuing."""

    _track_activity = False

    @web.authenticated
    @authorized
    def post(self) -> None:
        body = self.json_body()
        self.reply(self.service.dryrun(body, user=self.identity.name))


class KeepaliveHandler(SchedHandler):
    """``POST leases/{id}/keepalive`` with optional ``{"seconds": n}``: keep an idle lease's GPUs.

    The one extension per idle period, up to the admin's ``idle_keepalive_max_s`` (the default).
    """

    _track_activity = False

    @web.authenticated
    @authorized
    def post(self, lease_id: str) -> None:
        body = self.json_body() if self.request.body.strip() else {}
        unknown = sorted(set(body) - {"seconds"})
        if unknown:
            raise ValidationError(f"unknown field {unknown[0]!r}", field=unknown[0], hint='send {} or {"seconds": 3600}')
        seconds = body.get("seconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not 0 < seconds < 10**7):
            raise ValidationError(f"seconds must be a positive number (got {seconds!r})", field="seconds",
                                  hint="e.g. 3600, at most the admin's keepalive limit")
        self.reply(self.service.keepalive(lease_id, user=self.identity.name,
                                          seconds=None if seconds is None else float(seconds)))


class TelemetryHandler(SchedHandler):
    """``GET telemetry?gpu=|job=|lease=&since=&limit=``: current and recent utilization per GPU."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        ident = self.identity
        self.reply(self.service.telemetry(
            user=ident.name, is_admin=ident.is_admin, gpu=self.query_str("gpu"), job=self.query_str("job"),
            lease=self.query_str("lease"), since=self.query_str("since"),
            limit=self.query_int("limit", 600, minimum=1, maximum=3600)))


class QueueHandler(SchedHandler):
    """``GET queue``: pending and running work with position, reason and ETA."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.reply(self.service.queue(user=self.identity.name))


class QuotasHandler(SchedHandler):
    """``GET quotas`` (everyone) and ``PUT quotas`` (admins; audited with the actor)."""

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return self.request.method != "GET"

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.reply(self.service.quotas())

    @web.authenticated
    @authorized
    def put(self) -> None:
        ident = self.require_admin("changing quotas")
        body = self.json_body()
        self.reply(self.service.set_quotas(body, actor=ident.name))


class IdlePolicyHandler(SchedHandler):
    """``GET idle-policy`` (everyone) and ``PUT idle-policy`` (admins; audited old→new with the actor)."""

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return self.request.method != "GET"

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.reply(self.service.idle_policy())

    @web.authenticated
    @authorized
    def put(self) -> None:
        ident = self.require_admin("changing the idle policy")
        body = self.json_body()
        self.reply(self.service.set_idle_policy(body, actor=ident.name))


class ProfilesHandler(SchedHandler):
    """``GET profiles``: the admin-defined request templates."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.reply(self.service.profiles())


class AuditHandler(SchedHandler):
    """``GET audit?limit=&since=&until=&user=&job_id=&action=`` (admins): the decision log, newest first."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.require_admin("reading the audit log")
        self.reply(self.service.audit(limit=self.query_int("limit", 100, minimum=1, maximum=10_000),
                                      since=self.query_str("since"), until=self.query_str("until"),
                                      user=self.query_str("user"), job_id=self.query_str("job_id"),
                                      action=self.query_str("action")))


class UsageHandler(SchedHandler):
    """``GET usage?by=&since=&until=&all=``: GPU-seconds rolled up (own usage; admins: ``all=true``)."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        ident = self.identity
        everyone = self.query_bool("all")
        if everyone and not ident.is_admin:
            raise AuthorizationError("only admins may read everyone's usage", field="all",
                                     hint="leave out all to read your own usage")
        self.reply(self.service.usage(user=None if everyone else ident.name, by=self.query_str("by") or "user",
                                      since=self.query_str("since"), until=self.query_str("until")))


class UsageReportHandler(SchedHandler):
    """``GET usage/report?by=&period=&since=&until=&all=&format=``: the accounting report —
    allocated and utilized GPU-hours, telemetry coverage, efficiency, cost (``gpu_prices`` of the
    app when it has them, else null); ``format=csv`` answers ``text/csv``. Own usage; admins:
    ``all=true``. See :mod:`jupyter_sched.accounting.store_report`."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        ident = self.identity
        everyone = self.query_bool("all")
        if everyone and not ident.is_admin:
            raise AuthorizationError("only admins may read everyone's usage", field="all",
                                     hint="leave out all to read your own usage")
        fmt = self.query_str("format") or "json"
        if fmt not in ("json", "csv"):
            raise ValidationError(f"unknown format {fmt!r}", field="format", hint="use json or csv")
        by = tuple(k.strip() for k in (self.query_str("by") or "user").split(",") if k.strip())
        prices = dict(getattr(self.sched, "gpu_prices", {}) or {}) or None
        rows = usage_report_for(self.service, user=None if everyone else ident.name, by=by,
                                since=self.query_str("since"), until=self.query_str("until"),
                                period=self.query_str("period") or "month", prices=prices)
        if fmt == "csv":
            self.set_header("Content-Type", "text/csv; charset=utf-8")
            self.finish(report_csv(rows, by=by))
            return
        self.reply(rows)


class EventsHandler(SchedHandler):
    """``GET events``: Server-Sent Events of the service's event stream.

    Each event is ``event: <type>`` + ``data: <json>``; a comment line every
    ``events_keepalive_s`` keeps proxies from closing an idle stream. Users see their own
    job/lease events (admins all); inventory and telemetry go to everyone. A client that falls
    ``events_queue_size`` events behind is disconnected.
    """

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        ident = self.identity
        hub = self.sched.event_hub
        sub = hub.subscribe()
        self._subscription = sub
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        serial = 0
        try:
            self.write(": jupyter_sched event stream\nretry: 3000\n\n")
            await self.flush()
            while True:
                try:
                    event = await sub.next(self.sched.events_keepalive_s)
                except EOFError:
                    break
                if event is None:
                    self.write(": keepalive\n\n")
                elif _visible(event, ident):
                    serial += 1
                    self.write(f"id: {serial}\nevent: {event['type']}\ndata: {json.dumps(event['data'], default=str)}\n\n")
                else:
                    continue
                await self.flush()
        except StreamClosedError:
            return
        finally:
            hub.unsubscribe(sub)
        if not self._finished and not self._client_gone:
            self.finish(set_content_type="text/event-stream")

    _client_gone = False

    def on_connection_close(self) -> None:
        self._client_gone = True
        sub = getattr(self, "_subscription", None)
        if sub is not None:
            self.sched.event_hub.unsubscribe(sub)


def _visible(event: dict[str, Any], ident: Identity) -> bool:
    if ident.is_admin:
        return True
    data = event.get("data")
    owner = data.get("user") if isinstance(data, dict) else None
    return owner is None or owner == ident.name


class MetricsHandler(SchedHandler):
    """``GET metrics``: Prometheus exposition text from a private registry."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        text = generate_latest(self.sched.metrics_registry)
        self.set_status(200)
        self.finish(text, set_content_type=CONTENT_TYPE_LATEST)


_ID = r"(?P<job_id>[^/]+)"
_LEASE_ID = r"(?P<lease_id>[^/]+)"

HANDLERS: list[tuple[str, type[SchedHandler]]] = [
    ("config", ConfigHandler),
    ("me", MeHandler),
    ("inventory", InventoryHandler),
    ("jobs", JobsHandler),
    (f"jobs/{_ID}", JobHandler),
    (f"jobs/{_ID}/logs", LogsHandler),
    ("dryrun", DryrunHandler),
    ("leases", LeasesHandler),
    (f"leases/{_ID}", LeaseHandler),
    (f"leases/{_LEASE_ID}/keepalive", KeepaliveHandler),
    ("queue", QueueHandler),
    ("quotas", QuotasHandler),
    ("idle-policy", IdlePolicyHandler),
    ("profiles", ProfilesHandler),
    ("events", EventsHandler),
    ("telemetry", TelemetryHandler),
    ("audit", AuditHandler),
    ("usage", UsageHandler),
    ("usage/report", UsageReportHandler),
    ("metrics", MetricsHandler),
]
"""THE route table, relative to ``{base_url}api/sched/`` (openapi.yaml mirrors it; a test checks)."""
