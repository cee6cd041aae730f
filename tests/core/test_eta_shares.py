"""New user 15, N7: the ETA projection packs GPU shares the way the placer packs them.

Embedded, one node of 4 GPUs, a lease holding the 4th: ``big2`` (3 GPUs, 10m limit) runs; pending
``waiter2`` (2 GPUs, 1 h), ``p1`` and ``p2`` (0.5 GPU each, no limit) and ``p3`` (0.5 GPU, 30m), all
of one team under ``gpu_sharing="team"``. When big2 ends, waiter2 takes two GPUs and the third
holds p1 and p2 (0.5 + 0.5) — they started 0.05 s apart — but the queue said p1 ``05:52`` and p2
``06:52``, after waiter2 ends: the projection gave each share a whole GPU."""

from __future__ import annotations

from datetime import timedelta

from core_builders import T0, Scenario, make_job, make_node, running, snapshot

from jupyter_sched.scheduling import SchedulingProfile, run_cycle

TEAM = SchedulingProfile(gpu_sharing="team")


def _queue(*extra: object) -> list:  # type: ignore[type-arg]
    lease = running(make_job("lease", user="nu", team="t"), "n1", [3], started=-5)
    big2 = running(make_job("big2", gpus=3, user="nu", team="t", time_limit_s=600), "n1", [0, 1, 2], started=0)
    return [lease, big2,
            make_job("waiter2", gpus=2, user="nu", team="t", time_limit_s=3600, submitted=0.1),
            make_job("p1", milli=500, user="nu", team="t", submitted=0.2),
            make_job("p2", milli=500, user="nu", team="t", submitted=0.3),
            make_job("p3", milli=500, user="nu", team="t", time_limit_s=1800, submitted=0.4), *extra]


def _etas(jobs: list, profile: SchedulingProfile = TEAM) -> dict:  # type: ignore[type-arg]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, now=T0 + timedelta(seconds=8)), profile)
    return {p.job_id: p.reason.eta for p in result.pending}


def test_newuser15_n7_two_shares_of_one_team_behind_one_freed_gpu_get_the_same_eta() -> None:
    etas = _etas(_queue())
    freed = T0 + timedelta(seconds=600)
    assert etas["waiter2"] == freed and etas["p1"] == freed, etas
    assert etas["p2"] == freed, etas  # packed beside p1 on the third GPU (was waiter2's end, an hour later)
    # p3 has no room on that GPU (p1 + p2 fill it) nor a free one: it waits for waiter2's GPUs
    assert etas["p3"] == freed + timedelta(seconds=3600), etas


def test_newuser15_n7_a_new_share_is_projected_beside_a_share_with_room_not_after_it_ends() -> None:
    """The dry run of the report: a 0.5-GPU job behind p3 is packed beside p3 (on waiter2's GPU once
    it frees), not after p3 *ends* (30 minutes later)."""
    etas = _etas(_queue(make_job("dry", milli=500, user="nu", team="t", time_limit_s=300, submitted=0.5)))
    assert etas["dry"] == etas["p3"] == T0 + timedelta(seconds=4200), etas


def test_newuser15_n7_shares_of_different_teams_are_not_packed_together() -> None:
    jobs = _queue()
    jobs[4] = make_job("p2", milli=500, user="eve", team="other", submitted=0.3)
    etas = _etas(jobs)
    # eve holds nothing and no quota is configured: p2 goes first (red team 15, R4) and takes the
    # freed third GPU for itself; p1 (team t) is not packed beside it: it waits for waiter2's end
    assert etas["p2"] == T0 + timedelta(seconds=600), etas
    assert etas["p1"] == T0 + timedelta(seconds=4200), etas


def test_newuser15_n7_a_share_joins_a_running_share_when_its_room_frees() -> None:
    """GPU 0 holds two running 0.5 shares, ``s1`` ending in 2 min and ``s2`` in 20; the other GPU is
    busy for an hour. A pending 0.5 share starts when s1 ends (the GPU's half frees then), not
    when the last holder of the GPU ends."""
    jobs = [running(make_job("s1", milli=500, user="nu", team="t", time_limit_s=180), "n1", [0], started=-1,
                    milli=500),
            running(make_job("s2", milli=500, user="nu", team="t", time_limit_s=1260), "n1", [0], started=-1,
                    milli=500),
            running(make_job("w", user="nu", team="t", time_limit_s=3660), "n1", [1], started=-1),
            make_job("p", milli=500, user="nu", team="t", submitted=-0.5)]
    result = run_cycle(snapshot([make_node("n1", gpus=2)], jobs), TEAM)
    reason = next(p.reason for p in result.pending if p.job_id == "p")
    assert reason.eta == T0 + timedelta(seconds=120), reason
    assert reason.details["eta_waits_on"] == ["s1"]


def test_newuser15_n7_the_projected_start_is_the_start_the_scheduler_then_gives() -> None:
    """At big2's end the cycle starts waiter2, p1 and p2 together, as projected."""
    sc = Scenario([make_node("n1", gpus=4)], profile=TEAM)
    sc.submit(*_queue())
    sc.at(0.1).cycle()
    sc.finish("big2").at(10).cycle()
    assert [sc.state(j) for j in ("waiter2", "p1", "p2", "p3")] == ["running", "running", "running", "pending"]
