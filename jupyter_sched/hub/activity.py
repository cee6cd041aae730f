"""Running work as hub activity: the central service tells JupyterHub which users are busy.

JupyterHub's idle culler stops servers whose ``last_activity`` is old. A user whose batch job or
live lease runs on the scheduler must not lose their server for it, so every
``c.SchedApp.activity_interval_s`` seconds the central service posts, for each user with admitted
or running work (jobs and leases), ``POST {hub_api}/users/{name}/activity`` with
``{"last_activity": <now>, "servers": {<server name>: {"last_activity": <now>}}}`` (JupyterHub
REST API, "Notify user activity"; needs the ``users:activity`` scope). ``servers`` names the
user's active servers as the hub reports them (``GET users?state=active``; "" is the default
server; reading them needs ``read:servers``): a job is not tied to one server, so all of them
count. The hub's user list is paged (:mod:`.hubapi`): every page is read, and a busy user the
walk did not see is asked about alone, so every active user's servers are reported whatever the
hub's page size. Users without an active server get ``last_activity`` only (the hub refuses
unknown server names). Requests from panels and other polling UIs are never activity here: only work in the
``admitted``/``running`` states is, and only while the idle rules do not find it idle (red team 15, R6
addendum): a lease whose kernel and GPUs are idle, or a job whose GPUs are, is listed among the
engine's idle work (``GET idle``) and is no activity — otherwise a forgotten notebook's lease kept its
server alive for ever, and the server's kernel kept the lease. A lease idle on its GPUs while its
kernel is busy still counts (the kernel computes). GPU work with no idle verdict (no telemetry, idle
policy off) counts while it runs; a batch job that holds no GPU does not (red32 R5: it needs no server — the
service runs it and keeps its log — and costs no GPU-hours, so one ``sleep 100000`` on 0 GPUs kept its owner's
idle server and kernels from the culler for ever).

The hub may be slow or hold a request (a busy hub or proxy; issue 17). Every request is bounded by
the hub client's timeout (``c.HubIdentityProvider.hub_timeout_s``), and :class:`ActivityReporter` never
lets one waiting request hold later reports: each tick starts its own report (at most
``max_reports`` in flight), a user's post still in flight is not sent again beside it, posts of one
report go out side by side (at most ``max_posts`` at a time), and a post the hub refused or did not
answer is logged at warning with the hub's answer, counted (``jupyter_sched_hub_activity_posts_failed_total``
in ``GET metrics``) and sent again by the next tick.

Each user server also reports its own running work (``SchedApp.current_activity`` →
``jupyter_sched_last_activity`` → ``web_app.last_activity()``, which ``jupyterhub-singleuser``
posts to the hub); this covers servers whose singleuser activity reports are off.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..extension.background import fire_and_forget
from ..store.outage import log_store_failure
from .hubapi import HubClient, HubLookupError, active_users, user_servers

__all__ = ["ACTIVE_STATES", "ActivityCollector", "ActivityReporter", "activity_bodies", "activity_path",
           "active_servers", "holds_gpus", "idle_work", "report_activity"]

_T = TypeVar("_T")

log = logging.getLogger(__name__)

ACTIVE_STATES = "admitted,running"
"""Job/lease states that count as activity (``list_jobs`` state filter)."""


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def active_servers(hub_users: Iterable[Any]) -> dict[str, list[str]]:
    """``{user name: [active server names]}`` from a ``GET users?state=active`` answer
    (JupyterHub user models; ``servers`` present when the caller holds ``read:servers``)."""
    out: dict[str, list[str]] = {}
    for user in hub_users or ():
        if not isinstance(user, Mapping) or "name" not in user:
            continue
        servers = user.get("servers") or {}
        out[str(user["name"])] = sorted(str(name) for name, server in servers.items()
                                        if not isinstance(server, Mapping) or server.get("stopped") is not True)
    return out


def activity_bodies(work: Iterable[Mapping[str, Any]], servers: Mapping[str, Iterable[str]], *,
                    now: datetime) -> dict[str, dict[str, Any]]:
    """The activity body to post for each user with running work.

    Args:
        work: job/lease dicts (``job_to_dict`` shape: ``user``, ``state``) — only ``admitted``
            and ``running`` ones count.
        servers: active server names per user (:func:`active_servers`); a user not listed gets
            ``last_activity`` only.
        now: aware UTC time of the report.

    Returns:
        ``{user: {"last_activity": ISO 8601 Z, "servers": {name: {"last_activity": ...}}}}``
        (``servers`` left out when the user has none), users sorted.
    """
    busy = sorted({str(j["user"]) for j in work if j.get("user") and j.get("state") in ("admitted", "running")})
    stamp = _iso(now)
    out: dict[str, dict[str, Any]] = {}
    for user in busy:
        body: dict[str, Any] = {"last_activity": stamp}
        names = list(servers.get(user, ()))
        if names:
            body["servers"] = {name: {"last_activity": stamp} for name in names}
        out[user] = body
    return out


def holds_gpus(job: Mapping[str, Any]) -> bool:
    """Whether ``job`` (``job_to_dict`` shape) is a lease or asks for GPUs: work that counts as its owner's activity
    (a CPU-only batch job does not: red32 R5)."""
    if job.get("kind") == "lease":
        return True
    resources = job.get("resources") or {}
    return bool(resources.get("gpus")) or bool(resources.get("groups"))


def activity_path(user: str) -> str:
    """Hub API path (relative to ``{hub_api}/``) of ``user``'s activity endpoint."""
    return f"users/{quote(user, safe='')}/activity"


def idle_work(service: Any) -> frozenset[str]:
    """Ids of running work the engine's last cycle found idle (:func:`~jupyter_sched.reclaim.idle_candidates`),
    less leases whose kernel is busy: work that is no activity."""
    idle = getattr(getattr(service, "engine", None), "idle", None)
    return frozenset(c.job_id for c in getattr(idle, "candidates", ()) or () if not c.kernel_busy)


class ActivityReporter:
    """Hub activity reports, one per tick, none waiting on another (see module docstring; issue 17).

    Args:
        max_reports: reports in flight at most; a tick that finds this many waiting on the hub
            starts none (counted in ``skipped_ticks``).
        max_posts: hub requests (posts, per-user lookups) one report has in flight at most. With
            the defaults the reporter holds at most 8 of the 10 connections tornado's HTTP client
            shares among all the service's hub calls, so a slow hub never leaves a user's group
            lookup (their submit) queued behind activity posts.

    Attributes:
        failed_posts: activity posts the hub refused or did not answer since start.
        skipped_ticks: ticks that started no report because ``max_reports`` were in flight.
    """

    def __init__(self, *, max_reports: int = 2, max_posts: int = 4) -> None:
        self.max_reports = max_reports
        self.max_posts = max_posts
        self.failed_posts = 0
        self.skipped_ticks = 0
        self._reports: set[asyncio.Future[list[str]]] = set()
        self._posting: set[str] = set()
        self.removed: Callable[[], Collection[str]] = frozenset
        """Users the service knows the hub no longer lists (offboarding): no activity is posted for them
        (the hub answers 404 to each post: hubadmin23 A5)."""

    @property
    def in_flight(self) -> int:
        """Reports started and not finished."""
        return len(self._reports)

    def tick(self, service: Any, hub: HubClient, *,
             off_loop: Callable[..., Awaitable[Any]] | None = None) -> asyncio.Future[list[str]] | None:
        """Start one report (:func:`report_activity`) unless ``max_reports`` are in flight; its task
        (the users reported), or None. Must run on the event loop."""
        if len(self._reports) >= self.max_reports:
            self.skipped_ticks += 1
            log.warning("jupyter_sched: %d hub activity reports are still waiting on the hub; this tick sends none",
                        len(self._reports))
            return None
        return fire_and_forget(self._report(service, hub, off_loop), what="a hub activity report",
                               keep=self._reports)

    async def _report(self, service: Any, hub: HubClient, off_loop: Callable[..., Awaitable[Any]] | None) -> list[str]:
        try:
            return await report_activity(service, hub, off_loop=off_loop, reporter=self)
        except Exception:  # a task's exception is otherwise only seen when it is collected
            log.exception("jupyter_sched: hub activity report failed; will retry")
            return []

    async def bounded(self, calls: Iterable[Awaitable[_T]]) -> list[_T]:
        """Await ``calls`` side by side, at most ``max_posts`` at a time; their results in order."""
        gate = asyncio.Semaphore(self.max_posts)

        async def one(call: Awaitable[_T]) -> _T:
            async with gate:
                return await call

        return list(await asyncio.gather(*(one(call) for call in calls)))

    async def post(self, hub: HubClient, user: str, body: Mapping[str, Any]) -> bool:
        """Post ``user``'s activity; whether the hub took it. Not sent (False) while an earlier
        post of theirs is in flight; a refused or unanswered post is logged with the hub's answer
        and counted."""
        if user in self._posting:
            log.debug("jupyter_sched: the hub has not answered the last activity post of %s yet; not sent again", user)
            return False
        self._posting.add(user)
        try:
            await hub.request("POST", activity_path(user), body)
        except HubLookupError as exc:
            self.failed_posts += 1
            log.log(logging.DEBUG if exc.outage else logging.WARNING,  # an outage is said once (hubadmin24 B13)
                    "jupyter_sched: the hub did not take the activity of %s: %s; will retry", user, exc)
            return False
        finally:
            self._posting.discard(user)
        return True


class ActivityCollector(Collector):
    """The reporter's counts for ``GET metrics`` (registered in hub mode):
    ``jupyter_sched_hub_activity_posts_failed_total``, ``jupyter_sched_hub_activity_ticks_skipped_total``
    and ``jupyter_sched_hub_activity_reports_in_flight``."""

    def __init__(self, reporter: ActivityReporter) -> None:
        self.reporter = reporter

    def collect(self) -> Iterator[Metric]:
        """Yield the three families."""
        failed = CounterMetricFamily("jupyter_sched_hub_activity_posts_failed",
                                     "Hub activity posts the hub refused or did not answer since start")
        failed.add_metric([], self.reporter.failed_posts)
        yield failed
        skipped = CounterMetricFamily("jupyter_sched_hub_activity_ticks_skipped",
                                      "Activity ticks that sent nothing: earlier reports still waited on the hub")
        skipped.add_metric([], self.reporter.skipped_ticks)
        yield skipped
        in_flight = GaugeMetricFamily("jupyter_sched_hub_activity_reports_in_flight",
                                      "Hub activity reports waiting on the hub now")
        in_flight.add_metric([], self.reporter.in_flight)
        yield in_flight


async def report_activity(service: Any, hub: HubClient, *,
                          off_loop: Callable[..., Awaitable[Any]] | None = None,
                          reporter: ActivityReporter | None = None) -> list[str]:
    """Post the activity of every user with admitted/running work that is not idle to the hub; the
    users reported.

    Args:
        service: the ``SchedulerService`` (``list_jobs``, ``clock``).
        hub: the hub API with the service's token (:class:`~.hubapi.HubAPI`).
        off_loop: runs the store read away from the event loop (``SchedApp.off_loop``); None =
            inline (tests driving the function directly).
        reporter: the :class:`ActivityReporter` whose posts in flight and counts this report shares;
            None = a fresh one.

    Hub errors are logged and retried at the next tick: one user's refused or unanswered report
    never stops or delays the others'; a failed user listing still reports each busy user, with
    the servers the hub gives for that user alone (or ``last_activity`` only when it does not answer).
    """
    reporter = reporter if reporter is not None else ActivityReporter()
    try:
        work = (await off_loop(service.list_jobs, user=None, state=ACTIVE_STATES) if off_loop is not None
                else service.list_jobs(user=None, state=ACTIVE_STATES))
    except Exception as exc:  # an unreachable database: the store's outage line says it (hubadmin25 B6)
        log_store_failure(log, "jupyter_sched: could not read running work for hub activity", exc)
        return []
    idle = idle_work(service)
    if idle and log.isEnabledFor(logging.DEBUG):
        quiet = sorted({str(j.get("user")) for j in work} - {str(j.get("user")) for j in work if j.get("id") not in idle})
        if quiet:
            log.debug("jupyter_sched: no hub activity for %s: all their running work is idle", ", ".join(quiet[:20]))
    gone = set(reporter.removed())  # the hub no longer lists them: a post would only be refused (A5)
    work = [job for job in work if job.get("id") not in idle and job.get("user") not in gone and holds_gpus(job)]
    if not work:
        return []
    try:
        servers = active_servers(list((await active_users(hub)).values()))
    except HubLookupError as exc:
        log.log(logging.DEBUG if exc.outage else logging.WARNING,  # an outage is said once (hubadmin24 B13)
                "jupyter_sched: could not list active hub servers for activity (%s); asking per user", exc)
        servers = {}
    busy = {str(j["user"]) for j in work if j.get("user") and j.get("state") in ("admitted", "running")}
    missing = sorted(busy - set(servers))  # not seen on any page: ask about each alone
    for user, alone in zip(missing, await reporter.bounded(user_servers(hub, user) for user in missing), strict=True):
        if alone:
            servers[user] = alone
    bodies = activity_bodies(work, servers, now=service.clock.now())
    taken = await reporter.bounded(reporter.post(hub, user, body) for user, body in bodies.items())
    return [user for user, ok in zip(bodies, taken, strict=True) if ok]
