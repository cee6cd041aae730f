"""Session 22 (issue 17's status ratio, drifting to 3x): the full cycle over the status benchmark's
store (1,000 jobs above a team's zero quota, a few hundred waiting on capacity) cost ~20 % more CPU
than at the end of session 20, and the engine's thread holds the interpreter the web loop answers
``jupyter-sched status`` on. Two per-job costs that session 21 added are gone, without deciding or
saying anything differently. What the cycle no longer does is counted here (its speed lives in
``benchmarks/``: no timed assertions), with the calls a profile hook sees in this thread:

* every job above a quota ceiling built the ceiling's sentence again
  (:func:`~jupyter_sched.quota.ceiling.ceiling_exceeded`, since verify20 V3/V6 with the other
  models' lines): now once per cycle per (team, user, GPU shape); each job's details keep lists
  of their own;
* every pending job that had an ETA copied its previous reason (``dataclasses.replace``) only to
  carry the ETA a move is measured from (red team 21, R2): the ETA alone is passed now.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from types import FrameType
from typing import Any

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Job, Quota
from jupyter_sched.quota.ceiling import binding_ceiling, ceiling_exceeded
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.scheduling.context import CycleContext
from jupyter_sched.scheduling.cycle import run_on
from jupyter_sched.scheduling.snapshot import CycleResult


@contextmanager
def calls_seen() -> Iterator[Counter[tuple[str, str]]]:
    """Within: every Python call made in this thread, counted as ``(callee, caller)`` by function name."""
    seen: Counter[tuple[str, str]] = Counter()

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_back is not None:
            seen[(frame.f_code.co_name, frame.f_back.f_code.co_name)] += 1

    previous: Callable[..., Any] | None = sys.getprofile()
    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(previous)


def _backlog() -> list[Job]:
    """Jobs above team t's ceiling of 1 GPU: two users, three shapes of 2 GPUs (2 GPUs, 2 workers of 1,
    one of them twice over) — the same flavors and milli-GPUs, not the same words ("gpus" or "workers")."""
    jobs = []
    for i in range(36):
        shape = i % 3
        jobs.append(make_job(f"b{i:02d}", gpus=2 if shape == 0 else 1, workers=1 if shape == 0 else 2,
                             team="t", user=("al", "bo")[i % 2], submitted=i))
    return jobs


def test_s22_status_ceiling_words_built_once_per_user_and_shape() -> None:
    q = quotas(Quota(team="t", guaranteed=1, borrowing_limit=0))
    jobs = _backlog()
    ctx = CycleContext(snapshot([make_node("n1", gpus=4)], jobs, quota=q), SchedulingProfile())
    with calls_seen() as seen:
        result = run_on(ctx)
    # before: one call per job above the ceiling (36); now one per (user, request shape): 2 x 2
    assert seen[("ceiling_exceeded", "_above_ceiling")] == 4
    reasons = {p.job_id: p.reason for p in result.pending}
    assert set(reasons) == {j.id for j in jobs}
    for job in jobs:  # each says what the longer form says of it alone
        req = job.spec.resources
        flavors = ctx.placer.flavors(req)
        line = binding_ceiling(ctx.quota, "t", job.spec.user, req.total_milli, [f.model for f in flavors])
        assert line is not None
        alone = ceiling_exceeded(line, req, [f.model for f in flavors], user=job.spec.user, ledger=ctx.quota,
                                 to_user=False)
        reason = reasons[job.id]
        assert reason.message == alone.message
        assert reason.details["field"] == alone.field == ("gpus" if req.workers == 1 else "workers")
        assert {k: reason.details[k] for k in alone.details} == alone.details
        assert reason.unblock.startswith(f"cancel it and resubmit with {alone.most}, ")
    # one job's details are its own: no list shared with another job's reason
    lists = [id(v) for r in reasons.values() for v in r.details.values() if isinstance(v, list)]
    assert len(lists) == len(set(lists))


def test_s22_status_eta_moves_copy_no_reason() -> None:
    node = make_node("n1", gpus=4)
    runs = [running(make_job(f"r{i}", gpus=1, time_limit_s=3600.0), "n1", [i], started=-10.0) for i in range(4)]
    waiting = [make_job(f"w{i:02d}", gpus=1, submitted=i / 10, time_limit_s=1800.0) for i in range(30)]
    first_snap = snapshot([node], [*runs, *waiting], now=T0 + timedelta(minutes=1))
    first = run_on(CycleContext(first_snap, SchedulingProfile()))
    assert all(p.reason.eta is not None for p in first.pending)

    def carried(result: CycleResult, jobs: tuple[Job, ...]) -> tuple[Job, ...]:
        reasons = {p.job_id: p.reason for p in result.pending}
        return tuple(replace(j, reason=reasons.get(j.id, j.reason)) for j in jobs)

    # a later cycle: the running jobs' limits doubled (their ends move by an hour): every ETA moves
    later = replace(first_snap, now=T0 + timedelta(minutes=2), jobs=tuple(
        replace(j, spec=replace(j.spec, time_limit_s=7200.0)) if j.id.startswith("r") else j
        for j in carried(first, first_snap.jobs)))
    with calls_seen() as seen:
        second = run_on(CycleContext(later, SchedulingProfile()))
    assert seen[("replace", "_record")] == 0  # before: one copy of the previous reason per waiting job (30)
    moved = [p for p in second.pending if "eta_moved" in p.reason.details]
    assert len(moved) == len(waiting)  # the moves are still measured from the ETA recorded before
    for pend in moved:
        before = next(p.reason for p in first.pending if p.job_id == pend.job_id)
        assert before.eta is not None and pend.reason.eta == before.eta + timedelta(hours=1)
        assert pend.reason.details["eta_moved"]["from"] == before.eta.isoformat()  # the ETA recorded first
