"""New user 21, N5: the running job that will be preempted at a known time is told so, from its waiter's ETA.

ml (guaranteed 2 + borrowing limit 1) runs lowml (3 GPUs, low, evicted once before, so protected for
the 5 min minimum runtime); norm2, a normal ml job of 1 GPU, waits on ml's borrowing limit. Its ETA
is the moment lowml has run 5 min (new user 20, N18), when lowml is preempted for it; lowml's own
line said only "ends by …, its 10m time limit". The cycle now carries the plan for the victim, read
from the waiter's own ETA record (no second model): the same moment, the same waiter.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from core_builders import T0, Scenario, make_job, make_node, quotas, running

from jupyter_sched.model import Job, PendingReason, Quota
from jupyter_sched.scheduling.planned import planned_preemptions
from jupyter_sched.scheduling.snapshot import Pend, PlannedPreemption

UNTIL = T0 + timedelta(minutes=3)  # lowml started 2 min before T0: it has run 5 min at T0 + 3 min


def _ml(*, user: str = "alice", limit_s: float = 600) -> Scenario:
    q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=1), Quota(team="vision", guaranteed=2, borrowing_limit=0))
    sc = Scenario([make_node("n1", gpus=4)], quota=q)
    low = running(make_job("lowml", gpus=3, team="ml", priority="low", time_limit_s=limit_s, user=user), "n1", range(3),
                  started=-2)
    return sc.submit(replace(low, preempted_by="hi"))  # requeued after an earlier preemption: protected 5 min


def _norm2(*, user: str = "bob") -> Job:
    return make_job("norm2", gpus=1, team="ml", time_limit_s=300, user=user)


def test_newuser21_n5_the_victims_plan_is_its_waiters_eta() -> None:
    sc = _ml().submit(_norm2())
    result = sc.cycle()
    waiter = {p.job_id: p.reason for p in result.pending}["norm2"]
    assert waiter.details["eta_code"] == "MinRuntime" and waiter.eta == UNTIL
    assert result.planned == {"lowml": PlannedPreemption(
        at=waiter.eta, for_job="norm2", for_name="", for_owner="bob", for_priority="normal", for_team="ml",
        same_team=True, verb="preempted")}
    # and the plan is kept: nothing happens before it, lowml is preempted for norm2 at that moment
    assert sc.at(2.5).cycle().planned["lowml"].at == UNTIL
    done = sc.at(3).cycle()
    assert [(p.job_id, p.for_job) for p in done.preemptions] == [("lowml", "norm2")]
    assert "lowml" not in done.planned  # stopping now: its line says the stop, not a plan


def test_newuser21_n5_no_plan_when_the_waiter_starts_on_an_end_first() -> None:
    # lowml's own limit ends it before its minimum runtime passes: the waiter's ETA is that end, no preemption
    result = _ml(limit_s=180).submit(_norm2()).cycle()
    assert result.pending[0].reason.details["eta_code"] == "Projected"
    assert result.planned == {}


def test_newuser21_n5_the_owners_own_waiter_is_named_without_owner() -> None:
    result = _ml(user="bob").submit(_norm2(user="bob")).cycle()
    assert result.planned["lowml"].for_owner == ""


def test_newuser21_n5_a_reclaim_across_teams_is_planned_as_a_reclaim() -> None:
    # bigml borrows 3 of ml's 4 GPUs; vision's job within its guarantee reclaims them once bigml passes 5 min
    q = quotas(Quota(team="ml", guaranteed=1, borrowing_limit=3), Quota(team="vision", guaranteed=3, borrowing_limit=0))
    big = running(make_job("bigml", gpus=4, team="ml", time_limit_s=600), "n1", range(4), started=-2)
    sc = Scenario([make_node("n1", gpus=4)], quota=q).submit(
        replace(big, preempted_by="hi"), make_job("vis", gpus=1, team="vision", user="bob", time_limit_s=300))
    result = sc.cycle()
    assert result.pending[0].reason.eta == UNTIL
    assert result.planned == {"bigml": PlannedPreemption(
        at=UNTIL, for_job="vis", for_owner="bob", for_priority="normal", for_team="vision", same_team=False,
        verb="reclaimed")}


@pytest.mark.parametrize(("first", "second", "want"), [
    (T0 + timedelta(minutes=4), T0 + timedelta(minutes=3), "w2"),
    (T0 + timedelta(minutes=3), T0 + timedelta(minutes=3), "w1"),
], ids=["the earlier of two waiters", "the first in queue order on a tie"])
def test_newuser21_n5_a_victim_named_by_two_waiters_gets_one_plan(first: datetime, second: datetime, want: str) -> None:
    victim = running(make_job("v", gpus=1, priority="low", team="ml"), "n1", [0])
    stopping = replace(running(make_job("s", gpus=1, priority="low", team="ml"), "n1", [1]), stopping_since=T0)
    waiters = [make_job(w, team="ml") for w in ("w1", "w2")]
    by_id = {j.id: j for j in (victim, stopping, *waiters)}
    rule = {"rule": "min_runtime", "protected": ["v", "s", "gone"], "same_team": True, "evicted_as": "preempted"}

    def pend(job_id: str, at: datetime) -> Pend:
        details = {"eta_code": "MinRuntime", "eta_waits_on": ["v", "s", "gone"], "preemption_rule": rule}
        return Pend(job_id, PendingReason(code="BorrowingLimitReached", message="m", details=details, eta=at))

    plans = planned_preemptions([pend("w1", first), pend("w2", second)], by_id)
    assert list(plans) == ["v"] and plans["v"].for_job == want  # not the stopping job, nor one gone
    assert plans["v"].at == (first if want == "w1" else second)

