"""New user 19, N14: a job blocked by its own team's quota got the ETA and blocker of the job ahead of
it (another team's), while the scheduler started it when its own team's work ended.

One node of 4 GPUs; ml guaranteed 2 (+1 borrowing), vision guaranteed 1 (no borrowing).
"""

from __future__ import annotations

from datetime import timedelta

from core_builders import T0, Scenario, make_job, make_node, quotas, running

from jupyter_sched.model import Quota

MIN = 60.0


def _n14(v2_limit_min: float) -> Scenario:
    q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=1), Quota(team="vision", guaranteed=1))
    sc = Scenario([make_node("n1", gpus=4)], quota=q)
    return sc.submit(
        running(make_job("fill", gpus=3, team="ml", time_limit_s=4 * MIN), "n1", [0, 1, 2], started=0),
        running(make_job("v1", team="vision", time_limit_s=1 * MIN), "n1", [3], started=0),
        make_job("m1", team="ml", time_limit_s=5 * MIN, submitted=0.1),
        make_job("v2low", team="vision", priority="low", time_limit_s=v2_limit_min * MIN, submitted=0.2))


def test_newuser19_n14_a_job_blocked_by_its_own_team_s_quota_gets_its_own_team_s_eta_and_blocker() -> None:
    sc = _n14(4)
    r = sc.at(0.5).cycle()
    v2 = next(p.reason for p in r.pending if p.job_id == "v2low")
    assert v2.eta == T0 + timedelta(minutes=1)  # v1's end frees vision's quota; fill's 3 GPUs cover m1 later
    assert v2.details["eta_waits_on"] == ["v1"]  # vision's own holder, not the head's blocker (fill)
    sc.at(1).finish("v1")  # v1 killed at its limit
    assert [a.job_id for a in sc.cycle().admits] == ["v2low"]  # the scheduler agrees


def test_newuser19_n14_control_a_short_limit_was_already_right() -> None:
    r = _n14(2).at(0.5).cycle()
    v2 = next(p.reason for p in r.pending if p.job_id == "v2low")
    assert v2.eta == T0 + timedelta(minutes=1) and v2.details["eta_waits_on"] == ["v1"]
