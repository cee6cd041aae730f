"""newuser40 N4: a quota change's dry run said both "this change preempts at the next cycle: … tenth … half4 …
half3 …" and "vision: running work holds 2.1 GPUs, 1.1 GPUs over the new limit of 1 GPU — it runs on (nothing is
stopped)". The over-limit line now counts what runs on *besides* the preemptions it lists, as admission counts it (a
GPU only the team's shares occupy counts whole, the asked figure beside it).

Real store, engine and local executor (``sleep``); the GPUs are the simulated inventory's 4 x 80 GiB (no GPU here).
"""

from __future__ import annotations

from typing import Any

from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest

SLEEP = ["sleep", "600"]


def _put(services: Services, body: dict[str, Any]) -> list[str]:
    answer = services.quotas.set(services.caller("boss", admin=True), SetQuotasRequest.model_validate(body))
    return list(answer.warnings or ())


def _vision_on_three_gpus(services: Services, nlp_waiting: int) -> dict[str, str]:
    """vision (ana) runs 4 x 0.5 (two GPUs) + 1 x 0.1 asking 70 GiB (a GPU of its own); nlp (bo) runs one 1-GPU job
    and ``nlp_waiting`` more wait (every GPU busy). Returns the jobs' ids by name."""
    _put(services, {"quotas": [{"team": "vision", "guaranteed": 2, "borrowing_limit": 1},
                               {"team": "nlp", "guaranteed": 2, "borrowing_limit": 0}],
                    "user_teams": {"ana": "vision", "bo": "nlp"}})
    ana = services.caller("ana", admin=False, groups=["vision"])
    bo = services.caller("bo", admin=False, groups=["nlp"])
    ids = {}
    for i in range(1, 5):
        ids[f"half{i}"] = services.jobs.submit(ana, SubmitJobRequest.model_validate(
            {"name": f"half{i}", "team": "vision", "gpus": 0.5, "mem_per_gpu": "30GiB", "command": SLEEP})).id
    ids["tenth"] = services.jobs.submit(ana, SubmitJobRequest.model_validate(
        {"name": "tenth", "team": "vision", "gpus": 0.1, "mem_per_gpu": "70GiB", "command": SLEEP})).id
    ids["n-run"] = services.jobs.submit(bo, SubmitJobRequest(gpus=1, team="nlp", name="n-run", command=SLEEP)).id
    services.engine.tick()
    for i in range(nlp_waiting):
        ids[f"n-wait{i}"] = services.jobs.submit(bo, SubmitJobRequest(gpus=1, team="nlp", name=f"n-wait{i}",
                                                                      command=SLEEP)).id
    services.clock.advance(60)
    services.engine.tick()
    states = {name: services.store.get_job(job_id).job.state for name, job_id in ids.items()}  # type: ignore[union-attr]
    assert [n for n, s in states.items() if s.holds_gpus] == ["half1", "half2", "half3", "half4", "tenth", "n-run"]
    assert all(states[f"n-wait{i}"] is JobState.PENDING for i in range(nlp_waiting)), states
    return ids


def _dry(services: Services, vision: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The dry run of vision's line ``vision`` and nlp guaranteed 3: (its preemption lines, the rest)."""
    dry = _put(services, {"quotas": [{"team": "vision", **vision}, {"team": "nlp", "guaranteed": 3,
                                                                     "borrowing_limit": 0}], "dry_run": True})
    preempts = [w for w in dry if w.startswith("this change preempts at the next cycle: ")]
    return preempts, [w for w in dry if w not in preempts]


def test_newuser40_N4_what_runs_on_besides_the_preemptions_is_counted_as_the_line_counts(services: Services) -> None:
    """Failed before: beside the preemption lines, "vision: running work holds 2.1 GPUs, 1.1 GPUs over the new limit
    of 1 GPU — it runs on (nothing is stopped)"."""
    ids = _vision_on_three_gpus(services, nlp_waiting=2)
    preempts, rest = _dry(services, {"guaranteed": 1, "borrowing_limit": 0})
    assert len(preempts) == 2 and all("of vision, 0.5 GPU" in w for w in preempts), preempts  # a GPU of two halves
    (over,) = [w for w in rest if w.startswith("vision: ")]
    assert over == ("vision: besides the 2 preemptions above, running work holds 2 GPUs as the line counts them "
                    "(1.1 GPUs asked: a GPU only its shares occupy counts whole), 1 GPU over the new limit of 1 GPU — "
                    "the rest runs on (nothing else is stopped); its 2 pending jobs wait until it is under"), over
    assert not [w for w in rest if "(nothing is stopped)" in w], rest
    assert all(services.store.get_job(j).job.state.holds_gpus for n, j in ids.items()  # type: ignore[union-attr]
               if not n.startswith("n-wait")), "a dry run stops nothing"


def test_newuser40_N4_preemptions_that_bring_a_line_within_its_limit_leave_no_runs_on_line(services: Services) -> None:
    """The same preemptions leave vision at 2 GPUs, its new limit: no line says anything runs on over it (failed
    before: "vision: running work holds 2.1 GPUs, 0.1 GPU over the new limit of 2 GPUs — it runs on")."""
    _vision_on_three_gpus(services, nlp_waiting=2)
    preempts, rest = _dry(services, {"guaranteed": 1, "borrowing_limit": 1})
    assert len(preempts) == 2, preempts
    assert not [w for w in rest if "runs on" in w or "over the new limit" in w], rest


def test_newuser40_N4_a_lowered_limit_that_preempts_nothing_counts_shares_whole_with_the_ask_beside(
        services: Services) -> None:
    """No team reclaims: vision's limit lowered to 1 stops nothing; its work holds 3 GPUs as the line counts them (the
    0.1 share alone on its GPU counts whole), 2.1 asked (failed before: "holds 2.1 GPUs, 1.1 GPUs over")."""
    _vision_on_three_gpus(services, nlp_waiting=0)
    dry = _put(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 0},
                                     {"team": "nlp", "guaranteed": 2, "borrowing_limit": 0}], "dry_run": True})
    assert not [w for w in dry if "preempts" in w], dry
    (over,) = [w for w in dry if w.startswith("vision: ")]
    assert over.startswith("vision: running work holds 3 GPUs as the line counts them (2.1 GPUs asked: a GPU only its "
                           "shares occupy counts whole), 2 GPUs over the new limit of 1 GPU — it runs on (nothing is "
                           "stopped)"), over
