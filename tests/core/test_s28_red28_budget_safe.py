"""red28 R3: ``budget_admission = "safe"`` counts what running work may still spend.

Each job was checked against the GPU-hours *spent* only, so N jobs that each fit the remainder started
together: 4 x (1 GPU, 1 h) against 2 GPU-hours left all ran (2x overrun; 8x with 8 GPUs) and teammates
were then held till the reset. Now left = budget - spent - Σ running jobs' GPUs x remaining limit -
what earlier admissions of the same cycle committed (Slurm's safe ``GrpTRESMins``).
"""

from __future__ import annotations

from datetime import datetime, timezone

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Budget, Quota
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.scheduling.snapshot import UsageHistory

_NEXT_MONTH = datetime(2025, 4, 1, tzinfo=timezone.utc)  # T0 is 2025-03-30 12:00 UTC
_SAFE = SchedulingProfile(budget_admission="safe")


def _cycle(*jobs, spent: float = 0.0, user_budget: bool = False):  # type: ignore[no-untyped-def]
    budget = Budget(team="vision", gpu_hours=2, user="mal" if user_budget else None)
    quota = quotas(Quota(team="vision", guaranteed=8), budgets=[budget])
    usage = UsageHistory(gpu_hours_this_period={("vision", "mal" if user_budget else None): spent})
    return run_cycle(snapshot([make_node(gpus=8)], list(jobs), quota=quota, usage=usage), _SAFE)


def test_red28_r3_safe_budget_counts_this_cycles_admissions() -> None:
    """Failed before: all 4 were admitted (each 1 GPU-hour ≤ 2 left)."""
    jobs = [make_job(f"b{i}", team="vision", user="mal", time_limit_s=3600, submitted=i) for i in range(4)]
    result = _cycle(*jobs)
    assert sorted(a.job_id for a in result.admits) == ["b0", "b1"]
    pends = {p.job_id: p.reason for p in result.pending}
    assert sorted(pends) == ["b2", "b3"]
    for reason in pends.values():
        assert reason.code == "BudgetExhausted", reason
        assert reason.message == (
            "vision has 2 GPU-hours of its budget left this month (0 of 2), 2 of them held by running jobs' limits; "
            "this job may use up to 1 GPU-hour (1 GPU for its 1h00m time limit) (c.SchedApp.budget_admission is "
            "safe)"), reason.message
        assert reason.details["held_by_running_gpu_hours"] == 2, reason.details
        assert reason.eta == _NEXT_MONTH, reason.eta


def test_red28_r3_safe_budget_counts_running_jobs_remaining_limits() -> None:
    """Failed before: the spent 0.5 GPU-hours were all it read. 2 running 1-GPU jobs with 45 min of their 1 h
    left hold 1.5 of the 1.5 left: a 1 h and a 30 min job both pend, naming the hold."""
    run = [running(make_job(f"r{i}", team="vision", user="amy", time_limit_s=3600), "n1", [i], started=-15)
           for i in range(2)]
    result = _cycle(*run, make_job("b1", team="vision", user="mal", time_limit_s=3600),
                    make_job("b2", team="vision", user="mal", time_limit_s=1800, submitted=1), spent=0.5)
    assert not result.admits
    pends = {p.job_id: p.reason for p in result.pending}
    assert pends["b1"].message.startswith(
        "vision has 1.5 GPU-hours of its budget left this month (0.5 of 2), 1.5 of them held by running jobs' limits;"
    ), pends["b1"].message
    assert pends["b2"].code == "BudgetExhausted", pends["b2"]
    # a running 1-GPU job's rest (45 min = 0.75) leaves 0.75: a 30-minute job fits, an hour does not
    result = _cycle(run[0], make_job("c1", team="vision", user="mal", time_limit_s=3600),
                    make_job("c2", team="vision", user="mal", time_limit_s=1800, submitted=1), spent=0.5)
    assert [a.job_id for a in result.admits] == ["c2"]
    assert [p.job_id for p in result.pending] == ["c1"]


def test_red28_r3_an_unlimited_running_job_leaves_nothing_and_user_budgets_count_the_users_own() -> None:
    """An unlimited running job bounds nothing: the next pends. A user budget counts that user's jobs only."""
    bare = running(make_job("u", team="vision", user="mal", unlimited=True), "n1", [0])
    result = _cycle(bare, make_job("b1", team="vision", user="mal", time_limit_s=600))
    assert not result.admits
    reason = result.pending[0].reason
    assert ", all of them held by mal's running job u (u), which has no time limit;" in reason.message, reason.message
    assert reason.details["held_by_running_gpu_hours"] is None, reason.details
    other = running(make_job("o", team="vision", user="amy", unlimited=True), "n1", [0])
    result = _cycle(other, make_job("b1", team="vision", user="mal", time_limit_s=3600), user_budget=True)
    assert [a.job_id for a in result.admits] == ["b1"]  # amy's job is not charged to mal's own budget


def test_red28_r3_overrun_mode_is_unchanged() -> None:
    jobs = [make_job(f"b{i}", team="vision", user="mal", time_limit_s=3600, submitted=i) for i in range(4)]
    quota = quotas(Quota(team="vision", guaranteed=8), budgets=[Budget(team="vision", gpu_hours=2)])
    result = run_cycle(snapshot([make_node(gpus=8)], jobs, quota=quota))
    assert len(result.admits) == 4
