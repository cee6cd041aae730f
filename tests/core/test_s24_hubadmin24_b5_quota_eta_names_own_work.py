"""hubadmin24 B5: a job its own team's quota holds back is told its ETA is when its *team's* running work
ends — the work whose end brings the team under its limit — never when another team's job ends (nlp's
jobs were told "when ha24r's job "w1-r1" … ends", a research job, where research's end freed a GPU that
nlp's quota could not use)."""

from __future__ import annotations

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.scheduling import run_cycle

LINES = quotas(Quota(team="nlp", guaranteed=1, borrowing_limit=0), Quota(team="research", guaranteed=2))


def _world(pending_gpus: int = 1) -> list:
    # n1: research's jobs (one ends in 5 min, one in 30); n2: nlp's (10 and 20 min) — nlp is 1 over its limit of 1
    return [
        running(make_job("w1-r1", gpus=1, team="research", user="ha24r", time_limit_s=600), "n1", [0], started=-5),
        running(make_job("w1-r2", gpus=1, team="research", user="ha24r", time_limit_s=2400), "n1", [1], started=-10),
        running(make_job("b-nlp", gpus=1, team="nlp", user="ha24b", time_limit_s=900), "n2", [0], started=-5),
        running(make_job("w1-b1", gpus=1, team="nlp", user="ha24b", time_limit_s=1500), "n2", [1], started=-5),
        make_job("w1-i1", gpus=pending_gpus, team="nlp", user="ha24i", submitted=1),
    ]


def test_s24_hubadmin24_b5_a_quota_held_job_waits_for_its_own_teams_work() -> None:
    result = run_cycle(snapshot([make_node("n1", gpus=2), make_node("n2", gpus=2)], _world(), quota=LINES))
    (pend,) = result.pending
    assert pend.reason.code in ("ExceedsQuota", "BorrowingLimitReached"), pend.reason
    waits = pend.reason.details["eta_waits_on"]
    assert waits == ["w1-b1"], ("nlp is under its limit of 1 once both its jobs end; the last is w1-b1", waits)
    assert pend.reason.eta is not None and round((pend.reason.eta - T0).total_seconds()) == 20 * 60, \
        pend.reason.eta
    assert "ha24r" not in str(pend.reason.details.get("eta_waits_on_owners")), pend.reason.details


def test_s24_hubadmin24_b5_capacity_later_than_the_quota_names_both_the_quota_first() -> None:
    # a 2-GPU nlp job under a limit raised to 2: quota room once b-nlp ends (15 min), two GPUs on one node at 20 min
    lines = quotas(Quota(team="nlp", guaranteed=2, borrowing_limit=0), Quota(team="research", guaranteed=2))
    world = _world(pending_gpus=2)
    world[3] = running(make_job("w1-b1", gpus=1, team="ops", user="ha24c", time_limit_s=1500), "n2", [1], started=-5)
    world.append(running(make_job("b-two", gpus=1, team="nlp", user="ha24b", time_limit_s=600), "n3", [0],
                         started=-5))
    result = run_cycle(snapshot([make_node("n1", gpus=2), make_node("n2", gpus=2), make_node("n3", gpus=1)], world,
                                quota=lines))
    (pend,) = result.pending
    waits = pend.reason.details["eta_waits_on"]
    assert waits[0] in ("b-nlp", "b-two") and "w1-b1" in waits, waits

