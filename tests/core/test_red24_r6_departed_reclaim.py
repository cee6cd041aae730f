"""Red team 24, R6 (core half): work whose owner left the team it is charged to is outside that team's
guarantee.

Found: a kernel lease outlived its owner leaving the team — it stayed charged to the old team, held that
team's guarantee, and the remaining members waited with no word why. Now running work in
``Snapshot.held_jobs`` with no class named (its owner is no longer a member: hub group removal, admin
removal, offboarding) is not counted against the team's guarantee, and a remaining member's job within
the guarantee takes its GPUs back the way reclaim takes borrowed work (kind ``departed``): the team's
reclaim rule, the minimum runtime and the grace period apply; the member's reason names whose work it is,
that its owner left and since when. Without the departure the same snapshot evicts nothing.

Team ``ml`` is guaranteed 2 A100s (borrowing limit 0) on a 2-GPU node; alice's 2-GPU lease (or job) runs
charged to ``ml``; bob, still in ``ml``, asks for 1 GPU.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, Scenario, make_job, make_node, quotas, running

from jupyter_sched.model import JobKind, Quota, TeamPolicy
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.scheduling.snapshot import JobHold
from jupyter_sched.wording import render_reason

LEFT = T0 - timedelta(minutes=10)
HOLD = JobHold(team="ml", since=LEFT, teams=("cv",))


def _scenario(*, kind: JobKind = JobKind.LEASE, left: bool = True, reclaim: str | None = None,
              started: float = -60.0, profile: SchedulingProfile | None = None) -> Scenario:
    teams = [TeamPolicy(team="ml", reclaim=reclaim)] if reclaim else []
    sc = Scenario([make_node("n1", gpus=2)], quota=quotas(Quota(team="ml", guaranteed=2, borrowing_limit=0),
                                                          Quota(team="cv", guaranteed=0, borrowing_limit=2),
                                                          teams=teams), profile=profile, stop_at_once=False)
    held = make_job("l-alice" if kind is JobKind.LEASE else "j-alice", gpus=2, user="alice", team="ml")
    held = replace(held, spec=replace(held.spec, kind=kind, name="lease" if kind is JobKind.LEASE else "train"))
    sc.submit(running(held, "n1", [0, 1], started=started), make_job("j-bob", gpus=1, user="bob", team="ml"))
    if left:
        sc.snap = replace(sc.snap, held_jobs={held.id: HOLD})
    return sc


@pytest.mark.parametrize("kind", [JobKind.LEASE, JobKind.TRAINING], ids=["a lease", "a job"])
def test_red24_r6_a_members_job_within_the_guarantee_reclaims_a_left_members_work(kind: JobKind) -> None:
    sc = _scenario(kind=kind)
    alice = "l-alice" if kind is JobKind.LEASE else "j-alice"
    first = sc.cycle()
    assert [(p.job_id, p.for_job, p.kind) for p in first.preemptions] == [(alice, "j-bob", "reclaim")]
    (victim,) = first.preemptions
    assert victim.grace_s == SchedulingProfile().grace_s, "the grace period is kept"
    noun = "lease" if kind is JobKind.LEASE else "job"
    assert victim.reason == (f"preempted to return team ml's guaranteed GPUs to its members: alice left team ml "
                             f"(found 2025-03-30T11:50:00Z), so this {noun} was outside ml's guarantee; taken back "
                             "for j-bob"), victim.reason
    (record,) = [a for a in first.audit if a.job_id == alice]
    assert record.action == "reclaim" and record.details["departed"] == {
        "user": "alice", "team": "ml", "since": LEFT.isoformat()}, record

    (pend,) = [p for p in first.pending if p.job_id == "j-bob"]
    reason = pend.reason
    assert reason.code == "WaitingForPreemption", reason
    work = "alice's lease (l-alice)" if kind is JobKind.LEASE else 'alice\'s job "train" (j-alice)'
    said = (f"GPUs held by {work}; alice left team ml (found 2025-03-30T11:50:00Z): outside ml's guarantee, "
            "reclaimable by its members")
    assert reason.message.endswith("; " + said), reason.message
    assert reason.details["departed"] == {alice: {"user": "alice", "team": "ml", "since": LEFT.isoformat()}}
    text = render_reason(reason_to_dict(reason), now=T0)
    assert "alice left team ml (found 11:50 UTC): outside ml's guarantee" in text.summary, text

    sc.stopped(alice)
    assert [a.job_id for a in sc.cycle().admits] == ["j-bob"]


def test_red24_r6_without_the_departure_nothing_is_evicted() -> None:
    """The same snapshot with alice still a member: her work is inside ml's guarantee, bob waits."""
    sc = _scenario(left=False)
    for minute in range(3):
        assert sc.at(minute).cycle().preemptions == ()
    assert sc.state("l-alice") == "running" and sc.state("j-bob") == "pending"


def test_red24_r6_a_class_no_longer_granted_is_still_the_teams_work() -> None:
    """A hold naming a class (alice is still a member, only not granted it): not outside the guarantee."""
    sc = _scenario()
    sc.snap = replace(sc.snap, held_jobs={"l-alice": replace(HOLD, priority="normal", teams=("ml",))})
    assert sc.cycle().preemptions == ()


def test_red24_r6_the_teams_reclaim_rule_is_respected_and_named() -> None:
    """ml's rule ``never``: nothing is taken, and bob's reason names the rule and whose work it keeps."""
    sc = _scenario(reclaim="never")
    assert sc.cycle().preemptions == ()
    reason = sc.job("j-bob").reason
    assert reason is not None
    refusal = reason.details["preemption_refused"]
    assert "ml's reclaim rule 'never'" in refusal and "here l-alice" in refusal, refusal
    assert refusal.endswith("; GPUs held by alice's lease (l-alice); alice left team ml (found 2025-03-30T11:50:00Z): "
                            "outside ml's guarantee"), refusal
    assert "alice left team ml" in render_reason(reason_to_dict(reason), now=T0).summary


def test_red24_r6_the_minimum_runtime_is_respected() -> None:
    """Work younger than the minimum runtime, evicted before, waits its minimum runtime as any victim does."""
    profile = SchedulingProfile(min_runtime_s=600)
    sc = _scenario(started=-2, profile=profile)
    sc.snap = replace(sc.snap, jobs=tuple(replace(j, preempted_by="j-x") if j.id == "l-alice" else j
                                          for j in sc.snap.jobs))
    assert sc.cycle().preemptions == ()
    reason = sc.job("j-bob").reason
    assert reason is not None and reason.details["preemption_rule"]["rule"] == "min_runtime", reason.details
    assert "alice left team ml" in reason.details["preemption_refused"], reason.details
    assert sc.at(9).cycle().preemptions != ()  # 11 minutes after it started: taken back
