"""Incremental decisions: a submitted job that fits now and overtakes nothing blocked is decided
at once, against the live ledger, without waiting for a timer or a full cycle (issue 17).

A full cycle orders the whole queue (fair share, classes, EASY reservations, a reason for every
pending job); at 20,000 pending jobs on 5,000 nodes it costs about a second, and a lease request
used to wait for one behind a fixed 100 ms pause. Most submits need neither: the job fits free
GPUs now and no waiting job could have used them. The engine keeps the last full cycle alive
(:class:`~jupyter_sched.scheduling.live.LiveCycle`: its ledger with that cycle's admissions,
nominations and reservations) and, for each submit event, visits the new job on it as if it
came last in the queue:

* a plain admission (no preemption, outside every reservation and nomination, within quota) is
  committed at once through the same fenced transaction as a cycle's (over-allocation guard
  included), and the job is started or its lease bound in the same tick;
* a plain pend of a job that a full cycle would visit last (behind every pending job: it blocks
  nobody and moves no one's reason) keeps the ledger too: its reason — position included, its
  ETA marked provisional until the next full cycle — goes to :attr:`DecisionApplier.reasons` and
  the event stream at once, to the store within ``reason_flush_s`` (one batch), and the next
  submit is again decided at once;
* anything else — it would pend ahead of others, preempt or be rejected; the ledger is stale (a
  finish, a quota change); an earlier submit of this tick already went to the full cycle — asks
  for a full cycle now, which decides it and every job behind it in proper order.

Only this engine admits, and every admission it commits is also taken on the live ledger, so
the ledger never holds less than the store; a finish or release frees GPUs only when the next
full cycle rebuilds it (the fast path is then at most too shy, never wrong). Full cycles still
run every ``cycle_interval_s`` and after every finish, for fairness, reservations and reasons.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable

from ..model import Job, JobState, PendingReason
from ..scheduling.live import LiveCycle
from ..scheduling.ports import declares_port
from ..scheduling.snapshot import Pend
from ..store import JobRecord
from .apply import DecisionApplier
from .clock import Clock
from .observe import TickReport
from .transitions import JobWriter

__all__ = ["IncrementalDecider"]

log = logging.getLogger(__name__)


class IncrementalDecider:
    """Submit events decided on the live ledger (module docstring).

    Args:
        writer: job rows (reads the submitted job).
        applier: commits an admission (fenced).
        clock: time source.
        start: starts or binds one admitted job now (the start reconciler).

    Attributes:
        live: the last full cycle, kept alive (None: no usable ledger until the next full cycle).
        decided: jobs admitted incrementally so far.
        pended: jobs pended incrementally so far (last in the queue: the ledger stays).
        deferred: submits left to a full cycle so far.
    """

    def __init__(self, writer: JobWriter, applier: DecisionApplier, clock: Clock,
                 start: Callable[[JobRecord, TickReport], None]) -> None:
        self.writer = writer
        self.applier = applier
        self.clock = clock
        self._start = start
        self.live: LiveCycle | None = None
        self._submitted: deque[tuple[str, JobRecord | None]] = deque()
        self._lock = threading.Lock()  # submits and cancels come from web threads
        self._spent = 0  # times the ledger was spent (:meth:`keep`)
        self.decided = 0
        self.pended = 0
        self.deferred = 0
        self._unwritten: dict[str, tuple[JobRecord, PendingReason]] = {}
        self._unwritten_since = 0.0
        self._submit_times: deque[float] = deque(maxlen=self.burst_submits)
        self.runtimes: Callable[[Job], float | None] | None = None
        """``runtimes(job)``: its runtime learned from history (the engine's feed; None: not wired)."""
        self.bound_ports: Callable[[Iterable[int]], frozenset[int]] | None = None
        """The decider's bind check (``Decider.bound_ports``): a new service whose declared port is
        bound on the host is left to a full cycle, whose snapshot says so (red team 17, R3)."""

    reason_flush_s = 1.0
    """Seconds the reason of a job pended here may wait before it is stored (:meth:`flush`)."""

    eta_refresh_s = 1.0
    """Least seconds from a full cycle to the one that re-projects ETAs after pends kept on the
    live ledger of a short queue (:attr:`~jupyter_sched.scheduling.live.LiveCycle.etas_moved`)."""

    burst_submits = 8
    burst_gap_s = 0.25
    """A burst (:meth:`after_burst`): ``burst_submits`` submits less than ``burst_gap_s`` apart on
    average, the latest less than ``burst_gap_s`` ago — a script's loop, never a person."""

    def after_burst(self, when: float) -> float:
        """``when`` (``time.monotonic()``), or, during a burst of submits, ``burst_gap_s`` after its latest.

        A full cycle that only re-words reasons or re-projects ETAs waits for a burst to end: each
        goes over the whole queue (0.1-0.5 s at 1,000 pending) holding the interpreter half the time,
        so every submit answered beside it took about twice as long (REST submit p95 with 100,000
        jobs stored, issue 17), and the burst's next submits made its ETAs stale again. Each pend of
        the burst still has its reason at once (ETA provisional), a submit that needs a full cycle
        still gets one at once, and the periodic cycle (``cycle_interval_s``) still runs.
        """
        times = self._submit_times
        if len(times) < self.burst_submits or times[-1] - times[0] > self.burst_submits * self.burst_gap_s:
            return when
        return max(when, times[-1] + self.burst_gap_s)

    @property
    def etas_moved(self) -> bool:
        """A pend kept on the live ledger may have moved ETAs of jobs ahead (a full cycle re-projects)."""
        return self.live is not None and self.live.etas_moved

    def submitted(self, job_id: str, record: JobRecord | None = None) -> None:
        """Note a submit event (thread-safe: called from the web thread); ``record``: the row the
        API just wrote (version 1), decided without reading it again — that read was about half
        of an incremental decision's time (issue 17). Any change of the row since (a cancel, see
        :meth:`withdrawn`; another server's write) fails the decision's compare-and-set write."""
        with self._lock:
            self._submitted.append((job_id, record))
        self._submit_times.append(time.monotonic())

    def withdrawn(self, job_id: str | None) -> None:
        """A cancel (thread-safe): queued submits of ``job_id`` (None: all) are read again from the
        store when decided, so a job cancelled right after its submit is neither admitted nor
        shown pending again on the event stream."""
        with self._lock:
            self._submitted = deque((queued, None if job_id is None or queued == job_id else record)
                                    for queued, record in self._submitted)

    @property
    def waiting(self) -> bool:
        """True when submit events wait to be decided."""
        return bool(self._submitted)

    def forget(self) -> None:
        """A full cycle is about to decide everything, reasons included (or this engine stepped down)."""
        with self._lock:
            self._submitted.clear()
        self._unwritten.clear()

    def flush(self, *, force: bool = False) -> int:
        """Store the reasons of jobs pended here once the oldest waited ``reason_flush_s`` (one
        batch: other servers sharing the store show them; the jobs counter moves once); return
        how many were written (compare-and-set per row: one changed meanwhile keeps its own).

        Raises:
            NotLeaderError: the lease was lost.
            StoreError: the store failed.
        """
        if not self._unwritten or not (force or time.monotonic() - self._unwritten_since >= self.reason_flush_s):
            return 0
        records, pends = {}, []
        for record, reason in self._unwritten.values():
            records[record.job.id] = record
            pends.append(Pend(record.job.id, reason))
        self._unwritten.clear()
        return len(self.applier.write_reasons(pends, records))

    def spend(self) -> int:
        """The ledger no longer matches the store (a quota change, stepping down); thread-safe (a
        change's kick comes from a web thread, maybe while a full cycle runs: :meth:`keep`). Returns
        how many times it was spent so far (a full cycle's, before it reads the store: :meth:`keep`)."""
        with self._lock:
            self._spent += 1
            spent, live, self.live = self._spent, self.live, None
        if live is not None:
            live.spend()
        return spent

    def keep(self, live: LiveCycle | None, spends: int) -> bool:
        """Make ``live`` (a full cycle's ledger) the one submits are decided on, unless the ledger was
        spent again since ``spends`` (what :meth:`spend` returned before that cycle read the store);
        whether kept.

        A change that lands while a full cycle runs (the cycle steps aside for the web loop) is not in
        the snapshot it read, and its kick found no ledger to spend: kept, that ledger would admit the
        next submits past the new quota until the change's own full cycle (a job over its user's new cap
        of 1 was admitted and ran: the likely cause of tests/web/test_newuser8.py n2's 30-s wait under
        load, session 30 run 4). It is spent instead; that cycle decides them.
        """
        with self._lock:
            if live is not None and self._spent == spends:
                self.live = live
                return True
        if live is not None:
            live.spend()
        return False

    def decide(self, report: TickReport) -> bool:
        """Decide the submitted jobs in submit order; return False as soon as one needs a full
        cycle (the rest wait for it: none may overtake that one).

        Raises:
            NotLeaderError: the lease was lost.
            StoreError: the store failed.
        """
        while True:
            with self._lock:
                if not self._submitted:
                    return True
                job_id, given = self._submitted[0]
            decided = self._decide_one(job_id, given, report)
            with self._lock:
                if not decided:
                    self.deferred += len(self._submitted)
                    self._submitted.clear()
                    return False
                self._submitted.popleft()

    def _runtime(self, job: Job) -> float | None:
        return self.runtimes(job) if self.runtimes is not None else None

    def _decide_one(self, job_id: str, given: JobRecord | None, report: TickReport) -> bool:
        live = self.live
        if live is None or not live.usable:
            return False
        record = given if given is not None else self.writer.get(job_id)
        if record is None or record.job.state is not JobState.PENDING or record.stop_intent is not None:
            return True  # cancelled or decided meanwhile: nothing to do
        port = record.job.spec.port
        if port and self.bound_ports is not None and declares_port(record.job) and self.bound_ports((port,)):
            return False  # pends PortInUse from a full cycle: the live ledger's snapshot did not bind it
        try:
            result = live.decide(record.job, self.clock.now(), runtime=self._runtime(record.job))
        except ValueError as exc:  # already seen by the live cycle, or the clock stepped back
            log.info("job %s needs a full cycle: %s", job_id, exc)
            live.spend()
            return False
        if result is None:
            return False
        if live.usable and len(result.pending) == 1 and not result.admits:
            # a plain pend of a job a full cycle would visit last: the ledger stays (:mod:`..scheduling.live`)
            reason = result.pending[0].reason
            self.applier.pended(record.job, reason)
            if not self._unwritten:
                self._unwritten_since = time.monotonic()
            self._unwritten[job_id] = (record, reason)
            self.pended += 1
            return True
        if len(result.admits) != 1 or result.pending or result.preemptions or result.rejects:
            # not a plain admission: e.g. it withdrew an admission of this ledger, which the store has
            # committed and started (new user 24, N1) — the full cycle decides, and writes, all of it
            return False
        written: dict[str, JobRecord] = {}
        admitted, _stops = self.applier.apply(result, live.snapshot, {job_id: record}, incremental=True,
                                              written=written)
        if not admitted:  # refused by the guard or changed meanwhile: the ledger is off
            live.spend()
            return False
        self.decided += 1
        report.admitted.extend(j.id for j in admitted)
        fresh = written.get(job_id)  # the row as the admission wrote it (not read again)
        if fresh is not None and fresh.job.state is JobState.ADMITTED:
            self._start(fresh, report)
        return True
