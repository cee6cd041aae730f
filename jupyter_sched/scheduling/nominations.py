"""Nominations: GPUs held for a pending job after a preemption, and who may take them over.

When victims are evicted for a job, the GPUs they free are *nominated* to it (case 004): masked
on the ledger so that no other job — least of all a victim — takes them while the victims stop
(their grace period) and until the job is admitted. Masks cover only GPUs that are free; GPUs a
victim still holds are protected by the victim's own holding. The same goes for quota: a mask is
also charged to the job's quota lines (at most its request), so that the quota the victims gave
back is not taken by another job of its team — least of all a victim re-admitted — before the job
starts. Without that charge a job blocked by its team's borrowing limit evicted its team's low
jobs, which took the freed quota back in the same cycle, and it evicted them again on the next,
for ever (issue 16 property counterexample, ``tests/core/test_rules.py``). Until its victims have
stopped, every later cycle counts the quota as the cycle that evicted them did: the victims no
longer their team's, the GPUs they still hold for the job charged to the job's team (newuser42 N5:
counted the other way round during the grace period, a second job of the reclaiming team that
could only borrow reclaimed again, taking work within the lender's guarantee).

No priority inversion (case 032; Kueue #7301): a pending job of a *higher class of the same
team*, visited earlier in queue order, may use GPUs nominated to a lower-class job — free ones at
once, ones still held by stopping victims by taking the nomination over (it then waits for those
victims, and no new victim is picked for it). The lower-class job keeps what is left and says
who took the rest. Jobs of other teams do not use nominated GPUs: they were freed to honour this
team's guarantee or priority — except GPUs nominated to a job that would *borrow* on them:
that is borrowed capacity nothing runs on yet, and a within-guarantee job of another team
reclaims it at once, at no cost, as it withdraws a borrowing admission of the same cycle
(:mod:`.preempt`; DESIGN.md *Reclaim*). Before, it waited for the borrower to start and then
evicted it: a second eviction of a job already reclaimed once (issue 16, hypothesis seed 777,
``tests/core/test_rules.py::test_gpus_nominated_to_a_borrower_are_reclaimed_at_once_by_a_within_guarantee_job``).

The book is rebuilt every cycle from the snapshot's ``Job.nominated`` fields; its decisions are
returned in ``CycleResult.nominations``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model import GPU_MILLI, Allocation, Job, JobState
from ..placement.state import Holding
from .ledger import NOMINATION_PREFIX, CycleLedger

__all__ = ["NominationBook"]


class NominationBook:
    """Who each nominated GPU is held for, kept in step with the ledger's masks.

    Args:
        ledger: the cycle's ledger (masks are taken on its capacity half).
        jobs: the snapshot's jobs; pending ones with ``nominated`` set are loaded.

    A GPU is nominated to at most one job (the first in snapshot order wins a conflict).
    """

    def __init__(self, ledger: CycleLedger, jobs: Iterable[Job]) -> None:
        self.ledger = ledger
        self.owner: dict[int, str] = {}
        self.gpus: dict[str, list[int]] = {}
        self.jobs: dict[str, Job] = {}
        self.by_team: dict[str, list[str]] = {}
        self.taken: dict[str, list[str]] = {}
        st = ledger.state
        for job in jobs:
            if job.nominated is None or job.state is not JobState.PENDING:
                continue
            ids = [g for u in job.nominated.all_gpu_uuids() if (g := st.uuid_to_gpu.get(u)) is not None]
            mine = [g for g in dict.fromkeys(ids) if g not in self.owner]
            if mine:
                self._own(job, mine)
        # Victims stopping on nominated GPUs (not a share only sitting beside a share's nomination: it is not
        # stopping) are gone from their team's quota, as in the cycle that evicted them, and each nomination is
        # charged what its job takes once they are gone (:meth:`_mask`): a later decision sees the lender at
        # what it keeps and the reclaiming team at what it takes (newuser42 N5)
        self._leaving: dict[int, list[tuple[str, int]]] = {}  # nominated GPU -> (stopping victim, its milli there)
        stopping = []
        for holder in self.holders_on(set(self.owner)) if self.owner else ():
            held = ledger.holders.get(holder)
            if held is None or held.job.stopping_since is None:
                continue
            stopping.append(holder)
            for g, milli in st.holdings[holder].gpus:
                if g in self.owner:
                    self._leaving.setdefault(g, []).append((holder, milli))
        for owner in self.gpus:
            self._mask(owner)
        for holder in stopping:
            ledger.quota.uncharge(holder)

    # ------------------------------------------------------------------ queries
    def __contains__(self, job_id: object) -> bool:
        return job_id in self.gpus

    def eligible(self, job: Job) -> list[str]:
        """Owners whose nominated GPUs ``job`` may use: itself, and lower-class jobs of its team —
        never the job it was itself preempted or migrated for (a victim of a higher class than its
        preemptor, e.g. a migration, took the GPUs freed for it back, and was moved again, every
        other cycle: issue 16 property counterexample 3)."""
        if not self.gpus:
            return []
        rank = job.spec.priority.rank
        return [o for o in self.by_team.get(job.spec.team, ())
                if o == job.id or (self.jobs[o].spec.priority.rank < rank and o != job.preempted_by)]

    def pool(self, owners: Sequence[str]) -> set[int]:
        """GPU ids nominated to ``owners``."""
        return {g for o in owners for g in self.gpus[o]}

    def holders_on(self, gpus: set[int]) -> list[str]:
        """Jobs (not masks) holding any of ``gpus`` on the ledger now, sorted."""
        return sorted(h for h, hold in self.ledger.state.holdings.items()
                      if not h.startswith("\0") and any(g in gpus for g, _ in hold.gpus))

    def victims_in_flight(self) -> set[str]:
        """Jobs still holding GPUs nominated to someone: they are being preempted already."""
        return set(self.holders_on(set(self.owner))) if self.owner else set()

    def result(self) -> dict[str, Allocation]:
        """Nominations after the cycle: pending job -> the GPUs held for it."""
        return {o: self._allocation(o) for o in self.gpus}

    def allocation(self, owner: str) -> Allocation:
        """The GPUs nominated to ``owner``."""
        return self._allocation(owner)

    # ------------------------------------------------------------------ changes
    def open(self, owners: Sequence[str]) -> None:
        """Unmask ``owners``' free nominated GPUs and the quota held with them (call inside a ledger trial)."""
        for o in owners:
            self.ledger.evict(NOMINATION_PREFIX + o)

    def after_admit(self, job: Job, used: set[int], owners: Sequence[str]) -> None:
        """``job`` was admitted on ``used`` after :meth:`open` of ``owners``: its own nomination
        ends; the others keep (masked again) what it did not use."""
        for o in owners:
            if o == job.id:
                self.drop(o)
                continue
            left = [g for g in self.gpus[o] if g not in used]
            if len(left) < len(self.gpus[o]):
                self.taken.setdefault(o, []).append(job.id)
            self._set(o, left)

    def unmask(self, owner: str) -> tuple[Holding | None, int] | None:
        """Trial-evict ``owner``'s mask (inside a trial); what it held and charged (milli-GPUs), for
        :meth:`remask`, or None when it held and charged nothing."""
        key = NOMINATION_PREFIX + owner
        holding = self.ledger.state.holdings.get(key)
        charge = self.ledger.quota.charges.get(key)
        self.ledger.evict(key)
        if holding is None and charge is None:
            return None
        return holding, charge[1] if charge is not None else 0

    def remask(self, owner: str, held: tuple[Holding | None, int] | None) -> None:
        """Put back exactly what :meth:`unmask` took (inside the trial). Not the GPUs' free rest now:
        a victim search restores its candidates in any order, and a share withdrawn meanwhile left
        more free, which the mask then took and the share's own restore found gone (``GPU … has 0
        milli-GPUs free, 250 asked``: a cycle crashed; tests/core/test_cycle_memos.py counterexample)."""
        if held is None:
            return
        holding, milli = held
        st = self.ledger.state
        key = NOMINATION_PREFIX + owner
        if holding is not None:
            st.take(key, holding)
        spec = self.jobs[owner].spec
        self.ledger.quota.charge(key, spec.team, spec.user, st.gpu_model[self.gpus[owner][0]], milli)

    def claim(self, job: Job, gpus: Sequence[int]) -> None:
        """Nominate ``gpus`` to ``job``, taking them from their owners (outside any trial)."""
        wanted = list(dict.fromkeys(gpus))
        losers: dict[str, None] = {}
        for g in wanted:
            prev = self.owner.get(g)
            if prev is not None and prev != job.id:
                losers[prev] = None
        for prev in losers:
            self.taken.setdefault(prev, []).append(job.id)
            self._set(prev, [g for g in self.gpus[prev] if g not in wanted])
        if job.id in self.gpus:
            self.drop(job.id)
        self._own(job, wanted)
        self._mask(job.id)

    def drop(self, owner: str) -> None:
        """Forget ``owner``'s nomination (its GPUs become free for anyone)."""
        if owner not in self.gpus:
            return
        self.ledger.evict(NOMINATION_PREFIX + owner)
        for g in self.gpus.pop(owner):
            if self.owner.get(g) == owner:
                del self.owner[g]
        team = self.jobs.pop(owner).spec.team
        self.by_team[team].remove(owner)

    # ------------------------------------------------------------------ helpers
    def _own(self, job: Job, gpus: list[int]) -> None:
        self.gpus[job.id] = gpus
        self.jobs[job.id] = job
        self.by_team.setdefault(job.spec.team, []).append(job.id)
        for g in gpus:
            self.owner[g] = job.id

    def _set(self, owner: str, gpus: list[int]) -> None:
        if not gpus:
            self.drop(owner)
            return
        for g in self.gpus[owner]:
            if g not in gpus and self.owner.get(g) == owner:
                del self.owner[g]
        self.gpus[owner] = gpus
        self._mask(owner)

    def _mask(self, owner: str) -> None:
        """Mask ``owner``'s free nominated GPUs, and charge its quota what it takes there once the
        victims stopping on them are gone (up to its request; :attr:`_leaving`): charged only what was
        free, a reclaiming team looked "0 of 2 used" while its victims stopped, and its next job
        reclaimed again, work within the lender's guarantee (newuser42 N5)."""
        st = self.ledger.state
        key = NOMINATION_PREFIX + owner
        self.ledger.evict(key)
        gpus = self.gpus[owner]
        free = tuple((g, st.free_milli[g]) for g in gpus if st.free_milli[g] > 0)
        if free:
            st.take(key, Holding(gpus=free, node=st.gpu_node[free[0][0]]))
        held = st.holdings
        leaving = sum(m for g in gpus for h, m in self._leaving.get(g, ()) if h in held) if self._leaving else 0
        milli = min(self.jobs[owner].spec.resources.total_milli, sum(m for _, m in free) + leaving)
        if milli > 0:
            spec = self.jobs[owner].spec
            self.ledger.quota.charge(key, spec.team, spec.user, st.gpu_model[gpus[0]], milli)

    def _allocation(self, owner: str) -> Allocation:
        st = self.ledger.state
        per_node: dict[str, list[str]] = {}
        for g in self.gpus[owner]:
            per_node.setdefault(st.nodes[st.gpu_node[g]].name, []).append(st.gpu_uuid[g])
        workers = tuple((n, tuple(u)) for n, u in per_node.items())
        req = self.jobs[owner].spec.resources
        milli = req.gpu_milli if req.fractional else GPU_MILLI
        first = workers[0]
        return Allocation(node=first[0], gpu_uuids=first[1], gpu_milli=milli,
                          workers=workers if len(workers) > 1 else ())
