"""A job admitted off (part of) the GPUs nominated to it leaves them to the jobs passed over for them.

Found by ``test_properties.py::test_invariants_hold_over_random_timelines`` (a stored example): team b's
5-GPU high job j1 was passed over at 12:03 because two of n1's GPUs were nominated to team a's j3; j3 was
then placed on n0, and b's *low* job j2, visited later, took the two GPUs nominated to j3 — so at 12:04 j1
evicted j2 for them: j2's second eviction with nothing changed (a loop). GPUs a nomination leaves unused go
first to the jobs passed over earlier in the cycle, as for a dropped nomination (:mod:`.takeover`).
"""

from __future__ import annotations

from core_builders import Scenario, make_job, make_node

from jupyter_sched.model import Quota, QuotaSet


def test_gpus_a_nominated_job_leaves_unused_go_first_to_the_job_passed_over_for_them() -> None:
    quota = QuotaSet(quotas=(Quota(team="a", guaranteed=4, borrowing_limit=None),
                             Quota(team="b", guaranteed=0, borrowing_limit=None)))
    s = Scenario([make_node("n0", gpus=4, unhealthy=[0]), make_node("n1", gpus=6, unhealthy=[0])], quota=quota)
    s.submit(make_job("j0", gpus=1, team="a", priority="high", user="u1"),
             make_job("j1", gpus=5, team="b", priority="high", user="u1", submitted=1),
             make_job("j2", gpus=2, team="b", priority="low", user="u1", submitted=2)).cycle()
    assert {s.state(j) for j in ("j0", "j1", "j2")} == {"running"}
    s.at(1).submit(make_job("j4", gpus=1, team="a", priority="high", user="u1", submitted=4)).cycle()
    s.at(2).submit(make_job("j3", gpus=2, team="a", priority="high", user="u1", submitted=3)).cycle()
    s.at(3).finish("j4")
    third = s.cycle()
    s.at(4).cycle()
    assert s.evictions().count("j2") <= 1, (s.evictions(), [(p.job_id, p.reason.message) for p in third.pending])
    assert s.state("j1") == "running", [(p.job_id, p.reason.message) for r in s.results for p in r.pending]
