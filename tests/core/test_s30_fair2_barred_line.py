"""s30-fair2: a user above their equal share gets no elected job while another user's job waits that their
share has room for (:func:`jupyter_sched.queues.order.election_barred`, new user 30 N2) — but the overdue
job so passed over said nothing of it: its line read as any waiting job's, past the wait it was promised.
Now it says why it does not go first, with the numbers, in one clause of the one renderer (panel, magics
and CLI show ``reason.text`` / :func:`~jupyter_sched.wording.render_reason`).

The rig is new user 30 N2's (tests/core/test_newuser30_n2_flood_share.py): ana runs 4 long jobs on the 4
GPUs and queues 20 sweeps, bo queues one job 20 s later.
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import T0, Scenario, make_job, make_node, straight_report

from jupyter_sched.model import PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.wording import render_reason

ENDS_S = {f"a-long{i}": 720.0 + 2 * i for i in range(1, 5)}


def _cycle(sc: Scenario) -> dict[str, PendingReason]:
    jobs = {j.id: j for j in sc.snap.jobs}
    sc.snap = replace(sc.snap, progress={
        jid: straight_report(jobs[jid].started_at or T0, sc.snap.now, total) for jid, total in ENDS_S.items()
        if jid in jobs and jobs[jid].started_at is not None and jobs[jid].state.holds_gpus})
    return {p.job_id: p.reason for p in sc.cycle().pending}


def _flood() -> Scenario:
    sc = Scenario([make_node("n1", gpus=4)])
    sc.submit(*(make_job(f"a-long{i}", user="ana", time_limit_s=15 * 60) for i in range(1, 5))).cycle()
    sc.at(10 / 60).submit(*(make_job(f"a-sweep-{i}", user="ana", time_limit_s=5 * 60, submitted=(8 + i * 0.4) / 60)
                            for i in range(1, 21)))
    _cycle(sc)
    sc.at(30 / 60).submit(make_job("b-train", user="bo", time_limit_s=5 * 60, submitted=28 / 60))
    return sc


def test_s30_fair2_an_overdue_job_of_a_user_above_their_share_says_why_it_does_not_go_first() -> None:
    sc = _flood()
    reasons = _cycle(sc.at(1.0))
    assert not any("election_barred" in r.details for r in reasons.values())  # nothing overdue yet
    reasons = _cycle(sc.at(11.9))  # ana's sweeps are past their promised wait; bo's job still waits
    sweep = reasons["a-sweep-1"]  # her longest waiting: the one an election would have moved first
    assert "elected" not in sweep.details
    assert sweep.details["election_barred"] == {"user": "ana", "held": 4.0, "share": 2.0, "total": 4, "factor": 0.75}
    # one per user, as elections are: her later sweeps are not said to be passed over
    assert [jid for jid, r in reasons.items() if "election_barred" in r.details] == ["a-sweep-1"]
    line = render_reason(reason_to_dict(sweep), now=sc.snap.now, relative=True).line
    assert ("it has waited past 0.75 x its promised wait but does not go first: ana holds 4 of 4 GPUs, more than "
            "an equal share (2), while another user's job waits; it keeps its place in the queue's order") in line, line
    assert "elected" not in line  # the panel's glossary reads that word as going first
    assert "election_barred" not in reasons["b-train"].details


def test_s30_fair2_once_the_user_is_back_within_their_share_the_line_no_longer_says_it() -> None:
    sc = _flood()
    _cycle(sc.at(11.9))
    for jid in ("a-long1", "a-long2"):  # two GPUs free: bo's job and ana's longest waiting sweep start
        sc.at(ENDS_S[jid] / 60).finish(jid)
        reasons = _cycle(sc)
    assert not any("election_barred" in r.details for r in reasons.values()), \
        {j: r.message for j, r in reasons.items() if "election_barred" in r.details}
