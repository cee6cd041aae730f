"""One reconciliation pass: compare each admitted/running job's stored intent with what the
executor reports, and act through the right reconciler.

=====================================  =======================================================
the row says                           the executor says → reconciler
=====================================  =======================================================
lease, admitted                        (nothing to run) → bind it (:mod:`.start`)
lease, running, stop intent            (nothing to stop) → end it (:mod:`.stops`)
lease for a job (``parent_job_id``)    its GPUs join that job's devices fence (``lend_gpus``)
lease for a kernel (hub mode)          its GPUs join its owner's servers' fence (``fence_servers``)
batch, any                             watches it → time limit / stop intent (:mod:`.stops`)
batch, running, or has a handle        does not watch it → adopt or settle (:mod:`.recovery`)
batch, admitted, no handle             does not watch it → start it (:mod:`.start`)
=====================================  =======================================================

Right after this engine became leader every unwatched batch job goes through adoption first
(the previous leader may have started it without persisting the handle), and a pending job whose
work still runs (a store restored from a backup, :mod:`.restored`) is adopted as running, and so is
work that runs here for a job the store does not have at all. Each job is handled on
its own: an unexpected error is logged and written to that job's message, and the pass goes on;
only a lost lease or a failing store stops it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from ..errors import NotLeaderError, StoreError
from ..executors.base import Executor
from ..model import Inventory, JobState
from ..store import JobRecord, Store
from .observe import TickReport
from .recovery import AdoptReconciler
from .restored import adopt_running_pending, adopt_unknown_live
from .start import StartReconciler
from .stops import StopReconciler
from .transitions import JobWriter

__all__ = ["Reconciler"]

log = logging.getLogger(__name__)


class Reconciler:
    """Runs the reconcilers over every admitted/running job (module docstring)."""

    def __init__(self, store: Store, executor: Executor, writer: JobWriter, *, start: StartReconciler,
                 stops: StopReconciler, adopt: AdoptReconciler) -> None:
        self.store = store
        self.executor = executor
        self.writer = writer
        self.start = start
        self.stops = stops
        self.adopt = adopt
        self.held_users: Callable[[], Mapping[str, str]] | None = None
        """``{user: why}`` of owners the hub no longer lists (set with the decider's): said when work of
        theirs that the store lacks is adopted (:func:`.restored.adopt_unknown_live`)."""
        self.inventory: Callable[[], Inventory] | None = None
        """The current inventory (set by the engine): the node of the GPUs a wrapper with no launch record
        uses (hubadmin26 B22, :func:`.restored.adopt_unknown_live`)."""

    def run(self, report: TickReport, *, adopt_unwatched: bool = False) -> None:
        """One pass (module docstring); ``adopt_unwatched`` right after becoming leader.

        Raises:
            NotLeaderError: the lease was lost (the tick steps down).
            StoreError: the store failed.
        """
        if adopt_unwatched:  # a store older than the host (restored): pending jobs whose work runs (A13)
            adopt_running_pending(self.store, self.executor, self.writer, self.writer.clock)
            # … and work it does not have at all (submitted after the backup; a new store: hubadmin24 B2, B7)
            adopt_unknown_live(self.store, self.executor, self.writer, self.writer.clock, held_users=self.held_users,
                               inventory=self.inventory)
        tracked = self.executor.tracked()
        records = self.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING))
        for record in records:
            try:
                self._one(record, tracked, report, adopt_unwatched)
            except (NotLeaderError, StoreError):
                raise
            except Exception as exc:  # a bug for one job must not freeze the others
                log.exception("reconciling job %s failed", record.job.id)
                self.writer.say(record.job.id, f"the scheduler could not act on this job: "
                                               f"{type(exc).__name__}: {exc}; retrying")
        lend = getattr(self.executor, "lend_gpus", None)
        if lend is not None:  # a lease granted for a running job: its GPUs join the job's devices fence
            lent: dict[str, list[str]] = {}
            for record in records:
                job = record.job
                if job.is_lease and job.spec.parent_job_id and job.allocation is not None and record.stop_intent is None:
                    lent.setdefault(job.spec.parent_job_id, []).extend(job.allocation.all_gpu_uuids())
            try:
                lend(lent)
            except Exception:  # the fence is the executor's: never the pass's failure
                log.exception("widening jobs' devices fences for their leases failed")
        fence = getattr(self.executor, "fence_servers", None)
        if fence is not None:  # a kernel lease: its GPUs join its owner's notebook servers' devices group
            kernels = [(r.job, r.job.allocation.all_gpu_uuids()) for r in records
                       if r.job.is_lease and not r.job.spec.parent_job_id and r.job.allocation is not None
                       and r.stop_intent is None]
            try:
                fence(kernels)
            except Exception:
                log.exception("setting the GPUs of users' notebook servers' devices groups failed")

    def _one(self, record: JobRecord, tracked: frozenset[str], report: TickReport, adopt_unwatched: bool) -> None:
        job = record.job
        if job.is_lease:
            if job.state is JobState.ADMITTED:
                self.start.reconcile(record, report)
            else:
                self.stops.reconcile(record)
        elif job.id in tracked:
            self.stops.reconcile(record)
        elif adopt_unwatched or job.state is JobState.RUNNING or record.handle is not None:
            self.adopt.reconcile(record, report)
        else:
            self.start.reconcile(record, report)
