"""A cycle whose ledger stays alive: one new job decided at once, between full cycles (issue 17).

A full cycle builds its ledger from every job holding GPUs; at 5,000 nodes and 18,000 holders
that alone takes about a second, so deciding each submit with a full cycle makes a lease
request wait for it. :class:`LiveCycle` keeps the context of the last full cycle — its ledger
with the cycle's admissions assumed, the GPUs nominated to preemptors, the EASY reservations of
the blocked jobs — and visits one new pending job on it, **as if it came last in the queue**:

* it is admitted only onto capacity no job of the cycle was admitted to, outside every
  reservation and nomination, within its quota — it overtakes nothing that is blocked;
* a plain pend (nothing admitted, preempted, rejected or audited) of a job that a full cycle run
  now would also visit last (:class:`~.tail.QueueTail`), on a context that has admitted nothing
  (so that it is the state such a cycle starts from: a job admitted in a cycle is not yet a
  running job to it — no victim, reserved around by its expected end), keeps the context: every other pending
  job would get the same decision, reason, position and ETA from that cycle, and the new job
  gets the reason that cycle would give it — its position behind all of them, its message and
  details — except its ETA, which only a full cycle projects: it is marked provisional
  (``details.eta_code`` ``"Provisional"``) until the next full cycle. Where the queue is small
  enough for the cycle to replay ETAs forward (:func:`~.eta.replays`), a job behind may start
  before an earlier one in that replay and so move its ETA: :attr:`LiveCycle.etas_moved` then
  asks the caller for a full cycle soon (the ETAs, and the positions, which follow the replay's order
  when GPUs next free — newuser38 N2 —: decisions and reasons stay exact);
* a pending job whose promised wait runs out after the cycle (:func:`~jupyter_sched.queues.order.
  promise_due`) would be elected by a full cycle run now — visited first in its class, holding the
  EASY reservation —, so the reservations this context keeps are no longer that cycle's: from that
  moment no job is decided here (:meth:`LiveCycle.decide` returns None; issue 16);
* everything else (it would need a preemption, be rejected, or pend somewhere other than last)
  is left to the next full cycle, which orders the queue properly; the live context is then
  spent (:attr:`usable` False), since such a visit may have changed reservations or tried
  evictions on the ledger.

Pure, like the cycle: the caller supplies ``now``; nothing is read from the clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime

from ..model import Job, JobState, PendingReason
from ..queues.limits import effective_limit
from ..queues.order import promise_due
from .context import CycleContext, no_pause
from .cycle import run_on, visit
from .eta import (
    _agreed,  # the backfill clause's reservation time, as the full cycle words it
    replays,
)
from .profile import SchedulingProfile
from .snapshot import CycleResult, Pend, Snapshot
from .tail import QueueTail

__all__ = ["PROVISIONAL_ETA", "LiveCycle"]

PROVISIONAL_ETA = "estimated within seconds, at the next scheduling cycle"
"""``eta_reason`` of a job pended on the live ledger (its ETA needs a full cycle's projection)."""


class LiveCycle:
    """The last full cycle, kept alive for one-job decisions (module docstring).

    Args:
        snapshot: the cycle's input.
        profile: the policy (default :class:`SchedulingProfile`).
        pause: called between the full cycle's jobs (:attr:`.context.CycleContext.pause`); never
            by one-job decisions.

    Attributes:
        result: the full cycle's decisions (what :func:`~.cycle.run_cycle` returns).
        usable: False once a one-job decision did not end in a plain admission or a pend kept
            last (or the caller said so with :meth:`spend`): only a new full cycle decides again.
        etas_moved: a pend kept here may have moved the projected ETA of jobs ahead of it (the
            cycle replays ETAs forward at this queue length): a full cycle re-projects them.
    """

    def __init__(self, snapshot: Snapshot, profile: SchedulingProfile | None = None,
                 pause: Callable[[], object] | None = None) -> None:
        # its own copy of the learned runtimes: a job decided here adds its own (:meth:`decide`)
        self._learned = dict(snapshot.runtime_estimates)
        self._ctx = CycleContext(replace(snapshot, runtime_estimates=self._learned), profile or SchedulingProfile(),
                                 pause)
        self.result = run_on(self._ctx)
        self._ctx.pause = no_pause  # one-job decisions never pause (they are the fast path)
        self.usable = True
        self._queued = sum(1 for p in self.result.pending if p.reason.position)  # those numbered (N12)
        self.etas_moved = False
        self._tail: QueueTail | None = None
        self._etas: Mapping[str, datetime | None] | None = None
        self._elects_at: tuple[datetime | None] | None = None  # None: not worked out yet (_next_election)

    @property
    def snapshot(self) -> Snapshot:
        """The full cycle's input."""
        return self._ctx.snap

    def spend(self) -> None:
        """Stop deciding on this ledger (it no longer matches the store)."""
        self.usable = False

    def decide(self, job: Job, now: datetime, *, runtime: float | None = None) -> CycleResult | None:
        """Visit one new pending ``job`` last in the queue at ``now``; None when not usable.

        Args:
            job: the new pending job.
            now: the decision's time (not before the cycle's).
            runtime: its runtime learned from history (s; as ``Snapshot.runtime_estimates`` would
                hold it; None: none learned).

        Returns:
            The one-job result: a single ``Admit`` (kept on the ledger); a single ``Pend`` of a job
            a full cycle would visit last, with its position and a provisional ETA (kept: module
            doc); or anything else — a pend elsewhere, a preemption, a reject — after which the
            context is spent.

        Raises:
            ValueError: ``job`` is not pending, was already decided here, or ``now`` is before
                the cycle's time.
        """
        if not self.usable:
            return None
        ctx = self._ctx
        if job.state is not JobState.PENDING or job.id in ctx.by_id:
            raise ValueError(f"job {job.id} is not a new pending job for this cycle")
        if now < ctx.now:
            raise ValueError(f"time runs backwards ({now.isoformat()} < {ctx.now.isoformat()})")
        elects_at = self._next_election()
        if elects_at is not None and now > elects_at:  # a full cycle now elects a job: other reservations
            self.usable = False
            return None
        ctx.now = now
        ctx.admits, ctx.preempts, ctx.pends, ctx.rejects, ctx.audit = [], [], [], [], []
        ctx.by_id[job.id] = job
        if job.spec.resources.fractional:  # a share counts what it holds away, as in a full cycle (red39 R1)
            ctx.count_shares()
        if runtime is not None:
            self._learned[job.id] = runtime
        # Jobs admitted on this ledger (by its cycle or here) are fresh admissions to it: not victims,
        # reserved around by their expected ends, withdrawable when they borrow — a full cycle now
        # would see them running. Only a ledger without any is the state that cycle starts from.
        clean = not ctx.admitted
        visit(ctx, job)
        admits, pends = tuple(ctx.admits), tuple(ctx.pends)
        plain = not (ctx.preempts or ctx.rejects)
        if plain and len(admits) == 1 and not pends:
            if self._tail is not None:
                self._tail.charged()
            return CycleResult(admits=admits, audit=tuple(ctx.audit))
        if plain and clean and not (admits or ctx.audit) and len(pends) == 1 and pends[0].job_id == job.id \
                and self._tail_of().is_last(job):
            self._tail_of().add(job)
            self._queued += 1
            self.etas_moved = self.etas_moved or replays(ctx, self._queued)
            return CycleResult(pending=(Pend(job.id, self._provisional(job, pends[0].reason)),))
        self.usable = False
        return CycleResult(admits=admits, preemptions=tuple(ctx.preempts), pending=pends,
                           rejects=tuple(ctx.rejects), audit=tuple(ctx.audit))

    def _next_election(self) -> datetime | None:
        """When the first job the cycle left pending without electing it is elected (module doc;
        None: never), worked out once, at the first decision (not on every full cycle)."""
        if self._elects_at is None:
            factor, elected = self._ctx.profile.elect_overdue, self._ctx.elected
            self._elects_at = (min((due for p in self.result.pending if p.job_id not in elected
                                    and (due := promise_due(p.reason, factor)) is not None), default=None),)
        return self._elects_at[0]

    def _tail_of(self) -> QueueTail:
        if self._tail is None:
            by_id = self._ctx.by_id
            self._tail = QueueTail(self._ctx, (by_id[p.job_id] for p in self.result.pending))
        return self._tail

    def _provisional(self, job: Job, reason: PendingReason) -> PendingReason:
        """The reason a full cycle would give ``job`` visited last, its ETA left to that cycle.

        As :func:`~.eta.estimate_all` words it: the backfill clause names the reserved job's ETA
        (when earlier than the reservation's latest time), the effective time limit is in the
        details; the position is behind every pending job."""
        if self._etas is None:
            self._etas = {p.job_id: p.reason.eta for p in self.result.pending}
        details = {**reason.details, "eta_code": "Provisional", "eta_waits_on": []}
        if job.spec.time_limit_s is None:
            details["time_limit_s"], details["time_limit_source"] = effective_limit(
                job.spec, self._ctx.profile.time_limits)
        reason = _agreed(replace(reason, details=details), self._etas)
        return replace(reason, position=self._queued, eta=None, eta_reason=PROVISIONAL_ETA, predicted_start=None)
