"""One error tree for the whole package, mapped to HTTP in one place.

::

    SchedError                      base; every error the package raises on purpose
    ├── ValidationError             bad input: names the field, the bad value and the fix (400)
    │   ├── TimestampError          a timestamp without a UTC offset, or unparseable (400)
    │   └── TooLargeError           a request body past a bound on its size or its items (413)
    ├── AuthorizationError          the caller may not do this (403)
    │   └── AuthenticationError     the server did not accept the request's token (401/403
    │       │                       from Jupyter's own auth; raised by the clients)
    │       └── TokenRefusedError   a token the scheduler checks itself (a job's progress
    │                               token) is forged or expired (401)
    ├── NotFoundError               no such job / lease / quota / profile (404)
    ├── ConflictError               the request contradicts current state, e.g. illegal
    │   │                           state transition or cancel of a finished job (409)
    │   └── NotLeaderError          this engine does not own the store (409)
    ├── QuotaError                  the request can never be admitted under quota (422)
    ├── BusyError                   too many such requests in flight; retry shortly (429)
    ├── UnschedulableError          the request can never fit the inventory (422)
    ├── ExecutorError               an executor failed to start/stop work (502)
    ├── TelemetryError              a collector returned unusable data (502)
    ├── StoreError                  the store failed (503)
    ├── OverloadedError             the service is out of file descriptors or connections;
    │                               retry (503, never a refusal of the user: red team 17, R6)
    └── StoppingError               the server is shutting down; retry in a few seconds (503
                                    with Retry-After, never a refusal of the user: new user 24, N7)

Each error renders to the JSON body ``{"error": {"code", "message", "field", "hint"}}``
with :meth:`SchedError.to_json`; :data:`HTTP_STATUS` maps each class to its status code.
Handlers never build error bodies themselves. Errors answered with a 5xx (executor, telemetry,
store) may carry a driver's or library's words (SQL, a database URL, a Kubernetes API body): the
web layer logs them whole under a reference and answers :meth:`SchedError.public_json` — the code,
a sentence of ours, a hint and the reference, never the library's text.
"""

from __future__ import annotations

from typing import Any

from .textsafe import escaped_controls

__all__ = [
    "HTTP_STATUS",
    "MESSAGE_MAX_CHARS",
    "AuthenticationError",
    "AuthorizationError",
    "BusyError",
    "ConflictError",
    "ExecutorError",
    "NotFoundError",
    "NotLeaderError",
    "OverloadedError",
    "QuotaError",
    "SchedError",
    "StoppingError",
    "SchedulerOffError",
    "StoreError",
    "StoreFullError",
    "TelemetryError",
    "TimestampError",
    "TokenRefusedError",
    "TooLargeError",
    "UnschedulableError",
    "ValidationError",
    "bounded",
    "http_status_for",
    "json_kind",
    "shown",
]


MESSAGE_MAX_CHARS = 2000
"""Most characters of a refusal's message, and of its hint, on the wire and in its text (``str()``,
which the service log writes): whatever a request quotes back (red team 19, R1: a 6,500-pair
``node_selector`` echoed whole made a 58 KB log line and a 320 KB answer per request)."""


def bounded(text: str, limit: int = MESSAGE_MAX_CHARS) -> str:
    """``text`` when at most ``limit`` characters, else its start and ``… (12,345 more characters)``,
    ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    cut = limit - 40  # room for the note, whatever the count's digits
    return f"{text[:cut]}… ({len(text) - cut:,} more characters)"


class SchedError(Exception):
    """Base of every error jupyter_sched raises on purpose.

    Args:
        message: one sentence a user can read, saying what is wrong.
        field: the input field at fault (dotted path, e.g. ``resources.gpus``), if any.
        hint: what to do about it, if known.
        details: structured numbers behind the message (JSON-serializable).
    """

    code = "error"
    public_message = "the scheduler failed to answer this request"
    """What a client reads when this error is answered with a 5xx (see :meth:`public_json`)."""
    public_hint = "retry in a moment; if it persists, give an admin this answer's reference: the server log has the cause"
    audited = False
    """True once this refusal is an audit record (the admission step sets it; the web layer audits the rest)."""

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        hint: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.hint = hint
        self.details = details or {}

    def to_json(self) -> dict[str, Any]:
        """Return the wire shape ``{"error": {"code", "message", "field", "hint"}}``; message and hint
        at most :data:`MESSAGE_MAX_CHARS` each (:func:`bounded`)."""
        body: dict[str, Any] = {
            "code": self.code,
            "message": bounded(self.message),
            "field": self.field,
            "hint": None if self.hint is None else bounded(self.hint),
        }
        if self.details:
            body["details"] = self.details
        return {"error": body}

    def public_json(self, reference: str) -> dict[str, Any]:
        """The wire shape without the message's own text (for 5xx answers): ``{"error": {"code",
        "message": <our sentence>, "field", "hint", "reference"}}``; ``reference`` ties it to the
        server log line that has the full message."""
        return {"error": {"code": self.code, "message": self.public_message, "field": self.field,
                          "hint": self.public_hint, "reference": reference}}

    def __str__(self) -> str:
        text = bounded(self.message)  # the service log's words for it: bounded as the answer is (R1)
        if self.hint:
            text = f"{text} ({bounded(self.hint)})"
        return text


class ValidationError(SchedError):
    """Bad input; ``field`` names it and ``hint`` says how to fix it."""

    code = "validation_error"


class TimestampError(ValidationError):
    """A timestamp lacks a UTC offset or cannot be parsed (case 010)."""

    code = "invalid_timestamp"


class TooLargeError(ValidationError):
    """A request body past a bound on its bytes or its JSON items (red38 R1); ``field`` is ``body``."""

    code = "too_large"


class AuthorizationError(SchedError):
    """The authenticated caller may not perform this action."""

    code = "forbidden"


class AuthenticationError(AuthorizationError):
    """The server did not accept the request's credentials (no token, a wrong one, or a browser
    request without its ``_xsrf`` value): Jupyter's auth refused it before the scheduler saw it.
    The clients raise it for such a 401/403 answer, so each can say how to give a token in its
    own terms (``--token`` in the CLI, ``connect(url, token)`` in Python)."""

    code = "forbidden"


class TokenRefusedError(AuthenticationError):
    """A token the scheduler checks itself — a job's progress token (``JUPYTER_SCHED_JOB_TOKEN``) — is
    forged, from another server, or expired with its job's run (401; the clients read it as an
    :class:`AuthenticationError`)."""

    code = "unauthorized"


class NotFoundError(SchedError):
    """The named job, lease, quota or profile does not exist (or is not visible to you)."""

    code = "not_found"


class ConflictError(SchedError):
    """The request contradicts the current state (e.g. an illegal job state transition)."""

    code = "conflict"


class NotLeaderError(ConflictError):
    """Another engine owns the store; this one may not make scheduling decisions."""

    code = "not_leader"


class QuotaError(SchedError):
    """The request can never be admitted under the configured quota."""

    code = "quota_exceeded"


class BusyError(SchedError):
    """Too many requests of this kind are in flight (a bounded worker); retry in a moment."""

    code = "busy"


class UnschedulableError(SchedError):
    """The request can never fit the inventory (e.g. more GPUs than exist)."""

    code = "unschedulable"


class ExecutorError(SchedError):
    """An executor failed to start, signal or observe work."""

    code = "executor_error"
    public_message = "the executor (local processes or the Kubernetes API) failed to carry out this request"


class TelemetryError(SchedError):
    """A collector produced unusable data (garbage exposition text, bad NVML answer)."""

    code = "telemetry_error"
    public_message = "the GPU telemetry source gave an answer the scheduler cannot use"


class StoreError(SchedError):
    """The store failed (database unavailable, integrity violation)."""

    code = "store_error"
    public_message = "the scheduler's database failed to answer"


class StoreFullError(StoreError):
    """The store's disk is full (SQLite's "database or disk is full", PostgreSQL's 53100): the request's
    transaction was rolled back, nothing of it was saved, and retrying helps only once space is freed
    (newuser41 N3: "retry in a moment" forever). 507 Insufficient Storage."""

    code = "store_full"
    public_message = "the scheduler's database is out of disk space: nothing of this request was saved"
    public_hint = ("free space on the disk of the scheduler's store (jupyter-sched doctor names it and exits 1), "
                   "then send it again; work accepted before is kept")


class OverloadedError(SchedError):
    """The service ran out of a shared resource (file descriptors, connections) while answering:
    nothing is wrong with the request, so it is never audited as the caller's refusal."""

    code = "overloaded"
    public_message = "the scheduler service is overloaded (out of open files or connections)"
    public_hint = "retry in a moment; an admin sees the front door's summary line in the service log"


class StoppingError(SchedError):
    """The request came while the server stops (its extension has begun to shut down): nothing is
    wrong with the request and nothing was done; ``details["retry_after_s"]`` says when to ask again."""

    code = "stopping"
    public_message = "the server is stopping (shutdown): this request was not carried out"
    public_hint = "retry in a few seconds, once the server is back; nothing was changed"


class SchedulerOffError(StoppingError):
    """The scheduler is not running on this server: its store failed at start (a full disk, a read-only or
    unwritable folder: newuser41 N3, n4) and JupyterLab runs on without it. Its message and hint are our own
    sentences naming the cause and the fix (no driver's words), so a 503 answer carries them as they are:
    retrying cannot help, and on an embedded server the reader is the one who can fix it. A kind of
    :class:`StoppingError` for the web layer (503, answered before any work, logged at INFO per request:
    the start's one ERROR line said it), with its own code and no ``Retry-After``."""

    code = "scheduler_off"

    def public_json(self, reference: str) -> dict[str, Any]:
        """:meth:`SchedError.public_json` with this error's own message and hint."""
        return {"error": {"code": self.code, "message": bounded(self.message), "field": self.field,
                          "hint": None if self.hint is None else bounded(self.hint), "reference": reference}}


HTTP_STATUS: dict[type[SchedError], int] = {
    ValidationError: 400,
    TimestampError: 400,
    TooLargeError: 413,
    AuthorizationError: 403,
    TokenRefusedError: 401,
    NotFoundError: 404,
    ConflictError: 409,
    NotLeaderError: 409,
    QuotaError: 422,
    BusyError: 429,
    UnschedulableError: 422,
    ExecutorError: 502,
    TelemetryError: 502,
    StoreFullError: 507,
    StoreError: 503,
    OverloadedError: 503,
    StoppingError: 503,
    SchedError: 500,
}


def http_status_for(error: SchedError) -> int:
    """Return the HTTP status for ``error``: the entry of its nearest class in :data:`HTTP_STATUS`."""
    for cls in type(error).__mro__:
        if cls in HTTP_STATUS:
            return HTTP_STATUS[cls]
    return 500


def json_kind(value: Any) -> str:
    """What a decoded JSON value is, in words a client's author reads: ``null``, ``true``,
    ``false``, ``a number``, ``a string``, ``an array``, ``an object`` — never a Python type name
    (``NoneType``, ``list``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a value JSON cannot hold"


def shown(value: Any, limit: int = 60) -> str:
    """A value as a message quotes it: text in single quotes, numbers as written (every digit of a
    huge one), ``null``/``true``/``false``, and arrays and objects by kind (``an array of 3``), never
    as a Python repr; cut at ``limit`` characters with ``...``. A control character in text is
    written as its escape (``\\x1b``): the message is echoed to a terminal, the audit and the
    service log (red team 15, R3: ``unknown field '<ESC>[31mX'`` came back raw)."""
    if isinstance(value, str):
        text = "'" + escaped_controls(value) + "'"
    elif value is None or isinstance(value, (bool, int, float)):
        text = json_kind(value) if value is None or isinstance(value, bool) else _number(value)
    elif isinstance(value, (list, tuple)):
        return f"an array of {len(value)}" if value else "an empty array"
    elif isinstance(value, dict):
        return "an object" if value else "an empty object"
    else:
        return json_kind(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "a number JSON cannot hold"
    if value == int(value) and abs(value) < 2**53:  # 1e12 sent reads "1000000000000", not "…0.0" (new user 17, N3)
        return str(int(value))
    return repr(value).replace("e+", "e")  # the shortest text that reads back as the same number: 1e308, not 1e+308
