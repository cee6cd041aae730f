"""issue 20 (words): "1 GPU-hours" — every surface that says GPU-hours makes the unit agree with the number
as shown, through one renderer (model.units.gpu_hours_phrase; the panel's format.ts gpuHoursPhrase): "1 GPU-hour",
"0.5 GPU-hours", "2 GPU-hours", "<0.01 GPU-hours" (singular only for a number that reads 1, as "0.5 hours")."""

from __future__ import annotations

from datetime import datetime, timezone

from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Budget, Quota, QuotaSet
from jupyter_sched.model.units import gpu_hours_phrase, shown_in
from jupyter_sched.quota.changes import quota_changes
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.services.budget_standing import BudgetStanding
from jupyter_sched.wording.status import budget_lines


def test_issue20_w1_gpu_hours_say_their_unit_in_agreement_with_the_number() -> None:
    assert [gpu_hours_phrase(h) for h in (1, 1.001, 0.5, 2, 0.001, 0)] == [
        "1 GPU-hour", "1 GPU-hour", "0.5 GPU-hours", "2 GPU-hours", "<0.01 GPU-hours", "0 GPU-hours"]
    assert gpu_hours_phrase(1.0, "1.00") == "1.00 GPU-hour" and gpu_hours_phrase(1000, "1,000.0") == "1,000.0 GPU-hours"
    # the gate's reason (a spent budget of 1 GPU-hour a month)
    quota = quotas(Quota(team="nlp", guaranteed=2), budgets=[Budget(team="nlp", gpu_hours=1, period="month")])
    result = run_cycle(snapshot([make_node(gpus=4)], [make_job("k1", team="nlp")], quota=quota,
                                usage=UsageHistory(gpu_hours_this_period={("nlp", None): 1.2})))
    (pending,) = result.pending
    assert pending.reason.message == "nlp has spent its GPU-hour budget: 1.2 of 1 GPU-hour this month", \
        pending.reason.message
    # the submit/PUT warnings' numbers and status's budget line
    standing = BudgetStanding(budget=Budget(team="nlp", gpu_hours=1, period="day"), used_gpu_hours=0.5,
                              resets_at=datetime(2025, 3, 31, tzinfo=timezone.utc))
    assert standing.numbers == "0.5 of 1 GPU-hour this UTC day"  # the server's words (newuser30 n11)
    me = {"budgets": [{"team": "default", "user": None, "gpu_hours": 1, "period": "day", "used_gpu_hours": 0.5,
                       "resets_at": "2025-03-31T00:00:00Z"}]}
    with shown_in(None):  # the CLI's reader, on UTC
        assert budget_lines(me, T0) == ["team default: 0.5 of 1 GPU-hour used today, resets Mar 31 00:00 UTC"]
    # the audit/PUT words of a budget change
    said = quota_changes(QuotaSet(budgets=(Budget(team="nlp", gpu_hours=1),)),
                         QuotaSet(budgets=(Budget(team="nlp", gpu_hours=2),)))
    assert said == ["changed budget nlp: 1 GPU-hour a month → 2 GPU-hours a month"], said
