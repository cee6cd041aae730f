"""GPU-hour budgets an admin can trust (hubadmin24 B8, B11).

A spent budget holds its team's (or user's) GPU work until the period resets: the reason says
"budget", the GPU-hours with two decimals, and the ETA is the reset (or an admin raising it) —
never a job's end (B8). A 0-GPU job uses no GPU-hours: a GPU-hour budget never holds it (B11).
"""

from __future__ import annotations

from datetime import datetime, timezone

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Budget, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording.reasons import render_reason

_NEXT_MONTH = datetime(2025, 4, 1, tzinfo=timezone.utc)  # T0 is 2025-03-30 12:00 UTC


def _spent(*jobs):  # type: ignore[no-untyped-def]
    quota = quotas(Quota(team="nlp", guaranteed=2), Quota(team="research", guaranteed=2),
                   budgets=[Budget(team="nlp", gpu_hours=0.3)])
    usage = UsageHistory(gpu_hours_this_period={("nlp", None): 0.481896})
    return run_cycle(snapshot([make_node(gpus=4)], list(jobs), quota=quota, usage=usage))


def test_hubadmin24_b8_budget_reason_two_decimals_and_eta_is_the_reset() -> None:
    result = _spent(running(make_job("r2", team="research", user="ha24r", gpus=4), "n1", [0, 1, 2, 3]),
                    make_job("k1", team="nlp", user="ha24k"), make_job("m2", team="nlp", user="ha24m", submitted=1))
    pends = {p.job_id: p.reason for p in result.pending}
    for job_id in ("k1", "m2"):
        reason = pends[job_id]
        assert reason.code == "BudgetExhausted"
        assert reason.message == "nlp has spent its GPU-hour budget: 0.48 of 0.3 GPU-hours this month", reason.message
        assert reason.eta == _NEXT_MONTH, (job_id, reason.eta)  # the reset, not when r2 (or k1) ends
        assert not reason.details.get("eta_waits_on"), reason.details
        line = render_reason(reason_to_dict(reason), now=T0).line
        assert "0.481896" not in line and "r2" not in line and "k1" not in line, line
        assert line.endswith("ETA Apr 1 00:00 UTC, when the month's budget resets · ask an admin to raise the budget if it "
                             "cannot wait"), line


def test_hubadmin24_b11_a_gpu_hour_budget_never_holds_cpu_only_jobs() -> None:
    result = _spent(make_job("cpu", team="nlp", gpus=0, milli=0), make_job("gpu", team="nlp", submitted=1))
    assert [a.job_id for a in result.admits] == ["cpu"]
    assert [(p.job_id, p.reason.code) for p in result.pending] == [("gpu", "BudgetExhausted")]


def test_hubadmin24_b8_queue_summary_says_which_teams_a_spent_budget_holds() -> None:
    """Failed before (no such line): ``queue --summary`` showed nlp's 8 pending beside idle GPUs, and not why."""
    from jupyter_sched.cli.queue_summary import budget_held

    result = _spent(make_job("k1", team="nlp"), make_job("k2", team="nlp", submitted=1),
                    make_job("r1", team="research", gpus=8, submitted=2))
    rows = [{"id": p.job_id, "state": "pending", "team": "nlp" if p.job_id.startswith("k") else "research",
             "reason": reason_to_dict(p.reason)} for p in result.pending]
    assert budget_held(rows, T0) == [
        "nlp: 2 pending jobs held by a spent budget — nlp has spent its GPU-hour budget: 0.48 of 0.3 GPU-hours this "
        "month; they start Apr 1 00:00 UTC at the earliest (when it resets), or when an admin raises it"]
