"""A job held by its team's limit while its owner's own kernel lease holds the room (newuser36 N5).

nlp guaranteed 1 (+1 borrowing), a day's budget of 0.2 GPU-hours with 0.1 left; n36c's 1-GPU kernel lease (no time
limit) runs; her 2-GPU job waits: "#1 · nlp would use 3 GPUs, above its limit of 2 GPUs … · ETA Dec 8 00:00 UTC (in
19h23m), when the day's budget resets (the jobs ahead are expected to spend …)". No job is ahead; her own lease
holds the limit's room, and releasing it starts the job in minutes. The line now names the lease as hers, with what
frees it, and the ETA says it waits on that release rather than on a reset the lease's endless spending projected.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Budget, JobKind, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording.reasons import render_reason


def _reason(*, budget: bool = True, idle: bool = False, owner: str = "n36c"):  # type: ignore[no-untyped-def]
    quota = quotas(Quota(team="nlp", guaranteed=1, borrowing_limit=1), Quota(team="vision", guaranteed=3),
                   budgets=[Budget(team="nlp", gpu_hours=0.2, period="day")] if budget else [])
    usage = UsageHistory(gpu_hours_this_period={("nlp", None): 0.1})
    lease = make_job("l-c1", gpus=1, team="nlp", user=owner)
    lease = running(replace(lease, spec=replace(lease.spec, name="c1", kind=JobKind.LEASE, kernel_id="k-c1")), indices=[0])
    # vision's running work holds the other 3 GPUs, its end known (the hub's b-train and a sweep)
    vis = [running(make_job("b-train", gpus=2, team="vision", user="n36b", time_limit_s=1200), indices=[1, 2]),
           running(make_job("a-sweep", gpus=1, team="vision", user="n36a", time_limit_s=600), indices=[3])]
    job = make_job("c-two", gpus=2, team="nlp", user="n36c", time_limit_s=300, submitted=1)
    snap = snapshot([make_node(gpus=4)], [lease, *vis, job], quota=quota, usage=usage)
    if idle:  # an idle kernel's lease is reclaimed 30 min on (the hub's idle policy)
        snap = replace(snap, idle_ends={"l-c1": T0 + timedelta(minutes=30)})
    result = run_cycle(snap)
    return next(p.reason for p in result.pending if p.job_id == "c-two")


def test_newuser36_n5_the_limit_line_names_the_owners_own_lease_holding_the_teams_room() -> None:
    """Failed before (the hub's case: an idle policy reclaims the lease in 30 min): the line named no lease; its one
    action was "it starts when nlp's running jobs or kernel leases release GPUs, or when an admin raises …"."""
    reason = _reason(idle=True)
    assert reason.code == "BorrowingLimitReached", reason
    line = render_reason(reason_to_dict(reason), now=T0, mine=True).line
    assert "your own kernel lease l-c1 (c1) holds 1 GPU of nlp's quota: run %gpu release in that notebook" in line, line
    # to anyone else: no notebook, no action of hers
    other = render_reason(reason_to_dict(reason), now=T0).line
    assert "%gpu release" not in other and "your own" not in other, other


def test_newuser36_n5_an_endless_own_lease_is_not_a_job_ahead_spending_the_budget_till_the_reset() -> None:
    """Failed before (with the idle policy): "ETA Mar 31 00:00 UTC, when the day's budget resets (the jobs ahead are
    expected to spend what is left this UTC day first …)": the projection let the lease spend the budget to the reset.
    Her release is what starts it: the ETA is unknown until then, as for a GPU-bound wait on her lease."""
    for budget, idle in ((True, False), (False, False), (True, True)):
        reason = _reason(budget=budget, idle=idle)
        line = render_reason(reason_to_dict(reason), now=T0, mine=True).line
        assert "jobs ahead" not in line and "budget resets" not in line, (budget, idle, line)
        assert reason.eta is None, (budget, idle, reason.eta, line)
        assert "ETA unknown: it can start only after your own kernel lease l-c1" in line, (budget, idle, line)


def test_newuser36_n5_a_teammates_lease_spending_the_budget_is_the_work_running_now_not_jobs_ahead() -> None:
    """A teammate's idle lease holds the room: the projection's reset stands (she cannot release it), but with no
    job queued ahead the clause said "the jobs ahead are expected to spend …" (failed before)."""
    reason = _reason(idle=True, owner="n36d")
    line = render_reason(reason_to_dict(reason), now=T0, mine=True).line
    assert reason.details["eta_code"] == "BudgetReset", line
    assert "jobs ahead" not in line, line
    assert "(the work running now is expected to spend what is left this UTC day first, by its planned run times)" in line, line
