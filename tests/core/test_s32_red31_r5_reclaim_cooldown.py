"""red31 R5: with quotas, r31b's job within its team's guarantee reclaimed r31a's borrowed job at once (its work
lost, restarted from scratch) and r31b cancelled it 12 s later — again every minimum runtime, at no cost to r31b.
Now a preemptor that ended sooner than ``profile.reclaim_cooldown_s`` after its reclaim (``Snapshot.reclaims``,
built by the edge from the store; here its owner's cancel) holds its team's reclaims of other teams' running work
until that long after its reclaim: their job waits, its reason saying until when; after the cool-down the team
reclaims as before. Through ``run_cycle`` (every end cause: tests/core/test_s33_red32_r5_reclaim_cooldown.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.snapshot import ReclaimTaken

TEAMS = quotas(Quota(team="teama", guaranteed=1, borrowing_limit=None),
               Quota(team="teamb", guaranteed=1, borrowing_limit=None))


def _cycle(reclaims: tuple[ReclaimTaken, ...], now_s: float = 0) -> tuple[list, object]:
    jobs = [running(make_job("a1", team="teama", user="r31a"), indices=[0], started=-60),
            running(make_job("a2", team="teama", user="r31a"), indices=[1], started=-30),
            make_job("b1", team="teamb", user="r31b")]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs, quota=TEAMS, now=T0 + timedelta(seconds=now_s)),
                   reclaims=reclaims)
    result = run_cycle(snap, SchedulingProfile(reclaim_cooldown_s=900))
    return result.preemptions, next((p.reason for p in result.pending if p.job_id == "b1"), None)


def test_red31_r5_a_user_who_dropped_a_reclaim_takes_nothing_back_until_the_cool_down_ends() -> None:
    taken, _ = _cycle(())
    assert [(p.job_id, p.kind) for p in taken] == [("a2", "reclaim")], "without history: reclaimed at once"
    took = T0 - timedelta(minutes=1)
    cancelled = ReclaimTaken(job_id="b0", team="teamb", user="r31b", took_at=took, name="b0",
                             victims=(("a0", "r31a"),), started_at=took + timedelta(seconds=3),
                             ended_at=took + timedelta(seconds=15), cause="cancel", actor="r31b", recorded=True)
    taken, reason = _cycle((cancelled,))
    assert not taken and reason is not None, "in the cool-down: nothing taken back"
    rule = reason.details["preemption_rule"]
    assert rule["rule"] == "reclaim_cooldown" and rule["until"] == (T0 + timedelta(minutes=14)).isoformat(), rule
    assert "team teamb's reclaims of other teams' borrowed GPUs wait until" in reason.details["preemption_refused"]
    assert "c.SchedApp.reclaim_cooldown_s = 900" in reason.details["preemption_refused"]
    assert reason.eta is not None and reason.eta <= T0 + timedelta(minutes=14), reason.eta
    taken, _ = _cycle((cancelled,), now_s=15 * 60)
    assert [p.job_id for p in taken] == ["a2"], "after the cool-down: reclaims again"
