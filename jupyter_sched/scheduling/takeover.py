"""GPUs freed in the middle of a cycle go first to the jobs it passed over earlier.

Jobs are visited once, in queue order, so a job that found no room when its turn came is passed
over for the rest of the cycle. Capacity normally only shrinks as the cycle goes on; two things
make it grow:

* a preemption plan that *withdraws* admissions made earlier in the same cycle (a
  within-guarantee job reclaiming from a borrower admitted moments before: withdrawing costs
  nothing, :mod:`.preempt`);
* a nomination dropped when its job is gated, can never run, or its nomination went stale: GPUs
  masked for it become free.

Those GPUs then went to the jobs visited later — even when a job passed over earlier, now fitting
on them, outranked them. It then evicted them in the next cycle with nothing changed in between:
a job admitted onto GPUs taken back at once, evicted twice for the same GPUs when it had been
evicted before (issue 16 property counterexample, hypothesis seed 2073…0091 at 3,000 examples:
``tests/core/test_rules.py::test_gpus_a_reclaim_frees_by_withdrawing_go_first_to_a_passed_over_higher_class_of_its_team``
and ``::test_gpus_a_dropped_nomination_frees_go_first_to_a_job_passed_over_earlier``).

So the cycle remembers the visits pended for room (:func:`passed_over`) and tries them again
(:func:`readmit`: gates already passed; quota, placement and the EASY reservation checked as on
their visit, with the nominations they may use opened), in the order they were visited:

* after a withdrawal, before the plan's job takes the GPUs, the higher-class jobs of its team
  (:func:`offer_passed_over`) — DESIGN.md *Reclaim*: GPUs freed for a job are nominated to it, but a
  higher-class job of its team takes them over (case 032). The plan's job then takes what they
  left if it fits there, else searches again;
* after a dropped nomination, every job passed over (:func:`drop_nomination`): they would have had
  those GPUs had they been free at their turn.

An admitted job's ``Pend`` and any EASY reservation it held are dropped. Not under conservative
backfill (its plan reserves pended jobs instead) nor in a live one-job decision (:mod:`.live`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from ..model import Job
from .admit import admit_on_flavors
from .context import CycleContext, Visit
from .ledger import NOMINATION_PREFIX

__all__ = ["PASSED_CODES", "drop_nomination", "offer_freed", "offer_passed_over", "passed_over", "readmit"]

PASSED_CODES = frozenset({"WaitingForCapacity", "Fragmented", "UnhealthyGpu", "NodeCordoned", "Priority"})
"""Pending codes of a job passed over for room (capacity, or the EASY reservation): one that more
free GPUs may admit."""


def passed_over(ctx: CycleContext, visit: Visit) -> None:
    """Remember ``visit`` (just pended with the cycle's last ``Pend``) if it waits for room."""
    if ctx.passed is not None and ctx.pends[-1].reason.code in PASSED_CODES:
        ctx.passed_seq += 1
        ctx.passed.setdefault(visit.job.spec.team, []).append((ctx.passed_seq, visit))


def offer_passed_over(ctx: CycleContext, job: Job) -> list[str]:
    """Admit, on GPUs just freed for ``job``, the higher-class jobs of its team passed over earlier
    in this cycle that now fit; returns their ids (empty: ``job`` keeps the GPUs)."""
    if ctx.passed is None or not ctx.passed.get(job.spec.team):
        return []
    rank = job.spec.priority.rank
    took = _offer(ctx, [ctx.passed[job.spec.team]], lambda other: other.spec.priority.rank > rank)
    if took:
        taken = ctx.book.taken.setdefault(job.id, [])
        taken.extend(t for t in took if t not in taken)
    return took


def drop_nomination(ctx: CycleContext, job_id: str) -> None:
    """Forget the GPUs nominated to ``job_id`` (it is gated, can never run, or its nomination is
    stale). Free GPUs that were masked for it go first to every job passed over earlier in this
    cycle, in the order they were visited: they would have had them had they been free then (a
    job of another team, or the very job it was preempted for, could not use them; a lower-class
    job visited later took them and was evicted for the passed-over one in the next cycle, nothing
    changed — ``tests/core/test_rules.py::test_gpus_a_dropped_nomination_frees_go_first_to_a_job_passed_over_earlier``)."""
    masked = NOMINATION_PREFIX + job_id in ctx.state.holdings
    ctx.book.drop(job_id)
    if masked and ctx.passed:
        _offer(ctx, list(ctx.passed.values()), lambda other: True)


def offer_freed(ctx: CycleContext) -> None:
    """Offer GPUs a reclaim left free beyond its job's need — the rest of a borrower's nomination it
    took back (:mod:`.preempt`) — to every job passed over earlier in this cycle, in visit order,
    as :func:`drop_nomination` does."""
    if ctx.passed:
        _offer(ctx, list(ctx.passed.values()), lambda other: True)


def _offer(ctx: CycleContext, lists: list[list[tuple[int, Visit]]], wanted: Callable[[Job], bool]) -> list[str]:
    """Readmit the ``wanted`` passed-over visits of ``lists`` that fit now, in visit order."""
    if ctx.plan is not None:  # conservative backfill reserves pended jobs on its plan instead
        return []
    took: list[str] = []
    for _, visit in list(heapq.merge(*lists, key=lambda entry: entry[0])):
        if wanted(visit.job) and visit.job.id not in ctx.admitted and readmit(ctx, visit):
            took.append(visit.job.id)
    if took:
        gone = set(took)
        assert ctx.passed is not None
        for team in {ctx.admitted[t].spec.team for t in took}:
            ctx.passed[team] = [e for e in ctx.passed[team] if e[1].job.id not in gone]
        ctx.pends[:] = [p for p in ctx.pends if p.job_id not in gone]
        for model in [m for m, res in ctx.reservations.items() if res.job_id in gone]:
            del ctx.reservations[model]
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
