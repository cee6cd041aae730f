"""red31 R5, the edge: a job whose admission reclaimed another team's borrowed work (audit ``reclaim`` naming it
``for_job``) and that its owner cancels within its first minute writes one audit record ``reclaim_dropped`` for
admins, naming what it took back and the cool-down; the cycle reads the latest such record per user of the last
hour (``Snapshot.dropped_reclaims``). A cancel by someone else, a job that ran longer, or one that reclaimed
nothing writes none. A real SQLite store (the core's rule: tests/core/test_s32_red31_r5_reclaim_cooldown.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from jupyter_sched.model import JobState
from jupyter_sched.services.reclaim_dropped import dropped_reclaims, note_dropped_reclaim
from jupyter_sched.store import JobRecord, Store
from tests.runtime.builders import T0, make_job


def _started(job_id: str, user: str) -> JobRecord:
    job = make_job(job_id, user=user, submitted_at=T0)
    at = T0 + timedelta(seconds=5)
    return JobRecord(job=replace(job, state=JobState.RUNNING, admitted_at=at, started_at=at))


def test_red31_r5_an_owner_who_cancels_a_reclaiming_job_in_its_first_minute_is_recorded(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 's.sqlite'}", now=lambda: T0 + timedelta(seconds=20))
    try:
        for record in (_started("j-taker", "r31b"), _started("j-other", "r31b"), _started("j-plain", "r31c")):
            store.insert_job(record)
        store.add_event(actor="scheduler", action="reclaim", job_id="j-victim", user="r31a", at=T0 + timedelta(seconds=4),
                        message="preempted to return borrowed quota to teamB", details={"for_job": "j-taker", "kind": "reclaim"})
        store.add_event(actor="scheduler", action="reclaim", job_id="j-victim2", user="r31a", at=T0 + timedelta(seconds=4),
                        message="preempted to return borrowed quota to teamB", details={"for_job": "j-other", "kind": "reclaim"})
        now = T0 + timedelta(seconds=20)
        with store.transaction() as tx:
            assert not note_dropped_reclaim(tx, tx.get_job("j-other"), "boss", now, 900), "an admin's cancel: not theirs"
            assert not note_dropped_reclaim(tx, tx.get_job("j-plain"), "r31c", now, 900), "it reclaimed nothing"
            assert not note_dropped_reclaim(tx, tx.get_job("j-other"), "r31b", T0 + timedelta(seconds=120), 900), \
                "it ran past its first minute"
            assert note_dropped_reclaim(tx, tx.get_job("j-taker"), "r31b", now, 900)
        [event] = store.list_events(action="reclaim_dropped")
        assert (event.actor, event.user, event.job_id) == ("r31b", "r31b", "j-taker")
        assert event.message == ("r31b cancelled job j-taker (j-taker) 15s after its start; its admission had taken GPUs "
                                 "back by reclaim from r31a's job j-victim, whose work restarts; r31b's reclaims of other "
                                 "teams' borrowed GPUs wait 15m (c.SchedApp.reclaim_cooldown_s)"), event.message
        assert event.details["victims"] == [{"job_id": "j-victim", "user": "r31a"}]
        assert dropped_reclaims(store, now) == {"r31b": now}
        assert dropped_reclaims(store, now + timedelta(hours=2)) == {}, "the last hour only"
    finally:
        store.close()
