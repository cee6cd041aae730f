"""red27 R1: a job promised a start in a backfill hole (a 2-minute limit), then lengthened by its owner while
pending (``PATCH jobs/{id} {"time_limit": "1h"}``), kept the promise: at 0.75 x that short wait it was elected
and started ahead of another user's reservation — 82 minutes jumped on the real hub. A lengthened limit or a
changed class now drops the promise (the next full cycle makes one from the new spec); a shortened one keeps it
(it only makes the job easier to place)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.admission import Caller
from jupyter_sched.model import Job, PendingReason
from jupyter_sched.queues.order import PROMISE
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.services.job_update import planned
from jupyter_sched.services.models import UpdateJobRequest
from jupyter_sched.store import JobRecord

MAL = Caller(user="mal", teams=("default",), granted={"default": frozenset({"normal", "low"})})


def _promised(job: Job, minutes: float) -> Job:
    start = T0 + timedelta(minutes=minutes)
    return replace(job, reason=PendingReason(code="WaitingForCapacity", message="waiting", eta=start,
                                             predicted_start=start,
                                             details={PROMISE: {"at": T0.isoformat(), "start": start.isoformat()}}))


def _patched(job: Job, body: dict[str, object], now: datetime) -> Job:
    return planned(MAL, JobRecord(job=job), UpdateJobRequest.model_validate(body), now=now).job


def _cycle(b: Job, now: datetime):  # type: ignore[no-untyped-def]
    """One 4-GPU node: amy's 2-GPU job to T0+60 min, 2 GPUs free; eve's 4-GPU job A queued at T0 (reserved
    from T0+60) and promised that; mal's 2-GPU job B (heavier user: after A in the fair order)."""
    amy = running(make_job("x", gpus=2, user="amy", time_limit_s=70 * 60), "n1", [0, 1], started=-10)
    a = _promised(make_job("A", gpus=4, user="eve", time_limit_s=30 * 60), 60)
    snap = snapshot([make_node("n1", gpus=4)], [amy, a, b], now=now,
                    usage=UsageHistory(decayed_gpu_seconds_by_user={"mal": 1e6}))
    return run_cycle(snap, SchedulingProfile())


def test_red27_r1_a_limit_lengthened_while_pending_does_not_keep_the_promise_its_short_limit_got() -> None:
    b = _promised(make_job("B", gpus=2, user="mal", time_limit_s=120), 5)  # fit the hole: promised T0+5 min
    later = T0 + timedelta(minutes=8)  # past 0.75 x max(5 min, the 10-min floor)
    lengthened = _patched(b, {"time_limit": "1h"}, later)
    assert lengthened.spec.time_limit_s == 3600 and PROMISE not in lengthened.reason.details  # type: ignore[union-attr]
    # the attack as it was: the promise kept, B elected and started ahead of eve's reservation
    kept = replace(b, spec=lengthened.spec)
    assert [a.job_id for a in _cycle(kept, later).admits] == ["B"]
    # now: B is promised again from its 1-hour limit, not elected, and waits behind eve's reserved job
    result = _cycle(lengthened, later)
    assert [a.job_id for a in result.admits] == []
    reasons = {p.job_id: p.reason for p in result.pending}
    assert "elected" not in reasons["B"].message and reasons["B"].details.get("reserved_for") == "A", reasons["B"]
    assert reasons["B"].details[PROMISE]["at"] == later.isoformat()  # a new promise, from now


def test_red27_r1_a_shortened_limit_keeps_the_promise_and_a_class_change_drops_it() -> None:
    b = _promised(make_job("B", gpus=2, user="mal", time_limit_s=3600), 5)
    assert _patched(b, {"time_limit": "-30m"}, T0).reason.details[PROMISE]["at"] == T0.isoformat()  # type: ignore[union-attr]
    assert PROMISE not in _patched(b, {"priority": "low"}, T0).reason.details  # type: ignore[union-attr]
