"""ETAs that keep their word (newuser34 N3, N4, n2).

N3: once a team's GPU-hour budget is spent, every held job said "ETA Dec 7 00:00 UTC, when the day's budget
resets" — #1 and #164 alike on 4 GPUs. The reset is a lower bound; the ETA is the plan from then (the jobs
queued ahead, their time limits): the first ones start at the reset, the later ones as those end.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from core_builders import T0, make_job, make_node, quotas

from jupyter_sched.model import Budget, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording.reasons import render_reason

_RESET = datetime(2025, 3, 31, tzinfo=timezone.utc)  # T0 is 2025-03-30 12:00 UTC: the day's budget resets at 00:00


def _held(count: int, profile: SchedulingProfile | None = None):  # type: ignore[no-untyped-def]
    from core_builders import snapshot
    # 12 GPU-hours a day: the day after, the 8 GPU-hours the first 8 jobs run by 02:00 leave room for the last 4
    # (newuser35 N6: a budget the jobs ahead spend moves the jobs behind them to the next reset)
    quota = quotas(Quota(team="default", guaranteed=4), budgets=[Budget(team="default", gpu_hours=12, period="day")])
    usage = UsageHistory(gpu_hours_this_period={("default", None): 12.02})
    jobs = [make_job(f"flood-{i}", submitted=i, time_limit_s=3600) for i in range(count)]
    result = run_cycle(snapshot([make_node(gpus=4)], jobs, quota=quota, usage=usage), profile)
    return {p.job_id: p.reason for p in result.pending}


@pytest.mark.parametrize("count,profile", [
    (12, None),  # the queue the cycle replays forward (the lookahead)
    (12, SchedulingProfile(backfill_mode="conservative")),  # reserved as visited: projected from the reset after
    (600, None),  # too many to replay: one pass in queue order
], ids=["replayed", "conservative", "one-pass"])
def test_newuser34_n3_a_spent_budgets_jobs_start_from_the_reset_in_turn_not_all_at_it(count, profile) -> None:  # type: ignore[no-untyped-def]
    pends = _held(count, profile)
    assert len(pends) == count and all(r.code == "BudgetExhausted" for r in pends.values())
    first, fifth, last = pends["flood-0"], pends["flood-4"], pends["flood-11"]
    # the first four start at the reset: said as before (hubadmin24 B8), no job named
    assert first.eta == _RESET and first.details["eta_code"] == "BudgetReset" and not first.details["eta_waits_on"]
    line = render_reason(reason_to_dict(first), now=T0).line
    assert "ETA Mar 31 00:00 UTC, when the day's budget resets" in line, line
    # the fifth when one of the first four has run its hour; the twelfth two hours after the reset
    assert fifth.eta == _RESET + timedelta(hours=1), fifth.eta
    assert last.eta == _RESET + timedelta(hours=2), last.eta
    assert "eta_budget_reset" in last.details and last.position == 12
    line = render_reason(reason_to_dict(last), now=T0).line
    assert "ETA Mar 31 02:00 UTC" in line, line
    assert "not before Mar 31 00:00 UTC (when the day's budget resets), then behind 11 jobs queued ahead of it" in line, line
    assert "when the day's budget resets · " not in line.split("ETA")[0]  # the reason itself is unchanged


@pytest.mark.parametrize("admin", [False, True], ids=["user", "admin"])
def test_newuser34_n2_a_team_limited_to_0_gpus_is_told_what_runs_not_to_ask_for_at_most_0(admin: bool) -> None:
    """Failed before: "1 GPU can never fit the limit of team vision: 0 GPUs (guaranteed 0 + borrowing limit 0)
    — ask for at most 0 GPUs, or ask an admin to raise the quota" (submit refusal and the queued job's fix)."""
    from core_builders import snapshot

    from jupyter_sched.admission.rules import check_ceiling
    from jupyter_sched.errors import QuotaError
    from jupyter_sched.model import QuotaSet

    quota = QuotaSet(quotas=(Quota(team="vision", guaranteed=0, borrowing_limit=0), Quota(team="ml", guaranteed=4, borrowing_limit=0)))
    with pytest.raises(QuotaError) as refused:
        check_ceiling(make_job(team="vision", user="n34b", gpus=1).spec, quota, {"A100-80GB": 4}, ("vision",),
                      admin=admin)
    hint = str(refused.value.hint)
    assert "at most 0" not in hint, hint
    assert hint == ("team vision may use no GPUs: only CPU-only work runs there (--gpus 0); or "
                    + ("give team vision a quota (PUT quotas)" if admin else "ask an admin to give team vision a quota")), hint
    # a job queued before the line was lowered to 0: its reason's fix says the same
    result = run_cycle(snapshot([make_node(gpus=4)], [make_job("v1", team="vision", user="n34b")], quota=quota))
    (pend,) = result.pending
    assert pend.reason.unblock == ("team vision may use no GPUs: cancel it and resubmit it as CPU-only work "
                                   "(--gpus 0); or ask an admin to give team vision a quota"), pend.reason.unblock
    # a line above 0 keeps its "ask for at most N"
    with pytest.raises(QuotaError) as two:
        check_ceiling(make_job(team="ml", user="n34a", gpus=5).spec, quota, {"A100-80GB": 8}, ("ml",))
    assert str(two.value.hint).startswith("ask for at most 4 GPUs"), two.value.hint


def _n4_jobs(kind: str):  # type: ignore[no-untyped-def]
    """ml (guaranteed 3 + borrow 1) runs 3 one-GPU jobs of 4m limits and queues 8 more; vision (1 + 1) runs b-mine
    (5m limit, ends 12:04:30) and then asks for one more GPU — a job or a kernel's lease — on 4 one-GPU nodes."""
    from dataclasses import replace

    from core_builders import running

    from jupyter_sched.model.job import JobKind

    jobs = [running(make_job(f"a-run-{i}", team="ml", user="n34a", time_limit_s=240), f"vm-{i}", [0], started=-(1 + i))
            for i in range(3)]
    jobs += [make_job(f"a-flood-{i}", team="ml", user="n34a", time_limit_s=240, submitted=-5 + i * 0.01)
             for i in range(4, 12)]
    mine = make_job("mine", team="vision", user="n34b", time_limit_s=3600 if kind == "job" else None)
    if kind == "lease":
        mine = replace(mine, spec=replace(mine.spec, kind=JobKind.LEASE))
    b_mine = running(make_job("b-mine", team="vision", user="n34b", time_limit_s=300), "vm-3", [0], started=-0.5)
    return jobs, mine, b_mine


@pytest.mark.parametrize("kind", ["lease", "job"])
def test_newuser34_n4_work_within_its_guarantee_once_its_teams_job_ends_is_projected_then_not_behind_a_borrower(
        kind: str) -> None:
    """Failed before: "ETA 12:09, when n34a's job a-flood-8 ends" (behind ml's borrowing flood in queue order) and, for
    the lease, "a kernel holds its GPUs until it releases them, so it cannot start ahead of n34a's job a-flood-4" — while
    the cycle gives b-mine's GPU to it (within vision's guarantee once b-mine ends), ahead of ml's borrowers."""
    from core_builders import snapshot

    quota = quotas(Quota(team="ml", guaranteed=3, borrowing_limit=1), Quota(team="vision", guaranteed=1, borrowing_limit=1))
    nodes = [make_node(f"vm-{i}", gpus=1) for i in range(4)]
    jobs, mine, b_mine = _n4_jobs(kind)
    result = run_cycle(snapshot(nodes, [*jobs, b_mine, mine], quota=quota))
    reason = next(p.reason for p in result.pending if p.job_id == "mine")
    assert reason.eta == T0 + timedelta(minutes=4.5), reason.eta  # b-mine's end by its 5m limit
    assert reason.details["eta_waits_on"] == ["b-mine"], reason.details
    line = render_reason(reason_to_dict(reason), now=T0, mine=True, kind=kind).line
    assert "ETA 12:04 UTC, when b-mine ends" in line, line
    assert "so it cannot start ahead of" not in line, line
    if kind == "lease":  # its clause says which GPUs the reservation keeps it off, and which go to it first
        assert ("on GPUs other teams free it cannot start ahead of n34a's job a-flood-4, whose GPUs are reserved from "
                "12:01 UTC, but the GPUs vision's own running work frees go to it first (within vision's guarantee)"
                in line), line
    # and the cycle keeps that word: with b-mine ended, its GPU goes to vision's work, not to ml's borrowers ahead
    then = run_cycle(snapshot(nodes, [*jobs, mine], quota=quota))
    assert [a.job_id for a in then.admits] == ["mine"], then.admits


@pytest.mark.parametrize("held,needs,said", [
    ((1, 1), 2, "it can start only after "),  # both must go: not "one or more of"
    ((2, 2), 2, "it can start only after one or more of "),  # either one frees enough
    ((1, 1, 1, 1), 3, "it can start only after at least 3 of "),
], ids=["both", "either", "three-of-four"])
def test_s34n6_note_a_capacity_wait_on_holders_without_limits_says_how_many_must_end(held, needs, said) -> None:  # type: ignore[no-untyped-def]
    """s34-n6's note: "ETA unknown: it can start only after one or more of … end" where the job needed every GPU
    the holders had (2 GPUs, two 1-GPU holders without a time limit, a 2-GPU job)."""
    from core_builders import running, snapshot

    gpus, jobs, at = sum(held), [], 0
    for i, n in enumerate(held):
        jobs.append(running(make_job(f"h{i}", user=f"u{i}", gpus=n, unlimited=True), "n1", list(range(at, at + n))))
        at += n
    result = run_cycle(snapshot([make_node(gpus=gpus)], [*jobs, make_job("w", user="ann", gpus=needs, submitted=1)]))
    (pend,) = result.pending
    assert pend.reason.eta is None, pend.reason
    line = render_reason(reason_to_dict(pend.reason), now=T0).line
    assert said in line, line
    if said == "it can start only after ":
        assert "one or more of" not in line and "at least" not in line, line
