"""A token refused at a user's server, audited at the central service (new user 13, N14).

Eve's token sent to amy's server (``/user/amy/api/sched/…``) is refused by the hub auth inside amy's
server, before anything reaches the central service: every other refusal of a hub user is on the
central audit log (``GET audit?user=eve``), this one was in no log the admins read. Amy's server
cannot simply say "eve tried": it runs as amy, who could write any name there. What it can do is
hand the central service the refused token itself (``POST api/sched/refused-token`` with the
server's own hub token, :meth:`~.forward.ForwardingService.report_refused_token`); the central
service asks the hub whose token it is (``user_for_token``, as for any request) and audits the
refusal under that user, saying at whose server and that the server reported it. A name can be
forged, a token cannot: a record "eve's token was refused at amy's server" is written only when
amy's server really held eve's token. The token goes no further than the service every hub user's
token already reaches, is not stored, and the answer says only whether a record was written (not
whose token it was). A token the hub does not know names nobody: nothing is audited (the server's
own log has the 403). Refusals per user are counted past a few a minute, as every refusal is
(:meth:`~jupyter_sched.admission.Admission.record_refusal`).

What the reporter can still steer (red team 17, R13): which of the tokens it was handed it reports,
how often, and the ``request`` words. So the record's *actor* is the reporter and its user the
token's owner, the words are marked as the reporter's, a reporter is taken at most
:data:`REPORTS_PER_MINUTE` times a minute and once a minute per (token, why), and the answer is the
same ``{"received": true}`` whether the token is live, dead or over the rate (it was
``{"audited": true/false}``: an oracle of whether any string is someone's live token).

The same route takes the other refusal a user server makes by itself (red team 15, R10): a server
shared with a colleague (JupyterHub ``access:servers``) refuses to forward their requests
(``not_the_owner``); it hands over the colleague's own hub token — from the request, or the one
JupyterHub's OAuth keeps in the server's cookie for them — with ``"why": "not_the_owner"``, and the
refusal is audited under the colleague, as every refusal of theirs is.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import deque
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..errors import AuthorizationError, BusyError, ValidationError, json_kind
from ..extension.handlers import SchedHandler
from .forward import REFUSED_TOKEN_PATH, NotTheOwner
from .listening import this_host
from .squat_log import SQUAT_REPORT_PATH, not_while_listening, parse_squat_report, record_squats

__all__ = ["MAX_TOKEN_CHARS", "REFUSED_TOKEN_PATH", "REPORTS_PER_MINUTE", "SQUAT_REPORT_PATH", "WHYS",
           "RefusedTokenHandler", "ReportGate", "ServerReport", "SquatReportHandler", "parse_refused_token"]

log = logging.getLogger(__name__)

MAX_TOKEN_CHARS = 512
"""Longest token taken (a JupyterHub token is 32 hex characters; an OAuth one a little more)."""


REPORTS_PER_MINUTE = 10
"""Most refused-token reports taken from one reporter a minute (a user server sends one per refused
request it saw, itself at most a few a minute); the rest are answered the same and dropped."""


class ReportGate:
    """Which reports are taken: per reporter at most :data:`REPORTS_PER_MINUTE` a minute, and one a
    minute per (reporter, token, why). Clock injected (``monotonic``)."""

    def __init__(self, *, per_minute: int = REPORTS_PER_MINUTE, clock: Any = time.monotonic) -> None:
        self.per_minute, self._clock = per_minute, clock
        self._times: dict[str, deque[float]] = {}
        self._seen: dict[tuple[str, str, str], float] = {}

    def take(self, reporter: str, token: str, why: str) -> bool:
        """True when this report is to be looked up and audited."""
        now = self._clock()
        times = self._times.setdefault(reporter, deque())
        while times and now - times[0] >= 60.0:
            times.popleft()
        if len(times) >= self.per_minute:
            return False
        key = (reporter, hashlib.sha256(token.encode()).hexdigest(), why)
        if now - self._seen.get(key, -60.0) < 60.0:
            return False
        if len(self._seen) > 10_000:  # bounded: forget the reports older than a minute
            self._seen = {k: t for k, t in self._seen.items() if now - t < 60.0}
        times.append(now)
        self._seen[key] = now
        return True


WHYS = ("token_refused", "not_the_owner")
"""What a report says happened: the server's hub auth refused the token (default), or the token's
user was let in by a share of the server and refused as not its owner (red team 15, R10)."""


def parse_refused_token(body: Any) -> tuple[str, str, str]:
    """``(token, request, why)`` of a report: the refused token, the request it came with (``GET me``)
    and which refusal (:data:`WHYS`).

    Raises:
        ValidationError: naming the field.
    """
    if not isinstance(body, dict) or set(body) - {"token", "request", "why"}:
        raise ValidationError('a refused-token report is {"token": TOKEN, "request": "GET me"}', field="body",
                              hint="sent by a user server whose hub auth refused a token")
    token, request = body.get("token"), body.get("request", "")
    if not isinstance(token, str) or not token.strip() or len(token) > MAX_TOKEN_CHARS or not token.isprintable():
        raise ValidationError(f"token must be the refused token as text (got {json_kind(token)})", field="token",
                              hint=f"at most {MAX_TOKEN_CHARS} printable characters")
    if not isinstance(request, str) or len(request) > 200 or not request.isprintable():
        raise ValidationError("request must be the refused request's method and path, at most 200 characters",
                              field="request", hint='e.g. "GET me"')
    why = body.get("why", WHYS[0])
    if why not in WHYS:
        raise ValidationError(f"why must be one of {', '.join(WHYS)}", field="why", hint='e.g. "not_the_owner"')
    return token.strip(), request, str(why)


class ServerReport(SchedHandler):
    """A report a user server makes by itself (a refused token, a refused squat): not its user's activity."""

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return False  # a report about someone else's request, or the service's port, is not the reporter's activity


class RefusedTokenHandler(ServerReport):
    """``POST api/sched/refused-token`` ``{"token", "request"}`` from a user server (its own hub token: the
    reporting server's owner comes from the hub) → ``{"received": true}`` (module docstring)."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        token, request, why = await self.body_parsed(parse_refused_token)
        reporter = self.caller.user
        gate: ReportGate = self.settings.setdefault("jupyter_sched_refused_token_gate", ReportGate())
        if not gate.take(reporter, token, why):  # over the rate or said this minute: the same answer (R13)
            self.reply({"received": True})
            return
        owner = await self._token_owner(token)
        if owner is None or (why == "not_the_owner" and owner == reporter):  # an owner is never refused as a visitor
            self.reply({"received": True})  # the same answer as a live token's: no token oracle (R13)
            return
        server = f"{reporter}'s Jupyter server"
        if why == "not_the_owner":
            err: AuthorizationError = NotTheOwner(
                f"{owner} asked {server}, shared with them, to forward a scheduler request: refused, it forwards "
                f"for its owner {reporter} only", field="user",
                hint="use the scheduler from your own server, or call the central service with your own token",
                details={"server": reporter, "reported_by": server})
        else:
            err = AuthorizationError(f"{owner}'s token was refused at {server}: a token may use only its owner's "
                                     "server (or one shared with them)", field="token",
                                     hint="use your own server (/user/<you>/api/sched/) or the hub's scheduler service",
                                     details={"credentials": "refused", "server": reporter, "reported_by": server})
        err.details["request_words_by"] = reporter  # the request text is the reporter's to write (R13)
        caller = self.services.caller(owner, admin=False)
        await self.call(self.services.admission.record_refusal, caller, err,
                        request=f"{request or 'a request'} at {server}"[:300], reported_by=reporter)
        self.reply({"received": True})

    async def _token_owner(self, token: str) -> str | None:
        """The hub user whose token ``token`` is (the hub's answer, cached as every request's), or None:
        not a token the hub knows, a service's token, or no answer."""
        provider = getattr(getattr(self.sched, "serverapp", None), "identity_provider", None)
        auth = getattr(provider, "hub_auth", None)
        if auth is None:
            return None
        try:
            model = await auth.user_for_token(token, use_cache=True, sync=False)
        except Exception:  # the hub did not answer: nothing to audit by a name
            log.info("jupyter_sched: could not ask the hub whose refused token was reported", exc_info=True)
            return None
        if not isinstance(model, dict) or model.get("kind", "user") != "user" or not model.get("name"):
            return None
        return str(model["name"])


class SquatReportHandler(ServerReport):
    """``POST api/sched/squat-refused`` ``{"refusals": [...]}`` from a user server (its own hub token: the reporter
    comes from the hub) → ``{"recorded": N}``: the squats it refused while the service was down, one
    ``squat_refused`` audit record per holder (:mod:`.squat_log`; verify26 V8). One report a minute per reporter:
    more is 429 (``Retry-After``), a malformed one 400 naming the field, both audited as refusals."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        gate: ReportGate = self.settings.setdefault("jupyter_sched_squat_report_gate", ReportGate(per_minute=1))
        try:
            since = _listening_since(self.settings)
            held = parse_squat_report(await self.json_value(), self.services.clock.now(), listening_since=since,
                                      own_uids={os.getuid(), os.geteuid()})
            # and every process of the service that listened on this host (red29 R6: an earlier one's window)
            spans = await self.call(self.services.store.listening_spans, this_host())
            not_while_listening(held, spans)
            if not gate.take(self.caller.user, "squat", "squat"):
                raise BusyError("one squat report a minute is taken from a server; this one was not recorded",
                                field="refusals", hint="send it again in a minute (a user server keeps it until then)",
                                details={"retry_after_s": 60})
        except (ValidationError, BusyError) as err:
            await self.call(self.services.admission.refuse, self.caller, err, request="squat report")
        spans_since = min([*(span.started_at for span in spans), *([since] if since is not None else [])],
                          default=None)
        recorded = await self.call(record_squats, self.services.store, self.caller.user, held, since, spans_since)
        self.reply({"recorded": recorded})


def _listening_since(settings: Mapping[str, Any]) -> datetime | None:
    """When the service's front door began listening (UTC; None: not known, e.g. an in-process test server)."""
    since = getattr(getattr(settings.get("serverapp"), "http_server", None), "listening_since", None)
    return datetime.fromtimestamp(since, timezone.utc) if isinstance(since, float) else None
