"""The engine's learnt runtimes are kept per job row version and history read (issue 17: reading
every live job's run key again was 58 % of an unchanged snapshot at 20,000 pending + 5,000 running),
and a kept reading never gives another answer than computing it afresh: the cycle's snapshot
(``RuntimeFeed.learnt_rows``) against a fresh feed's ``learnt`` of the same jobs at the same
moment, and the cycle's decisions on both snapshots, while running jobs run on, a queued job's
row is edited, a run finishes and the history is read again, and a job leaves the live set.

Real SQLite store; the engine's own snapshot."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from jupyter_sched.engine import Engine, ManualClock
from jupyter_sched.engine.decide import default_cycle
from jupyter_sched.engine.runtimes import RuntimeFeed
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation, Job, JobKind, JobState
from jupyter_sched.scheduling import Snapshot
from jupyter_sched.store import JobRecord, Store
from tests.runtime.builders import T0, make_job

NOW = T0 + timedelta(hours=5)


def _finished(store: Store, job_id: str, *, user: str, script: str, ran_s: float, limit_s: float,
              gpus: int = 1) -> None:
    job = make_job(job_id, user=user, gpus=gpus, script=script, command=(), time_limit_s=limit_s)
    store.insert_job(JobRecord(job=replace(job, state=JobState.SUCCEEDED, admitted_at=T0, started_at=T0,
                                           finished_at=T0 + timedelta(seconds=ran_s))))


def _running(job_id: str, *, user: str, script: str, ran_s: float, limit_s: float, node: int) -> Job:
    job = make_job(job_id, user=user, script=script, command=(), time_limit_s=limit_s)
    return replace(job, state=JobState.RUNNING, admitted_at=NOW - timedelta(seconds=ran_s + 5),
                   started_at=NOW - timedelta(seconds=ran_s), allocation=Allocation(node="n1", gpu_uuids=(f"GPU-{node}",)))


def _same_as_afresh(engine: Engine, store: Store, clock: ManualClock) -> Snapshot:
    """The engine's snapshot, after checking its learnt runtimes and its cycle's decisions against a
    fresh feed's computation of the same live jobs at the same moment."""
    snap = engine.snapshot()
    learnt, typical, sources = RuntimeFeed(store, clock).learnt(snap.jobs)
    assert (dict(snap.runtime_estimates), dict(snap.runtime_typical), dict(snap.runtime_sources)) == \
        (learnt, typical, sources)
    fresh = replace(snap, runtime_estimates=learnt, runtime_typical=typical, runtime_sources=sources)
    assert default_cycle(snap) == default_cycle(fresh)  # the same decisions, reasons and ETAs
    return snap


def test_kept_readings_answer_as_a_fresh_computation_while_jobs_run_change_and_finish(sqlite_db: str,
                                                                                     tmp_path: Path) -> None:
    store, clock = Store(sqlite_db), ManualClock(NOW)
    for i, ran in enumerate((1800, 2000, 2200, 3000)):  # ana's train.py: a guess from its own runs
        _finished(store, f"old-{i}", user="ana", script="train.py", ran_s=ran, limit_s=3600)
    _finished(store, "old-e", user="ana", script="eval.py", ran_s=1800, limit_s=3600)  # her padding earned
    _finished(store, "bob-old", user="bob", script="eval.py", ran_s=900, limit_s=1800)  # bob: one run
    _finished(store, "bob-old2", user="bob", script="prep.py", ran_s=600, limit_s=1200)
    queued = make_job("queued", user="ana", script="train.py", command=(), time_limit_s=3600)
    new = make_job("new", user="ana", script="new.py", command=(), time_limit_s=4000)  # ana's other runs
    lease = make_job("lease", user="ana", kind=JobKind.LEASE, kernel_id="k-1")
    live = [queued, new, lease,
            _running("run-ana", user="ana", script="train.py", ran_s=2100, limit_s=3600, node=0),
            _running("run-bob", user="bob", script="fit.py", ran_s=100, limit_s=3600, node=1),  # bob's padding
            _running("run-cy", user="cy", script="x.py", ran_s=60, limit_s=3600, node=2)]  # cy: everybody's
    for job in live:
        store.insert_job(JobRecord(job=job))
    engine = Engine(store, SimulatedInventory(4, node="n1"), LocalExecutor(tmp_path / "jobs"), clock=clock)

    first = _same_as_afresh(engine, store, clock)
    assert first.runtime_estimates["queued"] == 2100.0  # the median of its 4 runs
    assert first.runtime_estimates["run-ana"] == 2600.0  # of those longer than the 2100 s it ran
    assert set(first.runtime_sources) == {"new", "run-bob", "run-cy"}  # learnt from other runs than their own
    assert _same_as_afresh(engine, store, clock) == first  # nothing changed: the same snapshot

    clock.advance(600)  # running jobs ran on: their kept readings are read at what they ran now
    later = _same_as_afresh(engine, store, clock)
    assert later.runtime_estimates["run-ana"] == 3000.0 != first.runtime_estimates["run-ana"]
    assert later.runtime_estimates["queued"] == 2100.0

    with store.transaction() as tx:  # the queued job's row edited: its limit halved (a new version)
        record = tx.get_jobs(["queued"])["queued"]
        tx.update_job(replace(record, job=replace(record.job, spec=replace(record.job.spec, time_limit_s=1800.0))))
    edited = _same_as_afresh(engine, store, clock)
    assert edited.runtime_estimates["queued"] == 1800.0  # read against its new limit (none above it)

    _finished(store, "old-4", user="ana", script="train.py", ran_s=400, limit_s=3600)  # a short run ends
    clock.advance(5)  # past the feed's recheck: the history is read again
    relearnt = _same_as_afresh(engine, store, clock)
    assert relearnt.runtime_estimates["new"] != edited.runtime_estimates["new"]  # ana's padding moved

    with store.transaction() as tx:  # run-ana succeeds: it leaves the live set, and the feed keeps no reading of it
        record = tx.get_jobs(["run-ana"])["run-ana"]
        tx.update_job(replace(record, job=replace(record.job, state=JobState.SUCCEEDED, finished_at=clock.now())))
    clock.advance(5)  # (its run is learnt too, once the feed counts it)
    gone = _same_as_afresh(engine, store, clock)
    assert "run-ana" not in gone.runtime_estimates
    assert len(engine.decider.runtimes.learnt_rows(store.live_jobs())[0]) == len(gone.runtime_estimates)
