"""New user 28, N4: one heavy user's flood of jobs is not all elected past a lighter user's job.

No quota, 4 GPUs: 4 x 20-minute jobs run, ana's a-long1 and lu's l-long2..4; ana queues 50 sweeps
(5-minute limits); bo queues one 15-minute job 20 s later. bo's job is first in the fair order (bo holds
nothing; session 28's rig had ana run all four — holding 4 of 4 against an equal share of 2 she now gets
no elected job while bo's job waits, new user 30 N2 — so lu holds the rest here and ana, within her
share of 4/3, is elected), and
is promised the first GPU that frees (the 20-minute limits). About 15 minutes later the waits of
ana's first sweeps and of bo's job pass ``elect_overdue`` x their promised waits within seconds of
each other, ana's first (queued 20 s earlier). Elected jobs were ordered among themselves by submit
time across users, so every elected sweep went ahead of bo's job: it was shown first but projected
after 47 of ana's jobs, and when GPUs freed ana's next sweeps took them
(:func:`jupyter_sched.queues.order.one_per_user`: now at most one elected job per user at a time).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, Scenario, make_job, make_node

from jupyter_sched.queues.order import PROMISE, overdue
from jupyter_sched.scheduling import CycleResult
from jupyter_sched.scheduling.snapshot import UsageHistory


def _flood(sweeps: int = 50) -> Scenario:
    """The N4 timeline up to every sweep's and bo's promise (cycles at T0, +10 s, +30 s)."""
    sc = Scenario([make_node("n1", gpus=4)])
    sc.snap = replace(sc.snap, usage=UsageHistory(decayed_gpu_seconds_by_user={"ana": 4 * 3600.0}))  # her flood's usage
    sc.submit(make_job("a-long1", user="ana", time_limit_s=20 * 60),
              *(make_job(f"l-long{i}", user="lu", time_limit_s=20 * 60) for i in range(2, 5))).cycle()
    sc.at(10 / 60).submit(*(make_job(f"a-sweep-{i}", user="ana", time_limit_s=5 * 60, submitted=(8 + i * 0.4) / 60)
                            for i in range(1, sweeps + 1))).cycle()
    sc.at(30 / 60).submit(make_job("b-train", user="bo", time_limit_s=15 * 60, submitted=28 / 60)).cycle()
    return sc


def _reasons(result: CycleResult) -> dict[str, object]:
    return {p.job_id: p.reason for p in result.pending}


def test_newuser28_n4_lighter_users_first_job_keeps_its_place_and_eta_once_elected() -> None:
    sc = _flood()
    assert [sc.state(j) for j in ("a-long1", "l-long2", "l-long3", "l-long4")] == ["running"] * 4
    first = {p.job_id: p.reason for p in sc.results[-1].pending}["b-train"]
    # #2 from the start: when the GPUs free (20 min) ana's longest waiting sweep is elected ahead of it, and
    # positions follow the order then, as the ETAs do (newuser38 N2) — its place does not move
    assert first is not None and first.position == 2 and first.eta == T0 + timedelta(minutes=20)
    # 15m12s on: the first sweeps and b-train have waited past 0.75 x their promised waits, ana's first
    now = T0 + timedelta(minutes=15.2)
    assert overdue(sc.job("a-sweep-1"), now, 0.75) and overdue(sc.job("b-train"), now, 0.75)
    assert sc.job("a-sweep-1").reason.details[PROMISE]["start"] == (T0 + timedelta(minutes=20)).isoformat()  # type: ignore[union-attr]
    result = sc.at(15.2).cycle()
    reasons = {p.job_id: p.reason for p in result.pending}
    bo = reasons["b-train"]
    # one order for the position, the ETA walk and admission: only ana's longest waiting sweep, elected
    # (its line says so), goes ahead of it; b-train gets the first GPUs that free, with it
    assert bo is not None and bo.position == 2, bo
    assert bo.eta == T0 + timedelta(minutes=20), (bo.eta, bo.message)
    first_line = reasons["a-sweep-1"]
    assert first_line is not None and first_line.position == 1 and "elected" in first_line.details
    assert "it goes first: it has waited" in first_line.message, first_line.message
    ahead = sorted(jid for jid, r in reasons.items() if r is not None and r.eta is not None and r.eta < bo.eta)
    assert ahead == []
    assert all(r.position > 2 for jid, r in reasons.items() if jid not in ("b-train", "a-sweep-1") and r is not None)


def test_newuser28_n4_when_gpus_free_the_lighter_users_job_is_admitted_not_passed_by_the_flood() -> None:
    sc = _flood()
    sc.at(15.2).cycle()
    result = sc.finish("a-long1", "l-long2").cycle()  # two GPUs free at 15m12s: b-train and ana's first sweep
    assert sorted(a.job_id for a in result.admits) == ["a-sweep-1", "b-train"]


def test_newuser28_n4_at_most_one_elected_job_per_user_the_rest_keep_the_queues_order() -> None:
    """Of each user's overdue jobs only the longest waiting is elected (queues.order.one_per_user); the
    elected go longest waiting first, and ana's later overdue sweeps keep their place in the fair order
    — after a third user's job that is not overdue."""
    sc = _flood(sweeps=8)
    sc.submit(make_job("c-late", user="cy", time_limit_s=5 * 60, submitted=14)).at(14.1).cycle()
    result = sc.at(19.5).cycle()  # sweeps 1-8 and b-train overdue; cy's job is not
    now = T0 + timedelta(minutes=19.5)
    assert not overdue(sc.job("c-late"), now, 0.75)
    assert all(overdue(sc.job(f"a-sweep-{i}"), now, 0.75) for i in range(1, 9))
    order = sorted((p.reason.position, p.job_id) for p in result.pending if p.reason is not None)
    names = [jid for _, jid in order]
    assert names[:3] == ["a-sweep-1", "b-train", "c-late"], names
    elected = sorted(p.job_id for p in result.pending if p.reason is not None and "elected" in p.reason.details)
    assert elected == ["a-sweep-1", "b-train"]
