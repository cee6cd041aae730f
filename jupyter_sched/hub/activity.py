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
kernel is busy still counts (the kernel computes). Work with no idle verdict (no telemetry, idle
policy off, CPU-only) counts while it runs.

Each user server also reports its own running work (``SchedApp.current_activity`` →
``jupyter_sched_last_activity`` → ``web_app.last_activity()``, which ``jupyterhub-singleuser``
posts to the hub); this covers servers whose singleuser activity reports are off.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

from .hubapi import HubClient, HubLookupError, active_users, user_servers

__all__ = ["ACTIVE_STATES", "activity_bodies", "activity_path", "active_servers", "idle_work", "report_activity"]

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


def activity_path(user: str) -> str:
    """Hub API path (relative to ``{hub_api}/``) of ``user``'s activity endpoint."""
    return f"users/{quote(user, safe='')}/activity"


def idle_work(service: Any) -> frozenset[str]:
    """Ids of running work the engine's last cycle found idle (:func:`~jupyter_sched.reclaim.idle_candidates`),
    less leases whose kernel is busy: work that is no activity."""
    idle = getattr(getattr(service, "engine", None), "idle", None)
    return frozenset(c.job_id for c in getattr(idle, "candidates", ()) or () if not c.kernel_busy)


async def report_activity(service: Any, hub: HubClient, *,
                          off_loop: Callable[..., Awaitable[Any]] | None = None) -> list[str]:
    """Post the activity of every user with admitted/running work to the hub; the users reported.

    Args:
        service: the ``SchedulerService`` (``list_jobs``, ``clock``).
        hub: the hub API with the service's token (:class:`~.hubapi.HubAPI`).
        off_loop: runs the store read away from the event loop (``SchedApp.off_loop``); None =
            inline (tests driving the function directly).

    Hub errors are logged and retried at the next tick: one user's refused report never stops
    the others'; a failed user listing still reports each busy user, with the servers the hub
    gives for that user alone (or ``last_activity`` only when it does not answer).
    """
    try:
        work = (await off_loop(service.list_jobs, user=None, state=ACTIVE_STATES) if off_loop is not None
                else service.list_jobs(user=None, state=ACTIVE_STATES))
    except Exception:
        log.exception("jupyter_sched: could not read running work for hub activity")
        return []
    idle = idle_work(service)
    work = [job for job in work if job.get("id") not in idle]
    if not work:
        return []
    try:
        servers = active_servers(list((await active_users(hub)).values()))
    except HubLookupError:
        log.warning("jupyter_sched: could not list active hub servers for activity; asking per user", exc_info=True)
        servers = {}
    busy = {str(j["user"]) for j in work if j.get("user") and j.get("state") in ("admitted", "running")}
    for user in sorted(busy - set(servers)):  # not seen on any page: ask about this user alone
        alone = await user_servers(hub, user)
        if alone:
            servers[user] = alone
    reported = []
    for user, body in activity_bodies(work, servers, now=service.clock.now()).items():
        try:
            await hub.request("POST", activity_path(user), body)
        except HubLookupError:
            log.warning("jupyter_sched: the hub refused the activity of %s; will retry", user, exc_info=True)
            continue
        reported.append(user)
    return reported
