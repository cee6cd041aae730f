"""A preemption plan places its job around the EASY reservation, as admission does.

Found by ``test_properties.py::test_invariants_hold_over_random_timelines`` (the second stored
example of session 17, /tmp/s17c/hyp-db-loop): team b's high j4 (4 GPUs on one node) held the
reservation on n1; b's normal gang j0 (2 x 2) was held back at 12:03 ("fits now but would delay j4"),
b's low j2 was backfilled off the reservation on n0 — and at 12:04, with nothing changed, j0 evicted
j2 and was nominated two of j4's reserved GPUs: a normal job delayed its team's high one through an
eviction admission refused it, and j2 (reclaimed once at 12:01) was evicted a second time for a job
that should not start there. The victim search now keeps off the reservation's free GPUs
(:func:`jupyter_sched.scheduling.admit.keep_off`), and the job's reason says why nothing was evicted;
so does the wait on spare GPUs of stopping jobs (the same inversion without an eviction).

A plan that serves a job within its team's guarantee keeps off only a reservation of a higher
class of its own team: guaranteed GPUs come back whatever another team's queue order (issue 16's
first invariant — a within-guarantee job waits no longer than the grace period plus one cycle while
another team borrows — which ``test_properties`` checks without reservations).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, Scenario, make_job, make_node, quotas, running

from jupyter_sched.model import Quota


def _lowest_own_backfilled() -> Scenario:
    """12:00: x's r holds n1's GPU 0 until 12:10; b's high h (4 GPUs on one node) reserves n1;
    b's normal gang n (2 x 2) would delay it; b's low l is backfilled on n0."""
    s = Scenario([make_node("n0", gpus=2), make_node("n1", gpus=4)])
    s.submit(running(make_job("r", gpus=1, team="x", time_limit_s=600), "n1", [0], started=0),
             make_job("h", gpus=4, team="b", priority="high", submitted=1),
             make_job("n", gpus=2, workers=2, team="b", submitted=2),
             make_job("l", gpus=2, team="b", priority="low", submitted=3))
    first = s.cycle()
    assert [(a.job_id, a.backfill) for a in first.admits] == [("l", True)]
    reasons = {p.job_id: p.reason for p in first.pending}
    assert reasons["n"].code == "Priority" and reasons["n"].details["reserved_for"] == "h"
    return s


def test_property_counterexample_6_a_normal_gang_does_not_evict_its_team_s_low_job_to_reach_gpus_reserved_for_its_high_job() -> None:
    s = _lowest_own_backfilled()
    second = s.at(1).cycle()  # nothing arrived, nothing ended
    assert second.preemptions == () and s.state("l") == "running"
    assert second.nominations == {}
    reason = {p.job_id: p.reason for p in second.pending}["n"]
    assert "no preemption: evicting l would let it start only on GPUs reserved for h" in reason.message
    assert reason.details["preemption_rule"] == {"rule": "reservation", "reserved_for": "h", "model": "A100-80GB",
                                                 "would_evict": ["l"]}
    s.at(10).finish("r")  # r's limit: h starts where it was promised, and l was never evicted
    third = s.cycle()
    assert [a.job_id for a in third.admits] == ["h"] and s.evictions() == []
    assert set(third.admits[0].allocation.all_gpu_uuids()) == {f"GPU-n1-{i}" for i in range(4)}


def test_a_job_sure_to_end_before_the_reservation_still_evicts_for_it() -> None:
    # the reservation is kept off only as admission keeps it: a job whose limit ends by h's start
    # (12:10) may use the reserved GPUs, so its plan may too
    s = Scenario([make_node("n0", gpus=2), make_node("n1", gpus=4)])
    s.submit(running(make_job("r", gpus=1, team="x", time_limit_s=600), "n1", [0], started=0),
             running(make_job("l", gpus=2, team="b", priority="low"), "n0", [0, 1], started=-10),
             make_job("h", gpus=4, team="b", priority="high", submitted=1),
             make_job("n", gpus=2, workers=2, team="b", submitted=2, time_limit_s=240))
    first = s.cycle()
    assert [(p.job_id, p.for_job) for p in first.preemptions] == [("l", "n")]


def test_spare_gpus_of_a_stopping_job_do_not_carry_a_job_onto_gpus_reserved_for_its_team_s_high_job() -> None:
    # v (low, 3 GPUs on n0) is stopping and its GPUs are nominated to nobody: spare. b's high h
    # (5 GPUs on one node: only n1 has that many) reserves n1 from r's end. b's normal gang j fits
    # on 2 spare GPUs of n0 plus 2 free ones of n1 — h's. Before, it took those and waited there
    # (no eviction, and h delayed for as long as j runs); now its spare wait places around the
    # reservation too, and it evicts b's low l to take the whole of n0 instead.
    s = Scenario([make_node("n0", gpus=4), make_node("n1", gpus=6)], stop_at_once=False)
    stopping = replace(running(make_job("v", gpus=3, team="b", priority="low"), "n0", [0, 1, 2], started=-10),
                       stopping_since=T0 - timedelta(seconds=10))
    s.submit(running(make_job("r", gpus=2, team="x", time_limit_s=600), "n1", [0, 1], started=0), stopping,
             running(make_job("l", gpus=1, team="b", priority="low"), "n0", [3], started=-10),
             make_job("h", gpus=5, team="b", priority="high", submitted=1),
             make_job("j", gpus=2, workers=2, team="b", submitted=2))
    first = s.cycle()
    assert set(first.nominations["j"].all_gpu_uuids()) == {f"GPU-n0-{i}" for i in range(4)}
    assert [(p.job_id, p.for_job) for p in first.preemptions] == [("l", "j")]


def test_a_within_guarantee_reclaim_is_not_held_back_by_another_team_s_reservation() -> None:
    # c's high h reserves n1 (c's own r ends at 12:10); a's gang jj, within a's guarantee, reclaims
    # b's borrowed bb and takes n0 plus two of n1's GPUs: a team's guaranteed GPUs come back
    # whatever another team's queue order (the exception keep_off makes, module doc)
    s = Scenario([make_node("n0", gpus=2), make_node("n1", gpus=4)],
                 quota=quotas(Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=0),
                              Quota(team="c", guaranteed=5)))
    s.submit(running(make_job("r", gpus=1, team="c", time_limit_s=600), "n1", [0], started=0),
             running(make_job("bb", gpus=2, team="b"), "n0", [0, 1], started=-10),
             make_job("h", gpus=4, team="c", priority="high", submitted=1),
             make_job("jj", gpus=2, workers=2, team="a", submitted=2))
    first = s.cycle()
    assert [(p.job_id, p.for_job, p.kind) for p in first.preemptions] == [("bb", "jj", "reclaim")]
    assert {p.job_id: p.reason.code for p in first.pending}["h"] == "WaitingForCapacity"
