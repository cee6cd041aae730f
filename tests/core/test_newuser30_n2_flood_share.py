"""New user 30, N2: a user holding more than their equal share while another user's work waits gets no
elected job, in the cycle and in the ETA replay alike (:func:`jupyter_sched.queues.order.election_barred`).

The rig: ana runs 4 long jobs on the node's 4 GPUs (progress reports project their ends a cycle apart) and
queues 20 four-minute sweeps; bo queues one job 20 s later — #1 in the fair order (bo holds nothing).
s30-fair's bound (an elected job is passed by at most one elected job of each other user) protected only a
job that was itself elected: bo's job, promised the flood's end by the replay that elected ana's sweeps
ahead of it, was not, and every GPU that freed went to ana's next elected sweep (27 min, live). Now ana,
holding 4 of 4 GPUs against an equal share of 2, gets no elected job while bo's job waits: bo's job
starts on the first GPU that frees, and its ETA and its promise say so from the start.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, Scenario, make_job, make_node, straight_report

from jupyter_sched.model import PendingReason
from jupyter_sched.queues.order import PROMISE, Holdings, election_barred

ENDS_S = {f"a-long{i}": 720.0 + 2 * i for i in range(1, 5)}
"""Where each long job's progress reports project its end (s after T0, when it started): a GPU every 2 s."""


def _cycle(sc: Scenario) -> tuple[dict[str, PendingReason], list[str]]:
    jobs = {j.id: j for j in sc.snap.jobs}
    sc.snap = replace(sc.snap, progress={
        jid: straight_report(jobs[jid].started_at or T0, sc.snap.now, total) for jid, total in ENDS_S.items()
        if jid in jobs and jobs[jid].started_at is not None and jobs[jid].state.holds_gpus})
    result = sc.cycle()
    return {p.job_id: p.reason for p in result.pending}, [a.job_id for a in result.admits]


def _flood() -> Scenario:
    sc = Scenario([make_node("n1", gpus=4)])
    sc.submit(*(make_job(f"a-long{i}", user="ana", time_limit_s=15 * 60) for i in range(1, 5))).cycle()
    sc.at(10 / 60).submit(*(make_job(f"a-sweep-{i}", user="ana", time_limit_s=5 * 60, submitted=(8 + i * 0.4) / 60)
                            for i in range(1, 21)))
    _cycle(sc)
    sc.at(30 / 60).submit(make_job("b-train", user="bo", time_limit_s=5 * 60, submitted=28 / 60))
    return sc


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_newuser30_n2_a_users_flood_above_its_share_is_not_elected_ahead_of_a_lighter_users_job() -> None:
    sc = _flood()
    first_free = _at(ENDS_S["a-long1"])
    for minute in (0.5, 1.0, 5.0, 9.5, 11.9):
        reasons = _cycle(sc.at(minute))[0]
        bo = reasons["b-train"]
        assert bo.position == 1, (minute, bo.message)
        assert bo.eta == first_free, (minute, bo.eta, bo.message)
        # its promise (the replay's ETA without reports) is the first GPU to free, not the flood's end
        promise = bo.details[PROMISE]
        assert datetime.fromisoformat(promise["start"]) <= _at(900), promise
        # ana holds 4 of 4 GPUs (equal share 2) while bo's job waits: none of her overdue sweeps is elected
        assert not any("elected" in r.details for jid, r in reasons.items() if jid.startswith("a-")), minute
    assert "elected" in reasons["b-train"].details  # bo's own job is: bo holds nothing
    started: dict[str, datetime] = {}
    for jid in ENDS_S:
        sc.at(ENDS_S[jid] / 60).finish(jid)
        for admitted in _cycle(sc)[1]:
            started[admitted] = sc.snap.now
    assert started.get("b-train") == first_free, started
    # once ana is back within her share (2 of 4) her sweeps go on in order, the longest waiting first
    assert sorted(started, key=lambda j: (started[j], j)) == ["b-train", "a-sweep-1", "a-sweep-2", "a-sweep-3"]


def test_newuser30_n2_an_overdue_job_of_a_user_within_their_share_is_still_elected() -> None:
    """Issue 16's bound holds for a user within their share: ana (1 GPU of 4, equal share 4/3 among ana,
    carol and dave) has her 2-GPU job elected once overdue, ahead of dave's later 1-GPU jobs that the fair
    order puts first (dave holds nothing); carol, holding 3, gets no elected job while they wait."""
    sc = Scenario([make_node("n1", gpus=4)])
    sc.submit(make_job("a-long", user="ana", time_limit_s=15 * 60),
              *(make_job(f"c-long{i}", user="carol", time_limit_s=15 * 60) for i in range(1, 4))).cycle()
    sc.at(10 / 60).submit(make_job("a-big", user="ana", gpus=2, time_limit_s=5 * 60, submitted=10 / 60),
                          make_job("c-next", user="carol", time_limit_s=5 * 60, submitted=10 / 60))
    sc.cycle()
    sc.at(20 / 60).submit(make_job("d-1", user="dave", time_limit_s=5 * 60, submitted=20 / 60),
                          make_job("d-2", user="dave", time_limit_s=5 * 60, submitted=20 / 60))
    reasons = {p.job_id: p.reason for p in sc.cycle().pending}
    # a-big's election falls due before the GPUs free (the 15-min ends): it is #1 from now, as it will be then —
    # positions follow the order when the GPUs free, as the ETAs do (newuser38 N2)
    assert reasons["a-big"].position == 1, {j: r.position for j, r in reasons.items()}
    reasons = {p.job_id: p.reason for p in sc.at(14.0).cycle().pending}  # every promise (the 15-min ends) overdue
    big = reasons["a-big"]
    assert "elected" in big.details and big.position == 1, big.message
    assert "elected" not in reasons["c-next"].details, reasons["c-next"].message
    assert "elected" not in reasons["d-1"].details or reasons["d-1"].position > 1


def test_newuser30_n2_election_barred_reads_the_equal_share_and_a_waiting_job_it_has_room_for() -> None:
    """Unit: ana holds 3 of 4 GPUs (share 2 among ana and bo). bo's waiting 1-GPU job fits bo's share, so
    ana is barred; a waiting 3-GPU job of bo would take bo above the share, so it does not bar her; with
    quotas (``held`` None) nobody is barred; a user within their share never is."""
    sweep = make_job("a-sweep", user="ana")
    held = Holdings({"ana": 3.0}, {"default": 3.0}, user_share=2.0, team_share=4.0)
    barred = election_barred([sweep, make_job("b-one", user="bo")], held)
    assert barred is not None and barred(sweep) and not barred(make_job("b-two", user="bo"))
    assert election_barred([sweep, make_job("b-big", user="bo", gpus=3)], held) is None
    assert election_barred([sweep, make_job("b-one", user="bo")], None) is None
    assert election_barred([sweep, make_job("b-one", user="bo")], replace(held, by_user={"ana": 2.0})) is None
