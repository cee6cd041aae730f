"""Quota reclaim's rules during one victim search: when a borrowing team's job may be taken.

Reclaim (DESIGN.md *Reclaim*; issue 16) takes GPUs back from teams that use more than their
guarantee for a job that stays within its own team's guarantee — Kueue's ``reclaimWithinCohort``
(which jobs: :class:`~.policy.ReclaimPolicy`) and ``borrowWithinCohort`` (a borrowing job evicting
lower classes of other borrowing teams). :func:`~.victims.plan_preemption` asks these rules
through its ``removable`` callback each time it would trial-evict a candidate; the caller's
``fits`` adds :attr:`ReclaimRules.guarantee_required`. (Idle reclamation — the warning → grace →
reclaim ladder for idle work — is another matter: :mod:`jupyter_sched.reclaim`.)

The rules, with quota in milli-GPUs on *team* quota lines (``(team, None, model)``):

* **a team gives only while it borrows** — every victim of a team but the last is evicted while
  the team is still above its guarantee; the last may be larger than what remains borrowed, so
  the team may end below its guarantee through its own borrowing (issue 16 example A, case 004).
  The victims of one team go together, so the rule is checked with the team's largest victim
  evicted last (hypothesis seed 12345). GPUs nominated to a team's pending job count as its use
  while the nomination is held (its job would borrow on them).
* **withdrawals never justify a running reclaim** — withdrawing an admission of this cycle is
  free, so a team that loses running work to reclaim (earlier in the cycle, or in this plan) must
  still be borrowing without the admissions withdrawn: withdrawals go first, then the running
  victims, the largest last (hypothesis seed 12345). A withdrawal refused by this rule is kept
  (:attr:`ReclaimRules.withheld`) and named in the refusal (issue 16 point 5).
* **borrowing within cohort** — a job that borrows itself may evict a borrowing team's job only
  while that team stays at or above its guarantee, so the victim could never reclaim its GPUs
  back (no loop).
* **reclaim only for a within-guarantee job** — once any reclaim victim is in the trial set the
  job must be within its team's guarantee (:attr:`ReclaimRules.guarantee_required`; the caller
  checks the quota), unless it borrows within cohort.
* **work its owner left the team behind** (kind :data:`DEPARTED`: still charged to the job's own
  team, its owner no longer a member; red team 24, R6) is outside that team's guarantee: it is
  taken as reclaim takes borrowed work — only for a job within the guarantee, which it then no
  longer counts against — but whether the team borrows does not matter (it is the team's own line).

Nothing here reads the cycle: the caller supplies each candidate's team lines and a
``borrowing(line, extra)`` test over its trial ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .victims import Candidate, PreemptionPlan

__all__ = ["DEPARTED", "RECLAIMING", "LineKey", "ReclaimRules", "withheld_text"]

LineKey = tuple[str, str | None, str]
"""A quota line: ``(team, user or None, GPU model or "*")``; team lines have ``user=None``."""

DEPARTED = "departed"
"""Candidate kind of running work charged to the job's own team whose owner is no longer a member of
it (the snapshot's ``held_jobs``): outside the team's guarantee, reclaimed by its members (module doc)."""
RECLAIMING = frozenset({"reclaim", DEPARTED})
"""Candidate kinds that take GPUs back for a job within its team's guarantee (and only for one)."""


class ReclaimRules:
    """The reclaim rules' state for one victim search (module doc): the trial victims removed so
    far and the withdrawals the rules refused.

    Args:
        lines: the team quota lines each reclaim candidate (by ``job_id``) is charged to.
        borrowing: ``borrowing(line, extra)`` — is the team line above its guarantee by the GPUs
            its jobs hold, with ``extra`` milli-GPUs added back, on the trial ledger now?
        reclaimed: by team line, the ``(job_id, milli)`` of running jobs reclaimed from it earlier
            in this cycle (their reclaim must stay justified).
        borrow_within: the job borrows itself (borrow within cohort): victims keep their team at
            or above its guarantee, and the job need not be within its own.
    """

    __slots__ = ("borrow_within", "borrowing", "lines", "reclaimed", "reclaiming", "removed", "withheld")

    def __init__(self, lines: Mapping[str, Sequence[LineKey]], borrowing: Callable[[LineKey, int], bool],
                 reclaimed: Mapping[LineKey, Sequence[tuple[str, int]]], *, borrow_within: bool = False) -> None:
        self.lines = lines
        self.borrowing = borrowing
        self.reclaimed = reclaimed
        self.borrow_within = borrow_within
        self.removed: dict[str, Candidate] = {}
        """The candidates trial-evicted now, by job id."""
        self.reclaiming = 0
        """How many of :attr:`removed` are reclaim victims."""
        self.withheld: dict[str, tuple[str, list[str]]] = {}
        """Fresh admissions not withdrawn: job id → (its team, the running reclaims they justify)."""

    @property
    def guarantee_required(self) -> bool:
        """Must the job be within its team's guarantee with the trial set evicted? (A reclaim
        victim is in the set and the job does not borrow within cohort.)"""
        return bool(self.reclaiming) and not self.borrow_within

    def evicted(self, c: Candidate) -> None:
        """``c`` was trial-evicted."""
        self.removed[c.job_id] = c
        self.reclaiming += c.kind in RECLAIMING

    def restored(self, c: Candidate) -> None:
        """``c`` was put back."""
        if self.removed.pop(c.job_id, None) is not None:
            self.reclaiming -= c.kind in RECLAIMING

    def save(self) -> tuple[dict[str, Candidate], int]:
        """The trial set now, for :meth:`rollback` when a nested trial is undone."""
        return dict(self.removed), self.reclaiming

    def rollback(self, saved: tuple[dict[str, Candidate], int]) -> None:
        self.removed.clear()
        self.removed.update(saved[0])
        self.reclaiming = saved[1]

    def removable(self, c: Candidate) -> bool:
        """May ``c`` be trial-evicted now? Own-team candidates (and :data:`DEPARTED` work) always; a
        reclaim candidate while its team borrows (module doc)."""
        if c.kind != "reclaim":
            return True
        if self.borrow_within:  # its team keeps its guarantee: the victim could not reclaim back (no loop)
            return all(self.borrowing(key, 1 - c.milli) for key in self.lines[c.job_id]) and self._still_borrowing(c)
        # a nomination counts as its team's use while it is held: its job would borrow on it. The
        # victims of one team go together, so the rule holds for the set if it holds with its
        # largest victim evicted last: a smaller one may go after a larger (hypothesis seed 12345:
        # a's normal 2-GPU job then its 1-GPU gang, 3 of a's 4 over a guarantee of 2, were refused)
        largest = max((v.milli for v in self.removed.values() if v.kind == "reclaim" and v.team == c.team), default=0)
        extra = (c.milli if c.nominated else 0) + max(0, largest - c.milli)
        return any(self.borrowing(key, extra) for key in self.lines[c.job_id]) and self._still_borrowing(c)

    def _still_borrowing(self, c: Candidate) -> bool:
        """Running work reclaimed from a team (earlier in this cycle or in this plan) stays
        justified by the team's borrowing *without* the admissions withdrawn: withdrawals go
        first, then the running victims with the largest last (hypothesis seed 12345: c's fresh
        borrower justified reclaiming its running job, then a later job withdrew that borrower,
        and c had lost guaranteed work to a borrowing that never happened)."""
        if c.nominated:  # a nomination never counts as borrowing that justifies a running reclaim
            return True
        ok = None
        justified: list[str] = []
        for key in self.lines[c.job_id]:
            running = list(self.reclaimed.get(key, ()))
            running += [(v.job_id, v.milli) for v in self.removed.values() if v.kind == "reclaim" and not v.fresh
                        and key in self.lines[v.job_id]]
            if not c.fresh:
                running.append((c.job_id, c.milli))
            if running:
                ok = ok or self.borrowing(key, max(m for _, m in running) - c.milli)
                justified += [j for j, _ in running if j not in justified]
        if ok is False and c.fresh:
            self.withheld[c.job_id] = (c.team, justified)
        return ok is not False

    def refusal(self) -> PreemptionPlan | None:
        """The refused plan naming the withdrawals the rules kept and the reclaims they justify
        (``details``: ``rule="withdrawal"``, ``protected``, ``reclaimed`` job ids), or None."""
        if not self.withheld:
            return None
        return PreemptionPlan(refused=withheld_text(self.withheld),
                              details={"rule": "withdrawal", "protected": sorted(self.withheld),
                                       "reclaimed": sorted({j for _, js in self.withheld.values() for j in js})})


def withheld_text(withheld: Mapping[str, tuple[str, list[str]]]) -> str:
    """``cb of c is not withdrawn: without it c would not have been borrowing when r was reclaimed from it
    this cycle`` — a refusal by the rule that withdrawals never justify a running reclaim."""
    parts = []
    for team in sorted({t for t, _ in withheld.values()}):
        ids = sorted(j for j, (t, _) in withheld.items() if t == team)
        taken = sorted({r for j in ids for r in withheld[j][1]})
        one = len(ids) == 1
        parts.append(f"{', '.join(ids)} of {team} {'is' if one else 'are'} not withdrawn: without "
                     f"{'it' if one else 'them'} {team} would not have been borrowing when {', '.join(taken)} "
                     f"{'was' if len(taken) == 1 else 'were'} reclaimed from it this cycle")
    return "; ".join(parts)
