"""The snapshot's decoded-row cache (``store.rowcache``, issue 17): a build decodes only rows whose
``(id, version)`` changed, never serves a row another process changed, reads one state of the
database across its two reads, follows the live set in memory, and lets the cycle pause between
decodes. Real SQLite files and a real PostgreSQL server; the other writer is a separate process."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord, Store
from jupyter_sched.store.rowcache import RowCache, read_live
from tests.runtime.builders import T0, make_job

ROOT = Path(__file__).resolve().parents[2]
WRITER = """
import sys
from dataclasses import replace
from jupyter_sched.store import Store
store = Store(sys.argv[1])
for job_id, message in zip(sys.argv[2::2], sys.argv[3::2]):
    with store.transaction() as tx:
        record = tx.get_job(job_id)
        tx.update_job(replace(record, job=replace(record.job, message=message)))
store.close()
"""


def write_in_another_process(url: str, changes: dict[str, str]) -> None:
    """Set ``message`` of each job in ``changes`` from a separate process (its own connections)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    args = [part for pair in changes.items() for part in pair]
    subprocess.run([sys.executable, "-c", WRITER, url, *args], check=True, env=env, timeout=120)


def seeded(url: str, n: int) -> Store:
    """A store with ``n`` pending jobs ``j-0000``... in submit order."""
    store = Store(url)
    with store.transaction() as tx:
        for i in range(n):
            tx.insert_job(JobRecord(job=make_job(f"j-{i:04d}", submitted_at=T0 + timedelta(seconds=i))),
                          savepoint=False)
    return store


def messages(records: list[JobRecord]) -> dict[str, str]:
    return {r.job.id: r.job.message for r in records}


def test_i17_snapshot_cache_a_row_another_process_updates_is_read_anew_on_the_next_build(db_url: str) -> None:
    store = seeded(db_url, 40)
    first = store.live_jobs()
    decoded = store._decoded.decodes
    assert store.live_jobs() == first and store._decoded.decodes == decoded  # nothing changed: nothing decoded

    write_in_another_process(db_url, {"j-0007": "changed elsewhere", "j-0031": "and here"})

    after = store.live_jobs()
    assert messages(after)["j-0007"] == "changed elsewhere"
    assert messages(after)["j-0031"] == "and here"
    assert {r.job.id: r.version for r in after}["j-0007"] == 2
    assert store._decoded.decodes == decoded + 2  # only the two changed rows were decoded again
    assert [r.job.id for r in after] == [r.job.id for r in first]  # submit order kept


def test_i17_snapshot_cache_a_build_reads_one_state_while_another_process_commits_during_it(db_url: str) -> None:
    # 1,200 live rows kept; 550 of them changed (read afresh by id in two chunks, 500 + 50). While the
    # build decodes the first chunk another process changes a row of the second chunk and a kept row:
    # the build must show both as they were when it began (under PostgreSQL's default READ COMMITTED
    # the second chunk's read would see the new row beside the old view of the rest).
    store = seeded(db_url, 1200)
    store.live_jobs()
    with store.transaction() as tx:
        for record in tx.get_jobs([f"j-{i:04d}" for i in range(550)]).values():
            tx.update_job(replace(record, job=replace(record.job, message="first change")))
    wrote: list[bool] = []

    def pause() -> None:
        if not wrote:
            wrote.append(True)
            write_in_another_process(db_url, {"j-0540": "during the build", "j-1100": "during the build"})

    during = store.live_jobs(pause=pause)
    assert wrote
    seen = messages(during)
    assert seen["j-0540"] == "first change" and seen["j-1100"] == ""
    assert {r.job.id: r.version for r in during}["j-0540"] == 2

    after = messages(store.live_jobs())
    assert after["j-0540"] == "during the build" and after["j-1100"] == "during the build"


def test_i17_snapshot_cache_decodes_only_changed_rows_and_follows_the_live_set(sqlite_db: str) -> None:
    store = seeded(sqlite_db, 300)
    store.live_jobs()
    assert len(store._decoded) == 300
    decoded = store._decoded.decodes
    with store.transaction() as tx:
        for job_id in ("j-0001", "j-0002"):
            record = tx.get_job(job_id)
            tx.update_job(replace(record, job=replace(record.job, state=JobState.CANCELLED, finished_at=T0)))
        tx.insert_job(JobRecord(job=make_job("j-new", submitted_at=T0 + timedelta(hours=1))))
    live = store.live_jobs()
    assert [r.job.id for r in live][-1] == "j-new" and len(live) == 299
    assert store._decoded.decodes == decoded + 1  # the new row; the finished ones are not read at all
    assert len(store._decoded) == 299  # the finished rows were dropped from memory


def test_i17_snapshot_cache_a_full_cache_keeps_what_it_holds_instead_of_starting_over(sqlite_db: str) -> None:
    # the old cache cleared itself when full: past 20,000 live rows every build decoded every row
    store = seeded(sqlite_db, 120)
    cache = RowCache(limit=100)
    with store.engine.connect() as conn, conn.begin():
        first = read_live(conn, ["pending"], cache, cache.decode)
        again = read_live(conn, ["pending"], cache, cache.decode)
    assert len(first) == len(again) == 120 and len(cache) == 100
    assert cache.decodes == 120 + 20  # the 20 rows past the limit are decoded each time, the rest kept


def test_i17_snapshot_cache_the_cycle_pauses_between_decodes_only(sqlite_db: str) -> None:
    store = seeded(sqlite_db, 50)
    calls: list[int] = []
    store.live_jobs(pause=lambda: calls.append(1))
    assert len(calls) == 50
    store.live_jobs(pause=lambda: calls.append(2))
    assert calls.count(2) == 0  # nothing decoded, no pause
    write_in_another_process(sqlite_db, {"j-0003": "x"})
    store.live_jobs(pause=lambda: calls.append(3))
    assert calls.count(3) == 1


def test_i17_snapshot_cache_the_engines_own_builds_pause_and_dry_runs_never(sqlite_db: str, tmp_path: Path) -> None:
    from jupyter_sched.engine import Engine
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.inventory.simulated import SimulatedInventory

    store = seeded(sqlite_db, 30)
    engine = Engine(store, SimulatedInventory(2), LocalExecutor(tmp_path / "jobs"))
    calls: list[int] = []
    engine.decider.pause = lambda: calls.append(1)
    engine.snapshot()  # a dry run's build (another thread): never steps aside
    assert calls == []
    write_in_another_process(sqlite_db, {"j-0004": "x", "j-0005": "y"})
    snapshot, _ = engine.decider.snapshot(idle=True)  # the engine's own cycle
    assert len(calls) == 2 and {j.id: j.message for j in snapshot.jobs}["j-0005"] == "y"
