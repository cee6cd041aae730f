"""red26 R1: fair share and budgets never re-read every usage row of the month on each snapshot.

Every engine cycle and every dry run read (and decoded in Python) all usage rows of the last 31
days: 100k rows (half a day of one user's instant 1-GPU jobs at the submit rate) made starts ten
times slower for a month. The engine now keeps running sums (:class:`UsageLedger`): closed rows
are read once, open rows each time. These tests hold the figures to the old full read and the rows
decoded per snapshot to the open and new rows.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.accounting import UsageInterval, budget_usage, decayed_gpu_seconds, period_start
from jupyter_sched.engine.usage_ledger import UsageLedger, usage_since
from jupyter_sched.model import Allocation, Budget, JobState
from jupyter_sched.store import JobRecord, Store, schema
from jupyter_sched.store.codec import ts
from tests.runtime.builders import make_job

NOW = datetime(2026, 12, 5, 18, 30, 7, 250000, tzinfo=timezone.utc)
USERS = [("amy", "vision"), ("mal", "vision"), ("eve", "nlp"), ("bob", "nlp"), ("cy", "rl")]
BUDGETS = [Budget(team="vision"), Budget(team="vision", user="mal", period="week"), Budget(team="nlp", period="day"),
           Budget(team="rl", user="cy", period="month"), Budget(team="nlp", user="eve", period="day"),
           Budget(team="vision", period="quarter")]
HALF_LIFE_S = 3 * 86400.0


def _rows(n: int, *, now: datetime, rng: random.Random, first: int, open_every: int = 0) -> list[dict[str, object]]:
    rows = []
    for i in range(n):
        user, team = rng.choice(USERS)
        start = now - timedelta(seconds=rng.uniform(0, 80 * 86400))
        length = timedelta(seconds=rng.choice([0.3, 5.0, 600.0, rng.uniform(0, 3 * 86400)]))
        end = None if open_every and i % open_every == 0 else min(start + length, now)
        rows.append({"job_id": f"j-{first + i}", "attempt": 1, "user": user, "team": team, "kind": "batch",
                     "gpu_uuid": f"GPU-{i % 8}", "gpu_model": "A100", "share": rng.choice([1.0, 0.5, 3 / 7]),
                     "started_at": ts(start), "ended_at": ts(end)})
    return rows


def _insert(store: Store, rows: list[dict[str, object]]) -> None:
    """The rows, and a running job for each open one (an open row of no running job is not billed: B15)."""
    with store.transaction() as tx:
        for start in range(0, len(rows), 5000):
            tx.conn.execute(schema.usage.insert(), rows[start:start + 5000])
        for row in rows:
            if row["ended_at"] is None:
                job = make_job(str(row["job_id"]), user=str(row["user"]), team=str(row["team"]), state=JobState.RUNNING,
                               allocation=Allocation(node="n", gpu_uuids=(str(row["gpu_uuid"]),)))
                tx.insert_job(JobRecord(job=replace(job, attempts=1)))


def _full_read(store: Store, now: datetime) -> list[UsageInterval]:
    """Every usage row the old full read of ``Decider._usage`` at ``now`` (or later) decodes: back to the
    earlier of the fair-share window's and the quarter's start (its budget's period)."""
    return store.usage_rows(since=min(usage_since(now, HALF_LIFE_S), period_start(now, "quarter")))


def _since(rows: list[UsageInterval], since: datetime) -> list[UsageInterval]:
    """``rows`` that ``usage_rows(since=since)`` returns: open, or ended after ``since`` (same order)."""
    return [iv for iv in rows if iv.ended_at is None or iv.ended_at > since]


def _old(store: Store, now: datetime,
         rows: list[UsageInterval] | None = None) -> tuple[dict[str, float], dict[tuple[str, str | None], float]]:
    """The old full read of ``Decider._usage`` (back to the quarter's start: its budget's period).

    ``rows``: :func:`_full_read` of the same store at ``now`` or earlier, when nothing was written
    since (s41 speed: 200k rows decoded once, not twice per figure; :func:`_since` filters them as
    the store's query does, checked against it in
    :func:`test_red26_r1_rows_removed_or_committed_late_behind_the_cursor_are_read_again`)."""
    periods_since = min(usage_since(now, HALF_LIFE_S), period_start(now, "quarter"))
    periods = _since(_full_read(store, now) if rows is None else rows, periods_since)
    intervals = _since(periods, usage_since(now, HALF_LIFE_S))
    return (decayed_gpu_seconds(intervals, now=now, half_life_s=HALF_LIFE_S),
            dict(budget_usage(periods, BUDGETS, now=now)))


def _same(got: tuple[dict[str, float], dict[tuple[str, str | None], float]],
          want: tuple[dict[str, float], dict[tuple[str, str | None], float]]) -> None:
    for user in {*got[0], *want[0]}:
        assert got[0].get(user, 0.0) == pytest.approx(want[0].get(user, 0.0), rel=1e-9, abs=1e-6), user
    assert set(got[1]) == set(want[1])
    for key, hours in want[1].items():
        assert got[1][key] == pytest.approx(hours, rel=1e-9, abs=1e-9), key


def _close(store: Store, job_ids: list[str], at: datetime) -> None:
    with store.transaction() as tx:
        for job_id in job_ids:
            tx.close_usage(job_id, at)


def test_red26_r1_200k_closed_rows_are_read_once_and_the_figures_equal_the_full_read(sqlite_db: str) -> None:
    store = Store(sqlite_db)
    rng = random.Random(26)
    _insert(store, _rows(200_000, now=NOW, rng=rng, first=0, open_every=20_000))
    ledger = UsageLedger(store, half_life_s=HALF_LIFE_S)

    rows = _full_read(store, NOW)
    _same(ledger.read(NOW, BUDGETS), _old(store, NOW, rows))
    assert ledger.full_reads == 1  # the first read reads the window once (summed by the database: red37 R5)
    first = 200_000  # the rows a full read decoded before red37 R5

    # a cycle later: nothing new; only the 10 open rows are read again
    later = NOW + timedelta(seconds=2)
    _same(ledger.read(later, BUDGETS), _old(store, later, rows))
    assert ledger.decoded == 10

    # a flood of new rows, an open row closed, and time moving past midnight (budget periods) and
    # the window's edge (rows leave it): the rows read are the open, new and leaving ones only
    _close(store, ["j-0", "j-20000"], NOW + timedelta(hours=1))
    new = _rows(500, now=NOW + timedelta(hours=7), rng=rng, first=300_000, open_every=100)
    _insert(store, new)
    then = NOW + timedelta(hours=7)
    _same(ledger.read(then, BUDGETS), _old(store, then))
    assert ledger.decoded < 10 + 500 + 2_000, ledger.decoded
    assert ledger.decoded < first // 50

    # two days on, again
    after = then + timedelta(days=2, minutes=3)
    _same(ledger.read(after, BUDGETS), _old(store, after))
    assert ledger.decoded < first // 10


def test_red26_r1_rows_removed_or_committed_late_behind_the_cursor_are_read_again(db_url: str) -> None:
    store = Store(db_url)
    rng = random.Random(7)
    _insert(store, _rows(2_000, now=NOW, rng=rng, first=0, open_every=100))
    ledger = UsageLedger(store, half_life_s=HALF_LIFE_S)
    _same(ledger.read(NOW, BUDGETS), _old(store, NOW))
    for since in (usage_since(NOW, HALF_LIFE_S), period_start(NOW, "quarter"), NOW - timedelta(days=20)):
        # the filter _old applies to one read is the store's own ``since`` (the 200k test reads once)
        assert _since(_full_read(store, NOW - timedelta(days=400)), since) == store.usage_rows(since=since)

    with store.transaction() as tx:  # a repair by hand: doctor's DELETE of a closed row
        tx.conn.execute(schema.usage.delete().where(schema.usage.c.job_id == "j-5"))
    later = NOW + timedelta(minutes=1)
    _same(ledger.read(later, BUDGETS), _old(store, later))
    assert ledger.full_reads == 2  # read again in full

    _close(store, ["j-100", "j-200"], later)
    _insert(store, _rows(30, now=later, rng=rng, first=5_000, open_every=3))
    last = later + timedelta(hours=30)
    _same(ledger.read(last, BUDGETS), _old(store, last))
    assert ledger.decoded < 200


def test_red26_r1_the_engine_snapshot_reads_the_open_and_new_rows_only(sqlite_db: str) -> None:
    from jupyter_sched.engine.clock import ManualClock
    from jupyter_sched.engine.decide import Decider

    store = Store(sqlite_db)
    rng = random.Random(3)
    _insert(store, _rows(5_000, now=NOW, rng=rng, first=0, open_every=1_000))
    clock = ManualClock(NOW)
    decider = Decider(store, None, clock, None, usage_half_life_s=HALF_LIFE_S)  # type: ignore[arg-type]
    quotas = store.quota_set()
    usage = decider._usage(quotas, NOW)
    old = decayed_gpu_seconds(store.usage_rows(since=usage_since(NOW, HALF_LIFE_S)), now=NOW,
                              half_life_s=HALF_LIFE_S)
    _same((dict(usage.decayed_gpu_seconds_by_user), {}), (old, {}))
    decider._usage(quotas, NOW + timedelta(seconds=1))
    assert decider.usage.decoded == 5
