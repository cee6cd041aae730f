"""Red team 38 R3 through the service: shares spread by their memory are charged the GPUs they hold.

0.1-GPU jobs asking 70 GiB each of 80 GiB simulated GPUs cannot share one GPU: each opens a GPU of its
own. The team (guaranteed 1, borrowing limit 1: at most 2 GPUs) gets two of them; the third waits
naming the borrowing limit, and ``GET me`` says the team uses 2 GPUs, not 0.2. Real store, engine and
local executor (``sleep``); the GPUs are the simulated inventory's (no GPU here).
"""

from __future__ import annotations

from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest


def test_red38_r3_spread_shares_wait_on_the_borrowing_limit_and_get_me_counts_them_whole(
        services: Services) -> None:
    root, al = services.caller("root", admin=True), services.caller("al", admin=False)
    team = services.accounting.me(al).team
    services.quotas.set(root, SetQuotasRequest.model_validate(
        {"quotas": [{"team": team, "guaranteed": 1, "borrowing_limit": 1}]}))
    al = services.caller("al", admin=False)
    jobs = [services.jobs.submit(al, SubmitJobRequest.model_validate(
        {"name": f"frac{i}", "command": ["sleep", "60"], "gpus": 0.1, "mem_per_gpu": "70GiB"}))
        for i in range(3)]
    services.engine.tick()
    wires = [services.jobs.get(al, j.id).model_dump(mode="json") for j in jobs]
    states = [w["state"] for w in wires]
    assert states.count("pending") == 1, states
    waiting = next(w for w in wires if w["state"] == "pending")
    reason = waiting["reason"]
    assert reason["code"] == "BorrowingLimitReached", reason
    assert "borrowing limit" in reason["message"], reason["message"]
    me = services.accounting.me(al).model_dump(mode="json")
    assert me["team_in_use"] == 2.0, me["team_in_use"]  # two GPUs held, each whole: not 0.2
    assert "2 GPUs in use by the team" in me["quota_text"], me["quota_text"]
