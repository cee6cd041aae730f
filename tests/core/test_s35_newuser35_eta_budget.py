"""ETAs that spend the budget the jobs ahead will spend (newuser35 N6).

After a budget's reset the ETA projection let every held job start from the reset as if the budget stayed free:
with 0.1 GPU-hours a day, two 10-minute jobs on 3 GPUs spend the new day's budget in 2 minutes, yet the three 1-hour
jobs behind them were promised that day ("ETA Mar 31 00:10 UTC, when held2 and held1 end; not before Mar 31 00:00
UTC …"). The projection now charges each budget with the GPU-hours of the work it starts (by the runtimes it plans
with) and moves a job whose start finds the budget spent to the next reset.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Budget, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording.reasons import render_reason

_RESET = datetime(2025, 3, 31, tzinfo=timezone.utc)  # T0 is 2025-03-30 12:00 UTC: the day's budget resets at 00:00
_NEXT = _RESET + timedelta(days=1)


def _pends(profile: SchedulingProfile | None, *, budget: float = 0.1, used: float = 0.41):  # type: ignore[no-untyped-def]
    quota = quotas(Quota(team="default", guaranteed=4), budgets=[Budget(team="default", gpu_hours=budget, period="day")])
    usage = UsageHistory(gpu_hours_this_period={("default", None): used})
    jobs = [make_job("held1", gpus=1, submitted=0, time_limit_s=600), make_job("held2", gpus=2, submitted=1, time_limit_s=600)]
    jobs += [make_job(f"held{i}", gpus=2, submitted=i, time_limit_s=3600) for i in (3, 4, 5)]
    result = run_cycle(snapshot([make_node(gpus=4)], jobs, quota=quota, usage=usage), profile)
    return {p.job_id: p.reason for p in result.pending}


@pytest.mark.parametrize("profile", [None, SchedulingProfile(backfill_mode="conservative")], ids=["replayed", "one-pass"])
def test_newuser35_n6_jobs_behind_the_ones_that_spend_the_new_days_budget_are_moved_to_the_day_after(profile) -> None:  # type: ignore[no-untyped-def]
    """Failed before: held3 "ETA Mar 31 00:10 UTC, when held2 and held1 end; not before Mar 31 00:00 UTC …", held5
    "ETA Mar 31 01:10 UTC" — though held1 + held2 use 0.5 GPU-hours of the 0.1 by 00:10."""
    pends = _pends(profile)
    assert all(r.code == "BudgetExhausted" for r in pends.values())
    for first in ("held1", "held2"):  # they start at the reset, said as before
        assert pends[first].eta == _RESET and pends[first].details["eta_code"] == "BudgetReset", pends[first]
        assert "eta_budget_reset" not in pends[first].details
    for later in ("held3", "held4", "held5"):
        reason = pends[later]
        assert reason.eta is not None and reason.eta >= _NEXT, (later, reason.eta)
        assert reason.details["eta_budget_reset"]["at"] == reason.eta.isoformat(), reason.details
        assert reason.details["eta_budget_reset"]["spent_from"] == (reason.eta - timedelta(days=1)).isoformat()
    # held3 and held4 take the 4 GPUs at the next reset; held5 finds that day's budget spent by 01:00 in turn
    assert pends["held3"].eta == _NEXT and pends["held4"].eta == _NEXT
    assert pends["held5"].eta == _NEXT + timedelta(days=1), pends["held5"].eta


def test_newuser35_n6_a_budget_that_covers_the_jobs_ahead_keeps_their_plan_and_says_it_assumes_it() -> None:
    """With 10 GPU-hours a day the 0.5 of held1 + held2 leave room: held3 starts when they end, as before; an ETA
    under a budget says it assumes the budget lasts (it is checked by the plan's run times)."""
    pends = _pends(None, budget=10, used=10.2)
    assert pends["held3"].eta == _RESET + timedelta(minutes=10), pends["held3"].eta
    assert pends["held5"].eta == _RESET + timedelta(minutes=70), pends["held5"].eta
    assert pends["held3"].details["eta_budget_reset"] == {"at": "2025-03-31T00:00:00+00:00", "period": "day"}


def test_newuser35_n6_the_sentence_says_the_jobs_ahead_spend_the_budget_first_and_what_an_eta_assumes() -> None:
    pends = _pends(None)
    line = render_reason(reason_to_dict(pends["held5"]), now=T0).line
    assert ("ETA Apr 2 00:00 UTC, when the day's budget resets (the jobs ahead are expected to spend the one from "
            "Apr 1 00:00 UTC first, by their planned run times)") in line, line
    line = render_reason(reason_to_dict(pends["held3"]), now=T0).line
    assert ("ETA Apr 1 00:00 UTC, when the day's budget resets (the jobs ahead are expected to spend the one from "
            "Mar 31 00:00 UTC first, by their planned run times)") in line, line
    # a job not held now, projected under a budget: its ETA says it assumes the budget lasts
    quota = quotas(Quota(team="default", guaranteed=4), budgets=[Budget(team="default", gpu_hours=100, period="month")])
    jobs = [make_job("big", gpus=4, time_limit_s=3600, submitted=0), make_job("next", gpus=4, time_limit_s=3600, submitted=1)]
    result = run_cycle(snapshot([make_node(gpus=4)], jobs, quota=quota))
    reason = next(p.reason for p in result.pending if p.job_id == "next")
    line = render_reason(reason_to_dict(reason), now=T0).line
    assert "when big ends; if the month's budget lasts until then (by the planned run times it does)" in line, line


def test_newuser35_n6_a_job_moved_past_a_reset_and_then_behind_capacity_and_one_not_held_yet_say_why() -> None:
    """4.5 GPU-hours a day on 4 GPUs, 1-hour jobs: 8 run on Mar 31 (4.0 used at 01:00 < 4.5), the 9th-12th find it
    spent at 02:00 and start at Apr 1's reset, the 13th behind them at 01:00 (said: not before that reset, then behind
    12 jobs). A job not held now, behind running work that spends what is left today, is moved to the reset too."""
    quota = quotas(Quota(team="default", guaranteed=4), budgets=[Budget(team="default", gpu_hours=4.5, period="day")])
    jobs = [make_job(f"f{i}", submitted=i, time_limit_s=3600) for i in range(13)]
    usage = UsageHistory(gpu_hours_this_period={("default", None): 4.6})
    pends = {p.job_id: p.reason for p in run_cycle(snapshot([make_node(gpus=4)], jobs, quota=quota, usage=usage)).pending}
    assert pends["f4"].eta == _RESET + timedelta(hours=1) and pends["f8"].eta == _NEXT
    assert pends["f12"].eta == _NEXT + timedelta(hours=1), pends["f12"].eta
    line = render_reason(reason_to_dict(pends["f12"]), now=T0).line
    assert ("ETA Apr 1 01:00 UTC, when f9, f8 and f11 end; not before Apr 1 00:00 UTC (when the day's budget resets: the "
            "jobs ahead are expected to spend the one from Mar 31 00:00 UTC first, by their planned run times), then "
            "behind 12 jobs queued ahead of it") in line, line
    from core_builders import running
    jobs = [running(make_job(f"r{i}", time_limit_s=3600), "n1", [i], started=-10) for i in range(4)]
    jobs.append(make_job("q1", submitted=1, time_limit_s=3600))
    usage = UsageHistory(gpu_hours_this_period={("default", None): 3.0})  # + 4 GPUs x 50 min > 4.5
    reason = run_cycle(snapshot([make_node(gpus=4)], jobs, quota=quota, usage=usage)).pending[0].reason
    assert reason.eta == _RESET and reason.details["eta_budget_reset"]["spent_from"] is None, reason
    line = render_reason(reason_to_dict(reason), now=T0).line
    # (#1, nothing queued ahead: the running work spends it — newuser36 N5 said "the jobs ahead" of no job ahead)
    assert ("ETA Mar 31 00:00 UTC, when the day's budget resets (the work running now is expected to spend what is "
            "left this UTC day first, by its planned run times)") in line, line
