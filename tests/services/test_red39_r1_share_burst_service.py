"""Red team 39 R1 through the service: a burst of shares submitted after a cycle is charged whole.

The engine decides a job submitted between full cycles at once, on the last cycle's live ledger
(:class:`~jupyter_sched.scheduling.live.LiveCycle`). A cycle that saw no share built a ledger that
never counted shares: 0.1-GPU / 70 GiB jobs submitted together after it were each charged 0.1 while each
opened a simulated 80 GiB GPU of its own — the team (at most 2 GPUs) held every free GPU. Real store,
engine and local executor (``sleep``); the GPUs are the simulated inventory's (no GPU here).
"""

from __future__ import annotations

from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest


def test_red39_r1_shares_submitted_after_a_cycle_wait_on_the_borrowing_limit(services: Services) -> None:
    root, al = services.caller("root", admin=True), services.caller("al", admin=False)
    team = services.accounting.me(al).team
    services.quotas.set(root, SetQuotasRequest.model_validate(
        {"quotas": [{"team": team, "guaranteed": 1, "borrowing_limit": 1}]}))
    al = services.caller("al", admin=False)
    services.engine.tick()  # a full cycle with no share in it: its ledger decides the burst below
    jobs = [services.jobs.submit(al, SubmitJobRequest.model_validate(
        {"name": f"burst{i}", "command": ["sleep", "60"], "gpus": 0.1, "mem_per_gpu": "70GiB"}))
        for i in range(4)]
    services.engine.tick()
    assert services.engine.incremental.decided >= 1, "the burst was not decided on the live ledger"
    wires = [services.jobs.get(al, j.id).model_dump(mode="json") for j in jobs]
    states = [w["state"] for w in wires]
    assert states.count("pending") == 2, states  # was 0: all four GPUs taken on a limit of 2
    for waiting in (w for w in wires if w["state"] == "pending"):
        assert waiting["reason"]["code"] == "BorrowingLimitReached", waiting["reason"]
    me = services.accounting.me(al).model_dump(mode="json")
    assert me["team_in_use"] == 2.0, me["team_in_use"]
    assert "over the team's limit" not in me["quota_text"], me["quota_text"]
    for j in jobs:
        services.jobs.cancel(al, j.id)
    services.engine.tick()
