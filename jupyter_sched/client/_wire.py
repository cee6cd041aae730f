"""What both clients share: request shapes, error mapping, SSE parsing, list unwrapping.

The REST API answers errors as ``{"error": {"code", "message", "field", "hint"}}``; the
``code`` names the :mod:`jupyter_sched.errors` class exactly, and the HTTP status is the fallback
when the code is unknown (an older or newer server).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, NamedTuple

from ..errors import (
    HTTP_STATUS,
    AuthenticationError,
    AuthorizationError,
    ConflictError,
    ExecutorError,
    NotFoundError,
    SchedError,
    StoreError,
    UnschedulableError,
    ValidationError,
)
from .discovery import TOKEN_HINT

__all__ = ["LIVE_STATES", "NAMED_FROM", "NamedJob", "Req", "ServiceDownError", "SseParser", "error_from_response",
           "event_from_sse", "job_id_named", "job_named", "name_refusal", "named_by_others", "named_lookup",
           "needs_lookup", "new_notes", "unnamed_lookup", "unwrap_list"]


class Req(NamedTuple):
    """One API call: method, path relative to ``{base_url}api/sched/``, query and JSON body.

    A NamedTuple, as the client's other records, not a dataclass: ``dataclasses`` (with inspect
    and ast) is ~15 ms of every CLI call's start, which none of its paths needs otherwise."""

    method: str
    path: str
    params: Mapping[str, str] = MappingProxyType({})
    body: Any = None


_BY_CODE: dict[str, type[SchedError]] = {
    cls.code: cls for cls in HTTP_STATUS if cls is not SchedError
}
"""Wire code → class (an :class:`AuthenticationError` is told by its status and details, not its
code: it shares ``forbidden`` with :class:`AuthorizationError`)."""
_BY_STATUS: dict[int, type[SchedError]] = {
    400: ValidationError, 401: AuthorizationError, 403: AuthorizationError,
    404: NotFoundError, 409: ConflictError, 422: UnschedulableError,
    502: ExecutorError, 503: StoreError,
}


class ServiceDownError(SchedError):
    """A 502/503/504 that is not the scheduler's answer (no ``{"error": …}`` body): a proxy in front
    of it answered because the scheduler did not — JupyterHub's "Service Unavailable" page for a
    hub service that is not running (hubadmin22 H1: it was said as ``[store_error]``, a database
    fault, and the admin went to look at PostgreSQL)."""

    code = "service_unavailable"


def _down(status: int, url: str, said: str = "") -> ServiceDownError:
    """The :class:`ServiceDownError` of a non-scheduler ``status`` answer from ``url`` (the client's
    base URL; "" when unknown), worded for what is behind it: a hub service (``…/services/NAME/``),
    a user's server on a hub (``…/user/NAME/``) or a server of its own; ``said``: the proxy's own
    JSON message, if any."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.netloc[:200]
    where = f"HTTP {status} from {host}" if host else f"HTTP {status}"
    why = f": {said[:200]}" if said else ""
    if "/services/" in parts.path:
        return ServiceDownError(f"the scheduler service behind the hub is not answering ({where}){why}",
                                hint="it is down or restarting; ask your hub admin (the hub's jupyter-sched "
                                     "service and its log)", details={"status": status})
    if "/user/" in parts.path:
        return ServiceDownError(f"your Jupyter server on the hub is not answering ({where}){why}",
                                hint="it is stopped or restarting; start it again from the hub's home page, or ask "
                                     "your hub admin", details={"status": status})
    return ServiceDownError(f"the jupyter_sched server is not answering ({where}){why}",
                            hint="something in front of it answered instead: it is down or restarting; start it "
                                 "again, or ask whoever runs it", details={"status": status})


def error_from_response(status: int, text: str, *, token_hint: str = TOKEN_HINT, url: str = "") -> SchedError:
    """Turn an error response into the :mod:`jupyter_sched.errors` class the server raised.

    Args:
        status: HTTP status code (>= 400).
        text: response body; the wire shape ``{"error": {...}}`` or anything else (e.g. a
            tornado HTML error page, a 401 from Jupyter auth, JupyterHub's proxy page).
        token_hint: the hint of a refused token (:func:`~.discovery.token_hint` of the connection).
        url: the client's base URL (which a :class:`ServiceDownError` names: its host, and whether
            it is a hub service); "" when unknown.

    Returns:
        :class:`~jupyter_sched.errors.AuthenticationError` for a 401/403 the server's auth
        answered (the token was missing or refused: ``details.credentials`` set by the extension,
        or not the extension's JSON at all); for the scheduler's own ``{"error": …}`` body,
        an instance of the class named by ``error.code`` (an unknown code — a newer server's,
        ``hub_service_unreachable`` of a user's server — chosen by status: 400 → ValidationError,
        401/403 → AuthorizationError, 404 → NotFoundError, 409 → ConflictError, 422 →
        UnschedulableError, 502 → ExecutorError, 503 → StoreError, other → SchedError — but keeping
        its own ``code``, so nobody reads ``[executor_error]`` for what the server called otherwise),
        with message, field, hint and details filled in; for any other 502/503/504 body a
        :class:`ServiceDownError` (the scheduler did not answer: something in front of it did);
        else a :class:`~jupyter_sched.errors.SchedError` ``HTTP 500 from …``.
    """
    payload: Any = None
    try:
        payload = json.loads(text) if text else None
    except ValueError:
        payload = None
    body = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(body, dict):
        details = body.get("details")
        details = details if isinstance(details, dict) else None
        if status in (401, 403) and (body.get("code") == "unauthorized" or (details or {}).get("credentials")):
            return AuthenticationError(str(body.get("message") or "the server did not accept the token"),
                                       hint=token_hint, details=details)
        code = str(body.get("code") or "")
        cls = _BY_CODE.get(code, _BY_STATUS.get(status, SchedError))
        message, hint = str(body.get("message") or f"HTTP {status}"), body.get("hint")
        if isinstance(reference := body.get("reference"), str) and _REFERENCE.fullmatch(reference):
            # a 5xx's tie to the server log: every surface prints it with the hint (hubadmin25 B6: none did)
            details = {**(details or {}), "reference": reference}
            hint = f"{hint} (reference {reference})" if hint else f"reference {reference}"
        error = cls(message, field=body.get("field"), hint=hint, details=details)
        if code and code not in _BY_CODE and _WIRE_CODE.fullmatch(code):
            error.code = code  # the server's word for it, not the fallback class's (hubadmin22 H1)
        return error
    if status in (401, 403):  # Jupyter's (or JupyterHub's) own auth answered, before the extension
        return AuthenticationError("the server did not accept the token", hint=token_hint)
    said = payload["message"] if isinstance(payload, dict) and isinstance(payload.get("message"), str) else ""
    if status in (502, 503, 504):
        return _down(status, url, said)
    cls = _BY_STATUS.get(status, SchedError)
    if said:
        message = said  # jupyter_server's own JSON errors: {"message", "reason"}
    else:
        message = f"HTTP {status} from the jupyter_sched server"
    return cls(message)


_WIRE_CODE = re.compile(r"[a-z][a-z0-9_]{0,47}")
"""A code kept as the server sent it (a hostile server's code is not echoed into a terminal)."""

_REFERENCE = re.compile(r"[0-9A-Za-z_-]{1,32}")
"""A 5xx answer's ``reference`` printed as sent (8 hex digits from ours; nothing else reaches a terminal)."""


NAMED_FROM = 500
"""How many of the caller's newest jobs and leases a name is looked for in."""


class NamedJob(NamedTuple):
    """What a job reference resolved to (:func:`job_named`).

    Attributes:
        id: the job's or lease's id.
        note: which of several jobs of that name was taken, and why, in one line for the caller to
            show (``waiter2 is j-…, the running one of 2 jobs named waiter2; the other ended 05:09
            UTC``); "" when there was no choice (an id, or a name only one job has).
    """

    id: str
    note: str = ""


LIVE_STATES = ("pending", "preempted", "admitted", "running")
"""States of a job that can still run or runs: the ones a name picks first (a rerun's earlier runs ended)."""


def job_named(ref: str, rows: Iterable[Mapping[str, Any]] | None, *, now: datetime | None = None) -> NamedJob:
    """The one resolver of a job reference, for every command that takes a job (CLI ``cancel``,
    ``logs``, ``wait``; ``%schedule status/wait/cancel/logs``; new user 11, N2/N5): an id
    (``j-…``/``l-…``) or an empty ``ref`` as given (``rows`` None: nothing to look in); else a job or
    lease of the caller's own ``rows`` (their newest first, ``GET jobs``) with that name:

    * one has it: that one;
    * several (a rerun under the same name, the normal case — newuser22 N4: every command refused
      "2 of your jobs are named 'waiter2'" when only one was alive): the one that is pending or
      running; when none is, the newest (a cancel of it then says it had already ended). The note says
      which was taken and what became of the others:
      ``waiter2 is j-2 (running), the live one of 2 jobs named waiter2; the other ended 05:09 UTC`` /
      ``waiter2 is j-2 (cancelled 05:11 UTC), the newest of 2 jobs named waiter2; none is pending or
      running`` (times as every surface says them, against ``now``).

    Args:
        ref: what was typed (an id, an id in capitals, or a name).
        rows: the caller's jobs, newest first (None: ``ref`` needs no look-up, :func:`needs_lookup`).
        now: the clock the note's times are said against (default: the current UTC time).

    Raises:
        ValidationError: several of that name are pending or running (field ``job_id``; their ids,
            newest first): which one is meant cannot be told.
        NotFoundError: none has that name (only the caller's own are looked in here; the server, asked for
            them by name (:func:`named_lookup`), has refused a name only other users' live work has already —
            in its words and on its audit log, newuser39 n6; an ended job of another user's stays unnamed).
    """
    if _ID_TYPED.fullmatch(ref):  # J-1M8Z…: an id in capitals is the id, not a name (new user 15, N10)
        return NamedJob(ref.lower())
    if not ref or ref.startswith(("j-", "l-")) or rows is None:
        return NamedJob(ref)
    named = [row for row in rows if row.get("name") == ref]
    if len(named) == 1:
        return NamedJob(str(named[0]["id"]))
    if not named:
        # the hint each surface replaces by its own listing command, as for an unknown id
        # (wording.flags.where_listed): the magics named the CLI's (new user 15, N10)
        raise NotFoundError(f"none of your jobs is named {ref[:80]!r}, and no job has that id", field="job_id",
                            hint="ids look like j-… (leases l-…); your job list shows each job's id and name")
    live = [row for row in named if str(row.get("state")) in LIVE_STATES]
    if len(live) > 1:
        ids = ", ".join(f"{row.get('id')} ({row.get('state')})" for row in live[:8]) + (" …" if len(live) > 8 else "")
        ended = len(named) - len(live)
        also = f" ({ended} more of that name ended)" if ended else ""
        raise ValidationError(f"{len(live)} of your jobs are named {ref[:80]!r} and pending or running: {ids}{also}",
                              field="job_id", hint="give the id of the one you mean (newest first)",
                              details={"ids": [str(row.get("id")) for row in live]})
    now = now or datetime.now(timezone.utc)
    chosen = live[0] if live else named[0]
    others = [row for row in named if row is not chosen]
    name, count = ref[:80], len(named)
    if live:
        last = max((when for row in others if (when := _ended_at(row))), default=None)
        at = f" {_clock(last, now)}" if last else ""
        rest = f"the other ended{at}" if len(others) == 1 else f"the {len(others)} others ended" + \
            (f", the last{at}" if at else "")
        note = f"{name} is {chosen['id']} ({chosen.get('state')}), the live one of {count} jobs named {name}; {rest}"
        return NamedJob(str(chosen["id"]), note)
    when = _ended_at(chosen)
    state = f"{chosen.get('state')}{f' {_clock(when, now)}' if when else ''}"
    # a cancel of it says there is nothing to do, as a cancel of its id does (exit 0, news: new user 22)
    return NamedJob(str(chosen["id"]),
                    f"{name} is {chosen['id']} ({state}), the newest of {count} jobs named {name}; none is pending or "
                    "running")


NAME_SENT = 200
"""Characters of a name the server is asked for (``GET jobs?name=``: the longest a submit gives); the rows it
answers are then matched on the whole name here."""


def named_lookup(ref: str, command: str = "") -> Req | None:
    """The request whose answer :func:`job_named` reads for ``ref``: the caller's newest :data:`NAMED_FROM` jobs
    and leases named ``ref`` (``GET jobs?name=…``), for what ``command`` does with it (``jupyter-sched cancel``,
    ``%schedule logs``, ``hold``; ``purpose``: :func:`~jupyter_sched.wording.not_yours.purpose_of`) — the server
    refuses a name only other users' live work has in that request's words, and audits it as it audits the same
    job's id (newuser39 n6: the client found it in the queue and refused it itself, unaudited). None: ``ref``
    needs no look-up (:func:`needs_lookup`)."""
    from ..wording.not_yours import purpose_of
    from ._routes import routes

    if not needs_lookup(ref):
        return None
    return routes.jobs(name=ref[:NAME_SENT], purpose=purpose_of(command) or None, limit=NAMED_FROM)


def unnamed_lookup(err: SchedError) -> Req | None:
    """The look-up of a server from before ``GET jobs?name=`` (session 40), which refuses the argument (``err``:
    "unknown query argument 'name'"): the caller's newest :data:`NAMED_FROM`, whose names :func:`job_named`
    reads; None for any other error (raised as it is)."""
    from ._routes import routes

    if isinstance(err, ValidationError) and err.field in ("name", "purpose") and "unknown query argument" in err.message:
        return routes.jobs(limit=NAMED_FROM)
    return None


def named_by_others(ref: str, others: list[dict[str, Any]], *, admin: bool, command: str = "") -> SchedError:
    """The refusal of the name ``ref`` that none of the caller's jobs has and other users' live work in the
    queue (``others``: ``id``, ``user``, ``state``, ``kind`` of each, as the server's refusal of the name lists
    them, :mod:`jupyter_sched.services.job_names`) has (newuser32 n3: "none of your jobs is named 'b-x', and no
    job has that id" while the queue listed bob's b-x): whose it is and, for a non-admin, what they may do — a
    403 as the same job's id is answered (``forbidden``); for an admin, who acts on anyone's job by its id, its
    id to type (``invalid``, field ``job_id``). Words: :func:`jupyter_sched.wording.not_yours.named_by_others`
    for ``command`` (``jupyter-sched cancel``). ``details``: ``others``, ``admin`` and ``name``."""
    from ..wording.not_yours import named_by_others as words

    message, hint = words(ref, others, admin=admin, command=command)
    details = {"name": ref, "others": others, "admin": admin}
    if admin:
        return ValidationError(message, field="job_id", hint=hint, details=details)
    return AuthorizationError(message, field="job_id", hint=hint, details=details)


def name_refusal(err: SchedError, command: str) -> SchedError:
    """:func:`job_named`'s refusal of a name several live jobs have, its hint the commands to type, ``command``
    (``jupyter-sched wait``, ``%schedule wait``) with each id, newest first (newuser28 n13: a re-run's two jobs
    were "give the id", after its note had named both); the server's refusal of a name only other users' work
    has (its ``details``: ``name``, ``others``, ``admin``) in the words of ``command``, whose hint gives the
    command to type (newuser32 n3); another error as it is."""
    others = (err.details or {}).get("others")
    others = [dict(row) for row in others if isinstance(row, Mapping)] if isinstance(others, list) else []
    if command and others and isinstance(err, (AuthorizationError, ValidationError)):
        details = err.details or {}
        return named_by_others(str(details.get("name") or ""), others, admin=bool(details.get("admin")),
                               command=command)
    if not isinstance(err, ValidationError):
        return err
    ids = (err.details or {}).get("ids")
    if not command or not isinstance(ids, list) or not ids:
        return err
    said = [f"`{command} {job_id}`" + (" (the newest)" if i == 0 else "") for i, job_id in enumerate(ids[:3])]
    more = f", or one of the {len(ids) - 3} others" if len(ids) > 3 else ""
    return ValidationError(err.message, field=err.field, details=err.details,
                           hint=f"give the id of the one you mean: {' or '.join(said)}{more}")


def _ended_at(row: Mapping[str, Any]) -> datetime | None:
    """When the job ``row`` (REST shape) ended (``finished_at``), None when it has not or says no offset."""
    try:
        when = datetime.fromisoformat(str(row.get("finished_at") or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else None


def _clock(when: datetime, now: datetime) -> str:
    """``05:09 UTC`` as every surface says a moment (:func:`~jupyter_sched.model.units.clock_text`)."""
    from ..model.units import clock_text

    return clock_text(when, now)


def job_id_named(ref: str, rows: Iterable[Mapping[str, Any]] | None) -> str:
    """:func:`job_named`'s id (for a read: the live one of several, else the newest)."""
    return job_named(ref, rows).id


def needs_lookup(ref: str) -> bool:
    """Whether :func:`job_id_named` needs the caller's jobs to resolve ``ref`` (not an id)."""
    return bool(ref) and not ref.lower().startswith(("j-", "l-"))


_ID_TYPED = re.compile(r"[JL]-[0-9A-Za-z]+-[0-9A-Za-z]+|[jl]-[0-9A-Za-z]*[A-Z][0-9A-Za-z]*-[0-9A-Za-z]+")
"""An id typed in capitals (``J-1M8ZRHEMP-T0EW78``, copied from a table that upper-cased it)."""


def unwrap_list(payload: Any, key: str) -> list[dict[str, Any]]:
    """Accept ``[...]`` or ``{key: [...]}`` and return the list of objects."""
    if isinstance(payload, dict) and isinstance(payload.get(key), list):
        payload = payload[key]
    if not isinstance(payload, list):
        raise SchedError(f"unexpected answer from the server: expected a list of {key}",
                                hint="the server and client versions may differ")
    return [item for item in payload if isinstance(item, dict)]


def event_from_sse(event: str, data: str) -> dict[str, Any]:
    """One Server-Sent Event (name and data text, as :mod:`httpx_sse` decodes them) as
    ``{"type": ..., "data": {...}}``: JSON data is decoded; data that already carries ``type`` and
    ``data`` is taken as is; otherwise the event name (``message`` when none) is the type."""
    try:
        value: Any = json.loads(data)
    except ValueError:
        value = data
    if isinstance(value, dict) and "type" in value and "data" in value:
        return value
    return {"type": event or "message", "data": value}


def event_of(sse: Any) -> dict[str, Any] | None:
    """The event of one :mod:`httpx_sse` ``ServerSentEvent``, or None for a block without data
    (the stream's ``retry:`` advice): what both clients' event loops yield."""
    if not sse.data and sse.event == "message":
        return None
    return event_from_sse(sse.event if sse.event != "message" else "", sse.data)


class SseParser:
    """Incremental Server-Sent Events parser yielding ``{"type": ..., "data": {...}}`` events.

    Handles ``event:`` / ``data:`` fields, multi-line data, comments (``:`` keep-alives) and
    events whose data already carries ``type``. The clients read streams with :mod:`httpx_sse`
    (:func:`event_from_sse`); this remains for callers that hold lines already (a kernel's
    comm, tests).
    """

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def feed(self, lines: Iterable[str]) -> Iterator[dict[str, Any]]:
        """Feed decoded lines (without newlines); yield each completed event."""
        for line in lines:
            if line == "":
                event = self._flush()
                if event is not None:
                    yield event
            elif line.startswith(":"):
                continue
            else:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    self._event = value
                elif name == "data":
                    self._data.append(value)

    def _flush(self) -> dict[str, Any] | None:
        if not self._data:
            self._event = ""
            return None
        raw = "\n".join(self._data)
        event_name, self._event, self._data = self._event, "", []
        return event_from_sse(event_name, raw)


def new_notes(chunk: Mapping[str, Any], said: set[tuple[str, str]]) -> list[Mapping[str, Any]]:
    """The notes of a ``GET jobs/{id}/logs`` answer (``notes``: ``{"at", "text"}``, oldest first) not in
    ``said`` yet, which they are added to: each is shown once however many answers carry it (new user
    21, N7) — one note by when it was said (``at``), whose words turn past tense once its run is over
    (newuser31 n12): shown live, it is not shown again at the end. Anything that is no such object is left out."""
    fresh: list[Mapping[str, Any]] = []
    notes = chunk.get("notes")
    for note in notes if isinstance(notes, list) else ():
        if isinstance(note, Mapping) and isinstance(note.get("text"), str):
            key = (str(note.get("at")), "")
            if key not in said:
                said.add(key)
                fresh.append(note)
    return fresh
