"""Per-user servers as clients of the central service (``c.SchedApp.hub_service_url``).

With ``hub_service_url`` set (default ``$JUPYTER_SCHED_HUB_URL``), a user's server runs no
engine: every request to ``{base_url}api/sched/<path>`` is authenticated and authorized by the
user's server exactly as in embedded mode (token or cookie + XSRF), then forwarded to
``{hub_service_url}api/sched/<path>`` with a token of the server's owner that may only call the
scheduler (``$JUPYTER_SCHED_SERVICE_TOKEN``, minted by the hub at spawn: :mod:`.spawn_token`; else minted
at start with the server's ``JUPYTERHUB_API_TOKEN``, :mod:`.narrow_token`; where the hub refuses both, nothing
is sent: verify26 V3), which the hub resolves to the owner, and only to an address that is the
service's (:mod:`.listener`: red team 25, R5); what it refused to send to another account holding that
address is reported to the service once it answers again, and audited there (:mod:`.squat_log`: verify26
V8). The caller's
identity therefore comes from the hub, never from the request; status, body and
``Content-Type`` come back unchanged, so the magics, the CLI and the panel work as against an
embedded server. ``events`` and ``jobs/{id}/logs?follow=true`` are streamed.

Leases of this server's kernels are released on the central service when a kernel shuts down
or restarts (the extension's kernel hooks) and when the server stops: by ``stop()`` on a clean
stop (SIGTERM), and by an ``atexit`` hook when the process ends without cleanup — JupyterHub's
spawners stop servers with SIGINT first, which jupyter_server without a terminal turns into a
KeyboardInterrupt that skips extension shutdown. A killed server (SIGKILL) is covered by the
central service, which releases leases of users the hub reports without a server.
A central service that does not answer gives 502 ``{"error": {"code": "hub_service_unreachable"}}``.

What is forwarded, and for whom (the server holds its owner's hub token; nothing may make it send
that token anywhere else, or act for anyone but its owner):

* **only routes of the route table.** The raw request path after ``api/sched/`` must be relative,
  made of ``[A-Za-z0-9._~-]`` segments separated by single ``/`` — no scheme, no ``//host``, no
  ``.`` or ``..`` segment, no percent-encoding at all (``%2e%2e``, ``%2f``, ``%5c`` and double
  encodings) and no backslash — and match a route of the table exactly (:func:`forward_path`).
  A malformed path is 400 ``bad_path``, a well-formed unknown one 404 ``no_such_route``; the
  target URL is then checked to lie under the central service's ``api/sched/`` on its host
  before any request is made (:meth:`ForwardingService.target`).
* **only for the owner.** JupyterHub lets a server be shared (``access:servers`` granted to
  others). A request from anyone but the server's owner (``$JUPYTERHUB_USER``) is refused with 403
  ``not_the_owner``: the server can act only with its owner's token, and there is no secure way
  to act as the visitor from inside a process the owner controls — any credential the visitor
  handed this server would be the owner's to keep. Visitors use the scheduler from their own
  server, or the central service directly with their own token.

Kernel liveness: every ``kernel_report_interval_s`` seconds (default 30) the server reports the
ids of its live kernels to the central service (``PUT api/sched/kernels``, :mod:`.liveness`),
which releases leases whose kernel is gone — also when the release at shutdown was lost because
the central service was down, or the server itself restarted. The answer may ask this server to shut
down one of its own kernels whose lease idle reclaim revoked while the kernel still holds the GPU
(``"shutdown"``, :mod:`.idle_shutdown`): the server does, through its own kernel manager as Jupyter's
culler does, and reports again at once; the central service ends the lease once NVML lists no process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import httpx
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from tornado.iostream import StreamClosedError

from .. import untrusted_json
from ..backoff import Reconnecting
from ..errors import AuthorizationError, NotFoundError, SchedError, ValidationError, http_status_for
from ..extension.background import fire_and_forget
from ..extension.body_bounds import MAX_BODY_ITEMS, ON_LOOP_BYTES, body_items
from ..wording.tokens import hub_token_page, token_source
from .idle_shutdown import draining
from .listener import ListenerRefused, TokenWithheld, guarded_sync_transport, guarded_transport, refusal
from .narrow_token import NarrowTokens, ScopedToken
from .peer import Connected, Refusal, connected_refusal
from .reconnect import CENTRAL, CentralLink
from .spawn_token import SERVICE_TOKEN_ENV
from .squat_log import SQUAT_REPORT_PATH, SquatLog

FORWARDED_HEADER = "X-Jupyter-Sched-Forwarded-By"
"""Set by a user server on what it forwards: the name of the server whose kernels the request's
``kernel_id`` names (checked there), so the receiving scheduler does not judge it by its own."""

__all__ = ["ForwardHandler", "ForwardingService", "HubServiceUnreachable", "NotTheOwner", "forward_path",
           "forwarding_service", "route_patterns"]

log = logging.getLogger(__name__)

_LIVE = "pending,admitted,running"
_RELEASE_CAUSES = {"kernel shutdown": "kernel_shutdown", "kernel restart": "kernel_restart",
                   "server stopped": "server_stop"}
"""The extension's release reasons → ``DELETE leases/{id}?why=`` (:data:`~jupyter_sched.wording.jobs.LEASE_END_CAUSES`)."""
_HOLDING = "admitted,running"
_QUIET_PATHS = ("dryrun", "config", "me", "inventory", "queue", "profiles", "events", "audit", "usage", "metrics",
                "telemetry")
_PASS_HEADERS = ("Content-Type", "Content-Disposition", "Cache-Control", "X-Accel-Buffering", "Link",
                 "X-Jupyter-Sched-Resume", "X-Total-Count", "Retry-After")
_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")
_KERNEL_REPORT_PATH = "kernels"
REFUSED_TOKEN_PATH = "refused-token"
"""Where a server reports a token its hub auth refused (:mod:`.refusals`: audited at the central service)."""
_REFUSAL_REPORTS_PER_MINUTE = 30
_AUTH_HEADER = re.compile(r"(?:token|bearer)\s+(\S+)\s*$", re.IGNORECASE)
_KERNEL_REPORT_TIMEOUT_S = 10.0
_MAX_SHUTDOWNS = 100
"""Kernels one kernel report's answer may have shut down (:mod:`.idle_shutdown`)."""
_PROBE_TIMEOUT_S = 5.0


class HubServiceUnreachable(SchedError):
    """The central service did not answer (connection refused, timeout). Its message is ours
    (:func:`_unreachable`): the service's address and the HTTP library's words go to the log."""

    code = "hub_service_unreachable"


def _unreachable(url: str, exc: BaseException | None, state: Reconnecting | None = None) -> HubServiceUnreachable:
    """The user's answer when the central service at ``url`` did not answer (logged with ``exc``),
    saying when the server tries again (``state``: its retry loop, :mod:`.reconnect`)."""
    if isinstance(exc, ListenerRefused):  # nothing was sent; the guard logged why, once (red team 25, R5)
        return HubServiceUnreachable("the scheduler's address is held by something that is not the scheduler "
                                     "service, so this server did not send your request (nor its token) there",
                                     hint="tell your hub admin: your server's log names who holds the address")
    if isinstance(exc, TokenWithheld):  # nothing was sent; start() logged why (verify26 V3)
        return HubServiceUnreachable("this server has no token that may only call the scheduler, so it did not send "
                                     "your request (its own token opens your Jupyter server)",
                                     hint="tell your hub admin: set c.Spawner.pre_spawn_hook = "
                                          "jupyter_sched.hub.spawn_token.scheduler_token_hook (your server's log "
                                          "has the details)")
    if exc is not None:
        log.warning("jupyter_sched: central service %s did not answer: %s (%s)", url, type(exc).__name__, exc)
    if state is None:
        return HubServiceUnreachable("the scheduler service does not answer; try again in a minute",
                                     hint="if it keeps failing, tell your hub admin (your server's log has the details)")
    return HubServiceUnreachable(f"the scheduler service does not answer: {state.message}",
                                 hint="requests work again once it answers; if it keeps failing, tell your hub admin "
                                      "(your server's log has the details)",
                                 details={"reconnecting": state.to_dict()})


def route_patterns() -> list[re.Pattern[str]]:
    """The route table's patterns (relative to ``api/sched/``), compiled to match whole paths:
    the scheduler's routes and those of job definitions and kept notebooks, as an embedded
    server serves them (``SchedApp.routes``: :data:`~jupyter_sched.extension.routes.ROUTES`)."""
    from ..extension.routes import ROUTES

    return [re.compile(f"^{pattern}$") for pattern, _ in ROUTES]


def forward_path(raw_path: str, routes: Sequence[re.Pattern[str]]) -> str:
    """The raw (still percent-encoded) path after ``api/sched/``, if it may be forwarded.

    Raises:
        ValidationError: the path is not a plain relative route path (absolute URL, scheme,
            ``//host``, ``.``/``..``, any percent-encoding, backslash...), field ``path``.
        NotFoundError: well-formed, but no route of the table matches.
    """
    segments = raw_path.split("/")
    if not raw_path or len(raw_path) > 512 or not all(
            _SEGMENT.match(segment) and segment not in (".", "..") for segment in segments):
        raise ValidationError(f"{raw_path[:80]!r} is not a scheduler route", field="path",
                              hint="request a route under api/sched/ such as jobs or jobs/<id>; encoded, "
                                   "absolute and dot paths are not forwarded")
    if not any(route.match(raw_path) for route in routes):
        raise NotFoundError(f"no scheduler route {raw_path[:80]!r}", field="path",
                            hint="see the API description (openapi.yaml) for the routes")
    return raw_path


class ForwardingService:
    """Stands in for ``SchedulerService`` in a user's server: forwards to the central service.

    Args:
        url: the central service's base URL (its ``{JUPYTERHUB_SERVICE_PREFIX}``), ending in ``/``.
        token: the hub API token to send (the user server's ``JUPYTERHUB_API_TOKEN``).
        kernel_ids: ``kernel_ids() -> ids`` of this server's kernels (their leases are released at stop).
        owner: the hub user this server belongs to (``$JUPYTERHUB_USER``); requests of anyone
            else are refused. None: no hub, no sharing (every caller is the owner).
        server_name: this server's name on the hub (``$JUPYTERHUB_SERVER_NAME``; "" = default).
        routes: the forwardable route patterns (default: :func:`route_patterns`).
        timeout_s: seconds per forwarded request (default 60; log follow long-polls 25 s).
        poll_interval_s: seconds between refreshes of the running-work cache (server activity).
        kernel_report_interval_s: seconds between kernel liveness reports (0 disables).
        transport: an httpx transport (None = network).
        kernel_states: ``kernel_states() -> {id: {"execution_state", "last_activity"}}`` of this
            server's kernels, sent with the ids so the central service's idle rules see idle kernels
            (red team 15, R6); None: ids only.
        shutdown_kernel: ``await shutdown_kernel(kernel_id)`` shuts one of this server's kernels down
            (its kernel manager's ``shutdown_kernel``); asked by a report's answer (:mod:`.idle_shutdown`).
            None: such asks are not done (logged).
        allowed_uids: uids besides root and this process's own that may hold a loopback address of the
            central service (``c.SchedApp.hub_service_uids``, :mod:`.listener`).
        network_trusted: plain http to a non-loopback central service is allowed
            (``c.SchedApp.hub_service_network_trusted``). Both are checked before every request sent
            over the network (``transport`` None): a refused one is never sent (red team 25, R5).
        narrow: mints, at :meth:`start`, the token sent instead of ``token``: one whose only scope is the
            scheduler service's (:mod:`.narrow_token`), deleted at :meth:`stop`; when the hub gives none,
            nothing is sent (:class:`.listener.TokenWithheld`, verify26 V3). None: ``token`` is sent.
    """

    def __init__(self, url: str, token: str, *, kernel_ids: Callable[[], Iterable[str]], owner: str | None = None,
                 server_name: str = "", routes: Sequence[re.Pattern[str]] | None = None, timeout_s: float = 60.0,
                 poll_interval_s: float = 60.0, kernel_report_interval_s: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None,
                 kernel_states: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None,
                 shutdown_kernel: Callable[[str], Awaitable[Any]] | None = None,
                 allowed_uids: Iterable[int] = (), network_trusted: bool = False,
                 narrow: NarrowTokens | None = None) -> None:
        self.url = url if url.endswith("/") else url + "/"
        self.api_url = self.url + "api/sched/"
        self._api = httpx.URL(self.api_url)
        if self._api.scheme not in ("http", "https") or not self._api.host:
            raise ValueError(f"hub_service_url {url!r} is not an http(s) URL")
        self.token = token
        self.kernel_ids = kernel_ids
        self.kernel_states = kernel_states
        self.shutdown_kernel = shutdown_kernel
        self.owner = owner
        self.server_name = server_name
        self.routes = list(routes) if routes is not None else route_patterns()
        self.timeout_s = timeout_s
        self.poll_interval_s = poll_interval_s
        self.kernel_report_interval_s = kernel_report_interval_s
        self._transport = transport
        self.allowed_uids = frozenset(allowed_uids)
        self.network_trusted = network_trusted
        self._refusal_said: str | None = None
        self._connected_said: str | None = None
        self.narrow = narrow
        self.scoped: ScopedToken | None = None
        self.withheld: str | None = None  # why ``token`` (the server's own) must not be sent: the mint failed
        self._report_task: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._running: list[dict[str, Any]] = []
        self._stopped = asyncio.Event()
        self.link = CentralLink(self.probe)
        self._reporting: asyncio.Lock | None = None  # one report in flight: a later one never arrives first
        self._refusal_reports: list[float] = []  # loop times of the last minute's refused-token reports
        self._refusal_tasks: set[asyncio.Task[None]] = set()
        self.squats = SquatLog()
        """Squats of the service's address refused and not yet reported (verify26 V8)."""
        self._squat_report: asyncio.Future[None] | None = None

    # ---- lifetime ------------------------------------------------------------------------
    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client (created on first use, on the running loop)."""
        if self._client is None:
            hooks = {"request": [self._withhold, self._guard] if self._transport is None else [self._withhold]}
            # the network: each new connection is checked once connected, before its first byte (verify26 V5)
            transport = self._transport if self._transport is not None else guarded_transport(self.check_connected)
            self._client = httpx.AsyncClient(
                base_url=self.api_url, timeout=self.timeout_s, transport=transport, trust_env=False,
                headers={"Authorization": f"token {self.token}", "Accept": "application/json"}, event_hooks=hooks)
        return self._client

    def check_address(self, url: httpx.URL) -> None:
        """Refuse to send the token to ``url`` when :func:`.listener.refusal` says so; the reason is logged
        once per reason (again after a request was let through).

        Raises:
            ListenerRefused: nothing may be sent there.
        """
        self._refused(refusal(url, allowed_uids=self.allowed_uids, network_trusted=self.network_trusted))

    def _refused(self, said: str | None) -> None:
        """:meth:`check_address`'s answer to :func:`.listener.refusal`'s ``said`` (logged, kept for the audit, raised)."""
        if said is None:
            self._refusal_said = None
            return
        self._squatted(said)
        if said != self._refusal_said:
            log.warning("jupyter_sched: %s", said)
            self._refusal_said = said
        raise ListenerRefused(said)

    def check_connected(self, sock: Connected) -> str | None:
        """Why nothing may be sent over the just-connected ``sock`` (:func:`.peer.connected_refusal`: who accepted
        it), logged once per reason; None when it may (verify26 V5: checking the listener first is a race)."""
        said = connected_refusal(sock, allowed_uids=self.allowed_uids)
        if said is not None:
            self._squatted(said)
        if said is not None and said != self._connected_said:  # once per holder, not once per toggle of it
            log.warning("jupyter_sched: %s", said)
            self._connected_said = said
        return said

    def _squatted(self, said: str) -> None:
        """Keep a refusal because another account held the service's address, for the service's audit (verify26 V8)."""
        if isinstance(said, Refusal) and said.address:
            self.squats.seen(said.uid, said.address, datetime.now(timezone.utc))

    def _report_squats(self) -> None:
        """Once a request reached the service again: hand it the squats refused meanwhile (``POST squat-refused``,
        :mod:`.squat_log`), in the background, one report at a time; kept when it does not get through."""
        if not self.squats or self._squat_report is not None or self.withheld is not None:
            return
        taken = self.squats.take()

        async def send() -> None:
            try:
                answer = await self.client.post(SQUAT_REPORT_PATH, json={"refusals": [h.to_wire() for h in taken]},
                                                timeout=_KERNEL_REPORT_TIMEOUT_S)
                if answer.status_code == 200:
                    return
                if answer.status_code in (400, 404, 405):  # refused as it is (or an older service): never resent
                    log.warning("jupyter_sched: the scheduler did not take this server's report of a squatted port "
                                "(%s)", answer.status_code)
                    return
            except httpx.HTTPError:
                log.debug("jupyter_sched: the central service did not take a squat report", exc_info=True)
            self.squats.put_back(taken)

        task = fire_and_forget(send(), what="a report of a squatted port")
        self._squat_report = task
        task.add_done_callback(lambda _done: setattr(self, "_squat_report", None))

    async def _withhold(self, request: httpx.Request) -> None:
        """httpx's request hook: send nothing while :attr:`withheld` (the server's own token, no scoped one)."""
        if self.withheld is not None:
            raise TokenWithheld(self.withheld, request=request)

    async def _guard(self, request: httpx.Request) -> None:
        """httpx's request hook: :meth:`check_address` before anything is sent — its look at who listens asked on a
        worker thread, never on the server's IO loop (red36 R4: a look sized by another account's listeners held
        this user's whole server — kernels, saves, terminals — for seconds per forwarded request); what it says is
        logged and raised here, on the loop."""
        try:
            self._refused(await asyncio.to_thread(refusal, request.url, allowed_uids=self.allowed_uids,
                                                  network_trusted=self.network_trusted))
        except ListenerRefused as exc:
            exc.request = request
            raise

    async def start(self) -> None:
        """Start refreshing the running-work cache (read by ``SchedApp.current_activity``); arm
        the exit hook that releases this server's leases if the process ends without ``stop()``; first
        swap the server's own token for one scoped to the scheduler when ``narrow`` is given."""
        self._stopped.clear()
        if self.narrow is not None and self.scoped is None:
            got = await self.narrow.mint()
            if isinstance(got, ScopedToken):
                self.scoped, self.withheld = got, None
                self._send_token(got.token)
                log.info("jupyter_sched: calls to the scheduler carry a token of %s that may only call it (%s)",
                         self.narrow.user, ", ".join(self.narrow.scopes))
            else:
                self.withheld = (f"this server sends the scheduler nothing: its own hub token opens this server and "
                                 f"{got}. Fix: in the hub's config set c.Spawner.pre_spawn_hook = "
                                 f"jupyter_sched.hub.spawn_token.scheduler_token_hook (it gives each server "
                                 f"$JUPYTER_SCHED_SERVICE_TOKEN), or c.SchedApp.hub_service_narrow_token = False "
                                 f"to send the server's own token")
                log.error("jupyter_sched: %s", self.withheld)
        self._task = asyncio.ensure_future(self._poll())
        if self.kernel_report_interval_s > 0:
            self._report_task = asyncio.ensure_future(self._report_kernels())
        atexit.register(self._release_at_exit)

    def _send_token(self, token: str) -> None:
        self.token = token
        if self._client is not None:
            self._client.headers["Authorization"] = f"token {token}"

    def _release_at_exit(self) -> None:
        """Release this server's leases synchronously (the event loop is gone at exit)."""
        kernel_ids = set(self.kernel_ids())
        if not kernel_ids or self.withheld is not None:
            return
        headers = {"Authorization": f"token {self.token}", "Accept": "application/json"}
        try:
            if self._transport is None:
                self.check_address(self._api)
            network = guarded_sync_transport(self.check_connected) if self._transport is None else None
            with httpx.Client(base_url=self.api_url, headers=headers, timeout=10.0, trust_env=False,
                              transport=network) as http:
                response = http.get("leases", params={"state": _LIVE})
                for lease in response.json() if response.status_code == 200 else []:
                    if lease.get("kernel_id") in kernel_ids:
                        answer = http.delete(f"leases/{lease['id']}", params={"why": "server_stop"})
                        if answer.status_code == 400:  # a central service older than the cause
                            http.delete(f"leases/{lease['id']}")
        except (httpx.HTTPError, ValueError) as exc:
            # one line for the operator; the traceback only at debug level (new user 17, N24: two full
            # httpx tracebacks when the service was down while users' servers stopped)
            why = "refused the connection" if isinstance(exc, httpx.ConnectError) else f"did not answer ({exc})"
            log.warning("jupyter_sched: could not release this server's leases at exit: the scheduler (%s) %s — "
                        "they are released once the hub lists no server of yours", self.api_url, why)
            log.debug("jupyter_sched: releasing this server's leases at exit failed", exc_info=True)

    async def probe(self) -> None:
        """One reconnect attempt (:class:`.reconnect.CentralLink`), or a check of a silent event stream:
        any answer of ``GET config`` means the service answers. Raises ``httpx.HTTPError`` when it does not."""
        await self.client.get("config", timeout=_PROBE_TIMEOUT_S)

    async def stop(self) -> None:
        """Release the leases of this server's kernels on the central service, then close."""
        self._stopped.set()
        await self.link.stop()
        atexit.unregister(self._release_at_exit)
        for task in (self._task, self._report_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._task = self._report_task = None
        try:
            released = await self.release_leases(set(self.kernel_ids()), reason="server stopped")
            if released:
                log.info("jupyter_sched: released %d lease(s) of this server: %s", len(released), released)
        except Exception:
            log.warning("jupyter_sched: could not release this server's leases on the central service; "
                        "it releases them when the hub reports the server stopped", exc_info=True)
        if self.narrow is not None and self.scoped is not None:
            await self.narrow.revoke(self.scoped)
            self.scoped = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _poll(self) -> None:
        while not self._stopped.is_set():
            try:
                response = await self.client.get("jobs", params={"state": _HOLDING})
                if response.status_code == 200:
                    self._running = await self._without_idle(list(response.json()))
            except (httpx.HTTPError, ValueError):
                log.debug("jupyter_sched: central service did not answer the activity poll", exc_info=True)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.poll_interval_s)

    async def _without_idle(self, work: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``work`` less what the central service's idle rules list as idle (``GET idle``): an idle
        lease is no activity of this server (red team 15, R6 addendum; a busy kernel is activity of
        its own). All of ``work`` when the service does not say (an older one)."""
        if not work:
            return work
        with contextlib.suppress(httpx.HTTPError, ValueError):
            answer = await self.client.get("idle")
            listed = answer.json() if answer.status_code == 200 else None
            if isinstance(listed, list):
                idle = {str(c.get("job_id")) for c in listed if isinstance(c, dict)}
                return [job for job in work if str(job.get("id")) not in idle]
        return work

    async def report_kernels(self) -> list[str]:
        """Tell the central service which kernels live on this server; the lease ids it released.

        Raises:
            httpx.HTTPError: the central service did not answer.
        """
        answer = await self._send_report()
        if await self._shut_down(answer.get("shutdown")):
            await self._send_report()  # it says at once that they are gone (their leases end with their GPU)
        return [str(i) for i in answer.get("released", ())]

    async def _send_report(self) -> dict[str, Any]:
        """One ``PUT kernels``; its answer (``{}`` unless 200 with an object)."""
        if self._reporting is None:
            self._reporting = asyncio.Lock()
        async with self._reporting:  # the service keeps the report that arrives last: the one built last
            body = self.kernel_report_body()
            response = await self.client.put(_KERNEL_REPORT_PATH, json=body, timeout=_KERNEL_REPORT_TIMEOUT_S)
        self._report_squats()  # the service answered again (verify26 V8)
        if response.status_code != 200:
            log.debug("jupyter_sched: kernel report answered %s", response.status_code)
            return {}
        answer = response.json()
        return answer if isinstance(answer, dict) else {}

    async def _shut_down(self, asked: Any) -> list[str]:
        """Shut down the kernels the central service asked for (idle reclaim, :mod:`.idle_shutdown`): only
        kernels of this server, at most :data:`_MAX_SHUTDOWNS` an answer; the ids shut down."""
        if not isinstance(asked, list):
            return []
        mine = set(self.kernel_ids())
        done: list[str] = []
        for item in asked[:_MAX_SHUTDOWNS]:
            kernel = item.get("kernel_id") if isinstance(item, dict) else None
            if not isinstance(kernel, str) or kernel not in mine or kernel in done:
                continue
            words = str(item.get("message") or "idle reclaim")[:2000]
            if self.shutdown_kernel is None:
                log.warning("jupyter_sched: the central service asked to shut down kernel %s (%s); this server "
                            "cannot", kernel, words)
                continue
            log.warning("jupyter_sched: %s", words)
            try:
                await self.shutdown_kernel(kernel)
            except Exception:  # the lease stays held (its process is still on the GPU) and says so later
                log.exception("jupyter_sched: shutting down idle kernel %s failed", kernel)
                continue
            done.append(kernel)
        return done

    def kernel_report_body(self) -> dict[str, Any]:
        """``{"server", "kernels": [ids], "states": {id: {"execution_state", "last_activity": ISO}}}``
        (:mod:`.liveness`): what jupyterhub-idle-culler reads from ``/api/kernels``."""
        kernels = sorted(set(self.kernel_ids()))
        body: dict[str, Any] = {"server": self.server_name, "kernels": kernels}
        if self.kernel_states is not None:
            states = self.kernel_states()
            body["states"] = {kernel: {"execution_state": str(state.get("execution_state") or "unknown")[:32],
                                       "last_activity": _iso_or_none(state.get("last_activity"))}
                              for kernel in kernels if isinstance(state := states.get(kernel), Mapping)}
        return body

    async def _report_kernels(self) -> None:
        while not self._stopped.is_set():
            try:
                released = await self.report_kernels()
                if released:
                    log.info("jupyter_sched: the central service released lease(s) of gone kernels: %s", released)
            except (httpx.HTTPError, ValueError):
                log.debug("jupyter_sched: central service did not take the kernel report", exc_info=True)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.kernel_report_interval_s)

    # ---- the parts of SchedulerService the extension itself calls -----------------------------
    def list_jobs(self, *, user: str | None = None, state: str | None = None,
                  kind: str | None = None) -> list[dict[str, Any]]:
        """The user's admitted/running work as last polled (for server activity only)."""
        return list(self._running)

    def subscribe(self) -> AsyncIterator[dict[str, Any]]:
        """No local events: ``events`` is streamed from the central service by the handler."""
        return self._no_events()

    async def _no_events(self) -> AsyncIterator[dict[str, Any]]:
        await self._stopped.wait()
        return
        yield  # pragma: no cover  (makes this an async generator)

    async def release_kernel(self, kernel_id: str, *, reason: str) -> list[str]:
        """Release the live leases bound to ``kernel_id``; their ids."""
        return await self.release_leases({kernel_id}, reason=reason)

    async def release_leases(self, kernel_ids: set[str], *, reason: str) -> list[str]:
        """Release this user's live leases bound to any of ``kernel_ids``; their ids. ``reason``
        (``kernel shutdown``, ``kernel restart``, ``server stopped``) goes as the release's cause,
        so the lease says the server released it and why, not ``released by <owner>`` as if the
        owner ran ``%gpu release`` (new user 5 #16).

        Raises:
            HubServiceUnreachable: the central service did not answer.
        """
        if not kernel_ids:
            return []
        try:
            response = await self.client.get("leases", params={"state": _LIVE})
            leases = response.json() if response.status_code == 200 else []
            released = []
            for lease in leases:
                if lease.get("kernel_id") in kernel_ids and not draining(lease):  # the drain ends those
                    path = f"leases/{lease['id']}"
                    why = _RELEASE_CAUSES.get(reason)
                    done = await self.client.delete(path, params={"why": why} if why else None)
                    if done.status_code == 400 and why:  # a central service older than the cause
                        done = await self.client.delete(path)
                    if done.status_code in (200, 409):
                        released.append(str(lease["id"]))
            return released
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc, self.link.failed(exc)) from None

    def report_refused_token(self, token: str, request: str, *, why: str | None = None) -> bool:
        """Hand a token this server's hub auth refused to the central service, which asks the hub whose
        it is and audits the refusal under that user (:mod:`.refusals`; new user 13, N14), in the
        background; at most :data:`_REFUSAL_REPORTS_PER_MINUTE` a minute (a flood of wrong tokens
        is not sent on). ``why`` ``"not_the_owner"``: the token was the hub's, of a visitor of this
        shared server, whom :meth:`check_caller` refused (red team 15, R10). False when not sent."""
        now = asyncio.get_running_loop().time()
        self._refusal_reports = [t for t in self._refusal_reports if now - t < 60.0]
        if len(self._refusal_reports) >= _REFUSAL_REPORTS_PER_MINUTE or len(token) > 512:
            return False
        self._refusal_reports.append(now)

        async def send() -> None:
            try:
                body = {"token": token, "request": request[:200], **({"why": why} if why else {})}
                await self.client.post(REFUSED_TOKEN_PATH, json=body, timeout=_KERNEL_REPORT_TIMEOUT_S)
            except httpx.HTTPError:
                log.debug("jupyter_sched: the central service did not take a refused-token report", exc_info=True)

        fire_and_forget(send(), what="a report of a refused token", keep=self._refusal_tasks)
        return True

    # ---- forwarding ------------------------------------------------------------------------
    def check_caller(self, caller: str | None) -> None:
        """Refuse anyone but this server's owner (see module docstring).

        Raises:
            AuthorizationError: ``caller`` is not the owner (403 ``not_the_owner``).
        """
        if self.owner is not None and caller != self.owner:
            raise NotTheOwner(f"this server forwards scheduler requests for its owner {self.owner} only; "
                               f"{caller or 'an unknown caller'} cannot act through it",
                               hint="use the scheduler from your own server, or call the central service "
                                    "with your own token")

    def target(self, raw_path: str, query: str) -> httpx.URL:
        """The absolute URL of ``raw_path`` on the central service (see :func:`forward_path`).

        Raises:
            ValidationError, NotFoundError: see :func:`forward_path`.
        """
        path = forward_path(raw_path, self.routes)
        url = httpx.URL(self.api_url + path + (f"?{query}" if query else ""))
        if (url.scheme, url.host, url.port) != (self._api.scheme, self._api.host, self._api.port) \
                or not url.path.startswith(self._api.path):
            raise ValidationError(f"{raw_path[:80]!r} leaves the central service", field="path",
                                  hint="request a route under api/sched/")  # unreachable after forward_path
        return url

    async def forward(self, method: str, path: str, query: str, body: bytes | None,
                      content_type: str | None) -> httpx.Response:
        """Send one request to ``{api_url}{path}?{query}``; the complete response.

        Raises:
            ValidationError, NotFoundError: ``path`` may not be forwarded (nothing is sent).
            HubServiceUnreachable: connection refused or timed out.
        """
        url = self.target(path, query)
        headers = {"Content-Type": content_type} if content_type else {}
        headers[FORWARDED_HEADER] = self.server_name or "default"  # its kernels run here, not there
        try:
            response = await self.client.request(method, url, content=body or None, headers=headers)
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc, self.link.failed(exc)) from None
        self.link.succeeded()
        self._report_squats()
        return response

    def stream(self, path: str, query: str, *, last_event_id: str | None = None) -> Any:
        """A streaming GET (``async with service.stream(...) as response``) with no read timeout;
        ``last_event_id``: the SSE client's, so the central resumes its event stream.

        Raises:
            ValidationError, NotFoundError: ``path`` may not be forwarded.
        """
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        return self.client.stream("GET", self.target(path, query), headers=headers,
                                  timeout=httpx.Timeout(None, connect=10.0))


def silence_bound_s(keepalive_s: float) -> float:
    """Seconds of silence on the central's event stream after which the forwarder asks whether the service
    still answers: one and a half keep-alive intervals (a keep-alive late by half its interval is on time)."""
    return 1.5 * keepalive_s


def _iso_or_none(value: Any) -> str | None:
    """A kernel's ``last_activity`` (an aware datetime from jupyter_server) as ISO 8601 with offset."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()
    return None


class NotTheOwner(AuthorizationError):
    """A request of someone but a server's owner, through a server shared with them (403)."""

    code = "not_the_owner"


def forwarding_service(app: Any) -> ForwardingService:
    """Build the :class:`ForwardingService` of a ``SchedApp`` whose ``hub_service_url`` is set.

    Raises:
        traitlets.TraitError: no hub token (``hub_service_token`` / ``$JUPYTERHUB_API_TOKEN``).
    """
    from traitlets import TraitError

    token = app.hub_service_token
    if not token:
        raise TraitError("c.SchedApp.hub_service_token: empty. Fix: run the server under JupyterHub "
                         "(which sets JUPYTERHUB_API_TOKEN) or set the token")

    def kernel_ids() -> list[str]:
        km = getattr(app.serverapp, "kernel_manager", None)
        return list(km.list_kernel_ids()) if km is not None else []

    def states() -> dict[str, dict[str, Any]]:
        from ..extension.kernels import kernel_states

        km = getattr(app.serverapp, "kernel_manager", None)
        return kernel_states(km) if km is not None else {}

    async def shutdown_kernel(kernel_id: str) -> None:
        await app.serverapp.kernel_manager.shutdown_kernel(kernel_id)  # as the culler does: hooks and events fire

    narrow = None
    hub_api, owner = os.environ.get("JUPYTERHUB_API_URL", ""), os.environ.get("JUPYTERHUB_USER", "")
    spawned = os.environ.get(SERVICE_TOKEN_ENV, "")
    if spawned and token == os.environ.get("JUPYTERHUB_API_TOKEN"):
        token = spawned  # the hub minted it at spawn, scoped to the scheduler (verify26 V3)
    elif app.hub_service_narrow_token and hub_api and owner and token == os.environ.get("JUPYTERHUB_API_TOKEN"):
        named = re.search(r"/services/([^/]+)/?$", urlsplit(app.hub_service_url).path)
        narrow = NarrowTokens(hub_api, owner, token, named.group(1) if named else "jupyter-sched",
                              server_name=os.environ.get("JUPYTERHUB_SERVER_NAME", ""))
    return ForwardingService(app.hub_service_url, token, kernel_ids=kernel_ids, kernel_states=states, narrow=narrow,
                             shutdown_kernel=shutdown_kernel,
                             owner=os.environ.get("JUPYTERHUB_USER") or None,
                             server_name=os.environ.get("JUPYTERHUB_SERVER_NAME", ""),
                             poll_interval_s=float(app.activity_interval_s),
                             kernel_report_interval_s=float(app.kernel_report_interval_s),
                             allowed_uids=app.hub_service_uids, network_trusted=app.hub_service_network_trusted)


class ForwardHandler(APIHandler):
    """``{base_url}api/sched/<path>`` in a user's server in hub mode: forward to the central service."""

    auth_resource = "sched"

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        path = self.path_args[0] if self.path_args else ""
        quiet = self.request.method == "GET" or path.split("/")[0] in _QUIET_PATHS or path.endswith(("/keepalive", "/heartbeat"))
        return not quiet

    @property
    def forwarding(self) -> ForwardingService:
        service: ForwardingService = self.settings["jupyter_sched"].services
        return service

    def _raw_path(self) -> str:
        """The request path after ``{base_url}api/sched/`` exactly as received (not decoded:
        tornado's path argument has ``%2e%2e`` already turned into ``..``)."""
        prefix = self.base_url + "api/sched/"
        raw = self.request.path
        if not raw.startswith(prefix):
            raise ValidationError("the request path does not start with the server's api/sched/", field="path",
                                  hint="request a route under api/sched/")
        return raw[len(prefix):]

    def _check(self) -> str:
        """The raw route path, once the caller is the owner and the path may be forwarded."""
        user = self.current_user
        self.forwarding.check_caller(getattr(user, "username", None) or getattr(user, "name", None))
        path = self._raw_path()
        self.forwarding.target(path, "")  # refuse before anything is sent
        return path

    @web.authenticated
    @authorized
    async def get(self, path: str) -> None:
        path = self._check()
        query = self.request.query
        if path == "events":
            await self._events(query)
        elif path.endswith("/logs") and "follow=" in query and "follow=false" not in query and "follow=0" not in query:
            await self._stream(path, query)
        else:
            await self._forward("GET", path)

    @web.authenticated
    @authorized
    async def post(self, path: str) -> None:
        path = self._check()
        if self._refuse_unknown_kernel(path):  # the central checks kernel_id against this server's report
            with contextlib.suppress(httpx.HTTPError, ValueError):
                await self.forwarding.report_kernels()
        await self._forward("POST", path)

    def _refuse_unknown_kernel(self, path: str) -> bool:
        """A lease naming a kernel this server does not run is refused here (issue 20 (d), as
        the embedded server does): only this server knows its kernels; the central service,
        told by :data:`FORWARDED_HEADER` that they run here, takes the request as checked.

        Returns:
            Whether the request is a lease of one of this server's kernels.

        Raises:
            ValidationError: naming ``kernel_id``.
        """
        if path.rstrip("/") not in ("leases", "jobs", "dryrun"):  # dryrun: as submit (red team 16, R9)
            return False
        raw = self.request.body or b"{}"
        if len(raw) > ON_LOOP_BYTES and body_items(raw) > MAX_BODY_ITEMS:
            return False  # never decoded here: the central refuses it 413, counted as here (red38 R1)
        try:
            body = untrusted_json.loads(raw)
        except ValueError:
            return False  # the central service names the malformed body
        kernel_id = body.get("kernel_id") if isinstance(body, dict) else None
        if not isinstance(kernel_id, str) or not kernel_id or body.get("parent_job_id"):
            return False
        if path.rstrip("/") in ("jobs", "dryrun") and body.get("kind") != "lease":
            return False
        if kernel_id not in set(self.forwarding.kernel_ids()):
            raise ValidationError(
                f"kernel_id: no kernel {kernel_id[:80]!r} runs on this server, so neither %gpu release nor the "
                "kernel's end would free the GPUs", field="kernel_id",
                hint="give the id of a kernel running on this server (%gpu request sends its own kernel's id, "
                     "JUPYTER_SCHED_KERNEL_ID), or leave kernel_id out for GPUs bound to no kernel, released "
                     "with `jupyter-sched cancel`")
        return True

    @web.authenticated
    @authorized
    async def put(self, path: str) -> None:
        await self._forward("PUT", self._check())

    @web.authenticated
    @authorized
    async def patch(self, path: str) -> None:
        await self._forward("PATCH", self._check())

    @web.authenticated
    @authorized
    async def delete(self, path: str) -> None:
        await self._forward("DELETE", self._check())

    def log_exception(self, typ: Any, value: BaseException | None, tb: Any) -> None:
        """A refused request is one warning line (written by :meth:`write_error`), never an
        "Uncaught exception" traceback: a link a user is lured into must not flood the log."""
        if isinstance(value, SchedError):
            return
        super().log_exception(typ, value, tb)

    async def _forward(self, method: str, path: str) -> None:
        response = await self.forwarding.forward(method, path, self.request.query, self.request.body or None,
                                                 self.request.headers.get("Content-Type"))
        self.set_status(response.status_code)
        for name in _PASS_HEADERS:
            if name in response.headers:
                self.set_header(name, response.headers[name])
        # the central's media type (a notebook, CSV), which APIHandler.finish would make JSON
        self.finish(response.content, set_content_type=response.headers.get("Content-Type", "application/json"))

    async def _stream(self, path: str, query: str) -> None:
        try:
            async with self.forwarding.stream(path, query) as response:
                self.set_status(response.status_code)
                for name in _PASS_HEADERS:
                    if name in response.headers:
                        self.set_header(name, response.headers[name])
                async for chunk in response.aiter_raw():
                    self.write(chunk)
                    await self.flush()
        except StreamClosedError:
            return
        except httpx.HTTPError as exc:
            state = self.forwarding.link.failed(exc)
            if self._headers_written:
                return
            raise _unreachable(self.forwarding.url, exc, state) from None
        if not self._finished:
            self.finish()

    async def _events(self, query: str) -> None:
        """``GET events``: the central service's stream, passed on whole event by whole event;
        while it does not answer, this server's own stream of the retry loop's ``connection``
        events (:mod:`.reconnect`), ended once the service answers again so the client
        reconnects to the central's stream (and re-reads what it missed)."""
        link = self.forwarding.link
        try:
            if link.reconnecting is None:
                try:
                    await self._pass_events(query)
                    return
                except httpx.HTTPError as exc:
                    link.failed(exc)
            await self._reconnecting_events(link)
        except StreamClosedError:
            return

    async def _pass_events(self, query: str) -> None:
        """Copy the central's event stream through, flushing whole SSE blocks only (so a stream
        cut off mid-event never leaves half an event before this server's own events).

        A stream silent past the heartbeat (:func:`silence_bound_s` of this server's ``events_keepalive_s``;
        the central sends a keep-alive comment as often) asks the service ``GET config`` (5 s): no answer
        raises ``httpx.HTTPError``, and :meth:`_events` goes on with the retry loop's ``connection`` events
        (newuser33 N3: a hung service, SIGSTOPped, kept its TCP stream open, and the panel said LIVE for
        minutes); an answer keeps passing the stream (a central whose keep-alive is set longer)."""
        silence_s = silence_bound_s(float(getattr(self.settings["jupyter_sched"], "events_keepalive_s", 15.0)))
        async with self.forwarding.stream("events", query,
                                          last_event_id=self.request.headers.get("Last-Event-ID")) as response:
            self.set_status(response.status_code)
            for name in _PASS_HEADERS:
                if name in response.headers:
                    self.set_header(name, response.headers[name])
            self.forwarding.link.succeeded()
            pending = b""
            chunks = response.aiter_raw().__aiter__()

            async def next_chunk() -> bytes | None:
                with contextlib.suppress(StopAsyncIteration):
                    chunk: bytes = await chunks.__anext__()
                    return chunk
                return None

            reading: asyncio.Task[bytes | None] | None = None
            try:
                while True:
                    # one read in flight across the silences: a cancelled read would end the stream
                    reading = reading or asyncio.ensure_future(next_chunk())
                    done, _ = await asyncio.wait({reading}, timeout=silence_s)
                    if not done:
                        await self.forwarding.probe()  # raises httpx.HTTPError: the service does not answer
                        continue
                    chunk = reading.result()
                    reading = None
                    if chunk is None:
                        break
                    pending += chunk
                    end = pending.rfind(b"\n\n")
                    if end >= 0:
                        self.write(pending[:end + 2])
                        pending = pending[end + 2:]
                        await self.flush()
            finally:
                if reading is not None and not reading.done():
                    reading.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await reading
        if not self._finished:
            self.finish()

    async def _reconnecting_events(self, link: CentralLink) -> None:
        if not self._headers_written:
            self.set_status(200)
            self.set_header("Content-Type", "text/event-stream")
            self.set_header("Cache-Control", "no-cache")
            self.set_header("X-Accel-Buffering", "no")
            self.write(": jupyter_sched event stream (the central service is reconnecting)\nretry: 3000\n\n")
        keepalive_s = float(getattr(self.settings["jupyter_sched"], "events_keepalive_s", 15.0))
        queue = link.listen()
        try:
            event = link.event()
            while True:
                self.write(f"event: connection\ndata: {json.dumps(event['data'])}\n\n")
                await self.flush()
                if event["data"].get(CENTRAL) is None:  # back: the client reconnects to the real stream
                    break
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), keepalive_s)
                        break
                    except asyncio.TimeoutError:
                        self.write(": keepalive\n\n")
                        await self.flush()
        finally:
            link.unlisten(queue)
        if not self._finished:
            self.finish()

    def _credentials_refused(self) -> dict[str, Any]:
        """Message and hint of a request the hub's auth refused at this server: whose server this is
        and where the caller's own scheduler is (new user 13, N14: a token of another user got a bare
        "request refused"). The auth does not say whose token it was, so the message does not either."""
        owner = self.forwarding.owner
        page = hub_token_page(self.request.full_url())
        whose = f"this is {owner}'s Jupyter server" if owner else "this is a user's Jupyter server"
        mine = self.base_url.replace(f"/user/{owner}/", "/user/<you>/") if owner else "your own server's URL"
        return {"message": f"{whose}: the request's token may not use it (a token of another user, or a wrong one)",
                "details": {"credentials": "refused"},
                "hint": (f"use your own server ({mine}api/sched/) or the hub's scheduler service "
                         f"({urlsplit(self.forwarding.url).path} on the hub) with {token_source(page or '/hub/token')}")}

    def _presented_token(self) -> str | None:
        """The token the request came with (``Authorization: token|bearer T``, else ``?token=T``), or None."""
        match = _AUTH_HEADER.match(self.request.headers.get("Authorization", ""))
        token = match.group(1).strip() if match else (self.get_query_argument("token", "") or "").strip()
        return token or None

    def _visitor_token(self) -> str | None:
        """The hub token a visitor of this shared server came with: a header or ``?token=``, else the one
        JupyterHub's OAuth keeps in this server's cookie for them (``HubAuth.get_token``); None if none."""
        auth = getattr(getattr(self, "identity_provider", None), "hub_auth", None)
        try:
            token = auth.get_token(self) if auth is not None else None
        except Exception:  # best effort: the refusal stands and is in this server's log
            token = None
        return str(token) if token else self._presented_token()

    def _route_said(self) -> str:
        """The refused request's path under ``api/sched/`` (shortened), for the audit record."""
        return self.request.path.split("api/sched/", 1)[-1][:120]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """SchedErrors (502 for an unreachable central service) and HTTP errors as the API's JSON."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, HubServiceUnreachable):
            status, body = 502, exc.to_json()
        elif isinstance(exc, SchedError):
            status, body = http_status_for(exc), exc.to_json()
            if isinstance(exc, (AuthorizationError, ValidationError)):
                self.log.warning("jupyter_sched: refused to forward %s %s for %s: %s", self.request.method,
                                 self.request.path[:200], getattr(self.current_user, "username", "?"), exc.message)
            if isinstance(exc, NotTheOwner):  # audited at the central service under the visitor's token (R10)
                token = self._visitor_token()
                if token:
                    self.forwarding.report_refused_token(token, f"{self.request.method} {self._route_said()}",
                                                         why=NotTheOwner.code)
        elif isinstance(exc, web.HTTPError):
            status = exc.status_code
            body = {"error": {"code": "forbidden" if status == 403 else "http_error",
                              "message": exc.log_message or "request refused", "field": None, "hint": None}}
            if status in (401, 403) and not exc.log_message:  # the hub's auth refused the token before us
                body["error"].update(self._credentials_refused())
                token = self._presented_token()
                if token:  # audited at the central service under the token's owner (N14)
                    self.forwarding.report_refused_token(token, f"{self.request.method} {self._route_said()}")
        else:
            status = 500
            body = {"error": {"code": "internal_error", "message": "internal server error", "field": None,
                              "hint": "the server log has the details; please report it"}}
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))
