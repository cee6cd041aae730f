"""Priority classes across teams with no quota configured (red team 18, R8).

A hub as first started has no quotas. Team b ran 4 ``low`` jobs with no time limit on all 4 GPUs
and team a's ``normal`` job pended for ever: "no quotas are set, so no team takes GPUs back from
another" — while DESIGN.md says ``low`` is always preemptible. Now a higher class whose team holds
less than an equal share (total GPUs / teams with work, the no-quota fair order's share) evicts
the fewest of other teams' ``low`` jobs that make it fit; a team at its share does not.
"""

from __future__ import annotations

from core_builders import T0, Scenario, make_job, make_node, running, snapshot

from jupyter_sched.scheduling import run_cycle


def _b_low(n: int) -> list:  # type: ignore[type-arg]
    return [running(make_job(f"b-low{i}", team="teamb", user="red18b", priority="low"), "n1", [i], started=-30)
            for i in range(n)]


def test_red18_r8_a_normal_job_of_a_team_below_its_share_preempts_another_teams_low_work() -> None:
    s = Scenario([make_node("n1", gpus=4)])
    s.submit(*_b_low(4), make_job("a-normal", team="teama", user="red18a", submitted=1))
    first = s.cycle()
    assert [(p.for_job, p.kind) for p in first.preemptions] == [("a-normal", "class")], first.pending  # one victim
    victim = first.preemptions[0]
    assert victim.reason.startswith("preempted by higher-priority normal job a-normal of team teama: low work is "
                                    "always preemptible")
    assert "teama: 0 GPUs, share 2" in victim.reason
    audit = [r for r in first.audit if r.action == "preempt"]
    assert audit and audit[0].details["kind"] == "class"
    second = s.at(1).cycle()  # the victim has stopped (grace 0 here): the job starts, nothing more is evicted
    assert [a.job_id for a in second.admits] == ["a-normal"]
    assert not second.preemptions
    third = s.at(2).cycle()  # the requeued low job waits; it never preempts back (low preempts nothing)
    assert not third.preemptions and not third.admits
    assert s.state(victim.job_id) == "pending"


def test_red18_r8_a_team_at_its_equal_share_does_not_preempt_and_is_told_the_rule() -> None:
    jobs = [*_b_low(2), running(make_job("a-run0", team="teama", user="red18a"), "n1", [2], started=-30),
            running(make_job("a-run1", team="teama", user="red18a"), "n1", [3], started=-30),
            make_job("a-more", team="teama", user="red18a", submitted=1)]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, now=T0))
    assert not result.preemptions  # teama holds 2 of 4 GPUs with 2 teams: its share
    reason = next(p.reason for p in result.pending if p.job_id == "a-more")
    assert ("no quotas are set, so other teams' low work is preempted only for a team holding less than an equal "
            "share of the GPUs (teama holds 2, share 2)") in reason.message, reason.message


def test_red18_r8_a_low_job_never_preempts_another_teams_low_work() -> None:
    result = run_cycle(snapshot([make_node("n1", gpus=4)],
                                [*_b_low(4), make_job("a-low", team="teama", user="red18a", priority="low")]))
    assert not result.preemptions
