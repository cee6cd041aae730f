"""verify26 V13: a released hold queues again from its release (``Job.eligible_at``; Slurm's EligibleTime).

A job held early and released late used to keep its submit-time place and go ahead of everyone who submitted
meanwhile (a user could keep 200 held "place holders" for days). Now its queue place and age count from its
release (:attr:`Job.queued_at`), its submit time kept for display — in every queue sort of the core, in the
live ledger (QueueTail agrees with a full cycle), in the store's queue order (GET queue positions) and across
a store round trip."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import timedelta

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from jupyter_sched.model import Inventory, Job
from jupyter_sched.model.codec import job_from_dict, job_to_dict
from jupyter_sched.queues.order import QUEUE_SORTS, QueueContext
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, run_cycle
from tests.runtime.test_live_pend import T0, check_kept_pends, holding, job, node, worlds


@st.composite
def worlds_with_releases(draw: st.DrawFn) -> tuple[Snapshot, SchedulingProfile, list[Job]]:
    snap, profile, arrivals = draw(worlds())
    jobs = []
    for j in snap.jobs:
        if j.state.value == "pending" and draw(st.booleans()):
            j = replace(j, eligible_at=T0 - timedelta(seconds=draw(st.integers(0, 600))))
        jobs.append(j)
    return replace(snap, jobs=tuple(jobs)), profile, arrivals


def test_verify26_v13_a_released_job_queues_behind_work_submitted_while_it_was_held_in_every_sort() -> None:
    early = replace(job("early", gpus=1, user="mal", minute=-30), eligible_at=T0 - timedelta(minutes=1))
    meanwhile = job("meanwhile", gpus=1, user="amy", minute=-20)
    assert early.queued_at == T0 - timedelta(minutes=1) and early.submitted_at == T0 - timedelta(minutes=30)
    for name, sort in QUEUE_SORTS.items():
        order = [j.id for j in sort([early, meanwhile], QueueContext(now=T0, team_share=lambda team: 0.0))]
        assert order == ["meanwhile", "early"], (name, order)
    busy = holding(job("busy", gpus=1, user="zed"), "n0", 0)
    for sort_name in ("fair", "fair-usage", "fifo", "short-first"):
        snap = Snapshot(now=T0, inventory=Inventory(nodes=(node("n0", 2),)), jobs=(busy, early, meanwhile))
        result = run_cycle(snap, SchedulingProfile(queue_sort=sort_name))
        assert [a.job_id for a in result.admits] == ["meanwhile"], (sort_name, result.admits)


def test_verify26_v13_eligible_at_survives_the_wire_round_trip() -> None:
    released = replace(job("r", minute=-30), eligible_at=T0)
    out = job_to_dict(released)
    assert out["eligible_at"] == "2026-12-02T09:00:00Z" and out["submitted_at"] != out["eligible_at"], out
    assert job_from_dict(out).eligible_at == T0
    assert "eligible_at" not in job_to_dict(job("never-held")), "absent when never released"


@settings(max_examples=int(os.environ.get("LIVE_PEND_EXAMPLES", "100")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(worlds_with_releases(), st.booleans())
def test_verify26_v13_the_live_ledger_with_released_jobs_is_what_a_full_cycle_decides(
        world: tuple[Snapshot, SchedulingProfile, list[Job]], replay: bool) -> None:
    assume(check_kept_pends(*world, replay=replay) >= 0)
