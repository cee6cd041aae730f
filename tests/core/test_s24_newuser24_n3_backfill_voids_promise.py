"""New user 24, N3: the minimum runtime's promise was broken by a backfill.

lowB (ml, ``low``, 3 GPUs) runs again after an eviction, younger than the minimum runtime: another
team may not evict it (red team 15 R13), so cvC (cv, 2 GPUs, within its guarantee) is told "ETA 12:13:
then lowB … has run 5 min and is reclaimed", and lowB "to be reclaimed at ~12:13 … unless it ends
first". Then mlC (ml, ``normal``, 1 GPU) is backfilled onto the last free GPU. In the next cycle mlC
could, requeued, preempt its own team's ``low`` lowB, so lowB was named in mlC's ``below`` and lost its
exemption (new user 19, N2) — and the search took lowB alone, 4 minutes before the promise.

The exemption is lifted only where the eviction would otherwise be moved onto it: when a plan without
the exempt work exists and evicts a job that, requeued, would preempt it (new user 19, N2). When none
exists (mlC alone frees too little), the exempt job keeps its protection and the reclaimer waits —
whatever admission came in between.

One node of 4 GPUs; ml guaranteed 2 (+2), cv 2 (+0).
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import Scenario, make_job, make_node, quotas, running

from jupyter_sched.model import Quota


def _cluster() -> Scenario:
    q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=2), Quota(team="cv", guaranteed=2, borrowing_limit=0))
    low_b = replace(running(make_job("lowB", gpus=3, team="ml", priority="low"), "n1", [0, 1, 2], started=-0.5),
                    preempted_by="cvB")  # its second run: protected until 5 min
    ml_c = running(make_job("mlC", team="ml", time_limit_s=300), "n1", [3], started=-0.1)  # backfilled
    sc = Scenario([make_node("n1", gpus=4)], quota=q)
    return sc.submit(low_b, ml_c, make_job("cvC", gpus=2, team="cv", time_limit_s=240))


def test_newuser24_n3_a_backfilled_job_of_the_victim_team_does_not_void_the_minimum_runtime_promise() -> None:
    sc = _cluster()
    first = sc.cycle()
    assert first.preemptions == (), first.preemptions  # before: lowB reclaimed at once, 4.5 min early
    reason = next(p.reason for p in first.pending if p.job_id == "cvC")
    assert reason.details["preemption_rule"]["rule"] == "min_runtime", reason
    for minute in (1, 2, 3, 4):
        assert sc.at(minute).cycle().preemptions == (), minute
    assert sc.state("lowB") == "running"
    later = sc.at(4.5).cycle()  # lowB has run its 5 minutes: the promise is kept, then it goes
    assert [(p.job_id, p.kind) for p in later.preemptions] == [("lowB", "reclaim")]
    assert sc.state("mlC") == "running"
