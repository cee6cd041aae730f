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

A lease without a kernel (``POST leases`` straight at the central service, no ``kernel_id``) has
no kernel to follow: in hub mode it is bound to its owner having a running server, and the
reaper releases it (:data:`NO_SERVER`) once the hub confirms they have none.

Bounded memory (a report comes from any hub user, hostile ones included): a report is kept only
for a user who holds a kernel-bound lease or reported within :data:`REPORT_KEEP_S` (a new lease's
``kernel_id`` is checked against them: :func:`lease_refusal`), only for a
server name the hub lists as one of that user's active servers (asked once and remembered for
:data:`HUB_SERVERS_TTL_S`; a name not listed is re-asked at most every
:data:`HUB_RECHECK_S`), at most :data:`MAX_SERVERS_PER_USER` per user (the oldest is dropped),
and a report is at most :data:`MAX_REPORT_BYTES` of JSON with at most 1,000 kernel ids of at most
128 characters. Reports of servers that stopped and of users who no longer hold a lease are
forgotten by the periodic decision.

Kernel states (red team 15, R6): a report also carries, per kernel, what jupyterhub-idle-culler reads
from the server's ``/api/kernels`` — ``"states": {id: {"execution_state": "idle", "last_activity":
ISO 8601}}`` (:func:`parse_states`, bounded like the ids) — and the central service hands them to the
idle rules as the engine's kernel source (:meth:`KernelReports.activity`), so an idle kernel's lease
falls under the normal ``window_s``/``lease_mode`` rule as it does embedded. A kernel whose state is
not known — its server's report is older than :data:`STATE_STALE_S`, or an older server sends ids
only — is given as ``"unknown"`` with the cause (``kernel state unknown in hub mode: …``), never as
busy.

Asking for a lease (new user 9, N1): the central service grants one only when the hub, asked at
that moment, lists a running server of the caller, and a ``kernel_id`` must be among the kernels
that the caller's running servers last reported (a user server reports just before it forwards a
lease, :mod:`.forward`); otherwise 400 naming ``kernel_id``, audited (:func:`lease_refusal`). A
lease asked for by a started batch job's kernel (``parent_job_id``) is bound to that job instead.
The service cannot tell more than the reports say: a user may report made-up kernel ids of their
own running server — the lease is still theirs, charged to them, and released with that server.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..errors import ValidationError
from ..model import parse_utc
from ..reclaim.idle import USER_SERVER_REPORT
from ..scheduling.snapshot import owned_kernel_key
from .hubapi import HubClient, active_servers_of, active_users, user_servers

__all__ = ["GONE_KERNEL", "HUB_RECHECK_S", "HUB_SERVERS_TTL_S", "MAX_REPORT_BYTES", "MAX_SERVERS_PER_USER",
           "NO_SERVER", "REPORT_KEEP_S", "REPORT_LATENCY_S", "SERVER_STOPPED", "STATE_STALE_S", "KernelReport",
           "KernelReports", "KernelState", "gone_leases", "lease_refusal", "leases_to_release", "parse_report",
           "parse_states", "stale_leases"]

SERVER_STOPPED = "the user's server stopped"
NO_SERVER = ("a lease without a kernel is held while its owner has a running server on the hub, and the hub lists "
             "none of theirs")
GONE_KERNEL = "its kernel is no longer running on the user's server"

REPORT_LATENCY_S = 10.0
"""Longest time between a user server building a report and the service receiving it (the
server's request timeout): reports received within this of a lease's submission do not count."""

REPORT_KEEP_S = 90.0
"""Seconds the latest reports of a user without kernel-bound leases are kept (three report
intervals of 30 s): the kernels a new lease's ``kernel_id`` is checked against."""

MAX_REPORT_BYTES = 256 * 1024
"""Largest report body taken (1,000 ids of 128 characters are ~135 KiB of JSON)."""

MAX_SERVERS_PER_USER = 32
"""Reports kept per user; the oldest is dropped beyond (a missing report releases nothing)."""

HUB_SERVERS_TTL_S = 300.0
"""Seconds a user's active server names, as the hub listed them, are trusted for taking reports."""

HUB_RECHECK_S = 10.0
"""A report from a server name the remembered list lacks re-asks the hub at most this often per user."""

STATE_STALE_S = 90.0
"""Seconds a report's kernel states are believed (three report intervals of 30 s): after that its
kernels are in an *unknown* state (the server stopped reporting: stopped, hung or cut off)."""

EXECUTION_STATES = frozenset({"starting", "idle", "busy", "restarting", "autorestarting", "dead", "terminating",
                              "unknown"})
"""jupyter_client's kernel execution states; any other text is taken as ``unknown``."""

_MAX_KERNELS = 1_000
_MAX_KERNEL_ID = 128
_MAX_NAME = 255


@dataclass(frozen=True, slots=True)
class KernelState:
    """One kernel's state as its server reported it (jupyter_server's kernel model).

    Attributes:
        execution_state: one of :data:`EXECUTION_STATES`.
        last_activity: last time the kernel executed or sent output (aware UTC; None: not said).
    """

    execution_state: str
    last_activity: datetime | None = None


@dataclass(frozen=True, slots=True)
class KernelReport:
    """One user server's latest report.

    Attributes:
        user: hub user (from the request's token, never from the body).
        server: the server's name on the hub ("" = default server).
        kernels: ids of the kernels alive on that server.
        received_at: aware UTC time the service received it.
        states: each kernel's state, when the server said (empty: an older server sends ids only).
    """

    user: str
    server: str
    kernels: frozenset[str]
    received_at: datetime
    states: Mapping[str, KernelState] = field(default_factory=dict)


def parse_report(body: Mapping[str, Any]) -> tuple[str, frozenset[str]]:
    """``(server, kernels)`` of a report body.

    Raises:
        ValidationError: ``server`` not a string of at most 255 characters, ``kernels`` not a
            list of at most 1,000 strings of at most 128 characters (field named). A server runs
            far fewer kernels; Jupyter's kernel ids are 36-character UUIDs.
    """
    server = body.get("server", "")
    if not isinstance(server, str) or len(server) > _MAX_NAME:
        raise ValidationError("server must be the server's name (a string of at most 255 characters)",
                              field="server", hint='use "" for the default server')
    kernels = body.get("kernels")
    if not isinstance(kernels, list) or len(kernels) > _MAX_KERNELS or not all(
            isinstance(k, str) and 0 < len(k) <= _MAX_KERNEL_ID for k in kernels):
        raise ValidationError(f"kernels must be a list of at most {_MAX_KERNELS} kernel ids of at most "
                              f"{_MAX_KERNEL_ID} characters", field="kernels",
                              hint='e.g. {"server": "", "kernels": ["4f6c..."]}')
    return server, frozenset(kernels)


def parse_states(body: Mapping[str, Any], kernels: frozenset[str], *, now: datetime) -> dict[str, KernelState]:
    """The ``states`` of a report body (absent: ``{}``, a server older than kernel states).

    Args:
        body: the report body.
        kernels: its kernel ids (:func:`parse_report`): a state is taken only for one of them.
        now: when the report arrived; a ``last_activity`` after it (a server clock ahead) is taken as ``now``.

    Raises:
        ValidationError: ``states`` is not an object of kernel id → ``{"execution_state": text of at
            most 32 characters, "last_activity": ISO 8601 with offset or null}`` for ids of ``kernels``
            (field ``states``). An execution state jupyter_client does not define is taken as ``unknown``.
    """
    raw = body.get("states")
    if raw is None:
        return {}
    example = '{"states": {"4f6c...": {"execution_state": "idle", "last_activity": "2026-12-04T10:00:00Z"}}}'
    if not isinstance(raw, dict) or len(raw) > _MAX_KERNELS:
        raise ValidationError(f"states must be an object of at most {_MAX_KERNELS} kernel ids", field="states",
                              hint=f"e.g. {example}")
    out: dict[str, KernelState] = {}
    for kernel, state in raw.items():
        if kernel not in kernels:
            raise ValidationError(f"states names kernel {kernel[:80]!r}, which is not in kernels", field="states",
                                  hint="send the state of each reported kernel only")
        if not isinstance(state, dict) or set(state) - {"execution_state", "last_activity"}:
            raise ValidationError("each state must be {\"execution_state\": ..., \"last_activity\": ...}",
                                  field="states", hint=f"e.g. {example}")
        execution = state.get("execution_state")
        last = state.get("last_activity")
        if not isinstance(execution, str) or len(execution) > 32:
            raise ValidationError("execution_state must be the kernel's state as text (at most 32 characters)",
                                  field="states", hint=f"e.g. {example}")
        if last is not None and (not isinstance(last, str) or len(last) > 64):
            raise ValidationError("last_activity must be an ISO 8601 time with offset, or null", field="states",
                                  hint=f"e.g. {example}")
        at = parse_utc(last, field="states") if last is not None else None
        out[kernel] = KernelState(execution if execution in EXECUTION_STATES else "unknown",
                                  min(at, now) if at is not None else None)
    return out


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
    """Live leases whose user is not among ``active_users`` (candidates only: a user missing from
    a paged listing is unknown until asked about alone, see :func:`leases_to_release`). Kernel-bound
    leases and leases without a kernel alike: in hub mode a lease without ``kernel_id`` (asked
    for straight at the central service) is bound to its owner having a running server.

    Args:
        leases: lease dicts (``job_to_dict`` shape: ``user``, ``kernel_id``, ``state``).
        active_users: names of users seen with at least one active (running or starting) server.
    """
    active = set(active_users)
    return [lease for lease in leases
            if lease.get("state") in ("pending", "admitted", "running") and lease.get("user") not in active]


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
    """The latest report of each ``(user, server)``, bounded (see module docstring); in memory:
    they refill within one interval after a restart.

    Args:
        max_servers_per_user: reports kept per user (the oldest is dropped beyond).
        monotonic: seconds clock of the remembered server lists (tests pass their own).
    """

    def __init__(self, *, max_servers_per_user: int = MAX_SERVERS_PER_USER,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.max_servers_per_user = max_servers_per_user
        self._monotonic = monotonic
        self._reports: dict[str, dict[str, KernelReport]] = {}  # user -> server -> report, oldest first
        self._servers: dict[str, tuple[float, tuple[str, ...]]] = {}  # user -> (asked at, active servers)
        self._reported: dict[str, float] = {}  # user -> monotonic time of their latest report
        # every report, rebuilt after each change: the engine's worker thread reads it while the loop writes
        self._flat: tuple[KernelReport, ...] = ()

    def _changed(self) -> None:
        self._flat = tuple(report for mine in self._reports.values() for report in mine.values())

    def activity(self, now: datetime) -> dict[str, dict[str, Any]]:
        """The engine's kernel source in hub mode: ``{owned_kernel_key(user, kernel id): {"execution_state",
        "last_activity"}}`` of every reported kernel, keyed by the reporting user so that one user's
        report never speaks for another's kernel of the same id (red team 18, R3), and read by the
        idle rules as an embedded server's kernels (:func:`~jupyter_sched.scheduling.snapshot.
        kernel_activity_of`); a kernel of a
        report older than :data:`STATE_STALE_S`, or of a server that sends no states, is ``unknown``
        with ``unknown_why`` saying so. Safe to call from another thread (reads one immutable tuple).
        """
        out: dict[str, dict[str, Any]] = {}
        for report in self._flat:
            age = (now - report.received_at).total_seconds()
            for kernel_id in report.kernels:
                state = report.states.get(kernel_id)
                kernel = owned_kernel_key(report.user, kernel_id)  # never read as another user's (red team 18, R3)
                if age <= STATE_STALE_S and state is not None:
                    out[kernel] = {"execution_state": state.execution_state, "last_activity": state.last_activity,
                                   "source": USER_SERVER_REPORT}  # the user's word: bounded by the GPUs (R8)
                elif kernel not in out or out[kernel]["execution_state"] == "unknown":
                    why = (f"its server's last kernel report is {age / 60:.0f} min old" if age > STATE_STALE_S
                           else "its server reports no kernel states (an older jupyter_sched)")
                    out[kernel] = {"execution_state": "unknown", "last_activity": None,
                                   "unknown_why": f"kernel state unknown in hub mode: {why}"}
        return out

    def record(self, report: KernelReport) -> None:
        """Keep ``report`` as its server's latest (callers check the server with :meth:`servers_for`)."""
        self._reported[report.user] = self._monotonic()
        mine = self._reports.setdefault(report.user, {})
        mine.pop(report.server, None)
        mine[report.server] = report
        while len(mine) > self.max_servers_per_user:
            del mine[next(iter(mine))]
        self._changed()

    def lists(self, kernel_id: str, *, user: str) -> bool:
        """Whether a kept report of ``user`` lists ``kernel_id`` (safe from another thread: reads one immutable tuple)."""
        return any(report.user == user and kernel_id in report.kernels for report in self._flat)

    def of(self, user: str) -> dict[str, KernelReport]:
        """``{server name: report}`` of ``user``."""
        return dict(self._reports.get(user, {}))

    def count(self) -> int:
        """Reports kept, all users together."""
        return sum(len(mine) for mine in self._reports.values())

    def forget(self, user: str, keep: Iterable[str]) -> None:
        """Drop reports of ``user``'s servers that are no longer active (not in ``keep``)."""
        kept = set(keep)
        mine = self._reports.get(user, {})
        for server in [server for server in mine if server not in kept]:
            del mine[server]
        if not mine:
            self._reports.pop(user, None)
        if not kept:
            self._servers.pop(user, None)
        self._changed()

    def keep_users(self, users: Iterable[str]) -> None:
        """Forget everything about users not in ``users`` (those without kernel-bound leases) who
        have not reported within :data:`REPORT_KEEP_S`."""
        now = self._monotonic()
        wanted = set(users) | {user for user, at in self._reported.items() if now - at < REPORT_KEEP_S}
        for table in (self._reports, self._servers, self._reported):
            for user in [user for user in table if user not in wanted]:
                del table[user]
        self._changed()

    def remember_servers(self, user: str, servers: Sequence[str]) -> None:
        """The hub's fresh answer about ``user``'s active servers."""
        self._servers[user] = (self._monotonic(), tuple(servers))

    async def servers_for(self, hub: HubClient, user: str, server: str) -> tuple[str, ...] | None:
        """``user``'s active servers, to check that ``server`` is one of them before its report is
        kept: the remembered list while it is fresh and names ``server``, else the hub's answer
        (asked at most every :data:`HUB_RECHECK_S` per user); None when the hub did not answer."""
        now = self._monotonic()
        asked_at, known = self._servers.get(user, (float("-inf"), ()))
        if (server in known and now - asked_at < HUB_SERVERS_TTL_S) or now - asked_at < HUB_RECHECK_S:
            return known
        servers = await user_servers(hub, user)
        if servers is None:
            return None
        self.remember_servers(user, servers)
        return tuple(servers)


def lease_refusal(kernel_id: str | None, servers: Sequence[str],
                  reports: Mapping[str, KernelReport]) -> ValidationError | None:
    """Why the central service refuses a user a new lease (None: granted), see module docstring.

    Args:
        kernel_id: the lease's kernel (None: a lease bound to no kernel).
        servers: the user's running servers, as the hub lists them now.
        reports: the user's latest report per server name.

    Returns:
        A :class:`ValidationError` naming ``kernel_id``: no running server, or a kernel that none of
        the running servers reported.
    """
    if not servers:
        asked = f"kernel {kernel_id[:80]!r}" if kernel_id else "GPUs bound to no kernel"
        return ValidationError(
            f"kernel_id: you have no running server on the hub, so no kernel of yours can hold GPUs ({asked}); "
            "a lease is held for a kernel of your running server", field="kernel_id",
            hint="start your server from the hub's home page and ask from one of its notebooks: %gpu request 1 "
                 "(a batch job: jupyter-sched submit)")
    if not kernel_id:
        return None
    if any(kernel_id in report.kernels for name, report in reports.items() if name in servers):
        return None
    named = ", ".join(repr(name) if name else "your default server" for name in servers)
    return ValidationError(
        f"kernel_id: no kernel {kernel_id[:80]!r} runs on your running server(s) ({named}) as they last "
        "reported their kernels, so neither %gpu release nor the kernel's end would free the GPUs",
        field="kernel_id",
        hint="give the id of a kernel of your own server (%gpu request sends its kernel's id, "
             "JUPYTER_SCHED_KERNEL_ID); a kernel started a moment ago is reported within 30 s")


async def leases_to_release(leases: Sequence[Mapping[str, Any]], hub: HubClient,
                            reports: KernelReports) -> list[tuple[Mapping[str, Any], str]]:
    """The periodic decision: ``(lease, reason)`` for each live lease to release.

    A lease is released when the hub confirms its user has no active server
    (:data:`SERVER_STOPPED`, or :data:`NO_SERVER` for a lease without a kernel; a user the paged
    listing did not see is asked about alone first, and stays untouched when the hub does not
    answer), or, kernel-bound, when :func:`gone_leases` says its kernel is gone
    (:data:`GONE_KERNEL`). Reports of servers that are no longer active are forgotten, and all
    reports of users without kernel-bound leases.

    Raises:
        HubLookupError: the hub's user listing could not be read (nothing is decided).
    """
    kernel_bound = [lease for lease in leases if lease.get("kernel_id")]
    reports.keep_users({str(lease.get("user")) for lease in kernel_bound})
    if not leases:
        return []
    seen = {name: active_servers_of(model) for name, model in (await active_users(hub)).items()}
    out: list[tuple[Mapping[str, Any], str]] = []
    for user in sorted({str(lease.get("user")) for lease in stale_leases(leases, seen)}):
        servers = await user_servers(hub, user)  # not seen: unknown until the hub says so for this user
        if servers is None:
            continue
        if servers:
            seen[user] = servers
            continue
        reports.forget(user, ())
        out += [(lease, SERVER_STOPPED if lease.get("kernel_id") else NO_SERVER)
                for lease in stale_leases(leases, seen) if lease.get("user") == user]
    for user, servers in seen.items():
        mine = [lease for lease in kernel_bound if lease.get("user") == user]
        if mine:
            reports.forget(user, servers)
            reports.remember_servers(user, servers)
            out += [(lease, GONE_KERNEL) for lease in gone_leases(mine, reports.of(user), servers)]
    return out
