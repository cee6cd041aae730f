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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from .. import asking_process
from ..admission import system_caller
from ..errors import ConflictError
from ..model import JobKind
from ..store import LIVE_STATES
from .context import Context
from .jobs import JobsService

__all__ = ["ASKER_GONE", "AskerWatch"]

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
