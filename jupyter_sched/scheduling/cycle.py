"""One scheduling cycle: ``run_cycle(snapshot, profile) -> CycleResult`` (pure; STYLE §1, §3).

Table of contents (Kueue ``scheduler.schedule()``; kube-scheduler framework):

1. **Ledger** — capacity and quota usage from the snapshot (:mod:`.ledger`).
2. **Order** — class, fair share, user usage, submit time (:mod:`jupyter_sched.queues.order`).
3. For each pending job, in order (:meth:`_Cycle.visit`):
   a. never fits the inventory → ``Reject`` with numbers (and no preemption — case 004);
   b. gates: class not allowed for the team, requeue backoff, admit time window, budget;
   c. per flavor (GPU model in preference order): quota check, borrow window, placement
      (filter → index → score → GPUs), respecting the EASY reservation of that model;
   d. admitted → ``Admit`` + audit record; else preemption/reclaim search (:mod:`..preemption`)
      → ``Preempt`` victims + GPUs nominated for the job; else, when allowed, migration of
      checkpointable jobs for a ``Fragmented`` job (:mod:`.defrag`);
   e. else ``Pend`` with exactly one primary reason, per-flavor entries, ETA (:mod:`..backfill`).
4. **Positions** — 1-based queue position of every job left pending.

The cycle never reads the clock (``snapshot.now``) and never makes ids.
"""

from __future__ import annotations

from typing import Any

from ..backfill.easy import Reservation, job_end
from ..model import Job, JobState, PendingReason, ResourceRequest
from ..placement.placer import Flavor, Placement
from ..placement.reasons import FitReason, capacity_reason, never_fits
from ..placement.state import Holding
from ..queues.order import QUEUE_SORTS
from .context import RESERVE_PREFIX
from .defrag import Defragmenting
from .eta import Estimating
from .gates import Gates
from .ledger import NOMINATION_PREFIX
from .preempt import Preempting
from .profile import SchedulingProfile
from .reasons import FlavorOutcome, reason_with
from .snapshot import Admit, AuditRecord, CycleResult, Pend, Reject, Snapshot

__all__ = ["run_cycle"]


def run_cycle(snapshot: Snapshot, profile: SchedulingProfile | None = None) -> CycleResult:
    """Decide admissions, preemptions, rejections and pending reasons for one cycle.

    Args:
        snapshot: the frozen cluster state (``snapshot.now`` is the cycle's time, UTC).
        profile: the policy; default :class:`SchedulingProfile`.

    Returns:
        The decisions; nothing has been applied.
    """
    return _Cycle(snapshot, profile or SchedulingProfile()).run()


class _Cycle(Gates, Preempting, Defragmenting, Estimating):
    """One cycle: the phases of the module docstring over a :class:`CycleContext`."""

    # ------------------------------------------------------------------ 2. order, 3. visit, 4. positions
    def run(self) -> CycleResult:
        pending = [j for j in self.snap.jobs if j.state is JobState.PENDING]
        usage = self.snap.usage.decayed_gpu_seconds_by_user
        for job in QUEUE_SORTS[self.profile.queue_sort](pending, self.quota.team_share, usage):
            self.visit(job)
        pends = tuple(Pend(p.job_id, reason_with(p.reason, position=i + 1)) for i, p in enumerate(self.pends))
        return CycleResult(admits=tuple(self.admits), preemptions=tuple(self.preempts), pending=pends,
                           rejects=tuple(self.rejects), nominations=dict(self.nominations),
                           audit=tuple(self.audit))

    def visit(self, job: Job) -> None:
        self._refusal = ""
        req = job.spec.resources
        key = (req.gpus, req.gpu_milli, req.workers, req.gpu_models, req.min_memory_mib, req.mig_profile,
               req.tolerations, tuple(req.node_selector.items()) if req.node_selector else ())
        shape = self.shapes.get(key)
        if shape is None:
            flavors = self.placer.flavors(req)
            shape = self.shapes[key] = (flavors, never_fits(req, flavors, self.state))
        flavors, never = shape
        mask = NOMINATION_PREFIX + job.id
        if never is not None:
            self.state.release(mask)  # a job that can never run holds nothing
            self.rejects.append(Reject(job.id, PendingReason(
                code=never.code, message=never.message, details=never.details,
                unblock=never.unblock or "resubmit asking for fewer GPUs per worker or another GPU model")))
            return
        gate = self._gates(job) if self.gated else None
        if gate is not None:
            self.state.release(mask)  # a gated job gives up GPUs held for it
            self.pends.append(Pend(job.id, gate))
            return
        outcomes: list[FlavorOutcome] = []
        if self.state.holds(mask):
            with self.ledger.what_if() as trial:
                self.state.release(mask)
                if self._flavors(job, req, flavors, outcomes):
                    trial.keep()
                    return
            if self._waiting_for_preemption(job):
                return
            self.state.release(mask)  # stale: the victims are gone but the job still does not fit
        elif self._flavors(job, req, flavors, outcomes):
            return
        if self._preempt(job, req, flavors) or self._defragment(job, req, flavors, outcomes):
            return
        self._pend(job, req, flavors, outcomes)

    def _flavors(self, job: Job, req: ResourceRequest, flavors: tuple[Flavor, ...],
                 outcomes: list[FlavorOutcome]) -> bool:
        """Try each flavor in preference order; admit on the first that fits (True)."""
        for flavor in flavors:
            outcome = self._try_flavor(job, req, flavor)
            if outcome is None:
                return True
            outcomes.append(outcome)
        return False

    # ------------------------------------------------------------------ 3c. flavors
    def _try_flavor(self, job: Job, req: ResourceRequest, flavor: Flavor) -> FlavorOutcome | None:
        """Admit ``job`` on ``flavor`` (None) or say why not (the flavor's outcome)."""
        spec = job.spec
        milli = req.total_milli
        check = self.quota.check(spec.team, spec.user, flavor.model, milli)
        closed: tuple[str, str, dict[str, Any]] | None = None
        blocked_by: Reservation | None = None
        if check.ok and flavor.pools:
            closed = self._borrow_window_closed(job) if check.borrowed > 0 and self.profile.windows else None
            if closed is None:
                placement, backfill, blocked_by = self._place(job, req, flavor, check.borrowed)
                if placement is not None:
                    self.quota.charge(job.id, spec.team, spec.user, flavor.model, milli)
                    self._admit(job, placement, check.borrowed, backfill)
                    return None
        outcome = FlavorOutcome(model=flavor.model)
        if not check.ok:
            outcome.quota_code, outcome.quota = check.code, check.details
        if not flavor.pools:
            outcome.filters = [dict(s.details, code=s.code, message=s.message) for s in flavor.rejected]
        if not check.ok or not flavor.pools:
            return outcome
        if closed is not None:
            outcome.capacity_code, outcome.capacity_message, outcome.capacity = closed
        elif blocked_by is not None:
            res = blocked_by
            outcome.capacity_code = "Priority"
            outcome.capacity_message = (f"fits now but would delay {res.job_id}, which holds the reservation on "
                                        f"{res.model}" + (f" from {res.eta.isoformat()}" if res.eta else ""))
            outcome.capacity = {"reserved_for": res.job_id, "model": res.model,
                                "reservation": res.eta.isoformat() if res.eta else None}
        else:
            key = (flavor.model, flavor.pools, req.gpus, req.workers, req.gpu_milli, req.cpu_millis, req.memory_mib,
                   self.state.version)
            cached = self.outcome_cache.get(key)
            if cached is not None:
                return cached
            fit = self._capacity_reason(req, flavor)
            outcome.capacity_code, outcome.capacity_message, outcome.capacity = fit.code, fit.message, fit.details
            outcome.shared = True
            self.outcome_cache[key] = outcome
        return outcome

    def _place(self, job: Job, req: ResourceRequest, flavor: Flavor, borrowed: int
               ) -> tuple[Placement | None, bool, Reservation | None]:
        """Place respecting the model's EASY reservation; returns (placement, backfilled, blocked_by)."""
        res = self.reservations.get(flavor.model)
        if res is not None and not self.placer.might_fit(req, flavor):
            return None, False, None  # nothing free is large enough: skip the reservation trials
        if res is None or res.job_id == job.id or not res.gpus or self._may_bypass(job, res, borrowed):
            return self._take(job, req, flavor), res is not None and res.job_id != job.id, None
        free_reserved = tuple((g, self.state.free_milli[g]) for g in res.gpus if self.state.free_milli[g] > 0)
        with self.state.what_if():
            if free_reserved:
                self.state.take(RESERVE_PREFIX + res.job_id, Holding(gpus=free_reserved, node=0))
            placement = self.placer.place(job.id, req, flavor)
        if placement is not None:
            self.state.take(job.id, placement.holding)
            return placement, True, None
        with self.state.what_if():
            unmasked = self.placer.place(job.id, req, flavor)
        return None, False, res if unmasked is not None else None

    def _take(self, job: Job, req: ResourceRequest, flavor: Flavor) -> Placement | None:
        placement = self.placer.place(job.id, req, flavor)
        if placement is not None:
            self.state.take(job.id, placement.holding)
        return placement

    def _may_bypass(self, job: Job, res: Reservation, borrowed: int) -> bool:
        """A later job may ignore a reservation when it ends before it or the holder can reclaim it."""
        limit = job.spec.time_limit_s
        if res.eta is not None and limit is not None and (end := job_end(self.now, limit, self.now)) is not None \
                and end <= res.eta:
            return True
        if borrowed > 0 and job.spec.team != res.team and self.profile.reclaim:
            return True
        return (job.spec.team == res.team and job.spec.priority.value in self.profile.preemptible_classes
                and job.spec.priority.rank < res.rank and self.profile.preemption)

    def _capacity_reason(self, req: ResourceRequest, flavor: Flavor) -> FitReason:
        key = (flavor.model, flavor.pools, req.gpus, req.workers, req.gpu_milli, req.cpu_millis, req.memory_mib,
               self.state.version)
        cached = self.cap_cache.get(key)
        if cached is None:
            if len(self.cap_cache) > 4096:
                self.cap_cache.clear()
            cached = self.cap_cache[key] = capacity_reason(req, flavor, self.state)
        return cached

    # ------------------------------------------------------------------ 3d. admit / preempt
    def _admit(self, job: Job, placement: Placement, borrowed: int, backfill: bool) -> None:
        alloc = placement.allocation
        scores = placement.scores
        spec = job.spec
        self.admits.append(Admit(job.id, alloc, borrowed=borrowed / 1000, scores=scores, backfill=backfill))
        self.admitted[job.id] = job
        why = "backfilled without delaying the reservation" if backfill else "fits"
        if borrowed:
            why += f"; borrowing {borrowed / 1000:g} GPUs above {spec.team}'s guarantee"
        self.audit.append(AuditRecord(
            action="admit", job_id=job.id, user=spec.user,
            message=f"admitted on {alloc.node} ({placement.model}): {why}",
            details={"team": spec.team, "node": alloc.node, "workers": len(alloc.workers) or 1,
                     "gpus": alloc.all_gpu_uuids() if alloc.workers else alloc.gpu_uuids,
                     "model": placement.model, "scores": scores, "borrowed": borrowed / 1000,
                     "backfill": backfill, "priority": spec.priority.value}))
