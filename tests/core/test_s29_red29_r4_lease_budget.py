"""red29 R4: under ``budget_admission = "safe"`` a kernel's GPU lease could never start (a lease has no time
limit, so "its GPU-hours are not bounded"), and one lease running when a safe budget applied held the WHOLE
team budget ("all of them held by a running job with no time limit"): every teammate's GPU job pended while
that kernel lived (red30 R5 since: a lease holds GPUs x the lease horizon ahead, 1 GPU-hour here, and needs it
left to start — tests/core/test_s30_red30_r5_lease_budget.py). A running ``time_limit: 0`` job counted as unbounded too, although its queue's maximum stops
it. Now a lease is admitted as without safe admission (while the budget is not spent) and holds nothing ahead;
a ``time_limit: 0`` job holds GPUs x the rest of its queue's maximum; an unbounded holder is named."""

from __future__ import annotations

from dataclasses import replace

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Budget, JobKind, Quota
from jupyter_sched.queues.limits import TimeLimitRule
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.scheduling.snapshot import UsageHistory

_SAFE = SchedulingProfile(budget_admission="safe")


def _lease(job_id: str, user: str, **kw):  # type: ignore[no-untyped-def]
    job = make_job(job_id, team="vision", user=user, **kw)
    return replace(job, spec=replace(job.spec, kind=JobKind.LEASE, command=()))


def _cycle(*jobs, profile: SchedulingProfile = _SAFE, spent: float = 0.02):  # type: ignore[no-untyped-def]
    quota = quotas(Quota(team="vision", guaranteed=8), budgets=[Budget(team="vision", gpu_hours=50)])
    usage = UsageHistory(gpu_hours_this_period={("vision", None): spent})
    return run_cycle(snapshot([make_node(gpus=8)], list(jobs), quota=quota, usage=usage), profile)


def test_red29_r4_a_kernel_lease_starts_under_a_safe_budget_and_holds_nothing_of_it_ahead() -> None:
    result = _cycle(_lease("l-bob", "bob"))
    assert [a.job_id for a in result.admits] == ["l-bob"], [p.reason.message for p in result.pending]
    # bob's running kernel lease: amy's 1-GPU 10-minute job is admitted (was: "all of them held by a running job
    # with no time limit"), and a second lease too
    bob = running(_lease("l-bob", "bob"), "n1", [0])
    result = _cycle(bob, make_job("a1", team="vision", user="amy", time_limit_s=600), _lease("l-eve", "eve"))
    assert sorted(a.job_id for a in result.admits) == ["a1", "l-eve"], [p.reason.message for p in result.pending]
    # a spent budget still holds a new lease, as without safe admission
    result = _cycle(_lease("l-late", "bob"), spent=50.5)
    assert not result.admits and result.pending[0].reason.code == "BudgetExhausted", result.pending


def test_red29_r4_a_running_time_limit_0_job_holds_its_queues_maximum_and_an_unbounded_holder_is_named() -> None:
    rules = (TimeLimitRule(team="vision", max_s=3600.0),)
    safe = SchedulingProfile(budget_admission="safe", time_limits=rules)
    forever = running(make_job("u", team="vision", user="bob", unlimited=True, gpus=8), "n1", started=0)
    # 8 GPUs x the 1 h its queue's maximum stops it at = 8 GPU-hours held (was: inf, the whole budget):
    # amy's 1-GPU 10-minute job fits what is left (50 - 0.02 - 8)
    result = _cycle(forever, make_job("a1", team="vision", user="amy", time_limit_s=600), profile=safe)
    assert [a.job_id for a in result.admits] == [], "no GPU is free: admitted only by the budget gate's count"
    reason = next(p.reason for p in result.pending if p.job_id == "a1")
    assert reason.code != "BudgetExhausted" and "budget" not in reason.message, reason.message
    # with no queue maximum nothing bounds it: the reason names whose job holds the budget
    bare = running(make_job("u2", team="vision", user="bob", unlimited=True), "n1", [0])
    result = _cycle(bare, make_job("a2", team="vision", user="amy", time_limit_s=600))
    reason = result.pending[0].reason
    assert ", all of them held by bob's running job u2 (u2), which has no time limit;" in reason.message, reason.message
