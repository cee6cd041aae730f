"""A cycle whose ledger stays alive: one new job decided at once, between full cycles (issue 17).

A full cycle builds its ledger from every job holding GPUs; at 5,000 nodes and 18,000 holders
that alone takes about a second, so deciding each submit with a full cycle makes a lease
request wait for it. :class:`LiveCycle` keeps the context of the last full cycle — its ledger
with the cycle's admissions assumed, the GPUs nominated to preemptors, the EASY reservations of
the blocked jobs — and visits one new pending job on it, **as if it came last in the queue**:

* it is admitted only onto capacity no job of the cycle was admitted to, outside every
  reservation and nomination, within its quota — it overtakes nothing that is blocked;
* everything else (it would pend, need a preemption, or be rejected) is left to the next full
  cycle, which orders the queue properly; the live context is then spent (:attr:`usable` False),
  since such a visit may have changed reservations or tried evictions on the ledger.

Pure, like the cycle: the caller supplies ``now``; nothing is read from the clock.
"""

from __future__ import annotations

from datetime import datetime

from ..model import Job, JobState
from .context import CycleContext
from .cycle import run_on, visit
from .profile import SchedulingProfile
from .snapshot import CycleResult, Snapshot

__all__ = ["LiveCycle"]


class LiveCycle:
    """The last full cycle, kept alive for one-job decisions (module docstring).

    Args:
        snapshot: the cycle's input.
        profile: the policy (default :class:`SchedulingProfile`).

    Attributes:
        result: the full cycle's decisions (what :func:`~.cycle.run_cycle` returns).
        usable: False once a one-job decision did not end in a plain admission (or the caller
            said so with :meth:`spend`): only a new full cycle decides again.
    """

    def __init__(self, snapshot: Snapshot, profile: SchedulingProfile | None = None) -> None:
        self._ctx = CycleContext(snapshot, profile or SchedulingProfile())
        self.result = run_on(self._ctx)
        self.usable = True

    @property
    def snapshot(self) -> Snapshot:
        """The full cycle's input."""
        return self._ctx.snap

    def spend(self) -> None:
        """Stop deciding on this ledger (it no longer matches the store)."""
        self.usable = False

    def decide(self, job: Job, now: datetime) -> CycleResult | None:
        """Visit one new pending ``job`` last in the queue at ``now``; None when not usable.

        Returns:
            The one-job result: a single ``Admit`` (kept on the ledger), or anything else — a
            pend, a preemption, a reject — after which the context is spent.

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
        ctx.now = now
        ctx.admits, ctx.preempts, ctx.pends, ctx.rejects, ctx.audit = [], [], [], [], []
        ctx.by_id[job.id] = job
        visit(ctx, job)
        result = CycleResult(admits=tuple(ctx.admits), preemptions=tuple(ctx.preempts), pending=tuple(ctx.pends),
                             rejects=tuple(ctx.rejects), audit=tuple(ctx.audit))
        if len(result.admits) != 1 or result.preemptions or result.pending or result.rejects:
            self.usable = False
        return result
