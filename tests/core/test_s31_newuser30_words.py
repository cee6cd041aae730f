"""New user 30's last trade words and unsaid UTC days (session 31).

- N4 (the two less-seen lines session 30 left): a job that fits now read "fits now but would delay gang, which holds
  the reservation on A100-80GB from 14:40 UTC (elected: it waited past its promised wait)", and a team without a
  quota line "team default has no quota line: teams without one may use 0 GPUs (…)". Plain words first, the trade
  word after, in brackets, as the other reasons (README "Words the panel uses").
- n11 (the reasons): the gate's "0.21 of 0.1 GPU-hours today" is the server's word, read in every zone: "this UTC
  day" there, and "today" where the renderer's reader is known to be on UTC (the CLI's, the magics'), as a clock in
  a server sentence is said in the reader's zone.
"""

from __future__ import annotations

from core_builders import T0, make_job, make_node, quotas, running, snapshot
from test_issue16_gang_elect import _cluster

from jupyter_sched.model import Budget, Quota, QuotaSet
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.periods import said_to_reader, this_period_text
from jupyter_sched.model.units import shown_in
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.quota import unlisted_text

TRADE_FIRST = ("holds the reservation", "(elected:", "promised wait", "has no quota line")


def test_newuser30_n4_a_job_that_would_delay_a_reserved_one_says_it_in_plain_words_first() -> None:
    # elected: the gang waited past its promise, and the light job would run into its reserved start
    reasons = {p.job_id: p.reason for p in run_cycle(_cluster(light_limit_min=120), SchedulingProfile()).pending}
    light = reasons["light"]
    assert light.code == "Priority" and light.details["reserved_for_elected"], light
    line = render_reason(reason_to_dict(light), now=T0).summary
    assert line.startswith("fits now but would delay heavy's job gang, which goes first because it waited past the wait "
                           "promised when it was queued (elected): the plan keeps A100-80GB GPUs for it from "), line
    assert " UTC (reservation); other holds 7 of 8 GPUs" in line, line
    assert not any(word in line for word in TRADE_FIRST), line
    # not elected: it is ahead in the queue (the big job was queued first)
    jobs = [running(make_job("big3", gpus=2, time_limit_s=600), "n1", [0, 1], started=-2),
            make_job("all4", gpus=4, time_limit_s=3600, submitted=-0.3), make_job("one", submitted=-0.2)]
    one = {p.job_id: p.reason for p in run_cycle(snapshot([make_node("n1", gpus=4)], jobs)).pending}["one"]
    said = render_reason(reason_to_dict(one), now=T0).summary
    assert one.code == "Priority" and said.startswith(
        "fits now but would delay all4, which is ahead of it in the queue: the plan keeps A100-80GB GPUs for it from "), said
    assert said.endswith(" UTC (reservation)."), said
    assert not any(word in said for word in TRADE_FIRST), said


def test_newuser30_n4_a_team_without_a_quota_line_is_said_in_plain_words_first() -> None:
    setting = "(c.SchedApp.unlisted_team_borrowing_limit)"
    assert unlisted_text("default", 0) == (
        f"team default has no share of the GPUs (no quota line): teams without one may use 0 GPUs {setting}")
    assert unlisted_text(["nlp", "ops"], 1, who="each") == (
        f"teams nlp, ops have no share of the GPUs (no quota line): each may use 1 GPU, none of them guaranteed {setting}")
    assert unlisted_text("vision", 0, models=["H100"]) == (
        f"team vision has no share of the H100 GPUs (no quota line for that model): it may use 0 GPUs there {setting}")
    assert unlisted_text("vision", 0, models=["H100", "V100"]).startswith(
        "team vision has no share of the H100, V100 GPUs (no quota line for those models): ")
    # the cycle's reason says it through the one renderer
    quota = QuotaSet(quotas=(Quota(team="nlp", guaranteed=2),), unlisted_borrowing_limit=0)
    (pending,) = run_cycle(snapshot([make_node(gpus=4)], [make_job("k1", team="default")], quota=quota)).pending
    assert pending.reason.message.startswith("team default has no share of the GPUs (no quota line): "), pending.reason


def test_newuser30_n11_a_day_budgets_reason_is_this_utc_day_but_today_to_a_reader_on_utc() -> None:
    quota = quotas(Quota(team="nlp", guaranteed=2), budgets=[Budget(team="nlp", gpu_hours=0.1, period="day")])
    (pending,) = run_cycle(snapshot([make_node(gpus=4)], [make_job("k1", team="nlp")], quota=quota,
                                    usage=UsageHistory(gpu_hours_this_period={("nlp", None): 0.21}))).pending
    # the core's (the server's) words, which readers in every zone read
    assert pending.reason.message == "nlp has spent its GPU-hour budget: 0.21 of 0.1 GPU-hours this UTC day", pending.reason
    reason = reason_to_dict(pending.reason)
    assert "0.21 of 0.1 GPU-hours this UTC day" in render_reason(reason, now=T0).summary  # the server's reason.text
    with shown_in("America/Los_Angeles"):  # the CLI in Los Angeles: the UTC day is not its day
        assert "0.21 of 0.1 GPU-hours this UTC day" in render_reason(reason, now=T0).summary
        assert this_period_text("day") == "this UTC day"
    with shown_in(None):  # the CLI on UTC: its today, as its `status` says
        assert "0.21 of 0.1 GPU-hours today" in render_reason(reason, now=T0).summary
        assert said_to_reader("used this UTC day") == "used today" and this_period_text("day") == "today"
    assert said_to_reader("used this UTC day") == "used this UTC day"
    assert this_period_text("week") == "this week"


def test_newuser30_n11_the_servers_budget_warnings_are_said_in_the_readers_words() -> None:
    """GET quotas' and a submit's warnings say a spent day budget in the server's words ("this UTC day"); the CLI
    (and the magics' notes) say them as ``status`` does: "today" to a reader on UTC."""
    import argparse
    import io
    import types

    from jupyter_sched.cli.admin_views import quotas as quotas_view

    warning = ("budgets: nlp has already spent its GPU-hour budget (0.48 of 0.3 GPU-hours this UTC day): new GPU jobs "
               "wait until Dec 7 00:00 UTC (when the day's budget resets) or until an admin raises it")
    answer = {"quotas": [], "warnings": [warning]}
    client = types.SimpleNamespace(call=lambda req: answer)
    for zone, day in ((None, "today"), ("Asia/Tokyo", "this UTC day")):
        out = io.StringIO()
        with shown_in(zone):
            assert quotas_view(client, argparse.Namespace(json=False), types.SimpleNamespace(out=out)) == 0
        assert f"warning: budgets: nlp has already spent its GPU-hour budget (0.48 of 0.3 GPU-hours {day}): " \
            in out.getvalue(), (zone, out.getvalue())


def test_newuser38_n26_a_spent_budgets_warning_agrees_in_number() -> None:
    """newuser38 n26: "its 1 pending GPU job wait until …" — one job waits, two jobs wait."""
    from datetime import datetime, timezone

    from jupyter_sched.model import QuotaSet
    from jupyter_sched.model.quota import Budget
    from jupyter_sched.services.budget_standing import BudgetStanding, spent_warnings

    budget = Budget(team="vision", gpu_hours=0.2, period="day")
    quotas = QuotaSet(budgets=(budget,))
    standing = BudgetStanding(budget, 0.37, datetime(2026, 12, 8, tzinfo=timezone.utc))
    [one] = spent_warnings(quotas, [standing], {("vision", "n38a"): 1})
    [two] = spent_warnings(quotas, [standing], {("vision", "n38a"): 1, ("vision", "n38b"): 1})
    assert ": its 1 pending GPU job waits until Dec 8 00:00 UTC" in one, one
    assert ": its 2 pending GPU jobs wait until Dec 8 00:00 UTC" in two, two
