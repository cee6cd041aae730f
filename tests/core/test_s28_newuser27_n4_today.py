"""newuser27 n4: a day's GPU-hour budget reads "used today", not "used this day" — the gate's reason,
the submit/PUT warnings (services.budget_standing) and ``status``'s budget line all say the period
through one renderer (model.periods.this_period_text); weeks, months and quarters read "this week"… — "today" to a
reader on UTC (the CLI's, the magics'); the server's own words say "this UTC day" (newuser30 n11)."""

from __future__ import annotations

from datetime import datetime, timezone

from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Budget, Quota
from jupyter_sched.model.periods import this_period_text
from jupyter_sched.model.units import shown_in
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.services.budget_standing import BudgetStanding
from jupyter_sched.wording.status import budget_lines


def test_newuser27_n4_a_day_budget_reads_today_everywhere() -> None:
    with shown_in(None):  # a reader on UTC
        assert [this_period_text(p) for p in ("day", "week", "month", "quarter")] == [
            "today", "this week", "this month", "this quarter"]
    quota = quotas(Quota(team="nlp", guaranteed=2), budgets=[Budget(team="nlp", gpu_hours=0.1, period="day")])
    result = run_cycle(snapshot([make_node(gpus=4)], [make_job("k1", team="nlp")], quota=quota,
                                usage=UsageHistory(gpu_hours_this_period={("nlp", None): 0.21})))
    (pending,) = result.pending
    assert pending.reason.message == "nlp has spent its GPU-hour budget: 0.21 of 0.1 GPU-hours this UTC day", \
        pending.reason.message
    standing = BudgetStanding(budget=Budget(team="nlp", gpu_hours=0.1, period="day"), used_gpu_hours=0.21,
                              resets_at=datetime(2025, 3, 31, tzinfo=timezone.utc))
    assert standing.numbers == "0.21 of 0.1 GPU-hours this UTC day"
    me = {"budgets": [{"team": "default", "user": None, "gpu_hours": 0.1, "period": "day", "used_gpu_hours": 0.21,
                       "resets_at": "2025-03-31T00:00:00Z"}]}
    with shown_in(None):
        said = budget_lines(me, T0)
    assert said == [
        "team default: 0.21 of 0.1 GPU-hours used today — spent: new GPU jobs wait until Mar 31 00:00 UTC (or until "
        "an admin raises it); CPU-only jobs run"]
    me["budgets"][0]["period"] = "week"
    assert budget_lines(me, T0)[0].startswith("team default: 0.21 of 0.1 GPU-hours used this week — spent"), budget_lines(me, T0)
