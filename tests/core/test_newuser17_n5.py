"""New user 17, N5: a pending reason names a 0.5-GPU share as the cause only when the share's end
could free enough GPUs; a 2-GPU job waiting on a 3-GPU job is not told that "a whole GPU is free
only when they end" of the share beside it (the ETA names the 3-GPU job)."""

from __future__ import annotations

from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.scheduling import SchedulingProfile, run_cycle


def _reasons(*pending: object) -> dict:  # type: ignore[type-arg]
    jobs = [running(make_job("big", gpus=3, time_limit_s=1200), "n1", [0, 1, 2]),
            running(make_job("half", milli=500), "n1", [3], milli=500), *pending]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs), SchedulingProfile())
    return {p.job_id: p.reason for p in result.pending}


def test_newuser17_n5_a_share_is_not_blamed_for_a_wait_a_whole_gpu_job_causes() -> None:
    reason = _reasons(make_job("waiter", gpus=2, time_limit_s=600, submitted=1))["waiter"]
    assert "a whole GPU is free only when they end" not in reason.message, reason.message
    assert "held whole" in reason.message and "share" in reason.message, reason.message
    assert reason.details["shares_decide"] is False
    assert reason.details["eta_waits_on"] == ["big"], reason.details


def test_newuser17_n5_a_share_that_decides_the_wait_is_still_named_as_the_cause() -> None:
    reason = _reasons(make_job("one", gpus=1, time_limit_s=600, submitted=1))["one"]
    assert "a whole GPU is free only when they end" in reason.message, reason.message
    assert reason.details["shares_decide"] is True
