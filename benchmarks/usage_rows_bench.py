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

Run: ``.venv/bin/python benchmarks/usage_rows_bench.py [--rows 200000] [--runs 5]``.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    now = datetime.now(timezone.utc)
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
