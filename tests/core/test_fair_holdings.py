"""With no quota configured, what users and teams hold now orders the queue (red team 15, R4).

A shared hub as first started has no quota lines, so the teams' borrowed shares are all 0 and
could not tell a user holding 3 of 4 GPUs from one holding 1: the heavier user's older job went
first. :mod:`jupyter_sched.queues.order` now orders by GPUs held first (teams, then users inside a
team) above an equal share of the GPUs, then by the usage share — and with quotas exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Job, Quota, QuotaSet
from jupyter_sched.queues.order import QUEUE_SORTS, QueueContext, holdings
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory


@dataclass
class Order:
    jobs: list[Job]
    want_positions: dict[str, int]
    quota: QuotaSet = field(default_factory=QuotaSet)
    usage: dict[str, float] = field(default_factory=dict)
    sort: str = "fair"


def hog(n: int, user: str = "red15b", team: str = "teamb") -> Job:
    return running(make_job(f"hog{n}", user=user, team=team), "n1", [n])


CASES = [
    pytest.param(Order(jobs=[running(make_job("a-train", user="red15a", team="teama"), "n1", [0]),
                             hog(1), hog(2), hog(3),
                             make_job("hog4", user="red15b", team="teamb", submitted=1),
                             make_job("a-second", user="red15a", team="teama", submitted=2)],
                       want_positions={"a-second": 1, "hog4": 2}),
                 id="test_red15_r4_a team holding 1 of 4 GPUs queues ahead of one holding 3, submitted later"),
    pytest.param(Order(jobs=[running(make_job("a-train", user="red15a", team="lab"), "n1", [0]),
                             hog(1, team="lab"), hog(2, team="lab"), hog(3, team="lab"),
                             make_job("hog4", user="red15b", team="lab", submitted=1),
                             make_job("a-second", user="red15a", team="lab", submitted=2)],
                       want_positions={"a-second": 1, "hog4": 2}),
                 id="test_red15_r4_inside one team the user holding fewer GPUs goes first"),
    pytest.param(Order(jobs=[running(make_job("a-train", user="red15a", team="lab"), "n1", [0]),
                             hog(1, team="lab"), hog(2, team="lab"), hog(3, team="lab"),
                             make_job("hog4", user="red15b", team="lab", submitted=1),
                             make_job("a-second", user="red15a", team="lab", submitted=2)],
                       want_positions={"a-second": 1, "hog4": 2}, sort="fair-usage"),
                 id="test_red15_r4_fair-usage orders by GPUs held too"),
    pytest.param(Order(jobs=[make_job("heavy1", user="heavy", team="lab", submitted=0),
                             make_job("light1", user="light", team="lab", submitted=1)],
                       usage={"heavy": 1e6, "light": 10.0}, want_positions={"light1": 1, "heavy1": 2}),
                 id="test_red15_r4_holding nothing, recent usage still decides"),
    pytest.param(Order(jobs=[running(make_job("a-run", user="a", team="teama", gpus=2), "n1", [0, 1]),
                             make_job("a1", user="a", team="teama", submitted=0),
                             make_job("a2", user="a", team="teama", submitted=1),
                             make_job("a3", user="a", team="teama", submitted=2),
                             make_job("b1", user="b", team="teamb", submitted=3),
                             make_job("b2", user="b", team="teamb", submitted=4)],
                       want_positions={"b1": 1, "b2": 2, "a1": 3, "a2": 4}),
                 id="test_red17_r10_a team at its equal share (2 of 4) goes after a team below it, submitted later"),
    pytest.param(Order(jobs=[running(make_job("a-run", user="a", team="teama", gpus=3), "n1", [0, 1, 2]),
                             make_job("a1", user="a", team="teama", submitted=0),
                             make_job("b1", user="b", team="teamb", submitted=5)],
                       quota=quotas(Quota(team="teama", guaranteed=4), Quota(team="teamb", guaranteed=4)),
                       want_positions={"a1": 1, "b1": 2}),
                 id="test_red15_r4_with quotas the borrowed shares order as before (no team borrows: submit time)"),
]


@pytest.mark.parametrize("case", CASES)
def test_queue_order_without_quotas(case: Order) -> None:
    snap = snapshot([make_node(gpus=4)], case.jobs, quota=case.quota,
                    usage=UsageHistory(decayed_gpu_seconds_by_user=case.usage))
    pending = [j for j in case.jobs if j.state.value == "pending"]
    held = None if case.quota.quotas else holdings(snap.jobs, 4)
    context = QueueContext(now=snap.now, team_share=lambda team: 0.0, user_usage=case.usage, held=held)
    order = [j.id for j in QUEUE_SORTS[case.sort](pending, context)]
    for job_id, position in case.want_positions.items():
        assert order.index(job_id) + 1 == position, order
    # the cycle itself gives the same positions (it builds the same context)
    result = run_cycle(snap, SchedulingProfile(queue_sort=case.sort))
    positions = {p.job_id: p.reason.position for p in result.pending}
    assert [j for j, _ in sorted(positions.items(), key=lambda kv: kv[1])] == [j for j in order if j in positions]


def test_red15_r4_holdings_count_admitted_running_and_fractions_not_pending() -> None:
    jobs = [running(make_job("r", user="u", team="t", gpus=2), "n1", [0, 1]),
            running(make_job("f", user="v", team="t", milli=500), "n1", [2], milli=500),
            make_job("p", user="u", team="t", milli=500)]
    held = holdings(jobs)
    assert dict(held.by_user) == {"u": 2.0, "v": 0.5}
    assert dict(held.by_team) == {"t": 2.5}
