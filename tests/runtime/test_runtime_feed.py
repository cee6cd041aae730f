"""The engine's side of the cycle (issue 16): runtimes learnt from the store's finished runs
reach every cycle's snapshot, so ETAs follow what a user's jobs really take, not their padding
(real SQLite store; the engine's own snapshot); and the cycle runs with the cyclic garbage
collector paused (a fifth of a large cycle's time, benchmarks/cycle_bench.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.runtimes import RuntimeFeed
from jupyter_sched.model import Job, JobState
from jupyter_sched.store import JobRecord, Store
from tests.runtime.builders import T0, make_job
from tests.runtime.test_engine_hooks import make_service


def _finished(store: Store, job_id: str, *, user: str, script: str, ran_s: float, limit_s: float,
              state: JobState = JobState.SUCCEEDED) -> None:
    job = make_job(job_id, user=user, script=script, command=(), time_limit_s=limit_s)
    store.insert_job(JobRecord(job=replace(job, state=state, admitted_at=T0, started_at=T0,
                                           finished_at=T0 + timedelta(seconds=ran_s))))


def test_a_run_is_learnt_from_succeeded_runs_of_the_same_script_only(sqlite_db: str) -> None:
    store = Store(sqlite_db)
    _finished(store, "old-1", user="ana", script="train.py", ran_s=1800, limit_s=3600)
    _finished(store, "old-2", user="ana", script="train.py", ran_s=900, limit_s=1800)
    _finished(store, "old-3", user="ana", script="eval.py", ran_s=900, limit_s=1800)
    _finished(store, "crash", user="ana", script="other.py", ran_s=10, limit_s=3600, state=JobState.FAILED)
    feed = RuntimeFeed(store, ManualClock(T0 + timedelta(hours=1)))
    again = make_job("again", user="ana", script="train.py", command=(), time_limit_s=7200)
    new = make_job("new", user="ana", script="new.py", command=(), time_limit_s=4000)
    crashed = make_job("crashed", user="ana", script="other.py", command=(), time_limit_s=3600)
    stranger = make_job("bob-1", user="bob", script="train.py", command=(), time_limit_s=3600)
    assert feed.estimates([again, new, crashed, stranger]) == {
        # the same script again under twice the limit: its runs used half of theirs (the ratio had
        # predicted old-2 exactly, the runtime of old-1 had not)
        "again": 3600.0,
        # first runs of other scripts: ana's own padding (half her limit), which predicted her first
        # run of eval.py exactly (since session 8 one scored first run within 25 % is a record; her
        # train.py runs are not samples of them) — never the failed run of other.py, nor for bob
        "new": 2000.0, "crashed": 1800.0,
    }


def test_a_running_job_s_learnt_runtime_is_conditioned_on_how_long_it_has_run(sqlite_db: str) -> None:
    store = Store(sqlite_db)
    for i, ran in enumerate((1800, 2000, 2200, 3000)):
        _finished(store, f"old-{i}", user="ana", script="train.py", ran_s=ran, limit_s=3600)
    now = T0 + timedelta(hours=5)
    feed = RuntimeFeed(store, ManualClock(now))
    queued = make_job("queued", user="ana", script="train.py", command=(), time_limit_s=3600)
    running = replace(make_job("running", user="ana", script="train.py", command=(), time_limit_s=3600),
                      state=JobState.RUNNING, admitted_at=now - timedelta(seconds=2110),
                      started_at=now - timedelta(seconds=2100))
    # queued: the median of the past runs; running for 2100 s: the median of the runs that ran longer
    assert feed.estimates([queued, running]) == {"queued": 2100.0, "running": 2600.0}


def test_the_engine_s_snapshot_carries_learnt_runtimes_refreshed_from_the_store(sqlite_db: str,
                                                                                tmp_path: Path) -> None:
    clock = ManualClock(T0 + timedelta(hours=1))
    svc = make_service(sqlite_db, tmp_path, "a", clock)
    pending = svc.submit({"gpus": 1, "script": "x.py", "time_limit": 3600}, user="ana")
    assert dict(svc.engine.snapshot().runtime_estimates) == {}  # no history yet: ETAs use the limit
    _finished(svc.store, "old-1", user="ana", script="x.py", ran_s=900, limit_s=3600)
    _finished(svc.store, "old-2", user="ana", script="x.py", ran_s=900, limit_s=3600)  # MIN_KEY_RUNS
    assert dict(svc.engine.snapshot().runtime_estimates) == {}  # counted again only after recheck_s
    clock.advance(svc.engine.decider.runtimes.recheck_s)
    assert dict(svc.engine.snapshot().runtime_estimates) == {pending["id"]: 900.0}


def test_newuser4_finding_18_a_burst_of_short_jobs_is_predicted_from_its_own_first_runs(sqlite_db: str) -> None:
    store = Store(sqlite_db)
    clock = ManualClock(T0 + timedelta(hours=1))
    feed = RuntimeFeed(store, clock)
    for i in range(3):  # the user's earlier runs of another script took 20 s of their 60 s limit
        _finished(store, f"old-{i}", user="root", script="other.py", ran_s=20, limit_s=60)
    burst = make_job("burst9", user="root", script="sleep3.py", command=(), time_limit_s=60)
    assert feed.estimates([burst]) == {}  # nothing of this run yet: its limit (another script is no guide)
    for i in range(3):  # the burst's first three runs finish: 3 s each
        _finished(store, f"burst{i}", user="root", script="sleep3.py", ran_s=3, limit_s=60)
    clock.advance(feed.recheck_s)  # not the minute of refresh_s: a job succeeded, so they are read again
    assert feed.estimates([burst]) == {"burst9": 3.0}
    reads = feed.reads
    clock.advance(feed.recheck_s)
    feed.estimates([burst])
    assert feed.reads == reads  # nothing new succeeded: counted, not read again


def test_the_engine_s_cycle_pauses_the_cyclic_collector_and_restores_it() -> None:
    import gc

    from jupyter_sched.engine.decide import cyclic_gc_paused

    _collector_on_again()  # the collector is process-wide: another test's engine in this worker may be mid-cycle
    with cyclic_gc_paused():
        assert not gc.isenabled()
        with cyclic_gc_paused():  # a dry run inside (another thread): the outer one restores it
            assert not gc.isenabled()
        assert not gc.isenabled()
    _collector_on_again()
    try:
        with cyclic_gc_paused():
            raise RuntimeError("a core bug")
    except RuntimeError:
        pass
    _collector_on_again()  # also after the cycle raised


def test_the_engine_s_full_cycle_on_a_live_ledger_runs_with_the_collector_paused(
        sqlite_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    import jupyter_sched.engine.engine as engine_module

    seen: list[bool] = []
    real = engine_module.LiveCycle

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module, "LiveCycle", spy)
    svc = make_service(sqlite_db, tmp_path, "a", ManualClock(T0))
    svc.submit({"gpus": 1, "command": ["true"]}, user="ana")
    svc.tick()
    assert seen and not any(seen)
    _collector_on_again()  # restored (another engine's cycle in this worker may hold it a moment longer: run C)


def _collector_on_again(within_s: float = 30.0) -> None:
    """Wait until CPython's cyclic collector is on: :func:`~jupyter_sched.engine.decide.cyclic_gc_paused` is
    process-wide, and under xdist another test's engine thread in the same worker may be inside a cycle (session 37's
    run C: both tests read it off at a moment another cycle held it)."""
    import gc
    import time

    deadline = time.monotonic() + within_s
    while not gc.isenabled():
        assert time.monotonic() < deadline, "the cyclic collector stayed off"
        time.sleep(0.01)


def test_newuser4_finding_8_the_feed_says_which_running_jobs_ran_longer_than_similar_runs_usually_take(
        sqlite_db: str) -> None:
    store = Store(sqlite_db)
    for i, ran in enumerate((10, 20, 30, 60)):
        _finished(store, f"old-{i}", user="ana", script="train.py", ran_s=ran, limit_s=120)
    now = T0 + timedelta(hours=5)
    feed = RuntimeFeed(store, ManualClock(now))

    def running_for(job_id: str, seconds: float) -> Job:
        job = make_job(job_id, user="ana", script="train.py", command=(), time_limit_s=120)
        return replace(job, state=JobState.RUNNING, admitted_at=now - timedelta(seconds=seconds),
                       started_at=now - timedelta(seconds=seconds))

    learned, typical = feed.estimates_and_typical([running_for("early", 5), running_for("late", 40)])
    assert learned == {"early": 25.0, "late": 60.0}  # the median of the runs longer than each has run
    assert typical == {"late": 25.0}  # only the one past what similar runs usually take (25 s)


def test_one_users_flood_of_short_runs_neither_evicts_anothers_history_nor_becomes_everybodys_ratios(
        sqlite_db: str) -> None:
    """Red-team 5 finding 4: eve's 600 one-second runs (CPU-only jobs need no quota) filled the
    window of the last 500 succeeded runs: ana's queued run lost its learnt runtime, and a running
    job of dan (no runs of his own) was predicted from eve's ratios alone — ending in a second.
    Since session 6 nobody's runs predict another user's or another program's (new user 5); since
    session 14 a *running* job of a user with no finished run is read from everybody's runs of its
    size, one vote per user (their median ratio), so eve's flood is one sample, not the prior."""
    store = Store(sqlite_db)
    for i in range(10):
        _finished(store, f"ana-{i}", user="ana", script="train.py", ran_s=1800, limit_s=3600)
        _finished(store, f"cat-{i}", user="cat", script="fit.py", ran_s=2400, limit_s=3600)
    for i in range(600):  # newer than all of ana's and cat's: submitted later
        job = make_job(f"eve-{i:03d}", user="eve", script="noop.py", command=(), time_limit_s=3600)
        store.insert_job(JobRecord(job=replace(job, state=JobState.SUCCEEDED, submitted_at=T0 + timedelta(hours=1),
                                               admitted_at=T0, started_at=T0, finished_at=T0 + timedelta(seconds=1))))
    now = T0 + timedelta(hours=5)
    feed = RuntimeFeed(store, ManualClock(now))
    ana = make_job("ana-next", user="ana", script="train.py", command=(), time_limit_s=3600)
    dan = replace(make_job("dan-1", user="dan", script="new.py", command=(), time_limit_s=3600),
                  state=JobState.RUNNING, admitted_at=now - timedelta(seconds=60), started_at=now - timedelta(seconds=60))
    estimates = feed.estimates([ana, dan])
    assert estimates.get("ana-next") == 1800.0, estimates  # her own runs, read although eve's fill the window
    # no runs of his own, running 60 s: the runs read are eve's newest (cat's fell out of the window)
    # and ana's (topped up, live); each user one vote, her median ratio: ana's 0.5 of his 1-h limit —
    # eve's 1-s runs are one vote that he already outran, not everybody's prior (was 1 s)
    assert estimates.get("dan-1") == 1800.0, estimates
    queued = make_job("dan-2", user="dan", script="new.py", command=(), time_limit_s=3600)
    assert "dan-2" not in feed.estimates([queued])  # queued: his limit (new user 5, findings 4 and 8)
