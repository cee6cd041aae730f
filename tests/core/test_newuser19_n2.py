"""New user 19, N2: a reclaim spared a borrowing team's young ``low`` jobs and took its ``normal`` one,
which, requeued, preempted those same ``low`` jobs at once: 3 evictions for 2 GPUs.

DESIGN.md *Reclaim* (lead decision, session 19): within a victim team, class order comes before the
minimum-runtime protection — a plan never evicts a job of a class while the same team runs
lower-class work the plan could take instead, since that victim, requeued, would preempt the
lower-class work anyway. Protection still orders victims within a class and across teams.

One node of 4 GPUs; ml guaranteed 2 (+1), vision 1; team ``default`` has no quota line (borrows all it holds).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_builders import Scenario, make_job, make_node, quotas, running

from jupyter_sched.model import Job, Quota


def _restarted(job: Job) -> Job:
    """A job that runs again after an earlier eviction (its ``preempted_by`` set): another team may
    not evict it before the minimum runtime (red team 15 R13) — unless its own team's higher
    class would (this finding)."""
    return replace(job, preempted_by="earlier")


def _cluster(extra: tuple[Job, ...] = ()) -> Scenario:
    q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=1), Quota(team="vision", guaranteed=1))
    sc = Scenario([make_node("n1", gpus=4)], quota=q)
    return sc.submit(*extra)


def test_newuser19_n2_reclaim_takes_the_young_low_jobs_not_the_normal_job_that_would_preempt_them() -> None:
    sc = _cluster((
        _restarted(running(make_job("low1", team="default", priority="low"), "n1", [0], started=-1)),
        _restarted(running(make_job("low2", team="default", priority="low"), "n1", [1], started=-1)),
        running(make_job("hi-normal", gpus=2, team="default"), "n1", [2, 3], started=-2.5),
        make_job("p1", team="ml"), make_job("p2", team="ml")))
    first = sc.cycle()
    assert sorted((p.job_id, p.kind) for p in first.preemptions) == [("low1", "reclaim"), ("low2", "reclaim")]
    for minute in range(1, 6):
        sc.at(minute).cycle()
    assert sorted(sc.evictions()) == ["low1", "low2"]  # 2 evictions for 2 GPUs, never 3
    assert sc.state("hi-normal") == "running"
    assert sc.state("p1") == "running" and sc.state("p2") == "running"


@pytest.mark.parametrize("young_low", [True, False], ids=["young low jobs restarted after an eviction", "young low jobs never evicted"])
def test_newuser19_n2_with_two_victim_teams_class_order_within_a_team_and_protection_across_teams(young_low: bool) -> None:
    # team default runs a normal job and a young low job; team vision borrows too (guaranteed 1,
    # holds 2: an old low job). p1 (ml, within its guarantee) needs 1 GPU: vision's old low job
    # goes (protection orders across teams); p2's GPU then comes from default's young low job,
    # never its normal job (that, requeued, would preempt the low job anyway).
    low = running(make_job("d-low", team="default", priority="low"), "n1", [0], started=-1)
    sc = _cluster((
        _restarted(low) if young_low else low,
        running(make_job("d-normal", team="default"), "n1", [1], started=-30),
        running(make_job("v-low", team="vision", priority="low"), "n1", [2], started=-30),
        running(make_job("v-normal", team="vision"), "n1", [3], started=-30),
        make_job("p1", team="ml"), make_job("p2", team="ml")))
    for minute in range(0, 6):
        sc.at(minute).cycle()
    assert sorted(sc.evictions()) == ["d-low", "v-low"]
    assert sc.state("d-normal") == "running" and sc.state("v-normal") == "running"
    assert sc.state("p1") == "running" and sc.state("p2") == "running"
