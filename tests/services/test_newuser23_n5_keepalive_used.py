"""newuser23 N5: after a lease's one keep-alive, ``queue``, ``jobs`` and ``%gpu status`` still said "`%gpu
keepalive` … keeps them" — and a second ``%gpu keepalive`` is refused. ``GET idle`` now carries
``keepalive_used`` (from the idle ladder) and every note says "using its GPUs keeps them", as the panel does."""

from __future__ import annotations

from typing import Any

from jupyter_sched.client.status import idle_notes
from jupyter_sched.engine.idle import IdleLadders
from jupyter_sched.model import Inventory
from jupyter_sched.reclaim import IdleInput, IdlePolicies, IdlePolicy, LadderState
from jupyter_sched.scheduling.snapshot import CycleResult, Snapshot
from jupyter_sched.wording.jobs import idle_note
from tests.hardware.test_reclaim import GPU_UUID, make_job, minutes, series

WARNED = {"stage": "warned", "action": "release", "kind": "lease", "job_id": "j-nb",
          "idle_since": "2026-12-05T08:46:00+00:00", "deadline": "2026-12-05T10:47:00+00:00",
          "rule": "kernel idle and GPU < 5 % for 4 min"}


class _Client:
    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry

    def idle_candidates(self) -> list[dict[str, Any]]:
        return [self.entry]


def test_newuser23_n5_a_lease_kept_alive_once_is_not_sent_to_keepalive_again() -> None:
    kept = {**WARNED, "keepalive_used": True}
    row = [{"id": "j-nb", "kind": "lease", "kernel_id": "5b0e4c3a"}]
    # before: "… unless it is used — `%gpu keepalive` in its notebook keeps them" (then refused)
    assert idle_notes(_Client(kept), row)["j-nb"].endswith("unless it is used — using its GPUs keeps them")
    assert "keepalive" not in idle_note(kept, None, magic=True), idle_note(kept, None, magic=True)
    # not kept alive yet: the keep-alive is offered, as before
    assert idle_notes(_Client(WARNED), row)["j-nb"].endswith("`%gpu keepalive` in its notebook keeps them")
    assert idle_note(WARNED, None, magic=True).endswith("%gpu keepalive keeps them")


def test_newuser23_n5_get_idle_says_whether_the_keepalive_was_used() -> None:
    policy = IdlePolicy(threshold_pct=5, window_s=30 * 60, warning_s=10 * 60)
    job = make_job("lease1", lease=True)
    for used in (False, True):
        ladder = LadderState(keepalive_used=used)
        snapshot = Snapshot(now=minutes(12.0), inventory=Inventory(), jobs=(job,), telemetry={
            job.id: IdleInput(samples=series(lambda m: 0.0, 1, 12.0), ladder=ladder, devices=((GPU_UUID, None),))})
        idle = IdleLadders(store=None, monitor=None, policies=IdlePolicies(default=policy),  # type: ignore[arg-type]
                           arbiter=None, stop_grace_s=5.0)
        idle.evaluate(snapshot, CycleResult())
        (candidate,) = idle.candidates
        assert candidate.to_dict()["keepalive_used"] is used, candidate
