"""red30 R5: red29 R4 admitted a kernel's GPU lease under ``budget_admission = "safe"`` on ANY remainder and
counted it as holding nothing: a 2-GPU lease started with 0.04 GPU-hours left ran to 0.18 of a 0.1 budget (55 %
over in 3 minutes, on by 2 GPU-hours an hour) while teammates pended "spent", never told that bob's running lease
spends it. Now a lease is bounded by the lease horizon (``lease_budget_s``, ``c.SchedApp.lease_budget_hours``): it
starts only while GPUs x the horizon are left, holds that much ahead of its teammates' jobs while it runs, and is
released (kind ``budget``, audited ``budget_release``, its kernel kept running) once the budget is spent;
teammates' reasons name the running lease."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Budget, JobKind, Quota
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.budget_spent import BUDGET_KIND
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.scheduling.snapshot import UsageHistory

_SAFE = SchedulingProfile(budget_admission="safe")


def _lease(job_id: str, user: str, gpus: int = 2):  # type: ignore[no-untyped-def]
    job = make_job(job_id, team="vision", user=user, gpus=gpus)
    return replace(job, spec=replace(job.spec, kind=JobKind.LEASE, command=(), kernel_id="k-1"))


def _cycle(*jobs, profile: SchedulingProfile = _SAFE, budget: float = 0.1, spent: float = 0.059):  # type: ignore[no-untyped-def]
    quota = quotas(Quota(team="vision", guaranteed=8), budgets=[Budget(team="vision", gpu_hours=budget)])
    usage = UsageHistory(gpu_hours_this_period={("vision", None): spent})
    return run_cycle(snapshot([make_node(gpus=8)], list(jobs), quota=quota, usage=usage), profile)


def test_red30_r5_a_lease_pends_when_the_safe_budget_cannot_cover_its_horizon() -> None:
    # red30's numbers: 0.041 GPU-hours left of 0.1, a 2-GPU lease: it needs 2 GPU-hours (2 GPUs x 1 h) to start
    result = _cycle(_lease("l-bob", "bob"))
    assert not result.admits, "was: admitted on any remainder (red29 R4)"
    reason = result.pending[0].reason
    assert reason.code == "BudgetExhausted"
    assert reason.message == (
        "vision has 0.04 GPU-hours of its budget left this month (0.06 of 0.1); this lease needs 2 GPU-hours left "
        "to start (2 GPUs for the 1h00m lease horizon, c.SchedApp.lease_budget_hours): a lease has no time limit, "
        "so it holds that much ahead while it runs and is released once the budget is spent "
        "(c.SchedApp.budget_admission is safe)"), reason.message
    assert reason.details["lease_budget_s"] == 3600.0 and reason.details["job_gpu_hours"] == 2.0
    assert "c.SchedApp.lease_budget_hours" in reason.unblock and "raise the budget" in reason.unblock
    # 2.5 left: a 2-GPU lease fits (2 GPU-hours), a shorter horizon lets it in on less
    assert [a.job_id for a in _cycle(_lease("l-bob", "bob"), budget=2.559).admits] == ["l-bob"]
    quarter = SchedulingProfile(budget_admission="safe", lease_budget_s=900.0)
    assert [a.job_id for a in _cycle(_lease("l-bob", "bob"), budget=0.6, profile=quarter).admits] == ["l-bob"]
    # under "overrun" nothing changes: it starts on any remainder
    assert [a.job_id for a in _cycle(_lease("l-bob", "bob"), profile=SchedulingProfile()).admits] == ["l-bob"]
    # 1.5 left: "ask for at most 1 GPU"
    reason = _cycle(_lease("l-bob", "bob"), budget=1.559).pending[0].reason
    assert reason.unblock.startswith("ask for at most 1 GPU, or ask an admin"), reason.unblock
    with pytest.raises(ValidationError) as err:
        SchedulingProfile(lease_budget_s=0.0)
    assert err.value.field == "lease_budget_hours"


def test_red30_r5_a_running_lease_holds_its_horizon_and_teammates_reasons_name_it() -> None:
    bob = running(_lease("l-bob", "bob"), "n1", [0, 1])
    amy = make_job("a1", team="vision", user="amy", time_limit_s=1800)
    # 3 GPU-hours left; bob's lease holds 2 of them ahead (2 GPUs x 1 h): amy's 0.5 GPU-hour job fits
    assert [a.job_id for a in _cycle(bob, amy, budget=3.059).admits] == ["a1"]
    # 2.2 left: 2 held by bob's lease, amy's 0.5 does not fit — her reason names his lease
    result = _cycle(bob, amy, budget=2.259)
    reason = result.pending[0].reason
    assert not result.admits and reason.code == "BudgetExhausted"
    assert ", 2 of them held by running work, among it bob's running lease l-bob (2 GPUs until it is released or " \
           "the budget is spent);" in reason.message, reason.message
    assert reason.details["held_by_lease"] == "l-bob"
    # spent: the reason says whose lease spent it — being released under safe, still spending under overrun
    reason = _cycle(bob, amy, spent=0.1).pending[0].reason
    assert reason.message == ("vision has spent its GPU-hour budget: 0.1 of 0.1 GPU-hours this month; bob's lease "
                              "l-bob (2 GPUs) spent the last of it and is being released"), reason.message
    assert reason.details["held_by_lease"] == "l-bob"
    reason = _cycle(bob, amy, spent=0.1, profile=SchedulingProfile()).pending[0].reason
    assert reason.message.endswith("this month; bob's running lease l-bob (2 GPUs) still spends it"), reason.message


def test_red30_r5_a_running_lease_past_the_spent_budget_is_released_and_named() -> None:
    bob = running(_lease("l-bob", "bob"), "n1", [0, 1])
    result = _cycle(bob, spent=0.1)
    assert [(p.job_id, p.kind, p.for_job) for p in result.preemptions] == [("l-bob", BUDGET_KIND, "")]
    said = result.preemptions[0].reason
    assert said == ("released: team vision's GPU-hour budget is spent (0.1 of 0.1 GPU-hours this month) and "
                    "c.SchedApp.budget_admission is safe; the kernel keeps running without its 2 GPUs"), said
    audit = [r for r in result.audit if r.action == "budget_release"]
    assert [(r.job_id, r.user, r.details["used_gpu_hours"], r.details["budget_gpu_hours"]) for r in audit] == \
        [("l-bob", "bob", 0.1, 0.1)]
    # not spent: not released; under "overrun" never (a budget does not stop running work there)
    assert not _cycle(bob, spent=0.09).preemptions
    assert not _cycle(bob, spent=0.5, profile=SchedulingProfile()).preemptions
    # a batch job with a time limit is not stopped (its limit bounds it, counted before it started)
    job = running(make_job("j1", team="vision", user="amy", time_limit_s=600), "n1", [2])
    assert [p.job_id for p in _cycle(bob, job, spent=0.2).preemptions] == ["l-bob"]
    # a user budget spent releases that user's lease only
    quota = quotas(Quota(team="vision", guaranteed=8), budgets=[Budget(team="vision", user="bob", gpu_hours=1)])
    eve = running(_lease("l-eve", "eve", gpus=1), "n1", [3])
    usage = UsageHistory(gpu_hours_this_period={("vision", "bob"): 1.2, ("vision", None): 1.2})
    result = run_cycle(snapshot([make_node(gpus=8)], [bob, eve], quota=quota, usage=usage), _SAFE)
    assert [p.job_id for p in result.preemptions] == ["l-bob"]
    assert "user bob's (in vision) GPU-hour budget is spent" in result.preemptions[0].reason
