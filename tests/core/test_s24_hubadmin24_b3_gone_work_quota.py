"""hubadmin24 B3: work left running on GPUs (or a node) the inventory no longer lists is charged to its
team's quota at admission and in the pending reasons — one number with ``status`` and ``queue --summary``
(which count ``job.gpus``) — while its GPUs stay out of placement (nobody is handed them)."""

from __future__ import annotations

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.ledger import CycleLedger


def test_s24_hubadmin24_b3_work_on_a_gone_node_counts_against_its_team_quota() -> None:
    # p-probe ran on the simulated node "vm"; the service moved to an inventory file of n1 (4 GPUs)
    probe = running(make_job("p-probe", gpus=1, team="ops", user="ha24p"), node="vm")
    wide = make_job("w1-c2", gpus=2, team="ops", user="ha24c", submitted=1)
    snap = snapshot([make_node("n1", gpus=4)], [probe, wide],
                    quota=quotas(Quota(team="ops", guaranteed=1, borrowing_limit=1)))
    result = run_cycle(snap)
    assert not result.admits, "ops holds 1 GPU on a gone node: 1 + 2 is above its limit of 2"
    (pend,) = result.pending
    assert pend.reason.code == "BorrowingLimitReached", pend.reason
    assert pend.reason.details["used"] == 1 and pend.reason.details["quota"] == 2, pend.reason.details
    assert pend.reason.message.startswith("ops would use 3 GPUs, above its limit of 2 GPUs"), pend.reason.message
    ledger = CycleLedger(snap)
    assert "p-probe" not in ledger.holders and not ledger.state.holdings.get("p-probe"), "no capacity taken"


def test_s24_hubadmin24_b3_gone_gpus_on_a_listed_node_count_and_are_not_placed() -> None:
    # node n1 still listed, but its GPUs 2 and 3 went (a smaller simulated inventory): b-nlp holds GPU 3
    nlp = running(make_job("b-nlp", gpus=1, team="nlp", user="ha24b"), node="n1", indices=[3])
    one = make_job("w1-i1", gpus=1, team="nlp", user="ha24i", submitted=1)
    other = make_job("o-1", gpus=2, team="ops", user="ha24o", submitted=2)
    snap = snapshot([make_node("n1", gpus=2)], [nlp, one, other],
                    quota=quotas(Quota(team="nlp", guaranteed=1, borrowing_limit=0),
                                 Quota(team="ops", guaranteed=1, borrowing_limit=1)))
    ledger = CycleLedger(snap)
    assert ledger.quota.usage[("nlp", None, "*")] == 1000, "charged to nlp's line"
    result = run_cycle(snap)
    assert [a.job_id for a in result.admits] == ["o-1"], "both listed GPUs go to ops; nlp is at its quota"
    (pend,) = result.pending
    assert pend.job_id == "w1-i1" and pend.reason.code == "ExceedsQuota", pend.reason
    assert pend.reason.details["used"] == 1, pend.reason.details


def test_s24_hubadmin24_b3_one_requested_model_is_the_line_charged() -> None:
    gone = running(make_job("a-run", gpus=2, team="vision", user="ha24a", models=["A100-80GB"]), node="vm")
    nxt = make_job("a-next", gpus=1, team="vision", user="ha24a", models=["A100-80GB"], submitted=1)
    snap = snapshot([make_node("n1", gpus=4, model="A100-80GB")], [gone, nxt],
                    quota=quotas(Quota(team="vision", gpu_model="A100-80GB", guaranteed=2, borrowing_limit=0)))
    result = run_cycle(snap)
    assert not result.admits
    assert result.pending[0].reason.details["used"] == 2, result.pending[0].reason.details
