"""New user 20, N16: ``GET idle`` (the panel's My work idle line) said the stage before the one the
cycle had just reached — "if it stays idle, it is warned at 22:55" for the whole warning period
after the warning's toast, then "reported as idle at 22:56 (now) unless it is used" after the report.
The engine's idle list is built with the cycle's own ladder steps (``idle_candidates(taken=…)``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jupyter_sched.engine.idle import IdleLadders
from jupyter_sched.model import Inventory
from jupyter_sched.reclaim import IdleInput, IdlePolicies, IdlePolicy, LadderState
from jupyter_sched.scheduling.snapshot import CycleResult, Snapshot
from tests.hardware.test_reclaim import GPU_UUID, make_job, minutes, series

POLICY = IdlePolicy(threshold_pct=5, window_s=30 * 60, warning_s=10 * 60)


def ladders() -> IdleLadders:
    return IdleLadders(store=None, monitor=None, policies=IdlePolicies(default=POLICY),  # type: ignore[arg-type]
                       arbiter=None, stop_grace_s=5.0)


@pytest.mark.parametrize("now,ladder,want_step,want_stage", [
    (12.0, LadderState(), None, "idle"),
    (21.0, LadderState(), "warn", "warned"),
    (31.0, LadderState(warned_at=minutes(21), warned_idle_since=minutes(1)), "reclaim", "reclaimed"),
], ids=["idle, its warning still ahead: listed as idle",
        "the cycle that warns lists it as warned, not 'it is warned at' ahead",
        "the cycle that reclaims lists it as reclaimed, not 'reclaimed at (now) unless it is used'"])
def test_newuser20_n16_the_idle_list_is_at_the_stage_the_cycle_just_reached(
        now: float, ladder: LadderState, want_step: str | None, want_stage: str) -> None:
    job = make_job("idle2", lease=False)
    snapshot = Snapshot(now=minutes(now), inventory=Inventory(), jobs=(job,), telemetry={
        job.id: IdleInput(samples=series(lambda m: 0.0, 1, now), ladder=ladder, devices=((GPU_UUID, None),))})
    idle = ladders()
    result = idle.evaluate(snapshot, CycleResult())
    assert [a.stage for a in result.idle] == ([want_step] if want_step else [])
    (candidate,) = idle.candidates
    assert candidate.stage == want_stage, candidate
    if want_stage == "warned":  # its reclaim is the warning's deadline, as the toast said it
        assert candidate.deadline == minutes(31), candidate
        assert f"warned at {minutes(21):%H:%M} UTC" in candidate.reason and "if it stays" not in candidate.reason, candidate
    # the next cycle, with the step committed, lists it the same
    if want_step is not None:
        (step,) = result.idle
        committed = replace(snapshot.telemetry[job.id], ladder=replace(
            ladder, **({"warned_at": minutes(now), "warned_idle_since": step.idle_since} if want_step == "warn"
                       else {"reclaimed_at": minutes(now), "warned_idle_since": step.idle_since})))
        again = ladders()
        again.evaluate(replace(snapshot, telemetry={job.id: committed}), CycleResult())
        assert [c.stage for c in again.candidates] == [want_stage]
