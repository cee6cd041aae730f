"""newuser42 N5: a second reclaim while the first one's victims stop must not take work within the
lender's guarantee.

ml 2+2, cv 2+2, 4 GPUs: m1-m4 of ml run (2 of them borrowed); cv submits c2 (2 GPUs) then c1 (1 GPU).
The first cycle reclaims m3, m4 for c2 (right). Later cycles inside the grace period counted m3/m4 as
ml's still and c2's held GPUs as nobody's (its nomination was charged only for GPUs already free), so
ml looked "2 borrowed" and cv "0 of 2 used" again, and c1 — which can only *borrow* once m3/m4 go —
reclaimed m2 (then ml reclaimed m3 back: two jobs' work lost for nothing). Victims stop only when the
test says so (``stop_at_once=False``): the clock stays inside the 60-s grace period.
"""

from __future__ import annotations

import os

from core_builders import Scenario, make_job, make_node, quotas, running
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_sched.model import Quota
from jupyter_sched.scheduling import SchedulingProfile


def _teams(gpus: int, ml: int, cv: int, ml_jobs: int) -> Scenario:
    q = quotas(Quota(team="ml", guaranteed=ml, borrowing_limit=gpus), Quota(team="cv", guaranteed=cv, borrowing_limit=gpus))
    sc = Scenario([make_node("n1", gpus=gpus)], quota=q, profile=SchedulingProfile(grace_s=60), stop_at_once=False)
    sc.submit(*(running(make_job(f"m{i + 1}", team="ml", user="mo", submitted=-30 + i), "n1", [i], started=-20 + i)
                for i in range(ml_jobs)))
    return sc


def _running(sc: Scenario, team: str) -> set[str]:
    """The team's jobs running and not asked to stop."""
    return {j.id for j in sc.snap.jobs
            if j.spec.team == team and j.state.value == "running" and j.stopping_since is None}


def test_newuser42_N5_second_reclaim_in_the_grace_period_takes_nothing_within_the_lenders_guarantee() -> None:
    sc = _teams(4, 2, 2, 4)
    first = sc.at(0).submit(make_job("c2", gpus=2, team="cv", user="cy"),
                            make_job("c1", team="cv", user="cy", submitted=0.01)).cycle()
    assert sorted((p.job_id, p.for_job, p.kind) for p in first.preemptions) == [
        ("m3", "c2", "reclaim"), ("m4", "c2", "reclaim")]
    for second in (0.05, 0.5):  # later cycles, inside m3/m4's grace period (60 s)
        result = sc.at(second).cycle()
        assert result.preemptions == (), f"at {second} min: {[(p.job_id, p.for_job) for p in result.preemptions]}"
        reasons = {p.job_id: p.reason for p in result.pending}
        c1 = reasons["c1"]
        assert c1.code == "WaitingForCapacity"
        assert "cv already uses its 2 guaranteed GPUs" in c1.message
        assert "may only borrow" in c1.message and "nothing is reclaimed for borrowing" in c1.message
        assert reasons["c2"].code == "WaitingForPreemption"
        assert _running(sc, "ml") == {"m1", "m2"}  # m2 untouched: ml keeps its guarantee
    # the victims exit: c2 starts on its held GPUs; nothing more is reclaimed, ml keeps m1, m2
    after = sc.at(0.8).stopped("m3", "m4").cycle()
    assert [a.job_id for a in after.admits] == ["c2"] and after.preemptions == ()
    for minute in (1, 2, 5):
        assert sc.at(minute).cycle().preemptions == ()
    assert sorted(sc.evictions()) == ["m3", "m4"]
    assert _running(sc, "ml") == {"m1", "m2"} and _running(sc, "cv") == {"c2"}
    assert sc.state("c1") == "pending" and sc.state("m3") == "pending" and sc.state("m4") == "pending"


def test_newuser42_N5_the_lenders_stopping_victims_count_as_gone_for_a_second_within_guarantee_reclaim() -> None:
    # ml 2 guaranteed runs 3 (1 borrowed); cv 2 guaranteed: c1 reclaims m3; then c1b (within cv's guarantee,
    # 1 + 1 held for c1) must not take m2 while m3 stops: once m3 goes ml holds exactly its guarantee
    sc = _teams(4, 2, 2, 3)
    sc.submit(running(make_job("x", team="cv", user="cy"), "n1", [3]))  # the 4th GPU: cv's own, within guarantee
    first = sc.at(0).submit(make_job("c1", team="cv", user="cy")).cycle()
    assert [(p.job_id, p.for_job) for p in first.preemptions] == [("m3", "c1")]
    second = sc.at(0.1).submit(make_job("c1b", team="cv", user="cy", submitted=0.1)).cycle()
    assert second.preemptions == ()
    assert _running(sc, "ml") == {"m1", "m2"}
    c1b = next(p.reason for p in second.pending if p.job_id == "c1b")
    assert c1b.code == "WaitingForCapacity" and "nothing is reclaimed for borrowing" in c1b.message


# derandomized in CI (as test_properties.py): JS_PROPERTY_EXAMPLES=N hunts beyond the 60, at random
@settings(max_examples=int(os.environ.get("JS_PROPERTY_EXAMPLES", "60")), deadline=None,
          derandomize="JS_PROPERTY_EXAMPLES" not in os.environ, suppress_health_check=[HealthCheck.too_slow])
@given(gpus=st.integers(2, 6), ml=st.integers(0, 4), cv=st.integers(1, 4), ml_jobs=st.integers(1, 6),
       asks=st.lists(st.integers(1, 3), min_size=1, max_size=4), cycles=st.integers(1, 3))
def test_newuser42_N5_property_reclaims_in_a_grace_period_never_take_a_lender_below_its_guarantee(
        gpus: int, ml: int, cv: int, ml_jobs: int, asks: list[int], cycles: int) -> None:
    """Whatever cv asks for, one job a cycle while every victim is still stopping: ml (1-GPU jobs) keeps
    running at least what it held up to its guarantee, and cv's reclaims stop no more of ml's GPUs than
    cv's jobs reclaiming them ask for within cv's guarantee."""
    ml_jobs = min(ml_jobs, gpus)
    ml, cv = min(ml, gpus), min(cv, gpus)
    sc = _teams(gpus, ml, cv, ml_jobs)
    keep = min(ml, ml_jobs)
    for i, ask in enumerate(asks):
        sc.at(i * 0.1).submit(make_job(f"c{i}", gpus=ask, team="cv", user="cy", submitted=i * 0.1))
        for k in range(cycles):
            sc.at(i * 0.1 + k * 0.01).cycle()
            assert len(_running(sc, "ml")) >= keep, (sc.evictions(), _running(sc, "ml"))
    reclaimers = {p.for_job for r in sc.results for p in r.preemptions}
    asked = sum(sc.job(j).spec.resources.gpus for j in reclaimers)
    assert asked <= cv  # only work within cv's guarantee reclaims
    assert len(sc.evictions()) <= asked
