"""Leases bound to live kernels in hub mode: user servers report their kernels, the service frees
the GPUs of kernels that are gone.

A lease holds GPUs for one kernel of one user server. In hub mode the central service never sees
kernels, and a server's own release at kernel shutdown is lost when the central service is down
at that moment (or the server itself dies). So each user server reports, every
``kernel_report_interval_s`` seconds (default 30), ``PUT api/sched/kernels {"server": name,
"kernels": [ids]}`` with its own hub token (:mod:`.forward`); the central service keeps the
latest report per ``(user, server)`` in memory and decides per lease with :func:`gone_leases`:

* a lease is *gone* when **every** active server of its user (asked from the hub for that user
  alone; unknown ⇒ nothing is released) has a report that was built after the lease existed,
  and none of those reports lists the lease's kernel. "Built after" is judged from the time the
  report arrived: it arrived more than :data:`REPORT_LATENCY_S` after the lease was submitted
  (a report is sent within that timeout of being built), so a report assembled a moment before
  the kernel got its lease never releases it.
* nothing is released for a user one of whose servers has not reported yet (just after a
  restart of the central service the reports are empty: they refill within one interval).

Across restarts: the service restarts with no reports; the servers' next reports (≤ 30 s) are
enough to release leases of kernels that went away meanwhile. A user server that restarts has
new kernels; its first report releases the old kernels' leases. A server that stopped or was
culled has no report to wait for: the periodic reaper of :mod:`.central` releases the leases
of users the hub reports without an active server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..errors import ValidationError
from .hubapi import HubClient, active_servers_of, active_users, user_servers

__all__ = ["GONE_KERNEL", "REPORT_LATENCY_S", "SERVER_STOPPED", "KernelReport", "KernelReports", "gone_leases",
           "leases_to_release", "parse_report", "stale_leases"]

SERVER_STOPPED = "the user's server stopped"
GONE_KERNEL = "its kernel is no longer running on the user's server"

REPORT_LATENCY_S = 10.0
"""Longest time between a user server building a report and the service receiving it (the
server's request timeout): reports received within this of a lease's submission do not count."""

_MAX_KERNELS = 10_000
_MAX_NAME = 255


@dataclass(frozen=True, slots=True)
class KernelReport:
    """One user server's latest report.

    Attributes:
        user: hub user (from the request's token, never from the body).
        server: the server's name on the hub ("" = default server).
        kernels: ids of the kernels alive on that server.
        received_at: aware UTC time the service received it.
    """

    user: str
    server: str
    kernels: frozenset[str]
    received_at: datetime


def parse_report(body: Mapping[str, Any]) -> tuple[str, frozenset[str]]:
    """``(server, kernels)`` of a report body.

    Raises:
        ValidationError: ``server`` not a string of at most 255 characters, ``kernels`` not a
            list of at most 10,000 strings of at most 255 characters (field named).
    """
    server = body.get("server", "")
    if not isinstance(server, str) or len(server) > _MAX_NAME:
        raise ValidationError("server must be the server's name (a string of at most 255 characters)",
                              field="server", hint='use "" for the default server')
    kernels = body.get("kernels")
    if not isinstance(kernels, list) or len(kernels) > _MAX_KERNELS or not all(
            isinstance(k, str) and 0 < len(k) <= _MAX_NAME for k in kernels):
        raise ValidationError("kernels must be a list of kernel ids", field="kernels",
                              hint='e.g. {"server": "", "kernels": ["4f6c..."]}')
    return server, frozenset(kernels)


def gone_leases(leases: Iterable[Mapping[str, Any]], reports: Mapping[str, KernelReport],
                active_servers: Sequence[str] | None) -> list[Mapping[str, Any]]:
    """One user's live kernel-bound leases whose kernel no longer runs (see module docstring).

    Args:
        leases: the user's live leases (``job_to_dict`` shape: ``kernel_id``, ``submitted_at``
            as ISO 8601 text or datetime).
        reports: the user's latest report per server name.
        active_servers: the user's active server names per the hub; None when unknown.

    Returns:
        The leases to release (none when ``active_servers`` is unknown or empty — a user without
        a server is the reaper's case — or when an active server has no report yet).
    """
    if not active_servers:
        return []
    latest = [reports.get(name) for name in active_servers]
    if any(report is None for report in latest):
        return []
    alive = frozenset().union(*(report.kernels for report in latest if report is not None))
    oldest = min(report.received_at for report in latest if report is not None)
    out = []
    for lease in leases:
        kernel = lease.get("kernel_id")
        submitted = _when(lease.get("submitted_at"))
        if not kernel or submitted is None or kernel in alive:
            continue
        if oldest - timedelta(seconds=REPORT_LATENCY_S) > submitted:
            out.append(lease)
    return out


def stale_leases(leases: Iterable[Mapping[str, Any]], active_users: Iterable[str]) -> list[Mapping[str, Any]]:
    """Live kernel-bound leases whose user is not among ``active_users`` (candidates only: a user
    missing from a paged listing is unknown until asked about alone, see :func:`leases_to_release`).

    Args:
        leases: lease dicts (``job_to_dict`` shape: ``user``, ``kernel_id``, ``state``).
        active_users: names of users seen with at least one active (running or starting) server.
    """
    active = set(active_users)
    return [lease for lease in leases
            if lease.get("kernel_id") and lease.get("state") in ("pending", "admitted", "running")
            and lease.get("user") not in active]


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


class KernelReports:
    """The latest report of each ``(user, server)`` (in memory: they refill within one interval)."""

    def __init__(self) -> None:
        self._reports: dict[tuple[str, str], KernelReport] = {}

    def record(self, report: KernelReport) -> None:
        self._reports[(report.user, report.server)] = report

    def of(self, user: str) -> dict[str, KernelReport]:
        """``{server name: report}`` of ``user``."""
        return {server: report for (who, server), report in self._reports.items() if who == user}

    def forget(self, user: str, keep: Iterable[str]) -> None:
        """Drop reports of ``user``'s servers that are no longer active (not in ``keep``)."""
        kept = set(keep)
        for key in [key for key in self._reports if key[0] == user and key[1] not in kept]:
            del self._reports[key]


async def leases_to_release(leases: Sequence[Mapping[str, Any]], hub: HubClient,
                            reports: KernelReports) -> list[tuple[Mapping[str, Any], str]]:
    """The periodic decision: ``(lease, reason)`` for each live kernel-bound lease to release.

    A lease is released when the hub confirms its user has no active server
    (:data:`SERVER_STOPPED`; a user the paged listing did not see is asked about alone first, and
    stays untouched when the hub does not answer), or when :func:`gone_leases` says its kernel is
    gone (:data:`GONE_KERNEL`). Reports of servers that are no longer active are forgotten.

    Raises:
        HubLookupError: the hub's user listing could not be read (nothing is decided).
    """
    kernel_bound = [lease for lease in leases if lease.get("kernel_id")]
    if not kernel_bound:
        return []
    seen = {name: active_servers_of(model) for name, model in (await active_users(hub)).items()}
    out: list[tuple[Mapping[str, Any], str]] = []
    for user in sorted({str(lease.get("user")) for lease in stale_leases(kernel_bound, seen)}):
        servers = await user_servers(hub, user)  # not seen: unknown until the hub says so for this user
        if servers is None:
            continue
        if servers:
            seen[user] = servers
            continue
        reports.forget(user, ())
        out += [(lease, SERVER_STOPPED) for lease in kernel_bound if lease.get("user") == user]
    for user, servers in seen.items():
        mine = [lease for lease in kernel_bound if lease.get("user") == user]
        if mine:
            reports.forget(user, servers)
            out += [(lease, GONE_KERNEL) for lease in gone_leases(mine, reports.of(user), servers)]
    return out
