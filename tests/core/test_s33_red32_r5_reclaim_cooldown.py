"""red32 R5: session 32's reclaim cool-down began only at its owner's CANCEL of the preemptor; a preemptor that
just exited (``-- /bin/true``), had a 1-s time limit, or was a lease released at once took r32a's borrowed jobs
back again and again, with no record and no cool-down. Now the core keys on the preemptor's end, whatever the
cause (``Snapshot.reclaims``: its reclaim, start and end, built by the edge from the store): ended sooner than
``reclaim_cooldown_s`` after its reclaim → its TEAM's next reclaims of other teams' running work wait until that
long after the reclaim (the reason says so and until when), and one ``reclaim_dropped`` audit record names the
team and the cause, once. One that held what it took that long is not held back. Through ``run_cycle`` (the
edge and the engine's real ends: tests/runtime/test_s33_red32_r5_reclaim_ends.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.snapshot import ReclaimTaken

TEAMS = quotas(Quota(team="teama", guaranteed=1, borrowing_limit=None),
               Quota(team="teamb", guaranteed=1, borrowing_limit=None))
TOOK = T0 - timedelta(minutes=2)


def _taken(cause: str, held_s: float | None, **kw: object) -> ReclaimTaken:
    started = TOOK + timedelta(seconds=2)
    return ReclaimTaken(job_id="b-take1", team="teamb", user="r32b", took_at=TOOK, name="b-take1",
                        victims=(("a-bor2", "r32a"),), started_at=started if held_s is not None else None,
                        ended_at=started + timedelta(seconds=held_s or 0), cause=cause, **kw)  # type: ignore[arg-type]


def _cycle(reclaims: tuple[ReclaimTaken, ...], *, user: str = "r32c", now_s: float = 0):  # type: ignore[no-untyped-def]
    jobs = [running(make_job("a1", team="teama", user="r32a"), indices=[0], started=-60),
            running(make_job("a2", team="teama", user="r32a"), indices=[1], started=-30),
            make_job("b2", team="teamb", user=user)]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs, quota=TEAMS, now=T0 + timedelta(seconds=now_s)),
                   reclaims=reclaims)
    result = run_cycle(snap, SchedulingProfile(reclaim_cooldown_s=900))
    return result, next((p.reason for p in result.pending if p.job_id == "b2"), None)


@pytest.mark.parametrize(("cause", "held_s", "extra", "said"), [
    ("exit", 1, {"exit_code": 0}, "(it exited, exit code 0)"),
    ("failure", 3, {"exit_code": 2}, "(it failed, exit code 2)"),
    ("time_limit", 1, {}, "(its time limit stopped it)"),
    ("release", 0.5, {"lease": True, "actor": "r32b"}, "(it was released by r32b)"),
    ("cancel", None, {"actor": "r32b"}, "before it started (it was cancelled by r32b)"),
    ("idle_reclaim", 600, {"lease": True}, "(idle reclaim took its GPUs back)"),
], ids=["exit", "failure", "time limit", "lease release", "cancel before its start", "idle reclaim"])
def test_red32_r5_a_reclaimer_ended_early_by_any_cause_holds_its_teams_reclaims(
        cause: str, held_s: float | None, extra: dict, said: str) -> None:
    dropped = _taken(cause, held_s, **extra)
    result, reason = _cycle((dropped,))
    assert not result.preemptions and reason is not None, "in the cool-down: nothing taken back"
    rule = reason.details["preemption_rule"]
    until = TOOK + timedelta(seconds=900)
    assert rule["rule"] == "reclaim_cooldown" and rule["until"] == until.isoformat(), rule
    assert (rule["team"], rule["cause"], rule["dropped_by"]) == ("teamb", cause, "b-take1"), rule
    refused = reason.details["preemption_refused"]
    assert refused.startswith("team teamb's reclaims of other teams' borrowed GPUs wait until 12:13 UTC: r32b's "), refused
    assert said in refused and "what a reclaim takes is to be held 15m (c.SchedApp.reclaim_cooldown_s = 900)" in refused
    assert reason.eta is not None and reason.eta <= until, reason.eta
    [record] = [r for r in result.audit if r.action == "reclaim_dropped"]  # for admins, naming the team and cause
    assert (record.job_id, record.user, record.details["team"], record.details["cause"]) == \
        ("b-take1", "r32b", "teamb", cause)
    assert record.message.startswith("team teamb: r32b's ") and "it had evicted r32a's job a-bor2" in record.message
    assert said.split("(")[-1].rstrip(")") in record.message, record.message
    again, _ = _cycle((replace(dropped, recorded=True),))
    assert not [r for r in again.audit if r.action == "reclaim_dropped"], "recorded once"
    later, _ = _cycle((dropped,), now_s=13 * 60)
    assert [p.job_id for p in later.preemptions] == ["a2"], "after the cool-down: the team reclaims again"


def test_red32_r5_a_reclaimer_that_held_what_it_took_is_not_penalised() -> None:
    took = T0 - timedelta(minutes=20)  # it ran its course, past the cool-down, and ended 4 min ago
    ran = replace(_taken("exit", 901, exit_code=0), took_at=took, started_at=took + timedelta(seconds=60),
                  ended_at=took + timedelta(seconds=961))
    result, _ = _cycle((ran,))
    assert [p.job_id for p in result.preemptions] == ["a2"]
    assert not [r for r in result.audit if r.action == "reclaim_dropped"], result.audit
    still = replace(_taken("", None), ended_at=None)  # still running (or waiting): nothing held
    result, _ = _cycle((still,))
    assert [p.job_id for p in result.preemptions] == ["a2"]
    other = replace(_taken("exit", 1, exit_code=0), team="teamc")  # another team's drop holds only that team
    result, _ = _cycle((other,))
    assert [p.job_id for p in result.preemptions] == ["a2"]
