"""A lease whose asking process is gone is ended: the same-host watch of ``asking_process`` (newuser41 N1).

A lease of a kernel the server did not start (``released_at_exit``: nbconvert, papermill, ``jupyter console``, VS
Code) is given back by that kernel's exit hook. A kernel killed by SIGKILL, the OOM killer or ipykernel's
``os._exit`` runs none: its pending lease stayed queued, was later granted to nobody and held a GPU for the idle
window, and the next waiter was told to run ``%gpu release`` in a notebook that no longer had a kernel.

:class:`AskerWatch` is one of the engine's leader hooks: each cycle it looks at the live leases that name their
asking process on THIS host and pid namespace (:func:`jupyter_sched.asking_process.host`) and ends each whose
process no longer runs (or is another process under a reused pid): a pending one is withdrawn, a granted one
released — its GPUs go to the next waiter at once — said as ``request withdrawn by the server before any GPU was
granted: its kernel's process ended without releasing it (killed?)``, audited as ``lease_released``. A lease asked
from another host, a container or an older client (no ``asking_process``) is left to its exit hook and the idle
rules, as before; leases of kernels the server started (``kernel_id``) keep their own path. Where this process
cannot see every process (``/proc`` mounted ``hidepid``: another account's kernel is invisible, not gone), only a
lease whose asker this watch once saw running is ended.

:class:`HeartbeatWatch` is the other half, for the askers this host cannot check by pid (a hub's kernels on other
hosts, in containers or other pid namespaces; the service on a host without ``/proc``): the kernel's keeper
(:mod:`jupyter_sched.client.heartbeat`) sends ``POST leases/{id}/heartbeat`` every ``lease_heartbeat_interval_s``,
and a lease it has heard from that stays silent for ``lease_heartbeat_misses`` heartbeats is withdrawn (pending) or,
after as long again, released (granted): ``its kernel stopped answering (no heartbeat since 09:58 UTC) — killed?``,
audited ``lease_released``. A heartbeat is not activity: it never moves the idle rules' clocks. What it keeps is
in memory: a lease never heard from by this process (an older client without the keeper; heartbeats sent to
another server on the same store) is left to its exit hook and the idle rules, and after a start or a leader
change (a gap in the leader's cycles longer than the window) nothing is ended before a whole window passed, so
every keeper that still runs is heard first.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from .. import asking_process
from ..admission import Caller, system_caller
from ..errors import ConflictError, ValidationError
from ..model import Job, JobKind
from ..model.units import clock_text
from ..store import LIVE_STATES
from .context import Context
from .jobs import JobsService, ended_words
from .models import LeaseHeartbeatResponse

__all__ = ["ASKER_GONE", "AskerWatch", "HeartbeatWatch", "heartbeat_gone"]

ASKER_GONE = "its kernel's process ended without releasing it (killed?)"
"""Why such a lease ended, in its owner's words (its message, its row, the waiters' lines)."""


class AskerWatch:
    """Ends live leases whose asking process on this host is gone (call once per leader cycle)."""

    def __init__(self, ctx: Context, jobs: JobsService, *, here: str | None = None,
                 running: Callable[[int, int], bool] = asking_process.running) -> None:
        self.ctx, self.jobs = ctx, jobs
        self.here = asking_process.host() if here is None else here
        self.running = running
        self.sees_all = asking_process.start_ticks(1) is not None  # hidepid hides pid 1 from a non-root service
        self.seen: set[str] = set()  # leases whose asker was seen running (what counts where not all is seen)

    def __call__(self) -> list[str]:
        """Ids of the leases ended this call."""
        if self.here is None:  # not Linux: no process can be checked
            return []
        server = system_caller("server")
        ended: list[str] = []
        live: set[str] = set()
        for record in self.ctx.store.list_jobs(states=LIVE_STATES, kinds=[JobKind.LEASE]):
            job = record.job
            asker = job.spec.asking_process
            if asker is None or record.stop_intent is not None or not job.spec.released_at_exit:
                continue
            pid, started, host = asker
            if host != self.here:
                continue
            live.add(job.id)
            if self.running(pid, started):
                self.seen.add(job.id)
                continue
            if not self.sees_all and job.id not in self.seen:
                continue
            with contextlib.suppress(ConflictError):  # it ended meanwhile (its own release came first)
                self.jobs.cancel(server, job.id, by="the server", why=ASKER_GONE)
                self.ctx.store.add_event(actor=server.user, action="lease_released", job_id=job.id,
                                         user=job.spec.user, message=ASKER_GONE,
                                         details={"asking_process": {"pid": pid, "started": started}})
                ended.append(job.id)
        self.seen &= live - set(ended)
        return ended


def heartbeat_gone(last: datetime, now: datetime) -> str:
    """Why a lease whose kernel stopped sending heartbeats ended, in its owner's words."""
    return f"its kernel stopped answering (no heartbeat since {clock_text(last, now)}) — killed?"


_PRUNE_AT = 1024
"""Heartbeat times kept before the old ones are dropped (a server that never leads prunes nothing else)."""


class HeartbeatWatch:
    """The heartbeats of leases whose asker is not checkable by pid here, and the leader hook that ends a lease
    whose kernel stopped sending them (see module docstring).

    Args:
        interval_s: ``lease_heartbeat_interval_s``: seconds between a keeper's heartbeats.
        misses: ``lease_heartbeat_misses``: heartbeats missed before a pending lease is withdrawn (a granted one:
            twice that).
        here: this host's :func:`jupyter_sched.asking_process.host` (None: not Linux, no asker is checkable).
    """

    def __init__(self, ctx: Context, jobs: JobsService, *, interval_s: float = 30.0, misses: int = 3,
                 here: str | None = None) -> None:
        self.ctx, self.jobs = ctx, jobs
        self.interval_s, self.misses = interval_s, misses
        self.here = asking_process.host() if here is None else here
        self._beats: dict[str, datetime] = {}  # lease id -> its last heartbeat (this server's clock)
        self._lock = threading.Lock()
        self._since: datetime | None = None  # since when this server leads without a gap: the grace's start
        self._last_cycle: datetime | None = None

    @property
    def window(self) -> timedelta:
        """Silence after which a pending lease is withdrawn (misses times interval)."""
        return timedelta(seconds=self.interval_s * self.misses)

    def watched(self, job: Job) -> bool:
        """Whether ``job`` is a lease whose kernel keeps it with heartbeats: asked by a kernel the server did not
        start, from a process this host cannot check (another host, container or pid namespace; a kernel on a
        host without ``/proc``, which names no ``asking_process``)."""
        asker = job.spec.asking_process
        return (job.spec.kind is JobKind.LEASE and job.spec.released_at_exit
                and (asker is None or self.here is None or asker[2] != self.here))

    def beat(self, caller: Caller, lease_id: str) -> LeaseHeartbeatResponse:
        """``POST leases/{id}/heartbeat``: the lease's kernel still runs. Only its owner sends it (anyone else:
        refused and audited, as :meth:`~.context.Context.visible` does). Nothing is written: no idle clock,
        keepalive or activity moves.

        Raises:
            NotFoundError: no such lease (or an ended one of another user); AuthorizationError: another user's.
            ValidationError: a batch job, not a lease. ConflictError: the lease ended (its keeper stops).
        """
        owner_view = Caller(user=caller.user, teams=caller.teams, granted=caller.granted, admin=False)
        job = self.ctx.visible(owner_view, lease_id, request="send a lease's heartbeat", field="lease_id").job
        if job.spec.kind is not JobKind.LEASE:
            raise ValidationError(f"{lease_id} is a {job.spec.kind.value} job, not a lease", field="lease_id",
                                  hint="heartbeats apply to GPU leases only (POST leases/{id}/heartbeat)")
        if job.state.terminal:
            raise ConflictError(ended_words(job), field="lease_id", hint="request a new lease; this one has ended")
        needed = self.watched(job)
        if needed:
            now = self.ctx.clock.now()
            with self._lock:
                self._beats[job.id] = now
                if len(self._beats) > _PRUNE_AT:  # ended leases' times, where no leader hook prunes them
                    old = now - 4 * self.window
                    self._beats = {key: at for key, at in self._beats.items() if at >= old}
        return LeaseHeartbeatResponse(id=job.id, state=job.state.value, needed=needed, interval_s=self.interval_s,
                                      misses=self.misses)

    def last_beat(self, lease_id: str) -> datetime | None:
        """When ``lease_id``'s kernel sent its last heartbeat here (None: never heard)."""
        with self._lock:
            return self._beats.get(lease_id)

    def __call__(self) -> list[str]:
        """Ids of the leases ended this call (a leader hook: called once per leading cycle)."""
        now = self.ctx.clock.now()
        window = self.window
        if self._since is None or self._last_cycle is None or now - self._last_cycle > window:
            self._since = now  # a start, or leading again after a gap: every live keeper is heard first
        self._last_cycle = now
        if now - self._since < window:
            return []
        server = system_caller("server")
        ended: list[str] = []
        live: set[str] = set()
        for record in self.ctx.store.list_jobs(states=LIVE_STATES, kinds=[JobKind.LEASE]):
            job = record.job
            if record.stop_intent is not None or not self.watched(job):
                continue
            live.add(job.id)
            last = self.last_beat(job.id)
            if last is None:  # never heard here: an older client, or heartbeats that go to another server
                continue
            if now - last < (2 * window if job.state.holds_gpus else window):
                continue
            why = heartbeat_gone(last, now)
            with contextlib.suppress(ConflictError):  # it ended meanwhile (its own release came first)
                self.jobs.cancel(server, job.id, by="the server", why=why)
                self.ctx.store.add_event(actor=server.user, action="lease_released", job_id=job.id,
                                         user=job.spec.user, message=why,
                                         details={"last_heartbeat": last.isoformat(), "interval_s": self.interval_s,
                                                  "misses": self.misses})
                ended.append(job.id)
        with self._lock:  # heard since the list was read: kept; ended or no longer live: dropped
            self._beats = {key: at for key, at in self._beats.items()
                           if key not in ended and (key in live or at > now)}
        return ended
