"""GPUs a plan frees in the middle of a cycle go first to the higher classes of its team passed over.

Jobs are visited once, in queue order, so a job that found no room when its turn came is passed
over for the rest of the cycle. Capacity normally only shrinks as the cycle goes on; the one
exception is a preemption plan that *withdraws* admissions made earlier in the same cycle (a
within-guarantee job reclaiming from a borrower admitted moments before: withdrawing costs
nothing, :mod:`.preempt`). The GPUs such a withdrawal frees would then go to the plan's own job
alone — even when a higher-class job of its team, visited earlier and passed over, now fits on
them. That job then evicts it in the next cycle with nothing changed in between: a job admitted
onto GPUs its team takes back at once, and evicted twice for the same GPUs when it had been
evicted before (issue 16 property counterexample, hypothesis seed 2073…0091 at 3,000 examples:
``tests/core/test_rules.py::test_gpus_a_reclaim_frees_by_withdrawing_go_first_to_a_passed_over_higher_class_of_its_team``).

DESIGN.md *Reclaim*: GPUs freed for a job are nominated to it, but a higher-class job of its
team takes them over (no priority inversion, case 032). :func:`offer_passed_over` applies that
rule to GPUs freed by withdrawals: before the plan's job takes them, the higher-class jobs of its
team that this cycle pended for capacity are tried again on them, in the order they were visited
(gates already passed; quota, placement and the EASY reservation checked as on their visit). The
plan's job then takes what they left if it fits there, else searches again (:func:`readmit`).
"""

from __future__ import annotations

from ..model import Job
from .admit import admit_on_flavors
from .context import CycleContext, Visit

__all__ = ["PASSED_CODES", "offer_passed_over", "passed_over", "readmit"]

PASSED_CODES = frozenset({"WaitingForCapacity", "Fragmented", "UnhealthyGpu", "Priority"})
"""Pending codes of a job passed over for room (capacity, or the EASY reservation): one that more
free GPUs may admit."""


def passed_over(ctx: CycleContext, visit: Visit) -> None:
    """Remember ``visit`` (just pended with the cycle's last ``Pend``) if it waits for room."""
    if ctx.passed is not None and ctx.pends[-1].reason.code in PASSED_CODES:
        ctx.passed.setdefault(visit.job.spec.team, []).append(visit)


def offer_passed_over(ctx: CycleContext, job: Job) -> list[str]:
    """Admit, on GPUs just freed for ``job``, the higher-class jobs of its team passed over earlier
    in this cycle that now fit; returns their ids (empty: ``job`` keeps the GPUs)."""
    if ctx.passed is None or ctx.plan is not None:  # conservative backfill reserves instead (its plan)
        return []
    waiting = ctx.passed.get(job.spec.team)
    if not waiting:
        return []
    rank = job.spec.priority.rank
    took: list[str] = []
    for visit in list(waiting):
        other = visit.job
        if other.spec.priority.rank <= rank or other.id in ctx.admitted:
            continue
        if not readmit(ctx, visit):
            continue
        waiting.remove(visit)
        took.append(other.id)
    if took:
        gone = set(took)
        ctx.pends[:] = [p for p in ctx.pends if p.job_id not in gone]
        for model in [m for m, res in ctx.reservations.items() if res.job_id in gone]:
            del ctx.reservations[model]
        taken = ctx.book.taken.setdefault(job.id, [])
        taken.extend(t for t in took if t not in taken)
    return took


def readmit(ctx: CycleContext, visit: Visit) -> bool:
    """Admit ``visit.job``, visited before in this cycle, if it fits now (with the GPUs nominated
    to it or to lower classes of its team), as its first visit would have; True if admitted."""
    job = visit.job
    owners = ctx.book.eligible(job)
    with ctx.ledger.what_if() as trial:
        ctx.book.open(owners)
        placement = admit_on_flavors(ctx, Visit(job, visit.req, visit.flavors))
        if placement is None:
            return False
        ctx.book.after_admit(job, {g for g, _ in placement.holding.gpus}, owners)
        trial.keep()
    return True
