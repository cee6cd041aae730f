"""newuser26 n8 (session 27): raising a spent budget (PUT quotas, 1.3 → 100 GPU-hours) moved two ETAs from the
period's reset to a running job's end, and the audit's ``eta_moved`` said "running jobs ended before their limits
or jobs ahead left the queue" — nothing had ended or left; an admin raised the budget. The move now says so.

Real parts: the pure scheduling cycle twice, the second with the first's reason on the job (as the store keeps it).
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Budget, Quota
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory


def test_newuser26_n8_an_eta_a_raised_budget_brings_forward_says_the_budget_moved_it() -> None:
    holder = running(make_job("r2", team="research", user="ha", gpus=4, time_limit_s=7200), "n1", [0, 1, 2, 3])
    waiting = make_job("k1", team="nlp", user="nu")
    usage = UsageHistory(gpu_hours_this_period={("nlp", None): 1.3})
    lines = (Quota(team="nlp", guaranteed=2), Quota(team="research", guaranteed=4))

    def cycle(budget_gpu_hours: float, job):  # type: ignore[no-untyped-def]
        quota = quotas(*lines, budgets=[Budget(team="nlp", gpu_hours=budget_gpu_hours)])
        return run_cycle(snapshot([make_node(gpus=4)], [holder, job], quota=quota, usage=usage))

    first = {p.job_id: p.reason for p in cycle(1.3, waiting).pending}["k1"]
    assert first.code == "BudgetExhausted" and first.eta is not None
    second = {p.job_id: p.reason for p in cycle(100, replace(waiting, reason=first)).pending}["k1"]
    assert second.code != "BudgetExhausted" and second.eta is not None and second.eta < first.eta, second
    moved = second.details["eta_moved"]
    # before: cause "earlier", "running jobs ended before their limits or jobs ahead left the queue"
    assert moved["cause"] == "budget", moved
    assert moved["message"].endswith(": the spent budget that held it no longer does (the budget was raised)"), moved
