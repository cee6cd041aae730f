"""The engine's snapshot (each cycle, every dry run) with 0 and with N closed usage rows (red26 R1).

Before, every snapshot read all usage rows of the last 31 days and decoded each in Python for
fair share and budgets: 100k rows made starts ~10x slower, 300k ~25-50x (red26's live hub). Now
the engine keeps running sums (:class:`jupyter_sched.engine.usage_ledger.UsageLedger`): closed
rows are read once.

This script builds two SQLite stores (a few running and pending jobs, 5 budgets): one with no usage
rows, one with ``--rows`` closed intervals over the last 30 days (the shape a flood of instant
1-GPU jobs leaves) plus 20 open ones. For each it times (median of ``--runs``, wall ms) the
engine's snapshot (``Engine.snapshot``) after a first build, and — the baseline, in the same run
on the same store — the old usage step: ``Store.usage_rows`` of the window, then
``decayed_gpu_seconds`` and ``budget_usage``. Prints each with the ratio to the 0-row store.

``--report`` times ``GET usage/report``'s work instead (:func:`~jupyter_sched.accounting.store_report.usage_report_for`,
mal's rows of the 30 days, by user): on the store of ``--rows`` rows, and on one of ``--old-rows`` rows (default
20,000) beside the old path in the same run — the old overlap resolution (every row of a GPU against all before it
once one pair overlapped: quadratic; the random 0.3-s rows of this seed overlap) and the old row decode (each
timestamp parsed twice), swapped in for that measurement; with ``--old-rows`` below ``--rows`` the old path is
not run on ``--rows`` (its time there is extrapolated). Measured at 300,000 rows (``--rows 300000 --old-rows
300000``, load ~13 on 2 cores): old 44.8 s, new 4.4 s, the same answer.

``--me`` times ``GET me``'s service call (``AccountingService.me``) of a user with ``--rows`` usage rows of his own
over 30 days (mal's, random 0.3-s rows; a monthly team budget and a weekly one of his) beside the path before red27
R5 in the same run (the old sum statement, ``user = ? AND (ended_at IS NULL OR ended_at > ?)``, and no holding):
one call with nothing held, and a poll each second for ``--polls`` seconds (a panel, or a loop of his), as totals.

Run: ``.venv/bin/python benchmarks/usage_rows_bench.py [--rows 200000] [--runs 5] [--report [--old-rows 20000]]
[--me [--polls 60]]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_sched.accounting import budget_usage, decayed_gpu_seconds  # noqa: E402
from jupyter_sched.engine.usage_ledger import usage_since  # noqa: E402
from jupyter_sched.model import Budget, QuotaSet  # noqa: E402
from jupyter_sched.store import Store, schema, sqlite_url  # noqa: E402
from jupyter_sched.store.codec import ts  # noqa: E402

BUDGETS = (Budget(team="vision", gpu_hours=1e6), Budget(team="vision", user="mal", gpu_hours=1e5, period="week"),
           Budget(team="nlp", gpu_hours=1e5, period="day"), Budget(team="rl", user="cy", gpu_hours=1e5),
           Budget(team="nlp", user="eve", gpu_hours=1e4, period="day"))
USERS = (("amy", "vision"), ("mal", "vision"), ("eve", "nlp"), ("bob", "nlp"), ("cy", "rl"))


def seed(path: Path, rows: int, now: datetime) -> str:
    url = sqlite_url(path)
    store = Store(url)
    rng = random.Random(26)
    with store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(budgets=BUDGETS))
        batch: list[dict[str, object]] = []
        for i in range(rows + 20):
            user, team = USERS[i % len(USERS)]
            start = now - timedelta(seconds=rng.uniform(1, 30 * 86400))
            end = None if i >= rows else start + timedelta(seconds=0.3)
            batch.append({"job_id": f"j-{i}", "attempt": 1, "user": user, "team": team, "kind": "batch",
                          "gpu_uuid": f"GPU-{i % 4}", "gpu_model": "A100", "share": 1.0,
                          "started_at": ts(start), "ended_at": ts(end)})
            if len(batch) == 5000:
                tx.conn.execute(schema.usage.insert(), batch)
                batch = []
        if batch:
            tx.conn.execute(schema.usage.insert(), batch)
    store.close()
    return url


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def measure(url: str, runs: int) -> dict[str, float]:
    from jupyter_sched.engine import Engine
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.inventory.simulated import SimulatedInventory

    store = Store(url)
    engine = Engine(store, SimulatedInventory(4), LocalExecutor(Path(tempfile.mkdtemp()) / "jobs"))
    half_life = engine.decider.usage_half_life_s
    t0 = time.perf_counter()
    engine.snapshot()
    first = (time.perf_counter() - t0) * 1000

    def old() -> None:
        now = datetime.now(timezone.utc)
        intervals = store.usage_rows(since=usage_since(now, half_life))
        decayed_gpu_seconds(intervals, now=now, half_life_s=half_life)
        budget_usage(intervals, BUDGETS, now=now)

    out = {"first": first, "snapshot": median_ms(engine.snapshot, runs), "decoded": float(engine.decider.usage.decoded),
           "old_usage_step": median_ms(old, max(1, runs // 2))}
    store.close()
    return out


def old_resolve_overlaps(intervals: Any, *, now: datetime) -> Any:
    """:func:`jupyter_sched.accounting.overlaps.resolve_overlaps` before s27-perf: each row against every row of
    its GPU accepted before it (the same answer)."""
    from dataclasses import replace

    from jupyter_sched.accounting import overlaps

    per_gpu: dict[str, list[int]] = {}
    for index, iv in enumerate(intervals):
        if (iv.ended_at or now) > iv.started_at:
            per_gpu.setdefault(iv.gpu_uuid, []).append(index)
    replaced: dict[int, Any] = {}
    found: list[Any] = []
    for indexes in per_gpu.values():
        if not overlaps._overlapping([intervals[i] for i in indexes], now):
            continue
        accepted: list[Any] = []
        for i in sorted(indexes, key=lambda k: (intervals[k].started_at, intervals[k].job_id, intervals[k].attempt)):
            iv = intervals[i]
            end = iv.ended_at or now
            start, held = overlaps._fit(iv, end, accepted)
            if held is None:
                accepted.append((start, end, iv))
                continue
            found.append(overlaps.UsageOverlap(held, iv, start))
            kept = replace(iv, started_at=start) if start < end else None
            replaced[i] = kept
            if kept is not None:
                accepted.append((start, end, kept))
    out = [replaced.get(i, iv) for i, iv in enumerate(intervals)]
    return [iv for iv in out if iv is not None], found


def old_decoded_row(self: Any, r: Any) -> Any:
    """``StoreTx._usage_decoded_row`` before s27-perf: checked (both timestamps parsed), then decoded (again)."""
    from jupyter_sched.accounting import UsageInterval
    from jupyter_sched.store import store as store_module
    from jupyter_sched.store.quarantine import check_usage_row

    problem = check_usage_row(r)
    if problem is not None:
        self._skip("usage", r, "id", problem)
        return None
    return int(r["id"]), UsageInterval(
        job_id=r["job_id"], attempt=int(r["attempt"]), user=r["user"], team=r["team"], kind=r["kind"],
        gpu_uuid=r["gpu_uuid"], gpu_model=r["gpu_model"], share=float(r["share"]),
        started_at=store_module._usage_start(r), ended_at=store_module._usage_ts(r, "ended_at", required=False))


def report_s(url: str, now: datetime, *, old: bool = False) -> tuple[float, list[dict[str, Any]]]:
    """Seconds of one usage report of mal's rows of the 30 days (by user), and its rows; ``old``: the old path."""
    from types import SimpleNamespace
    from unittest import mock

    from jupyter_sched.accounting import report
    from jupyter_sched.accounting.store_report import usage_report_for
    from jupyter_sched.store.store import StoreTx

    store = Store(url)
    service = SimpleNamespace(store=store, clock=SimpleNamespace(now=lambda: now))
    with mock.patch.object(report, "resolve_overlaps", old_resolve_overlaps) if old else mock.patch.object(
            report, "resolve_overlaps", report.resolve_overlaps), \
            mock.patch.object(StoreTx, "_usage_decoded_row", old_decoded_row) if old else mock.patch.object(
                StoreTx, "_usage_decoded_row", StoreTx._usage_decoded_row):
        t0 = time.perf_counter()
        rows = usage_report_for(service, user="mal", by=("user",), since=now - timedelta(days=30), until=now, now=now)
        took = time.perf_counter() - t0
    store.close()
    return took, rows


def main_report(rows: int, old_rows: int, now: datetime) -> None:
    with tempfile.TemporaryDirectory(prefix="usage_report_bench_") as folder:  # its stores: ~100 MB at 300k rows
        report_runs(Path(folder), rows, old_rows, now)


def report_runs(tmp: Path, rows: int, old_rows: int, now: datetime) -> None:
    small = seed(tmp / "small.sqlite", min(old_rows, rows), now)
    old_s, old_out = report_s(small, now, old=True)
    new_s, new_out = report_s(small, now)
    mine = sum(1 for i in range(min(old_rows, rows)) if USERS[i % len(USERS)][0] == "mal")
    print("usage report of mal's rows of 30 days (by user), wall s, one run each; seed: random 0.3-s rows on 4 GPUs "
          "(some overlap)")
    print(f"{min(old_rows, rows):,} rows ({mine:,} mal's): old path {old_s:.2f} s, new {new_s:.2f} s — "
          f"{old_s / max(new_s, 1e-9):.1f}x less time; same answer: {old_out == new_out}")
    if old_rows < rows:
        full_s, _ = report_s(seed(tmp / "full.sqlite", rows, now), now)
        print(f"{rows:,} rows: new {full_s:.2f} s; the old path is quadratic in a GPU's rows where they overlap "
              f"(~{old_s * (rows / old_rows) ** 2:.0f} s extrapolated from the {old_rows:,}-row run), not run")


def old_gpu_seconds_and_rows(self: Any, *, since: datetime, until: datetime, user: str | None = None,
                             team: str | None = None) -> tuple[float, int]:
    """``StoreTx.gpu_seconds`` before red27 R5 (one ``ended_at IS NULL OR ended_at > lo``), rows 0: never held."""
    import sqlalchemy as sa

    from jupyter_sched.store.quarantine import sound_usage_sql
    from jupyter_sched.store.store import HOLDING_STATES

    u, j = schema.usage, schema.jobs
    lo, hi = sa.bindparam("lo", type_=sa.String), sa.bindparam("hi", type_=sa.String)
    sqlite = self.conn.dialect.name == "sqlite"
    end = sa.func.coalesce(u.c.ended_at, hi)

    def epoch(text: Any) -> Any:
        if sqlite:
            return sa.func.julianday(text) * 86400.0
        return sa.func.extract("epoch", sa.cast(text, sa.TIMESTAMP(timezone=True)))

    seconds = (epoch(sa.func.min(end, hi) if sqlite else sa.func.least(end, hi))
               - epoch(sa.func.max(u.c.started_at, lo) if sqlite else sa.func.greatest(u.c.started_at, lo)))
    held = sa.exists().where(j.c.id == u.c.job_id, j.c.state.in_(sorted(HOLDING_STATES)), j.c.attempts <= u.c.attempt)
    billed = sa.and_(sound_usage_sql(u, sqlite=sqlite), sa.or_(u.c.ended_at.is_not(None), held))
    query = sa.select(sa.func.coalesce(sa.func.sum(sa.case((billed, u.c.share * seconds), else_=0.0)), 0.0)).where(
        u.c.started_at < hi, sa.or_(u.c.ended_at.is_(None), u.c.ended_at > lo))
    if user is not None:
        query = query.where(u.c.user == sa.bindparam("user"))
    if team is not None:
        query = query.where(u.c.team == sa.bindparam("team"))
    found = self.conn.execute(query, {"lo": ts(since), "hi": ts(until), "user": user, "team": team}).scalar()
    return max(0.0, float(found or 0.0)), 0


def me_runs(url: str, now: datetime, polls: int, *, old: bool) -> tuple[float, float, Any]:
    """``(s of one GET me with nothing held, s of ``polls`` GET me a second apart, the first answer)``."""
    from unittest import mock

    from jupyter_sched.engine import ManualClock
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.services import Services
    from jupyter_sched.store.store import StoreTx

    clock = ManualClock(now)
    svc = Services(store=Store(url, now=clock.now), inventory=SimulatedInventory(4, node="n1"),
                   executor=LocalExecutor(Path(tempfile.mkdtemp()) / "jobs"), clock=clock)
    mal = svc.caller("mal", admin=False, groups=("vision",))
    with mock.patch.object(StoreTx, "gpu_seconds_and_rows", old_gpu_seconds_and_rows) if old else mock.patch.object(
            StoreTx, "gpu_seconds_and_rows", StoreTx.gpu_seconds_and_rows):
        t0 = time.perf_counter()
        first = svc.accounting.me(mal)
        one = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(polls):
            clock.advance(1)
            svc.accounting.me(mal)
        poll = time.perf_counter() - t0
    svc.store.close()
    return one, poll, first


def main_me(rows: int, polls: int, now: datetime) -> None:
    with tempfile.TemporaryDirectory(prefix="usage_me_bench_") as folder:
        url = sqlite_url(Path(folder) / "me.sqlite")
        store = Store(url)
        rng = random.Random(27)
        with store.transaction() as tx:
            tx.replace_quota_set(QuotaSet(budgets=(Budget(team="vision", gpu_hours=1e6),
                                                   Budget(team="vision", user="mal", gpu_hours=1e5, period="week"))))
            for first in range(0, rows, 5000):
                batch = []
                for i in range(first, min(rows, first + 5000)):
                    start = now - timedelta(seconds=rng.uniform(1, 30 * 86400))
                    batch.append({"job_id": f"j-{i}", "attempt": 1, "user": "mal", "team": "vision", "kind": "batch",
                                  "gpu_uuid": f"GPU-{i % 4}", "gpu_model": "A100", "share": 1.0,
                                  "started_at": ts(start), "ended_at": ts(start + timedelta(seconds=0.3))})
                tx.conn.execute(schema.usage.insert(), batch)
        store.close()
        old_one, old_poll, old_first = me_runs(url, now, polls, old=True)
        new_one, new_poll, new_first = me_runs(url, now, polls, old=False)
    same = (old_first.gpu_hours_7d, [b.used_gpu_hours for b in old_first.budgets]) == (
        new_first.gpu_hours_7d, [b.used_gpu_hours for b in new_first.budgets])
    print(f"GET me (AccountingService.me) of mal, {rows:,} usage rows of his over 30 days, wall s (SQLite)")
    print(f"one call, nothing held: old {old_one:.3f} s, new {new_one:.3f} s — {old_one / max(new_one, 1e-9):.1f}x; "
          f"same figures: {same}")
    print(f"{polls} calls a second apart: old {old_poll:.2f} s, new {new_poll:.2f} s — "
          f"{old_poll / max(new_poll, 1e-9):.1f}x less time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--report", action="store_true", help="time the usage report instead (see above)")
    parser.add_argument("--old-rows", type=int, default=20_000, help="rows of the store the old report path runs on")
    parser.add_argument("--me", action="store_true", help="time GET me's service call instead (see above)")
    parser.add_argument("--polls", type=int, default=60, help="GET me calls a second apart (--me)")
    args = parser.parse_args()
    now = datetime.now(timezone.utc)
    if args.me:
        main_me(args.rows, args.polls, now)
        return
    if args.report:
        main_report(args.rows, args.old_rows, now)
        return
    tmp = Path(tempfile.mkdtemp(prefix="usage_rows_bench_"))
    empty = measure(seed(tmp / "empty.sqlite", 0, now), args.runs)
    full = measure(seed(tmp / "full.sqlite", args.rows, now), args.runs)
    print(f"engine snapshot, median of {args.runs} (wall ms); usage rows: 0 vs {args.rows:,} closed (+20 open each)")
    print(f"{'':34}{'0 rows':>12}{f'{args.rows:,} rows':>14}{'ratio':>9}")
    for key, name in (("first", "first snapshot (reads the window)"), ("snapshot", "snapshot, later cycles"),
                      ("old_usage_step", "baseline: old full usage read")):
        print(f"{name:34}{empty[key]:12.1f}{full[key]:14.1f}{full[key] / max(empty[key], 1e-9):9.1f}x")
    print(f"rows decoded by a later snapshot: {empty['decoded']:.0f} vs {full['decoded']:.0f}")
    print(f"later snapshot with {args.rows:,} rows vs the old usage step alone on them: "
          f"{full['old_usage_step'] / max(full['snapshot'], 1e-9):.0f}x less time")


if __name__ == "__main__":
    main()
