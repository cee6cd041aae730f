"""REST handlers of ``{base_url}api/sched/`` and THE route table (STYLE §8).

Each method parses a request model, makes one service call with the request's Caller and replies with the response
model (:mod:`.web`: the base class, the one error mapping); authorization lives in the services and admission step.
Read-only and push endpoints set ``_track_activity = False`` so panel polling never keeps an idle server alive;
running work reports activity through ``SchedApp.current_activity()``.
"""

from __future__ import annotations

import functools

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from ..errors import NotFoundError, StoppingError
from ..model import JobKind
from ..services.models import (
    CancelJobRequest,
    GetAuditRequest,
    GetJobLogsRequest,
    GetQueueRequest,
    GetTelemetryHistoryRequest,
    GetTelemetryRequest,
    KeepaliveLeaseRequest,
    ListJobsRequest,
    SetIdlePolicyRequest,
    SetQuotasRequest,
    SubmitJobRequest,
    WaitLeaseRequest,
    parse,
)
from ..services.models.jobs import SubmitJobQuery
from ..services.visibility import event_for
from .cancel_web import CancelJobsHandler
from .ends_web import ENDS_ROUTES
from .eta_accuracy import EtaAccuracyHandler
from .events import RESUME_HEADER, stream_replacements
from .lease_wait import EndsWaitOnHangUp, LeaseWaiter, poll_interval, waiting_user
from .log_follow import follow_logs
from .metrics_web import MetricsHandler
from .nodes_web import CordonNodeHandler, UncordonNodeHandler
from .one_per_user import OnePerUserCalls
from .polled import jobs_headers, queue_headers
from .route_guess import unknown_route_hint
from .teams_web import RENAME_ROUTES
from .update_web import UpdatesJob
from .usage_web import QuotaWhatIfHandler, UsageHandler, UsageReportHandler, UsageWasteHandler
from .web import SchedHandler
from .zones_web import ZoneLabelsHandler

__all__ = ["HANDLERS", "SchedHandler", "UnknownRouteHandler"]


class _WritesAreActivity(SchedHandler):
    """A resource whose GETs are polling (not activity) and whose other methods are the user acting."""

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return bool(self.request.method != "GET")


class ConfigHandler(SchedHandler):
    """``GET config``: what this backend supports (read by the panel and the CLI)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query()
        self.reply(self.sched.capabilities())


class MeHandler(SchedHandler):
    """``GET me``: the caller, their teams and granted classes, usage against quota."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query()
        accounting, who = self.services.accounting, self.caller_key()  # kept: answered on the loop (issue 17)
        answer = None if who is None else accounting.kept_me(who, asked_at=self.asked_at) or await self.call(accounting.me_of, who)
        answer = answer or await self.call(accounting.me, self.caller)
        said = self.services.admission.account_said  # hub mode: no account to run jobs as (newuser38 n16)
        if said is not None and answer is not None:
            text = said.kept(answer.user)
            if text is None:
                text = await self.call(said, answer.user)
            if text:
                answer = answer.model_copy(update={"jobs_cannot_run": text})
        order = getattr(self.sched, "team_order", None)  # hub mode: a group joined or left (newuser38 N3)
        if order is not None and answer is not None:  # said of this answer's groups and team (newuser39 n12)
            answer = order.noted(answer, who[2] if who else None, self.services.clock.now())
        self.reply(answer)


class InventoryHandler(SchedHandler):
    """``GET inventory``: nodes and GPUs (simulated ones labelled), NVML status (case 015)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query()
        who, system = self.caller_key(), self.services.system  # kept: answered on the loop (issue 17)
        self.reply((who and system.kept_inventory(who[1], who[0], asked_at=self.asked_at)) or await self.call(system.inventory, self.caller))


class JobsHandler(_WritesAreActivity):
    """``GET jobs`` (own jobs; admins may pass ``user`` or ``all=true``) and ``POST jobs`` (submit, 201)."""

    kind: JobKind | None = None

    @web.authenticated
    @authorized
    async def get(self) -> None:
        request = self.query(ListJobsRequest)
        kept = self.services.jobs.kept_list(self.own_name(), request, kind=self.kind, asked_at=self.asked_at)  # on the loop
        page = kept or await self.call(self.services.jobs.list, self.caller, request, kind=self.kind)
        for name, value in jobs_headers(page, request, self.request.path):  # RFC 8288 paging
            self.set_header(name, value)
        self.reply(page.jobs)

    @web.authenticated
    @authorized
    async def post(self) -> None:
        request = await self.body(SubmitJobRequest)
        await self.admit_lease(request)
        # the client's submit key: a resend is answered with the job it made, 200 (s31-n8; a query argument, which
        # a user's server forwards to a hub's service whatever its version, or the Idempotency-Key header)
        key = self.query(SubmitJobQuery).idempotency_key or self.request.headers.get("Idempotency-Key")
        if key is None:
            self.reply(await self.call(self.services.jobs.submit, self.caller, request, kind=self.kind,
                                       kernels_checked=self.kernels_checked), status=201)
            return
        job, replayed = await self.call(self.services.jobs.submit_keyed, self.caller, request, key, kind=self.kind,
                                        kernels_checked=self.kernels_checked)
        if replayed:
            self.set_header("Idempotent-Replayed", "true")
        self.reply(job, status=200 if replayed else 201)

    async def admit_lease(self, request: SubmitJobRequest) -> None:
        """The hub service's own check of a new lease (``HubSchedApp.admit_lease``; none embedded)."""
        check = getattr(self.sched, "admit_lease", None)
        if check is not None and (self.kind is JobKind.LEASE or request.kind == JobKind.LEASE.value):
            if self._sched_caller is None:  # POST jobs resolves its caller late (LATE_CALLER): now, for the check
                self._sched_caller = await self.call(self.sched.resolve_caller, self.current_user)
            await check(self.caller, request)


class LeasesHandler(EndsWaitOnHangUp, JobsHandler):
    """``GET|POST leases``: interactive GPUs bound to a kernel (jobs of kind ``lease``).
    ``POST leases?wait_ms=`` answers once the lease is decided (:mod:`.lease_wait`)."""

    kind = JobKind.LEASE

    @web.authenticated
    @authorized
    async def post(self) -> None:
        request = await self.body(SubmitJobRequest)
        wait = self.query(WaitLeaseRequest)
        await self.admit_lease(request)
        with LeaseWaiter(self.sched.event_hub, await waiting_user(self), wait.wait_ms) as self._waiter:
            submitted = await self.call(self.services.jobs.submit, self.caller, request, kind=self.kind,
                                        kernels_checked=self.kernels_checked)
            try:
                lease = await self._waiter.decided(submitted, wait.wait_ms, functools.partial(
                    self.call, self.services.jobs.get, self.caller, submitted.id, kind=self.kind),
                    poll_s=poll_interval(self.services))
            except StoppingError:
                # the server began to stop while the made lease waited: answered as made (pending), never 503
                # "stopping … not carried out", which a client may send again (newuser36 N2); its wait goes on
                # with GET leases/{id}, which rides the restart out
                lease = submitted
        # the submit's notes, which a re-read or the engine's event does not carry (verify 20, V1: %gpu never showed one)
        self.reply(lease.model_copy(update={"warnings": submitted.warnings}) if submitted.warnings else lease, status=201)


class JobHandler(UpdatesJob, _WritesAreActivity):
    """``GET jobs/{id}``, ``PATCH jobs/{id}`` (:mod:`.update_web`) and ``DELETE jobs/{id}`` (cancel). Others' jobs: 404."""

    kind: JobKind | None = None

    @web.authenticated
    @authorized
    async def get(self, job_id: str) -> None:
        self.no_query()
        self.reply(await self.call(self.services.jobs.get, self.caller, job_id, kind=self.kind))

    @web.authenticated
    @authorized
    async def delete(self, job_id: str = "", lease_id: str = "") -> None:  # leases/{lease_id} too (new user 11, N10)
        why = self.query(CancelJobRequest)  # a lease's record says why it ended (issue 20)
        self.reply(await self.call(self.services.jobs.cancel, self.caller, job_id or lease_id, kind=self.kind, cause=why))


class LeaseHandler(EndsWaitOnHangUp, JobHandler):
    """``GET|DELETE leases/{id}``; ``GET leases/{id}?wait_ms=`` answers once it is decided (:mod:`.lease_wait`)."""

    kind = JobKind.LEASE
    patch = web.RequestHandler.patch  # a lease is released, not held or changed (PATCH jobs/{id} only)

    @web.authenticated
    @authorized
    async def get(self, lease_id: str) -> None:  # the route's own name (new user 11, N10)
        wait, caller = self.query(WaitLeaseRequest), self.caller
        read = functools.partial(self.call, self.services.jobs.get, caller, lease_id, kind=self.kind)
        with LeaseWaiter(self.sched.event_hub, caller.user, wait.wait_ms) as self._waiter:
            lease = await read()
            lease = await self._waiter.decided(lease, wait.wait_ms, read, poll_s=poll_interval(self.services))
        self.reply(lease)


class LogsHandler(SchedHandler):
    """``GET jobs/{id}/logs?offset=&limit=&follow=``: a bounded slice of the job's log.

    ``follow=true`` long-polls: it answers as soon as new text exists or the job finished, or
    after 25 s with empty text, so a client loops with ``offset = next_offset``.
    """

    _track_activity = False
    _client_gone = False

    @web.authenticated
    @authorized
    async def get(self, job_id: str) -> None:
        chunk = await follow_logs(self, job_id, self.query(GetJobLogsRequest))  # at most 16 wait per user
        if chunk is not None:  # None: the client hung up while it waited
            self.reply(chunk)

    def on_connection_close(self) -> None:
        self._client_gone = True
        super().on_connection_close()  # StopsOnHangUp: a read still in its user's line is not made (red37 R3)


class DryrunHandler(SchedHandler):
    """``POST dryrun``: would this fit, where, and when — without enqueuing."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def post(self) -> None:
        request = await self.body(SubmitJobRequest)  # a whole cycle: on the bounded dry-run threads, never the loop
        self.reply(await self.sched.dryrun_job(self.caller, request, kernels_checked=self.kernels_checked))


class KeepaliveHandler(SchedHandler):
    """``POST leases/{id}/keepalive`` with optional ``{"seconds": n}``: keep an idle lease's GPUs."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def post(self, lease_id: str) -> None:
        request = await self.body(KeepaliveLeaseRequest, optional=True)
        self.reply(await self.call(self.services.leases.keepalive, self.caller, lease_id, request))


class TelemetryHandler(OnePerUserCalls, SchedHandler):  # one at a time per user (red-team 4 finding 3)
    """``GET telemetry?gpu=|job=|lease=&since=&limit=``: current and recent utilization per GPU."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.call(self.services.telemetry.telemetry, self.caller, self.query(GetTelemetryRequest)))


class TelemetryHistoryHandler(OnePerUserCalls, SchedHandler):
    """``GET telemetry/history?job=|lease=|gpu=&since=&until=&step_s=``: utilization and memory
    over time, with the gaps where telemetry was blank, suspect or missing."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.call(self.services.telemetry.history, self.caller,
                                   self.query(GetTelemetryHistoryRequest)))


class IdleHandler(SchedHandler):
    """``GET idle``: work idle now, with when its warning and its reclaim are due (own; admins all)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query()
        self.reply(await self.call(self.services.telemetry.idle, self.caller))


class QueueHandler(SchedHandler):
    """``GET queue``: pending and running work with position, reason and ETA."""
    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        request = self.query(GetQueueRequest)
        kept = self.services.jobs.kept_queue(self.own_name(), request, asked_at=self.asked_at)  # on the loop (issue 17)
        page = kept or await self.call(self.services.jobs.queue_page, self.caller, request)
        for name, value in queue_headers(page, request):  # paging as GET jobs; X-Total-Count
            self.set_header(name, value)
        self.reply(page.entries)


class QuotasHandler(_WritesAreActivity):
    """``GET quotas`` (everyone) and ``PUT quotas`` (admins; audited with the actor)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query()
        self.reply(await self.call(self.services.quotas.get, self.caller))

    @web.authenticated
    @authorized
    async def put(self) -> None:
        request = await self.body_parsed(lambda value: parse(SetQuotasRequest, {"quotas": value} if isinstance(
            value, list) else value))  # parsed off the loop with its decode when large (red38 R1)
        self.reply(await self.call(self.services.quotas.set, self.caller, request))


class IdlePolicyHandler(_WritesAreActivity):
    """``GET idle-policy`` (everyone) and ``PUT idle-policy`` (admins; audited old→new with the actor)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query()
        self.reply(await self.call(self.services.idle.get))

    @web.authenticated
    @authorized
    async def put(self) -> None:
        self.reply(await self.call(self.services.idle.set, self.caller, await self.body(SetIdlePolicyRequest)))


class ProfilesHandler(SchedHandler):
    """``GET profiles``: the admin-defined request templates."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query()
        self.reply(await self.call(self.services.quotas.profiles))


class AuditHandler(SchedHandler):
    """``GET audit?limit=&since=&until=&user=&job_id=&action=`` (admins): the decision log, newest first."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.sched.refusals_written()  # refusals answered before this read are on it (written just after their answer)
        self.reply(await self.call(self.services.audit.list, self.caller, self.query(GetAuditRequest)))


class EventsHandler(SchedHandler):
    """``GET events``: Server-Sent Events of the service's event stream.

    Each event is ``event: <type>`` + ``data: <json>``; a comment line every
    ``events_keepalive_s`` keeps proxies from closing an idle stream. Each client receives its
    caller's view (:func:`~jupyter_sched.services.visibility.event_for`: own job/lease events,
    admins all; telemetry with process lists of their own GPUs only), filtered before it is
    queued. A client that falls ``events_queue_size`` events behind is disconnected.
    """

    _track_activity = False
    _client_gone = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.no_query("GET events takes no query arguments; a client resumes with the Last-Event-ID header")
        caller = self.caller
        hub = self.sched.event_hub
        # filtered before it is queued; a reconnecting client resumes after its Last-Event-ID
        sub = hub.subscribe(functools.partial(event_for, caller), last_event_id=self.request.headers.get("Last-Event-ID"),
                            owner=caller.user, replaced=stream_replacements(self, caller.user))  # red team 4 #1
        self._subscription = sub
        self.set_header(RESUME_HEADER, "1")  # ids resume here (else the client is told: lagged)
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        try:
            self.write(": jupyter_sched event stream\nretry: 3000\n\n")
            await self.flush()
            while True:
                try:
                    item = await sub.next_with_id(self.sched.events_keepalive_s)
                except EOFError:
                    break
                if item is None:
                    self.write(": keepalive\n\n")
                else:
                    event, event_id = item
                    head = f"id: {event_id}\n" if event_id else ""
                    self.write(f"{head}event: {event['type']}\ndata: {hub.text(event['data'])}\n\n")  # serialised once
                await self.flush()
        except StreamClosedError:
            return
        finally:
            hub.unsubscribe(sub)
        if not self._finished and not self._client_gone:
            self.finish(set_content_type="text/event-stream")

    def on_connection_close(self) -> None:
        self._client_gone = True
        sub = getattr(self, "_subscription", None)
        if sub is not None:
            self.sched.event_hub.unsubscribe(sub)


class UnknownRouteHandler(SchedHandler):
    """Any other path under ``api/sched/``: a JSON 404 naming the path (registered after every
    route, so it only answers what no route matched; never the server's HTML page)."""

    _track_activity = False

    def _unknown(self, path: str) -> None:
        raise NotFoundError(f"no route {path[:80]!r} under api/sched/", field="path", hint=unknown_route_hint(path))

    @web.authenticated
    def get(self, path: str) -> None:
        self._unknown(path)

    @web.authenticated
    def post(self, path: str) -> None:
        self._unknown(path)

    @web.authenticated
    def put(self, path: str) -> None:
        self._unknown(path)

    @web.authenticated
    def patch(self, path: str) -> None:
        self._unknown(path)

    @web.authenticated
    def delete(self, path: str) -> None:
        self._unknown(path)


_ID = r"(?P<job_id>[^/]+)"
_LEASE_ID = r"(?P<lease_id>[^/]+)"

HANDLERS: list[tuple[str, type[SchedHandler]]] = [
    ("config", ConfigHandler),
    ("me", MeHandler),
    ("inventory", InventoryHandler),
    ("jobs", JobsHandler),
    ("jobs/cancel", CancelJobsHandler),  # before jobs/{id}
    (f"jobs/{_ID}", JobHandler),
    (f"jobs/{_ID}/logs", LogsHandler),
    ("dryrun", DryrunHandler),
    ("leases", LeasesHandler),
    (f"leases/{_LEASE_ID}", LeaseHandler),
    (f"leases/{_LEASE_ID}/keepalive", KeepaliveHandler),
    ("queue", QueueHandler),
    ("quotas", QuotasHandler),
    ("quotas/what-if", QuotaWhatIfHandler),
    *RENAME_ROUTES,  # teams/{team}/move, users/{user}/rename: the acts after a hub rename (teams_web)
    ("nodes/(?P<node>[^/]+)/cordon", CordonNodeHandler),
    ("nodes/(?P<node>[^/]+)/uncordon", UncordonNodeHandler),
    ("idle-policy", IdlePolicyHandler),
    ("profiles", ProfilesHandler),
    ("zone-labels", ZoneLabelsHandler),  # the names of the panel's zone (newuser35 n12; zones_web)
    ("events", EventsHandler),
    ("telemetry", TelemetryHandler),
    ("telemetry/history", TelemetryHistoryHandler),
    ("idle", IdleHandler),
    ("audit", AuditHandler),
    ("eta-accuracy", EtaAccuracyHandler),
    ("usage", UsageHandler),
    ("usage/report", UsageReportHandler),
    ("usage/waste", UsageWasteHandler),
    *ENDS_ROUTES,  # usage/claimed-ends, jobs/{id}/end: ends claimed while the service was down (red33 R3)
    ("metrics", MetricsHandler),
]
"""THE route table, relative to ``{base_url}api/sched/`` (openapi.yaml mirrors it; a test checks)."""
