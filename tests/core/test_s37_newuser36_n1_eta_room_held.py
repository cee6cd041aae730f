"""newuser36 N1, the ETA half (session 37): the ETA replay holds a quota line's room as the live cycle holds it.

Session 36 made the first job a team's limit keeps waiting hold the line's room (scheduling/pending._hold_headroom,
admit.room_held): a teammate's later job starts only where it ends by the held job's start or fits what is left.
The ETA replay (backfill/lookahead) did not: at each future step it let the later sweeps take the room as it freed,
so the ETA printed for the held job came after the sweeps (+440 s) while the cycle started it at +140 s, and the
sweeps were told +80 s / +140 s / +260 s while they started at +840 s / +840 s / +1,020 s.

The N1 sequence on a 4-GPU hub, quotas vision 3 (+1) and nlp 1 (+1): n36a's a-train (2 GPUs) and two 1-GPU sweeps
run (vision at its limit of 4), n36b's older 2-GPU b-train waits first in the fair order (n36a used more), n36a's
three more sweeps queue behind it. Jobs run exactly their time limits (what the ETA assumes with no history), and
nothing new arrives: the ETA printed at t0 is then the start the cycle gives. Pure core (run_cycle, apply_result),
a cycle at t0 and at each moment a job ends (nothing else changes between them).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Allocation, Job, JobState, PendingReason, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import Snapshot, apply_result, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording.reasons import render_reason


def _running(job: Job, ago_s: int, gpus: tuple[int, ...]) -> Job:
    at = T0 - timedelta(seconds=ago_s)
    return replace(job, state=JobState.RUNNING, admitted_at=at, started_at=at,
                   allocation=Allocation(node="n1", gpu_uuids=tuple(f"GPU-n1-{g}" for g in gpus), gpu_milli=1000))


def _n1_snapshot(*extra: Job) -> Snapshot:
    q = quotas(Quota(team="vision", guaranteed=3, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=1))
    jobs = [_running(make_job("a-train", gpus=2, user="n36a", team="vision", time_limit_s=900), 60, (0, 1)),
            _running(make_job("a-sweep1", user="n36a", team="vision", time_limit_s=180), 100, (2,)),
            _running(make_job("a-sweep2", user="n36a", team="vision", time_limit_s=180), 40, (3,)),
            make_job("b-train", gpus=2, user="n36b", team="vision", time_limit_s=1200, submitted=-30),
            *[make_job(f"a-sweep{i}", user="n36a", team="vision", time_limit_s=180, submitted=-20 + i)
              for i in (3, 4, 5)],
            *extra]
    return replace(snapshot([make_node(gpus=4)], jobs, quota=q),
                   usage=UsageHistory(decayed_gpu_seconds_by_user={"n36a": 20_000.0}))


def _play(snap: Snapshot) -> tuple[dict[float, dict[str, PendingReason]], dict[str, float]]:
    """``({second: pending reasons of the cycle then}, {job id: second it started})``: cycles at t0 and at each end
    (jobs run their limits), until nothing waits."""
    reasons: dict[float, dict[str, PendingReason]] = {}
    started: dict[str, float] = {}
    t = 0.0
    for _ in range(50):
        now = T0 + timedelta(seconds=t)
        snap = replace(snap, now=now, jobs=tuple(j for j in snap.jobs if not (
            j.state.holds_gpus and j.started_at is not None
            and (now - j.started_at).total_seconds() >= (j.spec.time_limit_s or 0))))
        result = run_cycle(snap)
        reasons[t] = {p.job_id: p.reason for p in result.pending}
        started.update({a.job_id: t for a in result.admits})
        snap = apply_result(snap, result, stop_at_once=True)
        snap = replace(snap, jobs=tuple(replace(j, state=JobState.RUNNING, started_at=j.admitted_at)
                                        if j.state.holds_gpus and j.started_at is None else j for j in snap.jobs))
        if not any(j.state == JobState.PENDING for j in snap.jobs):
            break
        ends = [(j.started_at - T0).total_seconds() + (j.spec.time_limit_s or 0)
                for j in snap.jobs if j.state.holds_gpus and j.started_at is not None]
        t = min(e for e in ends if e > t)
    return reasons, started


def _eta_s(reason: PendingReason) -> float | None:
    return None if reason.eta is None else (reason.eta - T0).total_seconds()


def test_newuser36_n1_eta_of_the_held_job_and_the_later_sweeps_is_the_start_the_cycle_gives() -> None:
    reasons, started = _play(_n1_snapshot())
    first = reasons[0]
    # the cycle: a-sweep1 ends at +80 (vision 3 of 4: b-train's 2 do not fit), a-sweep2 at +140: b-train starts;
    # a-sweep3 (limit 3 min, past +140) is kept off the room held for b-train at +80, and starts when a-train ends
    assert started["b-train"] == 140 and started["a-sweep3"] == 840, started
    assert first["b-train"].details["headroom"]["reservation"] == "2025-03-30T12:02:20+00:00", first["b-train"].details
    for job_id in ("b-train", "a-sweep3", "a-sweep4", "a-sweep5"):  # before: 440, 80, 140, 260
        eta = _eta_s(first[job_id])
        assert eta is not None and abs(eta - started[job_id]) <= 2, (job_id, eta, started)


def test_newuser36_n1_eta_a_later_job_of_another_team_keeps_off_the_gpus_the_held_job_starts_on() -> None:
    """(b): the held job kept only its team's room, no GPUs, so misc's later (low-priority) 1-GPU job took the GPU
    a-sweep1 freed at +80 s and held it to +680 s: b-train, first in the queue, started at +680 instead of +140.
    Now the first job its line keeps waiting also reserves the GPUs it starts on (the model's EASY reservation,
    when no job blocked ahead of it holds it; Slurm plans a limit-blocked job's nodes with ``assoc_limit_stop``),
    the lines say so, and the replay keeps them too: every ETA printed at t0 is the start the cycle gives."""
    misc = make_job("d-misc", user="n36d", team="misc", time_limit_s=600, submitted=-1, priority="low")
    reasons, started = _play(_n1_snapshot(misc))
    assert started["b-train"] == 140 and started["d-misc"] > 140, started  # before: 680 and 80
    held = reasons[0]["b-train"]
    assert held.details["headroom"]["gpus_kept"] is True, held.details
    said = reason_to_dict(held)
    assert said is not None
    line = render_reason(said, now=T0).line
    assert ("the room under vision's limit of 4 GPUs is kept for it: vision's jobs queued after it start first only "
            "where they end by 12:02 UTC, when it can start even if the work ahead of it runs to its time limits; "
            "so are the GPUs it will start on, from every team's jobs queued after it (reservation)") in line, line
    kept_off = reasons[80]["d-misc"]  # a-sweep1's GPU is free: it fits, but would outlast b-train's start
    assert kept_off.code == "Priority" and kept_off.details["reserved_for"] == "b-train", kept_off
    assert "fits now but would delay b-train, which is ahead of it in the queue" in kept_off.message, kept_off.message
    for job_id in ("b-train", "d-misc", "a-sweep3", "a-sweep4", "a-sweep5"):
        eta = _eta_s(reasons[0][job_id])
        assert eta is not None and abs(eta - started[job_id]) <= 2, (job_id, eta, started)


def test_newuser36_n1_eta_the_held_job_reserves_the_gpus_its_start_frees_not_those_free_now() -> None:
    """(b), which GPUs: the held job waits on its line, not on GPUs. Two jobs end at +60 s, its team's and another
    team's; the walk that finds its start stops at the first (its team's: the line then has room) and placed it on
    that job's GPU and the one free now, so a later low job of another team (borrowing too: visited after it) was
    kept off the free GPU until +60 s though the GPUs freed at +60 s were enough. It now reserves what all the work
    ending by its start frees, and the later job starts now (its limit ends after +60 s, on a GPU the held job
    does not need)."""
    q = quotas(Quota(team="c", guaranteed=1, borrowing_limit=1), Quota(team="b", guaranteed=2, borrowing_limit=2))
    jobs = [_running(make_job("a-c-short", user="cx", team="c", time_limit_s=120), 60, (0,)),
            _running(make_job("b-short", user="bx", team="b", time_limit_s=120), 60, (1,)),
            _running(make_job("b-long", user="bx", team="b", time_limit_s=900), 60, (2,)),
            make_job("c-held", gpus=2, user="cy", team="c", time_limit_s=600, submitted=-30),
            make_job("b-late", user="by", team="b", time_limit_s=600, submitted=-1, priority="low")]
    result = run_cycle(replace(snapshot([make_node(gpus=4)], jobs, quota=q), now=T0))
    reasons = {p.job_id: p.reason for p in result.pending}
    held = reasons["c-held"]
    assert held.code == "BorrowingLimitReached" and held.details["headroom"]["gpus_kept"] is True, held
    assert [a.job_id for a in result.admits] == ["b-late"], (result.admits, reasons.get("b-late"))
