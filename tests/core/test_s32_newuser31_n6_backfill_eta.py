"""newuser31 N6: a waiting job's ETA named a job queued behind it as its cause and said, on the same line,
that this job "ends before this job's planned start, so it runs first (backfill)" — while the ETA was its end.

Hub, n31a: her idle kernel lease holds 1 of 4 GPUs (reclaimed at 12:58 if it stays idle), n31b's jobs hold the
other 3, n31a's a-big (4 GPUs) waits first in the queue and n31b's flood of 1-GPU jobs waits behind it. A lease
has no time limit, so no start can be kept for a-big (EASY's reservation is unknown) and the flood starts on every
GPU that frees — in the scheduler and in the ETA's replay of it alike: a-big starts when the last of them to run
past the lease's reclaim ends, "ETA 13:00, when fl2-12 ends", 2 minutes after the lease's 12:58. The ETA kept its
word; the words did not: they now say why the job behind goes first (no start can be kept while the lease, with
no time limit, holds a GPU it needs), and where a start *is* kept, that the job behind cannot delay this one past
it — never that it ends before this job's start.

A real engine snapshot sequence (pure core: run_cycle, apply_result), cycle after cycle.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import JobKind, JobState
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import apply_result, run_cycle
from jupyter_sched.wording.reasons import render_reason

LEARNT_S = 60.0  # what n31b's flood jobs are learnt to run (their limit is 6m)


def _lease():  # type: ignore[no-untyped-def]
    job = make_job("l-n31a", user="n31a")
    return running(replace(job, spec=replace(job.spec, name="kernel lease", kind=JobKind.LEASE, kernel_id="k-1")),
                   indices=[0], started=-5)


def test_newuser31_n6_an_eta_on_a_job_behind_never_says_it_ends_before_this_jobs_start() -> None:
    flood = [f"fl2-{i}" for i in range(2, 13)]
    jobs = [_lease(),
            running(make_job("b-hold", gpus=2, user="n31b", time_limit_s=240), indices=[2, 3], started=-1),
            running(make_job("fl2-1", user="n31b", time_limit_s=360), indices=[1], started=-0.5),
            make_job("a-big", gpus=4, user="n31a", time_limit_s=180, submitted=-0.4),
            *(make_job(f, user="n31b", time_limit_s=360, submitted=-0.3 + i / 1000) for i, f in enumerate(flood))]
    learnt = {f"fl2-{i}": LEARNT_S for i in range(1, 13)} | {"b-hold": 150.0}
    snap = replace(snapshot([make_node(gpus=4)], jobs), runtime_estimates=learnt,
                   idle_ends={"l-n31a": T0 + timedelta(minutes=3, seconds=6)})
    said: list[str] = []
    for step in range(5):  # 12:00:00, 12:00:32, …: the flood ends and starts in waves of 3
        now = T0 + timedelta(seconds=32 * step)
        ended = {j.id for j in snap.jobs if j.state.holds_gpus and j.id in learnt and j.started_at is not None
                 and (now - j.started_at).total_seconds() >= learnt[j.id]}
        snap = replace(snap, now=now, jobs=tuple(j for j in snap.jobs if j.id not in ended))
        result = run_cycle(snap)
        reason = next(p.reason for p in result.pending if p.job_id == "a-big")
        eta = render_reason(reason_to_dict(reason), now=now).eta
        behind = reason.details.get("eta_waits_on_backfilled")
        if behind:
            said.append(eta)
            assert reason.details.get("eta_backfill_basis") == {"unbounded": ["l-n31a"]}, reason.details
            assert "planned start" not in eta and "ends before" not in eta, eta
            assert ("first: no start can be kept for this job while l-n31a, which has no time limit, holds GPUs it "
                    "needs, so work behind it that fits the free GPUs runs meanwhile (backfill)") in eta, eta
        snap = apply_result(snap, result, stop_at_once=True)
        snap = replace(snap, jobs=tuple(replace(j, state=JobState.RUNNING, started_at=j.admitted_at)
                                        if j.state.holds_gpus and j.started_at is None else j for j in snap.jobs))
    assert said, "the flood never went first: the case is not reproduced"


def test_newuser31_n6_a_kept_start_is_the_latest_the_job_behind_cannot_delay() -> None:
    # EASY keeps #1's start (12:08, both running jobs run to their limits); #2 (5m limit) starts on the GPU that
    # frees at 12:02 and ends by 12:07 — #1's ETA is that end, and the line says why it may go first
    jobs = [running(make_job("a", time_limit_s=600), indices=[0], started=-8),
            running(make_job("b", time_limit_s=600), indices=[1], started=-2),
            make_job("waiter", gpus=2, time_limit_s=600, submitted=1),
            make_job("waiter1", time_limit_s=300, submitted=2)]
    snap = replace(snapshot([make_node(gpus=2)], jobs), runtime_estimates={"b": 400, "waiter1": 300})
    reason = next(p.reason for p in run_cycle(snap).pending if p.job_id == "waiter")
    assert reason.details.get("eta_backfill_basis") == {"latest": "2025-03-30T12:08:00+00:00"}, reason.details
    eta = render_reason(reason_to_dict(reason), now=T0).eta
    assert eta.startswith("ETA 12:07 UTC, when waiter1 ends; waiter1 is queued behind this job but starts first: even run "
                          "to its time limit it cannot delay this job past 12:08 UTC"), eta
    assert "planned start" not in eta, eta
