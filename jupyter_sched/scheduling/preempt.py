"""Reclaim and priority preemption inside the cycle: candidates, trial evictions, nominations.

The policy (ordering, minimal set, never below guarantee) is :mod:`jupyter_sched.preemption.victims`;
this module wires it to the cycle's ledger: trial evictions run inside ``ledger.what_if()``, the
GPUs freed are nominated for the preemptor (held from everyone else, case 004), victims get a
``Preempt`` with grace and checkpoint signal and an audit record naming who, why and for whom.
"""

from __future__ import annotations

from datetime import timedelta

from ..model import Job, PendingReason, ResourceRequest
from ..placement.placer import Flavor
from ..placement.state import Holding
from ..preemption.victims import Candidate, covered_jobs, keeps_guarantee, order_candidates, plan_preemption
from .context import CycleContext
from .ledger import NOMINATION_PREFIX, Holder
from .snapshot import AuditRecord, Pend, Preempt

__all__ = ["Preempting"]


class Preempting(CycleContext):
    """Victim search and nominations (mixin over :class:`CycleContext`)."""

    def _waiting_for_preemption(self, job: Job) -> bool:
        """Keep a nominated job waiting while its victims still hold its GPUs (True), else False."""
        assert job.nominated is not None
        wanted = {self.state.uuid_to_gpu.get(u, -1) for u in job.nominated.all_gpu_uuids()}
        holders = sorted({h for h, hold in self.state.holdings.items() if not h.startswith("\0")
                          and any(g in wanted for g, _ in hold.gpus)})
        if not holders:
            return False
        self.nominations[job.id] = job.nominated
        self.pends.append(Pend(job.id, PendingReason(
            code="WaitingForPreemption",
            message=f"GPUs on {job.nominated.node} are held for this job while {', '.join(holders)} stop",
            details={"node": job.nominated.node, "gpus": list(job.nominated.all_gpu_uuids()), "victims": holders},
            unblock="starts as soon as the preempted jobs have stopped (grace period)",
            eta=self.now + timedelta(seconds=self.profile.grace_s), eta_reason="")))
        return True

    def _covered_set(self) -> set[str]:
        if self._covered is None:
            def guarantee(team: str) -> int:
                return max((ln.guaranteed for ln in self.quota.team_lines.get(team, ())), default=0)
            self._covered = covered_jobs(
                ((h.job.id, h.job.spec.team, h.job.spec.priority.rank, h.job.admitted_at or h.job.started_at, h.milli)
                 for h in self.ledger.holders.values()), guarantee)
        return self._covered

    def _candidate_index(self) -> tuple[dict[str, list[Holder]], dict[tuple[str, str], list[Holder]]]:
        """Holders that could ever be victims this cycle, indexed once: by model the uncovered ones
        (reclaim), by (team, model) those of a preemptible class (priority)."""
        if self._cand_index is None:
            covered = self._covered_set() if self.quota.enabled else set()
            reclaimable: dict[str, list[Holder]] = {}
            lower: dict[tuple[str, str], list[Holder]] = {}
            preemptible = self.profile.preemptible_classes
            for h in self.ledger.holders.values():
                if h.job.id in self.in_flight:
                    continue
                if self.quota.enabled and h.job.id not in covered:
                    reclaimable.setdefault(h.model, []).append(h)
                if h.job.spec.priority.value in preemptible:
                    lower.setdefault((h.job.spec.team, h.model), []).append(h)
            self._cand_index = (reclaimable, lower)
        return self._cand_index

    def _candidates(self, job: Job, flavor: Flavor, within_guarantee: bool) -> list[Candidate]:
        spec = job.spec
        reclaimable, lower = self._candidate_index()
        pool: list[tuple[Holder, str]] = []
        if self.profile.reclaim and self.quota.enabled and within_guarantee:
            pool.extend((h, "reclaim") for h in reclaimable.get(flavor.model, ()) if h.job.spec.team != spec.team)
        if self.profile.preemption:
            rank = spec.priority.rank
            pool.extend((h, "priority") for h in lower.get((spec.team, flavor.model), ())
                        if h.job.spec.priority.rank < rank)
        out = []
        for h, kind in pool:
            other = h.job
            if other.id in self.victims or other.id == job.preempted_by or not self.state.holds(other.id):
                continue
            started = other.started_at or other.admitted_at
            protected = started is not None and (self.now - started).total_seconds() < self.profile.min_runtime_s
            out.append(Candidate(other.id, other.spec.team, other.spec.user, other.spec.priority.rank,
                                 h.milli, started, kind, protected))
        return order_candidates(out)

    def _preempt(self, job: Job, req: ResourceRequest, flavors: tuple[Flavor, ...]) -> bool:
        if not (self.profile.preemption or self.profile.reclaim):
            return False
        if self.preemption_attempts >= self.profile.max_preemption_attempts:
            return False
        self.preemption_attempts += 1
        spec = job.spec
        for flavor in flavors:
            if not flavor.pools:
                continue
            check = self.quota.check(spec.team, spec.user, flavor.model, req.total_milli)
            within = check.ok and check.within_guarantee
            if check.ok and not within and self.quota.enabled and not self._refusal:
                self._refusal = self._reclaim_note(job, req, flavor)
            cands = self._candidates(job, flavor, within)
            if not cands:
                continue
            holders = self.ledger.holders

            def fits(flavor: Flavor = flavor) -> bool:
                if not self.quota.check(spec.team, spec.user, flavor.model, req.total_milli).ok:
                    return False
                return self.placer.place(job.id, req, flavor) is not None

            def evict(c: Candidate) -> None:
                self.ledger.evict(c.job_id)

            def restore(c: Candidate, holders: dict[str, Holder] = holders) -> None:
                self.ledger.load_holder(holders[c.job_id].job)

            def allowed(c: Candidate) -> tuple[bool, str]:
                if c.kind != "reclaim":
                    return True, ""
                ok, model, guaranteed = keeps_guarantee(self.quota, c.job_id)
                if ok:
                    return True, ""
                return False, (f"evicting {c.job_id} would push {c.team} below its guarantee "
                               f"({guaranteed:g} GPUs{'' if model == '*' else ' of ' + model})")

            with self.ledger.what_if() as trial:
                plan = plan_preemption(cands, fits, evict, restore, allowed)
                placement = self.placer.place(job.id, req, flavor) if plan.victims else None
                if plan.victims and placement is not None:
                    trial.keep()
            if not plan.victims or placement is None:
                self._refusal = plan.refused
                continue
            self.state.take(NOMINATION_PREFIX + job.id, Holding(gpus=placement.holding.gpus, node=placement.holding.node))
            self.nominations[job.id] = placement.allocation
            names = []
            for c in plan.victims:
                self.victims.add(c.job_id)
                names.append(c.job_id)
                victim = holders[c.job_id].job
                if c.kind == "reclaim":
                    sentence = f"preempted to return borrowed quota to {spec.team}"
                else:
                    sentence = f"preempted by higher-priority {spec.priority.value} job {job.id} of {spec.team}"
                self.preempts.append(Preempt(
                    job_id=c.job_id, for_job=job.id, reason=sentence, kind=c.kind, grace_s=self.profile.grace_s,
                    checkpoint_signal=self.profile.checkpoint_signal and victim.spec.checkpointable))
                self.audit.append(AuditRecord(
                    action="reclaim" if c.kind == "reclaim" else "preempt", job_id=c.job_id, user=c.user,
                    message=f"{c.job_id} ({c.team}, {victim.spec.priority.value}) {sentence}",
                    details={"for_job": job.id, "for_team": spec.team, "kind": c.kind,
                             "victim_team": c.team, "gpus": c.milli / 1000, "protected_min_runtime": c.protected,
                             "node": victim.allocation.node if victim.allocation else None,
                             "grace_s": self.profile.grace_s}))
            self.pends.append(Pend(job.id, PendingReason(
                code="WaitingForPreemption",
                message=f"preempting {', '.join(names)} to free {placement.allocation.node}; "
                f"the GPUs are held for this job",
                details={"victims": names, "node": placement.allocation.node,
                         "gpus": list(placement.allocation.all_gpu_uuids()), "model": flavor.model},
                unblock="starts as soon as the preempted jobs have stopped (grace period)",
                eta=self.now + timedelta(seconds=self.profile.grace_s))))
            return True
        return False

    def _reclaim_note(self, job: Job, req: ResourceRequest, flavor: Flavor) -> str:
        """Why reclaim does not apply: the job would take its team above its guarantee (case 001)."""
        spec = job.spec
        lines = [ln for ln in self.quota.applicable(spec.team, spec.user, flavor.model) if ln.user is None]
        if not lines:
            return ""
        own = lines[0]
        used = self.quota.usage.get(own.key, 0)
        lent: dict[str, int] = {}
        own_quota: dict[str, int] = {}
        for team, team_lines in self.quota.team_lines.items():
            if team == spec.team:
                continue
            for ln in team_lines:
                if ln.model in ("*", flavor.model) or ln.model in flavor.model:
                    usage = self.quota.usage.get(ln.key, 0)
                    if usage > ln.guaranteed:
                        lent[team] = max(lent.get(team, 0), usage - ln.guaranteed)
                    if min(usage, ln.guaranteed) > 0:
                        own_quota[team] = max(own_quota.get(team, 0), min(usage, ln.guaranteed))
        need = req.total_milli
        free = sum(self.state.pools[p].free_whole for p in flavor.pools) * 1000
        lent_total = sum(lent.values())
        text = (f"{spec.team} is guaranteed {own.guaranteed / 1000:g} GPUs"
                + (f" ({lent_total / 1000:g} lent to {', '.join(sorted(lent))}, reclaimable)" if lent else "")
                + f" but {job.id} needs {need / 1000:g}"
                + (f" with {used / 1000:g} already in use" if used else "")
                + f", above the guarantee, so nothing is reclaimed for it; cohort free {free / 1000:g}")
        short = need - free - lent_total
        if short > 0 and own_quota:
            text += (f"; it cannot fit until {', '.join(sorted(own_quota))} release {short / 1000:g} GPUs "
                     "of their own quota")
        return text
