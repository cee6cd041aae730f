"""Reclaim and preemption as one plan: issue 16's examples A and B, case 032, reclaim rules per team.

One A100 pool of 8 GPUs unless stated; "started long ago" = an hour before T0.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, Scenario, make_job, make_node, quotas, running, snapshot

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Quota, TeamPolicy
from jupyter_sched.scheduling import SchedulingProfile, run_cycle


def _ab(*, reclaim_a: str | None = None) -> Scenario:
    teams = [TeamPolicy(team="a", reclaim=reclaim_a, allowed_priorities=("high", "normal", "low"))]
    q = quotas(Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=4), teams=teams)
    return Scenario([make_node("n1", gpus=8)], quota=q)


# ------------------------------------------------------------------------------- example A
def test_example_a_borrower_larger_than_its_borrowing_is_reclaimed_and_does_not_come_back() -> None:
    sc = _ab()
    sc.submit(running(make_job("b6", gpus=6, team="b"), "n1", range(6)),
              make_job("a4", gpus=4, team="a"))
    first = sc.cycle()
    assert [(p.job_id, p.for_job, p.kind) for p in first.preemptions] == [("b6", "a4", "reclaim")]
    second = sc.cycle()
    assert [a.job_id for a in second.admits] == ["a4"]
    b6 = sc.job("b6")
    assert b6.state.value == "pending" and b6.reason is not None and b6.reason.code == "WaitingForCapacity"
    assert "b is guaranteed 4 GPUs but this job needs 6, above the guarantee, so nothing is reclaimed" in b6.reason.message
    for minute in range(1, 30):  # no loop while a4 runs: b6 never reclaims back
        r = sc.at(minute).cycle()
        assert r.preemptions == () and r.admits == ()
    assert sc.evictions() == ["b6"] and sc.state("a4") == "running"


# ------------------------------------------------------------------------------- example B
def _example_b(a3_priority: str) -> Scenario:
    sc = _ab()
    sc.submit(running(make_job("a1", gpus=2, team="a", priority="low"), "n1", [0, 1], started=-60),
              running(make_job("b1", gpus=2, team="b"), "n1", [2, 3], started=-30),
              running(make_job("b2", gpus=4, team="b"), "n1", [4, 5, 6, 7], started=-90),
              make_job("a3", gpus=4, team="a", priority=a3_priority))
    return sc


@pytest.mark.parametrize("a3_priority", ["high", "normal"])
def test_example_b_own_low_job_and_a_borrower_are_evicted_together(a3_priority: str) -> None:
    sc = _example_b(a3_priority)
    first = sc.cycle()
    assert sorted((p.job_id, p.kind) for p in first.preemptions) == [("a1", "priority"), ("b1", "reclaim")]
    assert sorted(first.nominations["a3"].gpu_uuids) == ["GPU-n1-0", "GPU-n1-1", "GPU-n1-2", "GPU-n1-3"]
    second = sc.cycle()
    assert [a.job_id for a in second.admits] == ["a3"]
    b_used = sum(j.spec.resources.gpus for j in sc.snap.jobs if j.spec.team == "b" and j.state.holds_gpus)
    assert b_used == 4  # b ends at its guarantee
    for minute in range(1, 20):
        assert sc.at(minute).cycle().preemptions == ()
    assert sorted(sc.evictions()) == ["a1", "b1"]


def test_an_eviction_that_cannot_make_the_job_fit_never_happens() -> None:
    # b borrows 2, but a's 6-GPU job would be above a's guarantee of 4: reclaim does not apply, and
    # evicting a's own low job alone frees too little. Nothing is evicted.
    sc = _ab()
    sc.submit(running(make_job("a1", gpus=2, team="a", priority="low"), "n1", [0, 1]),
              running(make_job("b6", gpus=6, team="b"), "n1", range(2, 8)),
              make_job("a6", gpus=6, team="a", priority="high"))
    for minute in range(5):
        assert sc.at(minute).cycle().preemptions == ()
    reason = sc.job("a6").reason
    assert reason is not None and "a is guaranteed 4 GPUs" in reason.message
    assert "above the guarantee, so nothing is reclaimed" in reason.message


# ------------------------------------------------------------------------------- victim choice
def test_one_larger_borrower_goes_rather_than_two_smaller_ones() -> None:
    q = quotas(Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=0))
    jobs = [running(make_job("x", gpus=2, team="b"), "n1", [0, 1], started=-10),
            running(make_job("y", gpus=2, team="b"), "n1", [2, 3], started=-10),
            running(make_job("z", gpus=4, team="b"), "n1", [4, 5, 6, 7], started=-10),
            make_job("a4", gpus=4, team="a")]
    result = run_cycle(snapshot([make_node("n1", gpus=8)], jobs, quota=q))
    assert [p.job_id for p in result.preemptions] == ["z"]  # one job broken, not two


def test_lower_class_borrower_goes_before_a_normal_one() -> None:
    q = quotas(Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=0))
    jobs = [running(make_job("normal", gpus=4, team="b"), "n1", [0, 1, 2, 3], started=-10),
            running(make_job("low1", gpus=2, team="b", priority="low"), "n1", [4, 5], started=-100),
            running(make_job("low2", gpus=2, team="b", priority="low"), "n1", [6, 7], started=-100),
            make_job("a4", gpus=4, team="a")]
    result = run_cycle(snapshot([make_node("n1", gpus=8)], jobs, quota=q))
    assert sorted(p.job_id for p in result.preemptions) == ["low1", "low2"]


def test_a_young_borrower_is_spared_when_an_older_one_will_do() -> None:
    q = quotas(Quota(team="a", guaranteed=2), Quota(team="b", guaranteed=0))
    jobs = [running(make_job("young", gpus=2, team="b"), "n1", [0, 1], started=-1),
            running(make_job("old", gpus=2, team="b"), "n1", [2, 3], started=-120),
            make_job("a2", gpus=2, team="a")]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q))
    assert [p.job_id for p in result.preemptions] == ["old"]


# ------------------------------------------------------------------------------- reclaim rules
@pytest.mark.parametrize(("rule", "want_victims", "want_protected"), [
    pytest.param("any", ["b6"], None, id="any: borrowed work of any class is reclaimed"),
    pytest.param("lower-or-equal", ["b6"], None, id="lower-or-equal: a normal borrower goes for a normal job"),
    pytest.param("lower", [], "a's reclaim rule 'lower' protects borrowed jobs of class normal or above, here b6",
                 id="lower: a normal borrower is protected from a normal job, and the reason says so"),
    pytest.param("never", [], "a's reclaim rule 'never' protects every borrowed job, here b6",
                 id="never: nothing is reclaimed, and the reason says so"),
])
def test_team_reclaim_rule(rule: str, want_victims: list[str], want_protected: str | None) -> None:
    sc = _ab(reclaim_a=rule)
    sc.submit(running(make_job("b6", gpus=6, team="b"), "n1", range(6)), make_job("a4", gpus=4, team="a"))
    result = sc.cycle()
    assert [p.job_id for p in result.preemptions] == want_victims
    if want_protected:
        reason = next(p.reason for p in result.pending if p.job_id == "a4")
        assert want_protected in reason.message
        assert reason.details["preemption_rule"]["protected"] == ["b6"]
        assert reason.details["preemption_rule"]["rule"] == rule


def test_profile_reclaim_policy_applies_to_teams_without_their_own_rule() -> None:
    q = quotas(Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=4))
    jobs = [running(make_job("b6", gpus=6, team="b"), "n1", range(6)), make_job("a4", gpus=4, team="a")]
    result = run_cycle(snapshot([make_node("n1", gpus=8)], jobs, quota=q), SchedulingProfile(reclaim_policy="never"))
    assert result.preemptions == ()


def test_lower_or_newer_equal_lets_an_older_low_job_preempt_a_newer_one() -> None:
    jobs = [running(make_job("new-low", gpus=2, priority="low", submitted=5), "n1", [0, 1], started=-10),
            make_job("old-low", gpus=2, priority="low", submitted=0)]
    snap = snapshot([make_node("n1", gpus=2)], jobs)
    assert run_cycle(snap).preemptions == ()
    result = run_cycle(snap, SchedulingProfile(preemption_policy="lower-or-newer-equal"))
    assert [(p.job_id, p.kind) for p in result.preemptions] == [("new-low", "priority")]


@pytest.mark.parametrize(("make", "field_name"), [
    pytest.param(lambda: SchedulingProfile(preemption_policy="sometimes"), "preemption_policy",
                 id="an unknown preemption policy is refused"),
    pytest.param(lambda: SchedulingProfile(reclaim_policy="maybe"), "reclaim_policy",
                 id="an unknown reclaim policy is refused"),
    pytest.param(lambda: TeamPolicy(team="a", reclaim="lowest"), "reclaim", id="an unknown team reclaim rule is refused"),
])
def test_bad_preemption_config_names_the_field(make: object, field_name: str) -> None:
    with pytest.raises(ValidationError) as info:
        make()  # type: ignore[operator]
    assert info.value.field == field_name


# ------------------------------------------------------------------------------- case 032
def _case_032() -> Scenario:
    teams = [TeamPolicy(team="team-a", allowed_priorities=("high", "normal", "low"))]
    q = quotas(Quota(team="team-a", guaranteed=4), Quota(team="team-b", guaranteed=0, borrowing_limit=4), teams=teams)
    sc = Scenario([make_node("n1", gpus=4)], quota=q, profile=SchedulingProfile(grace_s=300), stop_at_once=False)
    sc.submit(*(running(make_job(f"b{i + 1}", team="team-b", priority="low"), "n1", [i]) for i in range(4)))
    return sc


def test_case_032_newer_higher_class_jobs_take_over_the_nomination_without_new_evictions() -> None:
    sc = _case_032()
    t10 = sc.at(10 / 60).submit(make_job("a-low", gpus=4, team="team-a", priority="low", submitted=10 / 60)).cycle()
    assert sorted(p.job_id for p in t10.preemptions) == ["b1", "b2", "b3", "b4"]
    assert all(p.grace_s == 300 for p in t10.preemptions)
    t20 = sc.at(20 / 60).submit(make_job("a-high", gpus=2, team="team-a", priority="high", submitted=20 / 60)).cycle()
    t30 = sc.at(30 / 60).submit(make_job("a-normal", gpus=2, team="team-a", submitted=30 / 60)).cycle()
    assert t20.preemptions == () and t30.preemptions == ()  # the GPUs are already being reclaimed for team-a
    assert {j: t30.nominations[j] is not None for j in ("a-high", "a-normal")} == {"a-high": True, "a-normal": True}
    assert "a-low" not in t30.nominations
    # t=40: b1..b3 exit after checkpointing; b4 ignores the signal
    t40 = sc.at(40 / 60).stopped("b1", "b2", "b3").cycle()
    assert [a.job_id for a in t40.admits] == ["a-high"]  # high first, not the job that started the reclaim
    reasons = {p.job_id: p.reason for p in t40.pending}
    assert reasons["a-normal"].code == "WaitingForPreemption" and reasons["a-normal"].details["victims"] == ["b4"]
    low = reasons["a-low"]
    assert "waiting behind higher-priority a-normal of team-a" in low.message
    # among the low class, in submit order: b4 stopping is no longer team-b's and the GPUs held for a-normal
    # are team-a's (newuser42 N5), so both teams borrow nothing and b1-b3 (submitted at 0) go first
    assert [p.job_id for p in sorted(t40.pending, key=lambda p: p.reason.position or 0)] == [
        "a-normal", "b1", "b2", "b3", "a-low"]
    assert t40.preemptions == ()
    # nothing else may use the freed GPU held for a-normal
    t50 = sc.at(50 / 60).submit(make_job("other", gpus=1, team="team-b", submitted=50 / 60)).cycle()
    assert t50.admits == () and t50.preemptions == ()
    # t=310: grace over, b4 killed; a-normal starts
    t310 = sc.at(310 / 60).stopped("b4").cycle()
    assert [a.job_id for a in t310.admits] == ["a-normal"]
    assert sorted(sc.evictions()) == ["b1", "b2", "b3", "b4"]  # total evictions = 4
    assert sc.state("a-low") == "pending"


def test_case_032_without_force_kill_the_stuck_victim_is_named_and_the_head_blocks_nothing_that_fits() -> None:
    # b4 ignores its stop and nothing kills it: the wait names it, with no made-up ETA, and GPUs
    # that free up elsewhere are still admitted normally (the reclaim initiator a-low blocks nobody).
    sc = _case_032()
    sc.at(10 / 60).submit(make_job("a-low", gpus=4, team="team-a", priority="low", submitted=10 / 60)).cycle()
    sc.at(20 / 60).submit(make_job("a-high", gpus=2, team="team-a", priority="high", submitted=20 / 60)).cycle()
    sc.at(30 / 60).submit(make_job("a-normal", gpus=2, team="team-a", submitted=30 / 60)).cycle()
    sc.at(40 / 60).stopped("b1", "b2", "b3").cycle()
    in_grace = {p.job_id: p.reason for p in sc.at(200 / 60).cycle().pending}["a-normal"]
    assert in_grace.eta is not None and "terminating" not in in_grace.message
    late = sc.at(400 / 60).cycle()
    assert late.preemptions == () and late.admits == ()
    reasons = {p.job_id: p.reason for p in late.pending}
    normal = reasons["a-normal"]
    assert normal.code == "WaitingForPreemption"
    assert ("1 GPU held by terminating victim b4 for 390 s (stop grace 300 s over: their processes are being "
            "ended)") in normal.message
    assert normal.eta is None and normal.eta_reason == "b4 did not stop within the grace period"
    assert normal.details["held_by_terminating"] == [{"job": "b4", "gpus": 1, "for_s": 390, "grace_s": 300}]
    assert "held by terminating victim b4 for 390 s" in reasons["a-low"].message  # the queue reason says so
    # a-high ends: a-normal stops waiting on b4 and starts on the GPUs freed elsewhere; the GPU
    # left over goes to the next job that fits (b1, borrowing), not held for the initiator a-low
    after = sc.at(500 / 60).finish("a-high").cycle()
    assert [a.job_id for a in after.admits] == ["a-normal", "b1"] and after.preemptions == ()
    assert "GPU-n1-3" not in {g for a in after.admits for g in a.allocation.all_gpu_uuids()}  # b4 still holds it
    assert sorted(sc.evictions()) == ["b1", "b2", "b3", "b4"]


def test_case_032_the_borrowers_lent_the_gpus_the_initiator_cannot_use_are_reclaimed_again_once_it_is_entitled() -> None:
    # Why issue 16's "no job is evicted twice for the same GPUs" cannot hold as worded (session 9):
    # case 032 lends the GPU a-low cannot use to its own victim b1 (and, once b4 stops, the next one
    # to b2). When a-normal ends, team-a shrinks, a-low (4 GPUs, the whole pool) is within team-a's
    # guarantee again and must not wait while team-b borrows: b1 and b2 are reclaimed a second time.
    # Only a change in team-a's demand (a-normal ending) does that - the property test's invariant.
    sc = _case_032()
    sc.at(10 / 60).submit(make_job("a-low", gpus=4, team="team-a", priority="low", submitted=10 / 60)).cycle()
    sc.at(20 / 60).submit(make_job("a-high", gpus=2, team="team-a", priority="high", submitted=20 / 60)).cycle()
    sc.at(30 / 60).submit(make_job("a-normal", gpus=2, team="team-a", submitted=30 / 60)).cycle()
    sc.at(40 / 60).stopped("b1", "b2", "b3").cycle()
    assert [a.job_id for a in sc.at(500 / 60).finish("a-high").cycle().admits] == ["a-normal", "b1"]
    assert [a.job_id for a in sc.at(600 / 60).stopped("b4").cycle().admits] == ["b2"]
    # b1 (back at 500 s) and b2 (at 600 s) have run less than the 5 min minimum runtime at 700 s: a rule,
    # not a preference (red team 15 R13), so a-low waits until b2 has run 5 min (900 s = 12:15 UTC)
    young = sc.at(700 / 60).finish("a-normal").cycle()
    assert young.preemptions == ()
    waiting = {p.job_id: p.reason for p in young.pending}["a-low"]
    assert waiting.details["preemption_rule"]["rule"] == "min_runtime"
    assert "until alice's b2 (b2) has run 5 min (12:15 UTC)" in waiting.message
    assert waiting.eta == T0 + timedelta(seconds=900)
    # meanwhile b3 and b4 borrowed the 2 GPUs a-low could not use alone (admitted at 700 s): young too
    assert sorted(sc.job(j).state.value for j in ("b3", "b4")) == ["running", "running"]
    assert sc.at(900 / 60).cycle().preemptions == ()
    again = sc.at(1000 / 60).cycle()
    assert sorted((p.job_id, p.for_job, p.kind) for p in again.preemptions) == [
        ("b1", "a-low", "reclaim"), ("b2", "a-low", "reclaim"), ("b3", "a-low", "reclaim"), ("b4", "a-low", "reclaim")]
    assert [a.job_id for a in sc.at(1010 / 60).stopped("b1", "b2", "b3", "b4").cycle().admits] == ["a-low"]
    assert sorted(sc.evictions()) == ["b1", "b1", "b2", "b2", "b3", "b3", "b4", "b4"]


def test_a_victim_in_its_grace_period_is_never_picked_again() -> None:
    jobs = [replace(running(make_job("lo", gpus=2, priority="low")), stopping_since=running(make_job("x")).started_at),
            make_job("hi", gpus=2, priority="high")]
    result = run_cycle(snapshot([make_node("n1", gpus=2)], jobs))
    assert result.preemptions == ()


def test_guarantees_come_first_in_a_cycle_whatever_the_class() -> None:
    # b-high would borrow the whole pool; a-low fits a's guarantee: a-low goes first (Kueue's
    # entry ordering), so nothing is admitted that a reclaim would undo.
    teams = [TeamPolicy(team="b", allowed_priorities=("high", "normal", "low"))]
    q = quotas(Quota(team="a", guaranteed=2), Quota(team="b", guaranteed=2), teams=teams)
    jobs = [make_job("b-high", gpus=4, team="b", priority="high"), make_job("a-low", gpus=2, team="a", priority="low")]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q))
    assert [a.job_id for a in result.admits] == ["a-low"] and result.preemptions == ()


def test_a_borrowing_admission_of_this_cycle_is_withdrawn_rather_than_evicted_next_cycle() -> None:
    # a1 (high) cannot borrow (limit 0) and waits; a2 (low, within a's guarantee) keeps its place
    # behind it, after b-x, which borrows the whole pool. a2 takes back a's guarantee at once:
    # b-x's admission is withdrawn before anything runs.
    teams = [TeamPolicy(team="a", allowed_priorities=("high", "normal", "low"))]
    q = quotas(Quota(team="a", guaranteed=2, borrowing_limit=0), Quota(team="b", guaranteed=2), teams=teams)
    jobs = [make_job("a1", gpus=3, team="a", priority="high"), make_job("b-x", gpus=4, team="b", submitted=1),
            make_job("a2", gpus=2, team="a", priority="low", submitted=2)]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q))
    assert [a.job_id for a in result.admits] == ["a2"] and result.preemptions == ()
    reason = next(p.reason for p in result.pending if p.job_id == "b-x")
    assert reason.details["withdrawn"] and reason.details["reclaimed_by"] == "a2"
    # a1 (3 GPUs above a's ceiling of 2) can never start as the quota stands: its owner is told (new user 18, N12)
    assert [a.action for a in result.audit] == ["never_fits_quota", "admit_withdrawn", "admit"]


def test_a_borrowing_gang_is_reclaimed_even_when_a_cheaper_victim_would_end_the_borrowing() -> None:
    # Found by the property test: b borrows 1 GPU (j0 on n0 and a 2 x 2 gang on n1); a's 2-GPU job
    # fits only on n1. Evicting the cheap j0 first would end b's borrowing and protect the gang;
    # the gang alone is the valid plan (b ends below its guarantee through its own borrowing).
    from jupyter_sched.model import ResourceRequest, WorkerGroup
    q = quotas(Quota(team="a", guaranteed=2), Quota(team="b", guaranteed=4))
    gang = running(make_job("gang", team="b", priority="high"), "n1", [0, 1])
    gang = replace(gang, spec=replace(gang.spec, resources=ResourceRequest.of_groups((WorkerGroup("w", 2, 2),))),
                   allocation=replace(gang.allocation, workers=(("n1", ("GPU-n1-0", "GPU-n1-1")),  # type: ignore[arg-type]
                                                                ("n1", ("GPU-n1-2", "GPU-n1-3")))))
    jobs = [running(make_job("j0", team="b"), "n0", [0]), gang, make_job("j9", gpus=2, team="a", priority="high")]
    teams = [TeamPolicy(team="a", allowed_priorities=("high", "normal", "low")),
             TeamPolicy(team="b", allowed_priorities=("high", "normal", "low"))]
    result = run_cycle(snapshot([make_node("n0", gpus=1), make_node("n1", gpus=5)], jobs,
                                quota=quotas(*q.quotas, teams=teams)))
    assert [(p.job_id, p.kind) for p in result.preemptions] == [("gang", "reclaim")]


# ------------------------------------------------------------------------------- borrow within cohort
def _bwc(b_jobs: list[tuple[str, int, str]], a2_priority: str = "normal",
         profile: SchedulingProfile | None = None) -> Scenario:
    """Pool of 8; a and b guaranteed 2 each. a runs a1 (2 GPUs, at its guarantee); b runs
    ``b_jobs`` on the other 6 (borrowing 4); a submits a2 (4 GPUs): it would borrow to fit."""
    teams = [TeamPolicy(team=t, allowed_priorities=("high", "normal", "low")) for t in ("a", "b")]
    q = quotas(Quota(team="a", guaranteed=2), Quota(team="b", guaranteed=2), teams=teams)
    sc = Scenario([make_node("n1", gpus=8)], quota=q, profile=profile)
    gpu = 2
    jobs = [running(make_job("a1", gpus=2, team="a"), "n1", [0, 1])]
    for name, gpus, priority in b_jobs:
        jobs.append(running(make_job(name, gpus=gpus, team="b", priority=priority), "n1", range(gpu, gpu + gpus)))
        gpu += gpus
    sc.submit(*jobs, make_job("a2", gpus=4, team="a", priority=a2_priority))
    return sc


def test_borrow_within_cohort_evicts_a_lower_class_borrower_and_leaves_its_team_its_guarantee() -> None:
    b_jobs = [("b-low", 4, "low"), ("b-two", 2, "low")]
    off = _bwc(b_jobs).cycle()  # default profile: a2 would borrow, so nothing is reclaimed for it
    assert off.preemptions == () and off.pending[0].reason.details.get("preemption_rule", {}).get("rule") == "guarantee"
    sc = _bwc(b_jobs, profile=SchedulingProfile(borrow_within_cohort="low"))
    first = sc.cycle()
    assert [(p.job_id, p.for_job, p.kind) for p in first.preemptions] == [("b-low", "a2", "reclaim")]
    assert "borrow within cohort" in first.preemptions[0].reason
    assert [a.job_id for a in sc.cycle().admits] == ["a2"]
    for minute in range(1, 20):  # b is at its guarantee (2): b-low cannot reclaim back, no loop
        r = sc.at(minute).cycle()
        assert r.preemptions == () and r.admits == ()
    assert sc.evictions() == ["b-low"]


def test_borrow_within_cohort_never_takes_a_team_below_its_guarantee_nor_above_the_threshold() -> None:
    profile = SchedulingProfile(borrow_within_cohort="low")
    alone = _bwc([("b-six", 6, "low")], profile=profile).cycle()  # evicting it would leave b at 0 < 2
    assert alone.preemptions == ()
    normal = _bwc([("b-low", 4, "normal"), ("b-two", 2, "normal")], a2_priority="high", profile=profile).cycle()
    assert normal.preemptions == ()  # b's jobs are normal: above the threshold 'low'
    same = _bwc([("b-low", 4, "low"), ("b-two", 2, "low")], a2_priority="low",
                profile=SchedulingProfile(borrow_within_cohort="normal")).cycle()
    assert same.preemptions == ()  # only classes lower than the job's own


def test_a_team_whose_only_borrowing_is_a_waiting_job_keeps_its_running_guaranteed_work() -> None:
    # hypothesis seed 19 (2000 examples, session 9), reduced: c (guaranteed 1) runs low c-low on its
    # 1 GPU; its high c-big (5 GPUs, borrowing) reclaims b's gang b-gang and waits for it. Before:
    # the GPUs nominated to c-big counted as c's usage, so c looked like a borrower and b's high
    # b-two (borrowing within the cohort) evicted c-low - a team's guaranteed, running work lent away.
    s = Scenario([make_node("n0", gpus=2), make_node("n1", gpus=7, model="H100-80GB")],
                 quota=quotas(Quota(team="a", guaranteed=3), Quota(team="b", guaranteed=0), Quota(team="c", guaranteed=1)),
                 profile=SchedulingProfile(min_runtime_s=0, borrow_within_cohort="normal"))
    first = s.submit(make_job("c-big", gpus=5, team="c", priority="high", submitted=2),
                     make_job("b-two", gpus=1, workers=2, team="b", priority="high", submitted=3),
                     make_job("a-three", gpus=3, team="a", priority="high", submitted=4),
                     make_job("c-low", gpus=1, team="c", priority="low", submitted=6),
                     make_job("b-gang", gpus=2, workers=2, team="b", submitted=9)).cycle()
    assert sorted(a.job_id for a in first.admits) == ["a-three", "b-gang", "c-low"]
    second = s.at(1).finish("a-three").cycle()
    assert [(p.job_id, p.for_job, p.kind) for p in second.preemptions] == [("b-gang", "c-big", "reclaim")]
    reasons = {p.job_id: p.reason for p in second.pending}
    assert reasons["b-two"].code == "WaitingForCapacity" and "c uses 6 GPUs: its whole guarantee of 1 and 5 borrowed" in reasons["b-two"].message
    assert s.state("c-low") == "running"
    third = s.at(2).cycle()
    assert sorted(a.job_id for a in third.admits) == ["b-two", "c-big"]
    assert s.evictions() == ["b-gang"]


def test_borrow_within_cohort_names_an_unknown_class() -> None:
    with pytest.raises(ValidationError) as info:
        SchedulingProfile(borrow_within_cohort="urgent")
    assert info.value.field == "borrow_within_cohort"
