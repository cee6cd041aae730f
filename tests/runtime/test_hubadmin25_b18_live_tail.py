"""hubadmin25 B18: the live ledger (QueueTail) agrees with a full cycle when queued jobs are held or topped.

A held job pends ``Held`` and reserves nothing; a topped one goes first in its class. A new submit decided on
the live ledger "as if last" must still be what a full cycle decides — the property of
``tests/runtime/test_live_pend.py``, on worlds whose queued jobs are randomly held (by their owner or an admin)
or topped by an admin."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import timedelta

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from jupyter_sched.model import Inventory, Job
from jupyter_sched.model.job import Hold
from jupyter_sched.scheduling import SchedulingProfile, Snapshot
from tests.runtime.test_live_pend import T0, check_kept_pends, holding, job, node, worlds


@st.composite
def worlds_with_holds(draw: st.DrawFn) -> tuple[Snapshot, SchedulingProfile, list[Job]]:
    snap, profile, arrivals = draw(worlds())
    jobs = []
    for j in snap.jobs:
        if j.state.value == "pending":
            kind = draw(st.sampled_from(["none", "none", "held", "admin-held", "topped"]))
            if kind == "held":
                j = replace(j, held=Hold(by=j.spec.user, at=T0 - timedelta(minutes=1)))
            elif kind == "admin-held":
                j = replace(j, held=Hold(by="boss", at=T0 - timedelta(minutes=1), admin=True))
            elif kind == "topped":
                j = replace(j, top_at=T0 - timedelta(seconds=draw(st.integers(1, 300))))
        jobs.append(j)
    return replace(snap, jobs=tuple(jobs)), profile, arrivals


@settings(max_examples=int(os.environ.get("LIVE_PEND_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(worlds_with_holds(), st.booleans())
def test_hubadmin25_b18_a_pend_kept_on_the_live_ledger_with_held_and_topped_jobs_is_what_a_full_cycle_decides(
        world: tuple[Snapshot, SchedulingProfile, list[Job]], replay: bool) -> None:
    assume(check_kept_pends(*world, replay=replay) >= 0)


def test_hubadmin25_b18_a_held_head_of_the_queue_keeps_the_live_ledger_and_a_topped_job_stays_ahead() -> None:
    nodes = (node("n0", 2),)
    running = holding(job("r0", gpus=2, user="u2"), "n0", 0)
    held = replace(job("p0", gpus=2, user="u1", minute=-20), held=Hold(by="u1", at=T0))
    topped = replace(job("p1", gpus=1, user="u2", minute=-10), top_at=T0)
    for sort in ("fair", "fair-usage", "fifo"):
        snap = Snapshot(now=T0, inventory=Inventory(nodes=nodes), jobs=(running, held, topped))
        arrivals = [job("new0", user="u2", minute=-2), job("new1", user="u2", minute=-1)]
        assert check_kept_pends(snap, SchedulingProfile(queue_sort=sort), arrivals) == 2, sort
