"""newuser36 N1: a teammate's later 1-GPU jobs took a team's room under its borrowing limit one by one as it
freed, ahead of an older 2-GPU job first in the queue's order; its line never said so.

Hub of 4 GPUs, quotas vision 3 (+1), nlp 1 (+1). n36a's a-train (2 GPUs) runs; n36b's b-train (2 GPUs) starts
borrowing and is preempted at once by n36c's c-nlp (nlp's guarantee); n36a then submits five 3-min sweeps of
1 GPU. Here n36a has used more (its past usage), so b-train is first in the fair order from the start. EASY
backfill reserved GPUs, not a team's limit room: once c-nlp ended b-train waited only on vision's limit, and
each GPU a sweep freed went to the next sweep (vision 3 + 1 = 4), so b-train started after all five. Now the
first job its quota line keeps waiting holds the line's room as a reservation holds GPUs: a later job of the
team starts only where its time limit ends by then. A real engine snapshot sequence (pure core: run_cycle,
apply_result), cycle after cycle, 2 s apart as the hub's.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Allocation, Job, JobState, PendingReason, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import apply_result, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording.reasons import render_reason

RUNS_S = {"a-train": 600, "b-train": 900, "c-nlp": 300} | {f"a-sweep{i}": 120 for i in range(1, 6)}
"""What each job ran (s); the time limits are the tester's (15m, 20m, 10m, 3m)."""


def _submissions() -> list[tuple[int, Job]]:
    jobs = [(0, make_job("a-train", gpus=2, user="n36a", team="vision", time_limit_s=900)),
            (6, make_job("b-train", gpus=2, user="n36b", team="vision", time_limit_s=1200)),
            (12, make_job("c-nlp", gpus=1, user="n36c", team="nlp", time_limit_s=600))]
    return jobs + [(20 + 2 * i, make_job(f"a-sweep{i + 1}", user="n36a", team="vision", time_limit_s=180))
                   for i in range(5)]


def _replay() -> tuple[dict[str, int], dict[int, PendingReason]]:
    """``({job id: second it started}, {second: b-train's pending reason})`` over 20 minutes."""
    q = quotas(Quota(team="vision", guaranteed=3, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=1))
    snap = snapshot([make_node(gpus=4)], [], quota=q)
    used = {"n36a": 20_000.0}  # n36a used more before: b-train goes first in the fair order
    started: dict[str, int] = {}
    reasons: dict[int, PendingReason] = {}
    subs = _submissions()
    for t in range(0, 1200, 2):
        now = T0 + timedelta(seconds=t)
        ended = {j.id for j in snap.jobs if j.state.holds_gpus and j.started_at is not None
                 and (now - j.started_at).total_seconds() >= RUNS_S[j.id]}
        for j in snap.jobs:
            if j.state.holds_gpus:
                used[j.spec.user] = used.get(j.spec.user, 0.0) + 2 * j.spec.resources.gpus
        new = [replace(j, submitted_at=now) for at, j in subs if at == t]
        snap = replace(snap, now=now, jobs=(*(j for j in snap.jobs if j.id not in ended), *new),
                       usage=UsageHistory(decayed_gpu_seconds_by_user=dict(used)))
        result = run_cycle(snap)
        for admit in result.admits:
            started[admit.job_id] = t
        for pend in result.pending:
            if pend.job_id == "b-train":
                reasons[t] = pend.reason
        snap = apply_result(snap, result, stop_at_once=True)
        snap = replace(snap, jobs=tuple(replace(j, state=JobState.RUNNING, started_at=j.admitted_at)
                                        if j.state.holds_gpus and j.started_at is None else j for j in snap.jobs))
        if t > 20 and "b-train" in started and started["b-train"] == t:
            break
    return started, reasons


def test_newuser36_n1_the_first_job_a_team_limit_holds_keeps_its_room_from_later_sweeps() -> None:
    started, reasons = _replay()
    assert started["b-train"] > 20, started  # it was preempted and requeued: the case is reproduced
    # c-nlp ends at +314 (GPUs free); then b-train waits only on vision's limit (a-train 2 + a-sweep3 1 + 2 > 4).
    # a-sweep3 ends at +380: the first moment GPUs and room both allow. No sweep submitted after b-train and
    # outlasting that start went first: a-sweep4 (limit to +494) waits. Before: b-train started at +500,
    # after a-sweep4 and a-sweep5 took the room as it freed.
    assert started["b-train"] == 380, started
    assert "a-sweep4" not in started or started["a-sweep4"] > started["b-train"], started
    for sweep in ("a-sweep2", "a-sweep3"):  # these ended by its reservation: backfilled, as EASY lets them
        assert started[sweep] < started["b-train"], started
    reason = reasons[314]  # b-train's line once it waits on vision's limit alone
    assert reason.code == "BorrowingLimitReached", reason
    held = reason.details["headroom"]
    assert held["team"] == "vision" and held["limit"] == 4 and held["reservation"] == "2025-03-30T12:07:20+00:00", held
    said = reason_to_dict(reason)
    assert said is not None
    line = render_reason(said, now=T0 + timedelta(seconds=314)).line
    assert ("vision would use 5 GPUs, above its limit of 4 GPUs (guaranteed 3 + borrowing limit 1); the room under "
            "vision's limit of 4 GPUs is kept for it: vision's jobs queued after it start first only where they "
            "end by 12:07 UTC, when it can start even if the work ahead of it runs to its time limits; so are the "
            "GPUs it will start on, from every team's jobs queued after it (reservation)") in line, line  # the GPUs too since s37-eta (newuser36 N1 (b))


def test_newuser36_n1_a_later_job_kept_off_the_room_says_whose_and_until_when() -> None:
    """The sweep kept off says what keeps it: the room held for b-train under vision's limit, named, from when
    (a-sweep3 ends by 12:02 at its limit; a-sweep4, limit 3 min, would end at 12:03)."""
    q = quotas(Quota(team="vision", guaranteed=3, borrowing_limit=1))
    jobs = [replace(make_job("a-train", gpus=2, user="n36a", team="vision", time_limit_s=900), state=JobState.RUNNING,
                    admitted_at=T0, started_at=T0),
            replace(make_job("a-sweep3", user="n36a", team="vision", time_limit_s=180), state=JobState.RUNNING,
                    admitted_at=T0 - timedelta(minutes=1), started_at=T0 - timedelta(minutes=1)),
            make_job("b-train", gpus=2, user="n36b", team="vision", time_limit_s=1200, submitted=-5),
            make_job("a-sweep4", user="n36a", team="vision", time_limit_s=180, submitted=-1)]
    jobs[0] = replace(jobs[0], allocation=Allocation(node="n1", gpu_uuids=("GPU-n1-0", "GPU-n1-1"), gpu_milli=1000))
    jobs[1] = replace(jobs[1], allocation=Allocation(node="n1", gpu_uuids=("GPU-n1-2",), gpu_milli=1000))
    snap = replace(snapshot([make_node(gpus=4)], jobs, quota=q),
                   usage=UsageHistory(decayed_gpu_seconds_by_user={"n36a": 20_000.0}))
    result = run_cycle(snap)
    assert not result.admits, result.admits
    reasons = {p.job_id: p.reason for p in result.pending}
    sweep = reasons["a-sweep4"]
    assert sweep.code == "Priority", sweep
    assert sweep.details["reserved_for"] == "b-train" and sweep.details["headroom"]["team"] == "vision", sweep.details
    said = reason_to_dict(sweep)
    assert said is not None
    text = render_reason(said, now=T0).summary
    assert "fits now but would delay b-train, which is ahead of it in the queue: the room under vision's limit of " \
           "4 GPUs is kept for it from 12:02 UTC (reservation)" in text, text
