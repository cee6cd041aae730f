"""newuser40 n10: ``quotas what-if`` replayed GPU shares as asked ("at most 2.1 GPUs at once") while admission counted
the same team at 3 that hour (a GPU only its shares occupy counts whole). The replay now counts as the quota lines
count (the usage rows' charge, red40 R1), the asked figures beside it in the answer and its words.

Real store, engine and local executor (``sleep``); the GPUs are the simulated inventory's 4 x 80 GiB (no GPU here).
"""

from __future__ import annotations

from jupyter_sched.model.units import to_iso
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest
from jupyter_sched.services.models.quotas import GetQuotaWhatIfRequest


def test_newuser40_n10_what_if_counts_shares_as_the_line_counts_with_the_ask_beside(services: Services) -> None:
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, SetQuotasRequest.model_validate(
        {"quotas": [{"team": "vision", "guaranteed": 2, "borrowing_limit": 1}], "user_teams": {"ana": "vision"}}))
    ana = services.caller("ana", admin=False, groups=["vision"])
    since = services.clock.now()
    for i in range(1, 5):
        services.jobs.submit(ana, SubmitJobRequest.model_validate(
            {"name": f"half{i}", "team": "vision", "gpus": 0.5, "mem_per_gpu": "30GiB", "command": ["sleep", "600"]}))
    services.jobs.submit(ana, SubmitJobRequest.model_validate(
        {"name": "tenth", "team": "vision", "gpus": 0.1, "mem_per_gpu": "70GiB", "command": ["sleep", "600"]}))
    services.engine.tick()
    services.clock.advance(3600)
    services.engine.tick()
    answer = services.accounting.what_if(boss, GetQuotaWhatIfRequest(
        team="vision", guaranteed=2, borrowing_limit=1, since=to_iso(since))).model_dump(mode="json")
    proposed = answer["proposed"]
    # 3 GPUs held for the hour as admission counts them (two GPUs of two halves, the tenth's GPU whole), 2.1 asked
    assert (proposed["peak_gpus"], proposed["used_gpu_hours"]) == (3.0, 3.0), proposed
    assert (proposed["asked_peak_gpus"], proposed["asked_gpu_hours"]) == (2.1, 2.1), proposed
    assert proposed["over_limit_gpu_hours"] == 0.0 and proposed["borrowed_gpu_hours"] == 1.0, proposed
    assert answer["in_force"]["asked_peak_gpus"] == 2.1, answer["in_force"]
    assert ("used 3.0 GPU-hours, at most 3 GPUs at once, counted as its quota lines count them (a GPU only its GPU shares "
            "held counts whole; as asked: 2.1 GPU-hours, at most 2.1 GPUs at once)") in answer["text"], answer["text"]
