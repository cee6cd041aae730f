"""Asynchronous client of the jupyter_sched REST API (httpx.AsyncClient).

Same methods and errors as :class:`jupyter_sched.client.SchedClient`, as coroutines::

    async with connect_async() as sched:  # jupyter_sched.client.connect_async: discovery, and a token scoped
        # to a hub's scheduler when it is one (jupyter_sched.client.hub_token)
        lease = await sched.request_lease({"gpus": 1, "kernel_id": sched.kernel_id})
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from httpx_sse import aconnect_sse

from ..backoff import Backoff, Retries
from ..errors import SchedError
from ._routes import routes
from ._wire import (
    NamedJob,
    Req,
    error_from_response,
    event_of,
    job_named,
    named_lookup,
    unnamed_lookup,
    unwrap_list,
)
from .busy import MAX_BUSY_RETRIES, busy_wait_s, gave_up, retry_notice
from .discovery import Connection, renewed, token_hint
from .sync import DEFAULT_TIMEOUT_S, _to_stderr, headers_for, next_cursor, unreachable, usage_frame
from .when import when_filters

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EVENTS_BACKOFF", "AsyncSchedClient"]

EVENTS_BACKOFF = Backoff(base_s=1.0, cap_s=30.0, jitter=0.2)
"""How :meth:`AsyncSchedClient.events` waits between reconnects: 1 s doubling to 30 s."""
_EVENTS = "events"
_RESUME_HEADER = "X-Jupyter-Sched-Resume"  # jupyter_sched.extension.events.RESUME_HEADER (the server's side)

T = TypeVar("T")


async def _awaited(pending: Awaitable[T]) -> T:
    """``pending`` as a coroutine (what :func:`asyncio.run_coroutine_threadsafe` takes)."""
    return await pending


class AsyncSchedClient:
    """Typed asynchronous client; one coroutine per REST route (see :class:`SchedClient`).

    Args:
        connection: where the server is.
        timeout_s: per-request timeout in seconds (default 30).
        transport: an httpx async transport (tests); default: the network, each connection checked before its
            first byte (:func:`._http.connected_check`: another account's socket is refused, nothing sent).
        notice / sleep: say and wait out a busy answer's retry (:mod:`.busy`; default: stderr,
            ``asyncio.sleep``).
    """

    def __init__(self, connection: Connection, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 transport: httpx.AsyncBaseTransport | None = None, notice: Callable[[str], None] | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.connection = connection
        self._notice = notice or _to_stderr
        self._sleep = sleep
        if transport is None:  # each connection checked before the token goes out (verify27 V2)
            from ..hub.guarded import guarded_transport
            from ._http import connected_check

            transport = guarded_transport(connected_check)
        self._http = httpx.AsyncClient(base_url=connection.api_url, headers=headers_for(connection),
                                       timeout=timeout_s, transport=transport)

    @property
    def kernel_id(self) -> str | None:
        """This kernel's id as the server knows it."""
        return self.connection.kernel_id

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncSchedClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def call(self, req: Req, *, timeout_s: float | None = None) -> Any:
        """Send ``req``; return decoded JSON. Raises the server's SchedError subclass."""
        return self._decode(await self._exchange(req, timeout_s=timeout_s))

    async def _exchange(self, req: Req, *, timeout_s: float | None = None) -> httpx.Response:
        """Send ``req``; a 429 with a short ``Retry-After`` is sent again after it, at most
        :data:`~.busy.MAX_BUSY_RETRIES` times, and a refused token read from a runtime file is read
        there again (as :meth:`SchedClient._exchange`)."""
        response, retries = await self._send(req, timeout_s)
        if response.status_code in (401, 403) and (fresh := renewed(self.connection)) is not None:
            self.connection = fresh
            self._http.headers.update(headers_for(fresh))
            self._http.base_url = httpx.URL(fresh.api_url)
            response, retries = await self._send(req, timeout_s)
        if response.status_code == 429:
            error = error_from_response(429, response.text, token_hint=token_hint(self.connection),
                                        url=self.connection.url)
            raise gave_up(error, response.headers.get("retry-after"), retries=retries)
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.text, token_hint=token_hint(self.connection),
                                      url=self.connection.url)
        return response

    async def _send(self, req: Req, timeout_s: float | None) -> tuple[httpx.Response, int]:
        """``req``'s answer (any status) and how many busy answers (429) were retried before it."""
        retries = 0
        while True:
            try:
                response = await self._http.request(
                    req.method, req.path, params=dict(req.params) or None,
                    json=req.body if req.body is not None else None,
                    timeout=timeout_s if timeout_s is not None else httpx.USE_CLIENT_DEFAULT)
            except httpx.TransportError as exc:
                raise unreachable(self.connection, exc) from None
            wait = busy_wait_s(response.status_code, response.headers.get("retry-after"))
            if wait is None or retries >= MAX_BUSY_RETRIES:
                return response, retries
            retries += 1
            self._notice(retry_notice(wait, retries))
            await self._sleep(wait)

    async def pages(self, req: Req, *, timeout_s: float | None = None) -> AsyncIterator[Any]:
        """Send ``req`` and yield each page's decoded answer (as :meth:`call`), following every
        ``Link: rel=next`` cursor (:meth:`SchedClient.pages <jupyter_sched.client.sync.SchedClient.pages>`,
        awaited). Raises as :meth:`call`."""
        while True:
            response = await self._exchange(req, timeout_s=timeout_s)
            yield self._decode(response)
            cursor = next_cursor(response.headers.get("link", ""))
            if cursor is None:
                return
            req = req._replace(params={**req.params, "cursor": cursor})

    @staticmethod
    def _decode(response: httpx.Response) -> Any:
        if not response.content:
            return None
        if "json" in response.headers.get("content-type", "json"):
            return response.json()
        return response.text

    async def config(self) -> dict[str, Any]:
        return dict(await self.call(routes.config()))

    async def me(self) -> dict[str, Any]:
        return dict(await self.call(routes.me()))

    async def inventory(self) -> dict[str, Any]:
        return dict(await self.call(routes.inventory()))

    async def submit(self, body: Mapping[str, Any] | None = None, *, command: Sequence[str] | None = None,
                     gpus: int | None = None, name: str | None = None, time_limit: str | int | None = None,
                     idempotency_key: str | None = None, **fields: Any) -> dict[str, Any]:
        """``POST jobs``: the body or the same fields as keywords, as :meth:`SchedClient.submit
        <jupyter_sched.client.sync.SchedClient.submit>` (with ``idempotency_key`` when given: send one only to a
        server that honours them)."""
        from .keywords import submit_body

        request = submit_body(body, {"command": command, "gpus": gpus, "name": name, "time_limit": time_limit,
                                     **fields})
        return (await self.submit_keyed(request, idempotency_key))[0]

    async def submit_keyed(self, body: Mapping[str, Any], key: str | None) -> tuple[dict[str, Any], bool]:
        """:meth:`SchedClient.submit_keyed <jupyter_sched.client.sync.SchedClient.submit_keyed>`, awaited."""
        response = await self._exchange(routes.submit(body, idempotency_key=key))
        return dict(self._decode(response)), response.status_code == 200

    async def submit_keys_honoured(self, fresh: bool = False) -> bool:
        """Whether the server honours submit keys (``GET config``'s ``features.submit_keys``); asked each time."""
        features = (await self.config()).get("features")
        return isinstance(features, Mapping) and features.get("submit_keys") is True

    async def jobs(self, *, state: str | None = None, kind: str | None = None, user: str | None = None,
                   all_users: bool = False) -> list[dict[str, Any]]:
        return unwrap_list(await self.call(routes.jobs(state=state, kind=kind, user=user, all_users=all_users)),
                           "jobs")

    async def job_id_of(self, ref: str, command: str = "") -> str:
        """:meth:`SchedClient.job_id_of <jupyter_sched.client.sync.SchedClient.job_id_of>`, awaited."""
        return (await self.job_named(ref, command)).id

    async def job_named(self, ref: str, command: str = "") -> NamedJob:
        """:meth:`SchedClient.job_named <jupyter_sched.client.sync.SchedClient.job_named>`, awaited."""
        lookup = named_lookup(ref, command)
        if lookup is None:
            return job_named(ref, None)
        try:
            answer = await self.call(lookup)
        except SchedError as err:
            if (older := unnamed_lookup(err)) is None:
                raise
            answer = await self.call(older)  # a server before names were looked up there: mine, named here
        return job_named(ref, unwrap_list(answer, "jobs"))

    async def jobs_all(self, *, state: str | None = None, kind: str | None = None, user: str | None = None,
                       all_users: bool = False, page: int = 1000) -> list[dict[str, Any]]:
        """Every job :meth:`jobs` would list, ``page`` at a time (see :meth:`SchedClient.jobs_all`)."""
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            response = await self._exchange(routes.jobs(state=state, kind=kind, user=user, all_users=all_users,
                                                        limit=page, cursor=cursor))
            out += unwrap_list(self._decode(response), "jobs")
            cursor = next_cursor(response.headers.get("link", ""))
            if cursor is None:
                return out

    async def jobs_upto(self, most: int, *, keep: Callable[[dict[str, Any]], bool] = lambda job: True,
                        state: str | None = None, user: str | None = None, all_users: bool = False,
                        team: str | None = None, since: str | None = None, until: str | None = None,
                        ) -> tuple[list[dict[str, Any]], bool]:
        """:meth:`SchedClient.jobs_upto <jupyter_sched.client.sync.SchedClient.jobs_upto>`, awaited."""
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            response = await self._exchange(routes.jobs(state=state, user=user, all_users=all_users, team=team,
                                                        since=since, until=until, limit=min(most + 1 - len(out), 1000),
                                                        cursor=cursor))
            out += [job for job in unwrap_list(self._decode(response), "jobs") if keep(job)]
            cursor = next_cursor(response.headers.get("link", ""))
            if len(out) > most or cursor is None:
                return out[:most], len(out) > most

    async def job(self, job_id: str) -> dict[str, Any]:
        return dict(await self.call(routes.job(job_id)))

    async def wait(self, job: str, timeout: float | str | None = None, *, check: bool = False) -> dict[str, Any]:
        """:meth:`SchedClient.wait <jupyter_sched.client.sync.SchedClient.wait>`, awaited: the same poll and
        ride-out (:func:`~.waiting.poll_job`, in a worker thread whose every read is this client's, on this
        loop), the same errors. Cancelling it stops the polling at its next read; the job goes on."""
        import threading

        from .ride_out import RideOut
        from .sync import _ref, _timeout_s
        from .waiting import JobFailed, WaitTimeout, ended_well, poll_job

        ref, limit_s = _ref(job), _timeout_s(timeout)
        loop = asyncio.get_running_loop()
        stopped = threading.Event()

        def read(make: Callable[[], Awaitable[T]]) -> T:
            if stopped.is_set():
                raise asyncio.CancelledError
            return asyncio.run_coroutine_threadsafe(_awaited(make()), loop).result()

        def polled() -> tuple[dict[str, Any], bool]:
            ride = RideOut(self._notice, doing=f"still waiting for {ref}")
            job_id = ride(lambda: read(lambda: self.job_id_of(ref, "wait")))
            return poll_job(lambda: read(lambda: self.job(job_id)), ride, limit_s=limit_s)

        try:
            ended, done = await asyncio.to_thread(polled)
        finally:
            stopped.set()
        if not done:
            assert limit_s is not None
            raise WaitTimeout(ended, limit_s)
        if check and not ended_well(ended):
            raise JobFailed(ended)
        return ended

    async def cancel(self, job_id: str) -> dict[str, Any]:
        return dict(await self.call(routes.cancel(job_id)))

    async def update_job(self, job_id: str, **fields: Any) -> dict[str, Any]:
        """``PATCH jobs/{id}`` (see :meth:`SchedClient.update_job`)."""
        return dict(await self.call(routes.update_job(job_id, fields)))

    async def report_progress(self, job_id: str, done: float, total: float) -> dict[str, Any]:
        """``POST jobs/{id}/progress`` (see :meth:`SchedClient.report_progress`)."""
        return dict(await self.call(routes.report_progress(job_id, done, total)))

    async def cancel_jobs(self, *, ids: list[str] | None = None, mine: bool = False, all_users: bool = False,
                          states: list[str] | None = None) -> dict[str, Any]:
        """``POST jobs/cancel``: as :meth:`SchedClient.cancel_jobs` (the sync and async clients offer
        the same routes: tests/notebook/test_nb_client.py)."""
        body: dict[str, Any] = {"ids": ids} if ids is not None else {"all": True} if all_users else {"mine": mine}
        if states:
            body["states"] = states
        return dict(await self.call(routes.cancel_jobs(body)))

    async def logs(self, job_id: str, *, offset: int = 0, limit: int = 65536,
                   follow: bool = False, tail: int | None = None) -> dict[str, Any]:
        """``GET jobs/{id}/logs``: as :meth:`SchedClient.logs`."""
        return dict(await self.call(routes.logs(job_id, offset=offset, limit=limit, follow=follow, tail=tail),
                                    timeout_s=DEFAULT_TIMEOUT_S * 2 if follow else None))

    async def follow_logs(self, job_id: str, *, offset: int = 0, poll_s: float = 0.5) -> AsyncIterator[str]:
        """Yield log text as it appears until the job has finished and all output is read."""
        while True:
            chunk = await self.logs(job_id, offset=offset, follow=True)
            text = str(chunk.get("text") or "")
            next_offset = int(chunk.get("next_offset", offset + len(text.encode())))
            if text:
                yield text
            if chunk.get("finished") and next_offset == offset:
                return
            if next_offset == offset:
                await asyncio.sleep(poll_s)
            offset = next_offset

    async def dryrun(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return dict(await self.call(routes.dryrun(body)))

    async def leases(self) -> list[dict[str, Any]]:
        return unwrap_list(await self.call(routes.leases()), "leases")

    async def request_lease(self, body: Mapping[str, Any] | None = None, *, gpus: int | None = None,
                            kernel_id: str | None = None, **fields: Any) -> dict[str, Any]:
        """``POST leases``: the body or the same fields as keywords (see :meth:`SchedClient.request_lease
        <jupyter_sched.client.sync.SchedClient.request_lease>`)."""
        from .keywords import lease_body

        return dict(await self.call(routes.request_lease(lease_body(body, {"gpus": gpus, "kernel_id": kernel_id,
                                                                           **fields}))))

    async def lease(self, lease_id: str) -> dict[str, Any]:
        return dict(await self.call(routes.lease(lease_id)))

    async def release_lease(self, lease_id: str, *, why: str | None = None,
                            timeout_s: float | None = None) -> dict[str, Any]:
        """``DELETE leases/{id}``; ``why`` / ``timeout_s`` as :meth:`SchedClient.release_lease`."""
        return dict(await self.call(routes.release_lease(lease_id, why=why, timeout_s=timeout_s)) or {})

    async def keepalive(self, lease_id: str) -> dict[str, Any]:
        return dict(await self.call(routes.keepalive(lease_id)) or {})

    async def lease_heartbeat(self, lease_id: str, *, timeout_s: float | None = None) -> dict[str, Any]:
        """``POST leases/{id}/heartbeat`` as :meth:`SchedClient.lease_heartbeat` (not activity: idle rules unmoved)."""
        return dict(await self.call(routes.lease_heartbeat(lease_id), timeout_s=timeout_s) or {})

    async def queue(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        return unwrap_list(await self.call(routes.queue(limit=limit)), "queue")

    async def queue_head(self, limit: int) -> tuple[list[dict[str, Any]], int | None]:
        """:meth:`queue` with ``limit``, and the whole queue's pending count when more follow (see
        :meth:`SchedClient.queue_head`)."""
        response = await self._exchange(routes.queue(limit=limit))
        total = response.headers.get("x-total-count", "").strip()
        return unwrap_list(self._decode(response), "queue"), int(total) if total.isdigit() else None

    async def queue_all(self, *, page: int = 1000) -> list[dict[str, Any]]:
        """The whole queue, ``page`` entries at a time (see :meth:`SchedClient.queue_all`)."""
        pending: list[dict[str, Any]] = []
        holding: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            response = await self._exchange(routes.queue(limit=page, cursor=cursor))
            for row in unwrap_list(self._decode(response), "queue"):
                (pending if row.get("position") is not None else holding).append(row)
            cursor = next_cursor(response.headers.get("link", ""))
            if cursor is None:
                return pending + holding

    async def quotas(self) -> dict[str, Any]:
        return dict(await self.call(routes.quotas()))

    async def set_quotas(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return dict(await self.call(routes.set_quotas(body)))

    async def idle_policy(self) -> dict[str, Any]:
        return dict(await self.call(routes.idle_policy()))

    async def set_idle_policy(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return dict(await self.call(routes.set_idle_policy(body)))

    async def profiles(self) -> list[dict[str, Any]]:
        return unwrap_list(await self.call(routes.profiles()), "profiles")

    async def telemetry(self, *, gpu: str | None = None, job: str | None = None) -> Any:
        return await self.call(routes.telemetry(gpu=gpu, job=job))

    async def utilization(self, job: str | None = None, *, lease: str | None = None, gpu: str | None = None,
                          since: str | None = None, until: str | None = None, step_s: int = 60) -> pd.DataFrame:
        """See :meth:`jupyter_sched.client.SchedClient.utilization`."""
        from ..telemetry.charts import utilization_frame

        answer = await self.call(routes.telemetry_history(job=job, lease=lease, gpu=gpu, since=since, until=until,
                                                          step_s=step_s))
        return utilization_frame(answer.get("points", []) if isinstance(answer, dict) else [])

    async def idle_candidates(self) -> list[dict[str, Any]]:
        return unwrap_list(await self.call(routes.idle_candidates()), "idle")

    async def waste(self, **filters: Any) -> dict[str, Any]:
        return dict(await self.call(routes.waste(**when_filters(filters))))

    async def audit(self, **filters: Any) -> list[dict[str, Any]]:
        return unwrap_list(await self.call(routes.audit(**when_filters(filters))), "audit")

    async def usage(self, **filters: Any) -> pd.DataFrame:
        """``GET usage`` as a DataFrame; ``since``/``until`` as :meth:`SchedClient.usage
        <jupyter_sched.client.sync.SchedClient.usage>` takes them (what the CLI's ``--since`` takes)."""
        return usage_frame(unwrap_list(await self.call(routes.usage(**when_filters(filters))), "usage"))

    async def metrics(self) -> str:
        return str(await self.call(routes.metrics()))

    async def definitions(self, *, all_users: bool = False) -> list[dict[str, Any]]:
        """Every page of ``GET definitions`` (see :meth:`SchedClient.definitions`)."""
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            response = await self._exchange(routes.definitions(all_users=all_users, cursor=cursor))
            out += list(self._decode(response))
            cursor = next_cursor(response.headers.get("link", ""))
            if cursor is None:
                return out

    async def definition(self, definition_id: str) -> dict[str, Any]:
        return dict(await self.call(routes.definition(definition_id)))

    async def executed_notebook(self, job_id: str) -> dict[str, Any]:
        return dict(await self.call(routes.executed_notebook(job_id)))

    async def events(self, *, reconnect: bool = True, backoff: Backoff = EVENTS_BACKOFF) -> AsyncIterator[dict[str, Any]]:
        """``GET events`` (Server-Sent Events, read with :mod:`httpx_sse`): yield ``{"type", "data"}``.

        With ``reconnect`` (default) the stream never ends by itself: when the server ends it
        (restart) or stops answering, or answers 5xx (a hub user server whose central service is
        gone), this reconnects after 1 s, 2 s, 4 s … up to ``backoff.cap_s`` (jittered; reset once
        connected), sending ``Last-Event-ID`` (the last ``id:`` seen) as the SSE specification
        asks. A server that resumes (``X-Jupyter-Sched-Resume``) sends the events of the gap, or a
        ``lagged`` event when it no longer keeps them; from one that does not (a hub user server
        standing in while its central service is away), the client yields ``{"type": "lagged",
        "data": {"reconnected": true, "attempts": n}}`` itself. After a ``lagged`` the caller
        re-reads the state it shows. ``reconnect=False``: one connection; a transport failure raises
        ``ServerUnreachableError``, an error answer its ``SchedError``.

        Raises:
            SchedError: a 4xx answer (a bad token does not get better by retrying).
        """
        retries = Retries(backoff)
        last_id = ""
        while True:
            failure = "the stream ended"
            try:
                resuming = bool(last_id)
                headers = {"Last-Event-ID": last_id} if resuming else {}  # (httpx-sse adds to this dict)
                async with aconnect_sse(self._http, "GET", routes.events().path, headers=headers,
                                        timeout=httpx.Timeout(DEFAULT_TIMEOUT_S, read=None)) as source:
                    response = source.response
                    if response.status_code >= 400:
                        await response.aread()
                        error = error_from_response(response.status_code, response.text,
                                                    token_hint=token_hint(self.connection), url=self.connection.url)
                        if not reconnect or response.status_code < 500:
                            raise error
                        failure = error.message
                    else:
                        previous = retries.get(_EVENTS)
                        if previous is not None:
                            retries.succeeded(_EVENTS)
                            if not (resuming and _RESUME_HEADER in response.headers):  # nothing resumed: say so
                                yield {"type": "lagged", "data": {"reconnected": True, "attempts": previous.attempt}}
                        async for sse in source.aiter_sse():
                            if sse.id:
                                last_id = sse.id
                            if (event := event_of(sse)) is not None:
                                yield event
                if not reconnect:
                    return
            except httpx.TransportError as exc:
                if not reconnect:
                    raise unreachable(self.connection, exc) from None
                failure = type(exc).__name__
            state = retries.failed(_EVENTS, failure)
            await asyncio.sleep(max(0.0, state.next_at - time.monotonic()))
