"""Handed cases 001, 002, 004, 005, 006, 007 and 010 as named tests with their right values."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from core_builders import Scenario, make_job, make_node, quotas, running, snapshot

from jupyter_sched.errors import TimestampError
from jupyter_sched.model import Quota, Taint, parse_utc
from jupyter_sched.placement.placer import PlacementConfig
from jupyter_sched.queues.windows import TimeWindow, intervals, is_open
from jupyter_sched.scheduling import SchedulingProfile, run_cycle


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


# ---------------------------------------------------------------------------------------- 001
def _cohort_ab(profile: SchedulingProfile | None = None) -> Scenario:
    q = quotas(Quota(team="team-a", guaranteed=2), Quota(team="team-b", guaranteed=2))
    return Scenario([make_node("n1", gpus=4)], quota=q, profile=profile)


def test_case_001_cohort_never_over_admits_and_b1_pends_without_useless_preemption() -> None:
    sc = _cohort_ab()
    r0 = sc.at(0).submit(make_job("a1", gpus=2, team="team-a", submitted=0)).cycle()
    assert [a.job_id for a in r0.admits] == ["a1"] and r0.admits[0].borrowed == 0
    r1 = sc.at(1).submit(make_job("a2", gpus=2, team="team-a", submitted=1)).cycle()
    assert [a.job_id for a in r1.admits] == ["a2"] and r1.admits[0].borrowed == 2
    r5 = sc.at(5).submit(make_job("b1", gpus=4, team="team-b", submitted=5)).cycle()
    assert r5.admits == () and r5.preemptions == ()  # preempting a2 frees 2; b1 needs 4
    reason = next(p.reason for p in r5.pending if p.job_id == "b1")
    assert reason.code == "WaitingForCapacity"
    assert "needs 4" in reason.message and "0 free" in reason.message
    assert ("team-b is guaranteed 2 GPUs (2 lent to team-a, reclaimable) but this job needs 4, above the guarantee, "
            "so nothing is reclaimed for it; it can start when team-a's jobs free 2 GPUs (team-a uses 4 GPUs: its "
            "whole guarantee of 2 and 2 borrowed)") in reason.message  # the case's "cohort free 0" was jargon (new user 8, N9)
    assert sc.used_gpus() <= 4
    for _ in range(3):  # later cycles change nothing
        again = sc.cycle()
        assert again.admits == () and again.preemptions == ()
        assert sc.used_gpus() <= 4


def test_case_001_variant_b_borrower_preempted_exactly_once_and_b2_admitted() -> None:
    # The case's policy block is Kueue's (no minimum runtime): a1 ran 5 minutes, a2 4, both young
    # enough for the default 5-minute protection to spare a2 and pick a1 instead.
    sc = _cohort_ab(SchedulingProfile(min_runtime_s=0))
    sc.at(0).submit(make_job("a1", gpus=2, team="team-a", submitted=0)).cycle()
    sc.at(1).submit(make_job("a2", gpus=2, team="team-a", submitted=1)).cycle()
    r5 = sc.at(5).submit(make_job("b2", gpus=2, team="team-b", submitted=5)).cycle()
    assert [(p.job_id, p.for_job, p.kind) for p in r5.preemptions] == [("a2", "b2", "reclaim")]
    assert r5.preemptions[0].reason == "preempted to return borrowed quota to team-b"
    assert "b2" in r5.nominations
    (audit,) = [a for a in r5.audit if a.action == "reclaim"]
    assert (audit.job_id, audit.details["for_job"], audit.details["victim_team"]) == ("a2", "b2", "team-a")
    nxt = sc.cycle()
    assert [a.job_id for a in nxt.admits] == ["b2"] and nxt.preemptions == ()
    for _ in range(3):
        later = sc.cycle()
        assert later.preemptions == () and later.admits == ()
    assert (sc.state("a1"), sc.state("b2"), sc.state("a2")) == ("running", "running", "pending")
    assert sc.job("a2").reason is not None
    assert sum(len(r.preemptions) for r in sc.results) == 1
    assert sc.used_gpus() <= 4


def test_case_001_two_borrowing_admissions_in_one_cycle_never_over_admit() -> None:
    sc = _cohort_ab()
    sc.at(0).submit(make_job("a1", gpus=2, team="team-a")).cycle()
    r = sc.at(5).submit(make_job("b1", gpus=4, team="team-b", submitted=5),
                        make_job("a3", gpus=2, team="team-a", submitted=5),
                        make_job("b3", gpus=2, team="team-b", submitted=5)).cycle()
    admitted = {a.job_id for a in r.admits}
    assert sum(sc.job(j).spec.resources.gpus for j in admitted) == 2
    assert sc.used_gpus() == 4


# ---------------------------------------------------------------------------------------- 002
def test_case_002_head_of_line_job_does_not_block_other_team_from_borrowing() -> None:
    q = quotas(Quota(team="guaranteed", guaranteed=2), Quota(team="besteffort", guaranteed=0))
    sc = Scenario([make_node("n1", gpus=2)], quota=q)
    assert [a.job_id for a in sc.at(0).submit(make_job("G1", team="guaranteed")).cycle().admits] == ["G1"]
    r1 = sc.at(1).submit(make_job("G2", gpus=2, team="guaranteed", submitted=1)).cycle()
    g2 = next(p.reason for p in r1.pending if p.job_id == "G2")
    assert g2.code == "WaitingForCapacity" and "needs 2" in g2.message and "1 free" in g2.message
    assert g2.eta is None and "G1" in g2.eta_reason  # G1 has no time limit: honest unknown
    r2 = sc.at(2).submit(make_job("BE1", team="besteffort", submitted=2)).cycle()
    assert [(a.job_id, a.borrowed) for a in r2.admits] == [("BE1", 1.0)]
    r30 = sc.at(30).finish("G1").cycle()
    assert [(p.job_id, p.for_job, p.kind) for p in r30.preemptions] == [("BE1", "G2", "reclaim")]
    assert sc.job("BE1").reason.message == "preempted to return borrowed quota to guaranteed"  # type: ignore[union-attr]
    final = sc.cycle()
    assert [a.job_id for a in final.admits] == ["G2"]
    assert sc.state("G2") == "running" and sc.state("BE1") == "pending"
    assert "requeued after preemption by G2" in sc.job("BE1").reason.message  # type: ignore[union-attr]
    assert len(sc.job("G2").allocation.gpu_uuids) == 2  # type: ignore[union-attr]


def test_case_002_fifo_scope_is_per_gpu_model() -> None:
    nodes = [make_node("a", gpus=2, model="A100-80GB"), make_node("h", gpus=2, model="H100-80GB")]
    jobs = [running(make_job("r", models=["A100"]), "a", [0]),
            make_job("big", gpus=2, models=["A100"], submitted=0),
            make_job("small-h", gpus=1, models=["H100"], submitted=1)]
    result = run_cycle(snapshot(nodes, jobs))
    assert [a.job_id for a in result.admits] == ["small-h"]
    assert next(p.reason for p in result.pending if p.job_id == "big").code == "WaitingForCapacity"


# ---------------------------------------------------------------------------------------- 004
def test_case_004_borrower_reclaimed_once_below_its_guarantee_and_never_loops() -> None:
    # q1 borrows 1 GPU with a 4-GPU job; q2's p3 fits its guarantee only if p1 goes. The once
    # accepted alternative (keep p1 because q1 would fall below its guarantee) is withdrawn.
    q = quotas(Quota(team="q1", guaranteed=3), Quota(team="q2", guaranteed=5))
    sc = Scenario([make_node("n1", gpus=8)], quota=q)
    sc.submit(running(make_job("p1", gpus=4, team="q1"), "n1", [0, 1, 2, 3]),
              running(make_job("p2", gpus=1, team="q2"), "n1", [4]),
              make_job("p3", gpus=4, team="q2", submitted=0))
    for minute in range(30):
        sc.at(minute).cycle()
    evictions = [(p.job_id, p.for_job, p.kind) for r in sc.results for p in r.preemptions]
    assert evictions == [("p1", "p3", "reclaim")]  # exactly once, no evict -> re-admit -> evict
    assert "p3" in sc.results[0].nominations and [a.job_id for a in sc.results[1].admits] == ["p3"]
    assert (sc.state("p1"), sc.state("p2"), sc.state("p3")) == ("pending", "running", "running")
    reason = sc.job("p1").reason
    assert reason is not None and reason.code == "WaitingForCapacity"
    assert "needs 4 A100-80GB GPUs, 3 free" in reason.message
    assert "q1 is guaranteed 3 GPUs but this job needs 4, above the guarantee, so nothing is reclaimed for it" \
        in reason.message
    assert "it can start when q2's jobs free 1 GPU (q2 uses its whole guarantee of 5 GPUs)" in reason.message
    assert "requeued after preemption by p3" in reason.message


def test_case_004_freed_gpus_are_nominated_so_the_victim_cannot_retake_them() -> None:
    # q1 borrows 2 beyond its guarantee of 2 with two jobs; q2 reclaims within its guarantee.
    q = quotas(Quota(team="q1", guaranteed=2), Quota(team="q2", guaranteed=6))
    sc = Scenario([make_node("n1", gpus=8)], quota=q)
    sc.submit(running(make_job("p0", gpus=2, team="q1"), "n1", [0, 1], started=-60),
              running(make_job("p1", gpus=2, team="q1"), "n1", [2, 3], started=-30),
              running(make_job("p2", gpus=3, team="q2"), "n1", [4, 5, 6]),
              make_job("p3", gpus=3, team="q2", submitted=0))
    evictions = 0
    for minute in range(30):
        r = sc.at(minute).cycle()
        evictions += len(r.preemptions)
    assert evictions == 1
    assert sc.state("p3") == "running" and sc.state("p1") == "pending" and sc.state("p0") == "running"
    assert sc.results[0].preemptions[0].job_id == "p1"
    assert [a.job_id for a in sc.results[1].admits] == ["p3"]  # first tick after the eviction


# ---------------------------------------------------------------------------------------- 005
def test_case_005_pending_reason_names_resource_flavor_and_numbers() -> None:
    nodes = [make_node("a100-1", gpus=2, model="A100-80GB"),
             make_node("a100-2", gpus=4, model="A100-80GB"),
             make_node("h100-1", gpus=8, model="H100-80GB", taints=[Taint("dedicated", "inference")])]
    q = quotas(Quota(team="team-ml", gpu_model="A100-80GB", guaranteed=8, borrowing_limit=0),
               Quota(team="team-ml", gpu_model="H100-80GB", guaranteed=0, borrowing_limit=0))
    busy = [running(make_job("u1", gpus=4, team="team-ml", models=["A100"]), "a100-2", [0, 1, 2, 3]),
            running(make_job("u2", gpus=2, team="other", models=["A100"]), "a100-1", [0, 1])]
    # team-ml uses 6 of its 8 A100: 4 here plus 2 on a third node.
    nodes.append(make_node("a100-3", gpus=2, model="A100-80GB"))
    busy.append(running(make_job("u3", gpus=2, team="team-ml", models=["A100"]), "a100-3", [0, 1]))
    busy[1] = running(make_job("u2", gpus=0, team="other"), "a100-1", [])
    job = make_job("train-42", gpus=4, team="team-ml", user="alice", models=["A100-80GB", "H100-80GB"],
                   cpu_millis=8000, memory_mib=65536)
    result = run_cycle(snapshot(nodes, [*busy, job], quota=q))
    (pend,) = [p for p in result.pending if p.job_id == "train-42"]
    reason = pend.reason
    assert reason.code == "ExceedsQuota"
    entries = [dict(e) for e in reason.per_flavor]
    assert {"flavor": "A100-80GB", "code": "InsufficientQuota", "resource": "nvidia.com/gpu",
            "requested": 4, "quota": 8, "used": 6, "available": 2}.items() <= entries[0].items()
    assert {"flavor": "H100-80GB", "code": "NoQuota", "resource": "nvidia.com/gpu", "quota": 0}.items() \
        <= entries[1].items()
    assert {"flavor": "H100-80GB", "code": "UntoleratedTaint",
            "taint": "dedicated=inference:NoSchedule"}.items() <= entries[2].items()
    assert len(entries) == 3  # CPU and memory fit: not listed
    assert f"Pending: {reason.message}" == ("Pending: team-ml has 2 of 8 A100-80GB GPUs free (6 in use), "
                                           "job needs 4. H100: team has no quota; nodes also tainted "
                                           "dedicated=inference.")
    assert "does not fit" not in reason.message and reason.unblock and reason.position == 1


# ---------------------------------------------------------------------------------------- 006
def test_case_006_fragmented_reason_lists_free_gpus_per_node() -> None:
    nodes = [make_node(f"node{i}", gpus=8) for i in (1, 2, 3)]
    jobs = [running(make_job("j1", gpus=4), "node1", [0, 1, 2, 3]),
            running(make_job("j2", gpus=2, checkpointable=True), "node1", [4, 5]),
            running(make_job("j3", gpus=1, checkpointable=True), "node1", [6]),
            running(make_job("j4", gpus=4), "node2", [0, 1, 2, 3]),
            running(make_job("j5", gpus=2), "node2", [4, 5]),
            running(make_job("j6", gpus=4), "node3", [0, 1, 2, 3]),
            running(make_job("j7", gpus=2), "node3", [4, 5]),
            running(make_job("j8", gpus=1), "node3", [6]),
            make_job("new4", gpus=4)]
    result = run_cycle(snapshot(nodes, jobs))
    assert result.admits == () and result.preemptions == ()
    reason = result.pending[0].reason
    assert reason.code == "Fragmented"
    assert reason.message == "4 GPUs free cluster-wide but at most 2 on one node (node1:1, node2:2, node3:1)."
    assert reason.details["per_node"] == {"node1": 1, "node2": 2, "node3": 1}


def test_case_006_subcase_b_binpack_keeps_a_whole_node_for_the_big_job() -> None:
    sc = Scenario([make_node("a", gpus=8), make_node("b", gpus=8)])
    for i, (name, gpus) in enumerate([("x1", 4), ("x2", 2), ("x3", 1), ("x4", 1), ("big", 8)]):
        sc.at(i).submit(make_job(name, gpus=gpus, submitted=i)).cycle()
    assert {j: sc.job(j).allocation.node for j in ("x1", "x2", "x3", "x4")} == dict.fromkeys(  # type: ignore[union-attr]
        ("x1", "x2", "x3", "x4"), "a")
    assert sc.state("big") == "running" and sc.job("big").allocation.node == "b"  # type: ignore[union-attr]


def test_case_006_spread_policy_ends_with_big_job_unschedulable() -> None:
    profile = SchedulingProfile(placement=PlacementConfig(scores={"spread": 1.0}))
    sc = Scenario([make_node("a", gpus=8), make_node("b", gpus=8)], profile=profile)
    for i, (name, gpus) in enumerate([("x1", 4), ("x2", 2), ("x3", 1), ("x4", 1), ("big", 8)]):
        sc.at(i).submit(make_job(name, gpus=gpus, submitted=i)).cycle()
    assert sc.state("big") == "pending"
    assert sc.job("big").reason.code == "Fragmented"  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------- 007
NODE_A_PAIRS = [(1,), (0,), (3,), (2,), (5,), (4,), (7,), (6,)]
NODE_B_PAIRS = [(2,), (3,), (0,), (1,), (5,), (4,), (7,), (6,)]


@pytest.mark.parametrize(("peers", "want"), [
    pytest.param(NODE_A_PAIRS, {"s1": [0], "s2": [1], "s3": [2], "s4": [3], "d1": [4, 5], "d2": [6, 7]},
                 id="node A (adjacent pairs): singles fill pairs 0-1 and 2-3, doubles get NVLink pairs"),
    pytest.param(NODE_B_PAIRS, {"s1": [0], "s2": [2], "s3": [1], "s4": [3], "d1": [4, 5], "d2": [6, 7]},
                 id="node B (pairs 0-2, 1-3): singles fill broken pairs first, doubles get NVLink pairs"),
])
def test_case_007_single_gpu_jobs_fill_broken_nvlink_pairs(peers: list[tuple[int, ...]],
                                                           want: dict[str, list[int]]) -> None:
    sc = Scenario([make_node("n", gpus=8, nvlink=peers)])
    for i, (name, gpus) in enumerate([("s1", 1), ("s2", 1), ("s3", 1), ("s4", 1), ("d1", 2), ("d2", 2)]):
        sc.at(i).submit(make_job(name, gpus=gpus, submitted=i)).cycle()
    got = {name: sorted(int(u.rsplit("-", 1)[1]) for u in sc.job(name).allocation.gpu_uuids)  # type: ignore[union-attr]
           for name in want}
    assert got == want
    for d in ("d1", "d2"):
        a, b = got[d]
        assert (b,) == peers[a]  # an NVLink pair, never SYS


# ---------------------------------------------------------------------------------------- 010
NIGHT_BORROW = TimeWindow(name="night-borrow", start="20:00", end="06:00", tz="Europe/Berlin",
                          teams=("team-cv",), effect="borrow")
OPS_FREEZE = TimeWindow(name="ops-freeze", start="19:46", duration_s=1800)


@pytest.mark.parametrize(("day", "want"), [
    pytest.param("2025-03-29", ("2025-03-29T19:00Z", "2025-03-30T04:00Z", 9), id="DST starts: 19:00Z-04:00Z (9 h)"),
    pytest.param("2025-03-30", ("2025-03-30T18:00Z", "2025-03-31T04:00Z", 10), id="summer: 18:00Z-04:00Z (10 h)"),
    pytest.param("2025-10-25", ("2025-10-25T18:00Z", "2025-10-26T05:00Z", 11), id="DST ends: 18:00Z-05:00Z (11 h)"),
    pytest.param("2025-10-26", ("2025-10-26T19:00Z", "2025-10-27T05:00Z", 10), id="winter: 19:00Z-05:00Z (10 h)"),
])
def test_case_010_night_borrow_window_intervals_follow_berlin_dst(day: str, want: tuple[str, str, int]) -> None:
    start = _utc(f"{day}T12:00:00Z")
    lo, hi = intervals(NIGHT_BORROW, start, start.replace(hour=23), "UTC")[-1]
    assert (lo, hi) == (_utc(want[0].replace("Z", ":00Z")), _utc(want[1].replace("Z", ":00Z")))
    assert (hi - lo).total_seconds() == want[2] * 3600


def test_case_010_window_without_zone_uses_scheduler_zone_not_host_zone() -> None:
    lo, hi = intervals(OPS_FREEZE, _utc("2025-01-15T00:00:00Z"), _utc("2025-01-15T23:59:00Z"), "UTC")[0]
    assert lo == _utc("2025-01-15T19:46:00Z") and (hi - lo).total_seconds() == 1800
    assert not is_open(OPS_FREEZE, _utc("2025-01-16T00:46:00Z"), "UTC")  # 19:46 New York would be 00:46Z


def test_case_010_naive_timestamp_rejected_and_aware_ones_are_the_same_instant() -> None:
    assert parse_utc("2025-03-30T04:30:00Z", field="submit_at") == parse_utc("2025-03-30T06:30:00+02:00",
                                                                               field="submit_at")
    with pytest.raises(TimestampError, match=r"submit_at must include a UTC offset \(e.g. 2025-03-30T06:30:00Z\)"):
        parse_utc("2025-03-30T06:30:00", field="submit_at")


def test_case_010_borrowing_only_inside_the_night_window() -> None:
    q = quotas(Quota(team="team-cv", guaranteed=0), Quota(team="team-x", guaranteed=2))
    profile = SchedulingProfile(windows=(NIGHT_BORROW,))
    job = make_job("cv1", team="team-cv")
    day = run_cycle(snapshot([make_node("n", gpus=2)], [job], quota=q, now=_utc("2025-03-30T12:00:00Z")), profile)
    reason = day.pending[0].reason
    assert reason.code == "OutsideTimeWindow" and reason.eta == _utc("2025-03-30T18:00:00Z")
    night = run_cycle(snapshot([make_node("n", gpus=2)], [job], quota=q, now=_utc("2025-03-30T19:00:00Z")), profile)
    assert [a.job_id for a in night.admits] == ["cv1"]


def test_case_006_migration_plan_moves_two_checkpointable_jobs_then_new4_runs_on_node1() -> None:
    profile = SchedulingProfile(defragment=True)
    sc = Scenario([make_node(f"node{i}", gpus=8) for i in (1, 2, 3)], profile=profile)
    sc.submit(running(make_job("j1", gpus=4), "node1", [0, 1, 2, 3]),
              running(make_job("j2", gpus=2, checkpointable=True), "node1", [4, 5]),
              running(make_job("j3", gpus=1, checkpointable=True), "node1", [6]),
              running(make_job("j4", gpus=4), "node2", [0, 1, 2, 3]),
              running(make_job("j5", gpus=2), "node2", [4, 5]),
              running(make_job("j6", gpus=4), "node3", [0, 1, 2, 3]),
              running(make_job("j7", gpus=2), "node3", [4, 5]),
              running(make_job("j8", gpus=1), "node3", [6]),
              make_job("new4", gpus=4))
    first = sc.cycle()
    assert sorted((p.job_id, p.kind, p.checkpoint_signal) for p in first.preemptions) == [
        ("j2", "migrate", True), ("j3", "migrate", True)]
    assert first.nominations["new4"].node == "node1"
    moves = {a.job_id: (a.details["from_node"], a.details["to_node"]) for a in first.audit if a.action == "preempt"}
    assert moves == {"j2": ("node1", "node2"), "j3": ("node1", "node3")}
    second = sc.cycle()
    placed = {a.job_id: a.allocation.node for a in second.admits}
    assert placed == {"new4": "node1", "j2": "node2", "j3": "node3"}
    assert sum(len(r.preemptions) for r in sc.results) == 2


def test_case_006_without_migration_nothing_is_touched() -> None:
    sc = Scenario([make_node(f"node{i}", gpus=8) for i in (1, 2)])
    sc.submit(running(make_job("j1", gpus=6, checkpointable=True), "node1", list(range(6))),
              running(make_job("j2", gpus=6, checkpointable=True), "node2", list(range(6))),
              make_job("new4", gpus=4))
    result = sc.cycle()
    assert result.preemptions == () and result.pending[0].reason.code == "Fragmented"
